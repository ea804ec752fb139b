"""Memory parts (platforms/parts/*.yaml): each loads as an hbm component at bank level, cites
its sources, and replays a short STL trace with the derived timing it states."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tlm_models.cli.main import main
from tlm_models.platform import load_platform

ROOT = Path(__file__).resolve().parent.parent
PARTS = ROOT / "platforms" / "parts"
BANK_PARTS = ("hbm2", "hbm2-attenio", "hbm2e", "hbm3", "ddr4-2400", "lpddr4-3200")


def _platform(tmp_path: Path, part: str) -> Path:
    path = tmp_path / f"{part}.yaml"
    path.write_text(
        f"name: {part}\ncomponents:\n  gen:\n    type: traffic_generator\n"
        f"  mem:\n    include: {PARTS / part}.yaml\n"
        "bindings:\n  - gen.socket -> mem.target\n"
        "address_map:\n  - {base: 0x0, size: 1 GiB, target: mem}\n"
    )
    return path


@pytest.mark.parametrize("part", BANK_PARTS)
def test_part_loads_at_bank_level_and_names_its_source(tmp_path: Path, part: str) -> None:
    mem = load_platform(str(_platform(tmp_path, part))).components["mem"].params
    assert mem["fidelity"] == "bank"
    assert mem["t_rfc"] < mem["t_refi"]
    text = (PARTS / f"{part}.yaml").read_text()
    assert "JESD" in text or "include: hbm2.yaml" in text


def test_hbm2_attenio_is_the_paper_machine_at_bank_level(tmp_path: Path) -> None:
    mem = load_platform(str(_platform(tmp_path, "hbm2-attenio"))).components["mem"].params
    assert mem["channels"] == 16 and mem["channel_bandwidth"] == 8e9
    assert mem["t_ccd_l"] == 8000 and mem["interleave"] == 256  # ps, B
    defaults = load_platform(str(ROOT / "platforms/attenio.yaml"), ("hbm.fidelity=bank",))
    hbm = defaults.components["hbm"].params
    # The hbm type's defaults are this part, so `--set hbm.fidelity=bank` selects it.
    for key, value in mem.items():
        if key not in ("latency", "size"):
            assert hbm[key] == value, key


def test_ddr4_read_miss_latency(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # One 64 B read of a closed DDR4-2400 bank: tRCD + tCL + one BL8 burst (64 B / 19.2 GB/s,
    # 3333.3 ps rounded up to 3334 ps) = 13.32 + 13.32 + 3.334 ns.
    trace = tmp_path / "one.stl"
    trace.write_text("0: read 0x0\n")
    # The paper machine with this part as its memory (STL replay needs a whole platform).
    platform = tmp_path / "attenio-ddr4.yaml"
    attenio = (ROOT / "platforms" / "attenio.yaml").read_text()
    platform.write_text(attenio.replace("parts/hbm-spec.yaml", f"{PARTS / 'ddr4-2400'}.yaml"))
    assert main(["replay", str(trace), "--platform", str(platform), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["sim_time_ns"] == pytest.approx(29.974, abs=1e-9)
