"""Loading platforms: reference files, includes, overrides, routes, derived figures, info()."""

from __future__ import annotations

from pathlib import Path

import pytest

from tlm_models.platform import PlatformError, load_platform
from tlm_models.platform.info import MemoryRegion
from tlm_models.platform.schema import Route

ROOT = Path(__file__).resolve().parent.parent
PLATFORMS = ROOT / "platforms"
TINY = Path(__file__).resolve().parent / "data" / "platforms" / "tiny.yaml"
REFERENCE = sorted(PLATFORMS.glob("*.yaml"))


def test_reference_platforms_exist() -> None:
    assert {p.stem for p in REFERENCE} >= {"attenio", "edge-small", "gpu-sm-like"}


@pytest.mark.parametrize("path", REFERENCE, ids=lambda p: p.stem)
def test_reference_platform_is_valid_and_drives_dataflows(path: Path) -> None:
    config = load_platform(path)
    info = config.info()
    assert info.engines_of_kind("pe") == ["pe"]
    assert info.engines_of_kind("dma") == ["dma0", "dma1"]
    assert info.offchip.base + info.offchip.size <= info.scratchpad.base


def test_attenio_matches_the_paper() -> None:
    config = load_platform(PLATFORMS / "attenio.yaml")
    hbm = config.components["hbm"]
    assert hbm.params["channels"] == 16  # from the include fragment
    assert hbm.params["channel_bandwidth"] == 8e9
    assert config.components["sram"].params["capacity"] == 512 * 1024
    assert config.components["kvbuf"].params["capacity"] == 256
    figures = config.derived()
    assert figures.pe_flops == 2 * 64 * 32 * 1e9
    assert figures.exp_per_s == 128e9
    assert figures.offchip_bandwidth == 128e9
    assert figures.machine_balance == pytest.approx(32.0)
    assert figures.onchip_elements == 262_144  # the paper's M for FP16
    info = config.info()
    assert info.offchip == MemoryRegion("hbm", 0, 4 * 2**30)
    assert info.scratchpad == MemoryRegion("sram", 0x1_0000_0000, 512 * 1024)
    assert info.kv_buffer == MemoryRegion("kvbuf", 0x2_0000_0000, 256)
    assert info.capacity_elements(2) == 262_144
    assert (info.pe_rows, info.pe_cols, info.exp_lanes) == (64, 32, 128)
    assert info.engines == {"dma0": "dma", "dma1": "dma", "pe": "pe", "exp": "exp"}


def test_gpu_figures_match_public_specs() -> None:
    figures = load_platform(PLATFORMS / "gpu-sm-like.yaml").derived()
    assert figures.pe_flops == pytest.approx(989.4e12, rel=1e-3)
    assert figures.offchip_bandwidth == pytest.approx(3.35e12)
    assert figures.exp_per_s == pytest.approx(3.865e12, rel=1e-3)


def test_edge_small() -> None:
    config = load_platform(PLATFORMS / "edge-small.yaml")
    assert config.derived().offchip_bandwidth == pytest.approx(12.8e9)
    assert config.info().kv_buffer is None
    assert config.components["dram"].params["latency"] == 150_000  # local override of include


def test_routes_follow_the_bindings() -> None:
    config = load_platform(PLATFORMS / "attenio.yaml")
    routes = set(config.routes)
    assert Route("dma_noc", 0, 4 * 2**30, 0, "hbm") in routes
    assert Route("dma_noc", 0x1_0000_0000, 512 * 1024, 1, "sram") in routes
    assert Route("compute_noc", 0x1_0000_0000, 512 * 1024, 0, "sram") in routes
    assert Route("compute_noc", 0x2_0000_0000, 256, 1, "kvbuf") in routes
    # compute_noc reaches no HBM, so it gets no route for it.
    assert not [r for r in routes if r.interconnect == "compute_noc" and r.target == "hbm"]


def test_routes_through_a_chain_of_interconnects(tmp_path: Path) -> None:
    text = TINY.read_text()
    text = text.replace("  noc:\n", "  edge:\n    type: interconnect\n  noc:\n")
    text = text.replace(
        "  - noc.out[0] -> hbm.target",
        "  - noc.out[0] -> edge.in[0]\n  - edge.out[0] -> hbm.target",
    )
    path = tmp_path / "chain.yaml"
    path.write_text(text)
    routes = set(load_platform(path).routes)
    assert Route("noc", 0, 2**30, 0, "hbm") in routes
    assert Route("edge", 0, 2**30, 0, "hbm") in routes


def test_via_restricts_the_route(tmp_path: Path) -> None:
    text = TINY.read_text().replace(
        "{base: 0x0, size: 1 GiB, target: hbm}", "{base: 0x0, size: 1 GiB, target: hbm, via: noc}"
    )
    path = tmp_path / "via.yaml"
    path.write_text(text)
    assert load_platform(path).address_map[0].via == ("noc",)


def test_defaults_are_filled_in() -> None:
    config = load_platform(TINY)
    hbm = config.components["hbm"].params
    assert hbm["latency"] == 100_000  # 100 ns in ps
    assert hbm["fidelity"] == "bandwidth"
    assert hbm["storage"] is False
    assert config.components["pe"].params["mapping"] == "output_stationary"
    assert config.components["sram"].params["storage"] is True
    assert config.address_map[1].size == 64 * 1024  # window size defaults to the capacity


def test_overrides() -> None:
    config = load_platform(
        PLATFORMS / "attenio.yaml",
        ["sram.capacity=256KiB", "hbm.channels=8", "pe.mapping=output_stationary", "name=half"],
    )
    assert config.name == "half"
    assert config.components["sram"].params["capacity"] == 256 * 1024
    assert config.derived().offchip_bandwidth == 64e9
    assert config.info().scratchpad.size == 256 * 1024
    assert config.components["pe"].params["mapping"] == "output_stationary"
    # a parameter left at its default can be overridden too
    config = load_platform(TINY, ["components.hbm.t_cl=20ns"])
    assert config.components["hbm"].params["t_cl"] == 20_000


def test_bad_overrides_are_reported_together() -> None:
    with pytest.raises(PlatformError) as err:
        load_platform(
            PLATFORMS / "attenio.yaml",
            ["sram.capacty=256KiB", "hbm.channels=8 GB", "hbmm.channels=1", "junk"],
        )
    text = str(err.value)
    assert len(err.value.diagnostics) == 4
    assert "--set sram.capacty=256KiB: components.sram.capacty" in text
    assert "did you mean 'capacity'" in text
    assert "--set hbm.channels=8 GB: components.hbm.channels: expected a whole number" in text
    assert "did you mean 'hbm'" in text


def test_include_override_keeps_the_fragment_lines(tmp_path: Path) -> None:
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "mem.yaml").write_text("type: hbm\nchannels: 4\nlatency: 5\n")
    text = TINY.read_text().replace(
        "  hbm:\n    type: hbm\n    channels: 2\n", "  hbm:\n    include: parts/mem.yaml\n"
    )
    (tmp_path / "p.yaml").write_text(text)
    with pytest.raises(PlatformError) as err:
        load_platform(tmp_path / "p.yaml")
    [diag] = err.value.diagnostics
    assert diag.loc.file.endswith("parts/mem.yaml")
    assert (diag.loc.line, diag.key) == (3, "components.hbm.latency")
    # the including file's own value wins over the fragment's
    (tmp_path / "p.yaml").write_text(
        text.replace("include: parts/mem.yaml\n", "include: parts/mem.yaml\n    latency: 7 ns\n")
    )
    assert load_platform(tmp_path / "p.yaml").components["hbm"].params["latency"] == 7000


def test_info_needs_compute_engines(tmp_path: Path) -> None:
    from tlm_models.errors import UserError

    text = TINY.read_text()
    text = text.replace("  exp:\n    type: exp_unit\n    lanes: 8\n", "")
    text = text.replace("  - exp.sram_port -> noc.in[2]\n", "").replace("  exp: exp\n", "")
    path = tmp_path / "noexp.yaml"
    path.write_text(text)
    config = load_platform(path)
    with pytest.raises(UserError, match="no exp_unit"):
        config.info()


def test_memories_grow_without_moving_windows() -> None:
    """The SRAM's window follows its capacity: 16 MiB (and 1 GiB) fit below the KV buffer's,
    on the tiled machines up to the tile stride (1 GiB) and the KV buffer 512 MiB above."""
    for size in ("16MiB", "1GiB"):
        config = load_platform(PLATFORMS / "attenio.yaml", [f"sram.capacity={size}"])
        assert config.info().scratchpad.size == config.components["sram"].params["capacity"]
    tiled = load_platform(
        PLATFORMS / "attenio-x4.yaml", ["tiles.template.components.sram.capacity=256MiB"]
    )
    assert tiled.tile_info(3).scratchpad == MemoryRegion(
        "tile3_sram", 0x10_0000_0000 + 3 * 2**30, 256 * 2**20
    )


def test_a_grown_window_that_overlaps_says_which_to_move() -> None:
    with pytest.raises(PlatformError) as err:
        load_platform(PLATFORMS / "attenio.yaml", ["sram.capacity=8GiB"])
    expected = (
        "window of 'kvbuf' [0x200000000, 0x200000100) overlaps the window of 'sram' "
        "[0x100000000, 0x300000000) at line 128, its size taken from sram.capacity = 8 GiB: "
        "move the window of 'kvbuf' to a base >= 0x300000000 (or give the window of 'sram' a "
        "smaller explicit size)"
    )
    assert str(err.value).splitlines()[1].endswith(expected)
    with pytest.raises(PlatformError, match=r"raise tiles\.address_stride to at least 2 GiB"):
        load_platform(
            PLATFORMS / "attenio-x4.yaml", ["tiles.template.components.sram.capacity=2GiB"]
        )
