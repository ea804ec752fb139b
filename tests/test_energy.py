"""Energy = sum over actions of count x energy, exactly (docs/energy.md).

A hand-written trace on tests/data/platforms/exact.yaml with every count derived by hand:
  load dma0 512 B from HBM 0x0: one 256 B granule in each of the 2 channels = 8 + 8 bursts of
    32 B; DMA bursts of 256 B: 2 SRAM writes of 4 port-width (64 B) words; dma_noc carries
    512 B to HBM and 512 B to SRAM
  matmul 4x4x8: 128 MACs; SRAM reads A 64 B, B 64 B (1 word each), write C 32 B (1 word)
  vector add 4x8: 32 element-ops; reads 64 B + 64 B, writes 64 B: 2 + 1 words
  exp 2x8: 16 exps; reads 32 B, writes 32 B: 1 + 1 words
  store dma1 256 B to HBM 0x1000 (channel 0): 8 write bursts; 4 SRAM read words; 512 B on dma_noc
Totals: HBM 16 read / 8 write bursts; SRAM 9 read / 11 write words; dma_noc 1536 byte-hops;
compute_noc 160 + 192 + 64 = 416 byte-hops; 2 descriptors; 128 MACs, 32 adds; 16 exps.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from tlm_models.cli.replay_cmd import replay_trace_file
from tlm_models.energy.accelergy import action_counts, ert_overrides
from tlm_models.energy.actions import MissingCount
from tlm_models.energy.model import compute_energy
from tlm_models.errors import UserError
from tlm_models.platform import PlatformError, load_platform
from tlm_models.run_result import RunResult
from tlm_models.worker import run_in_worker

PLATFORM = str(Path(__file__).parent / "data" / "platforms" / "exact.yaml")
SRAM = 0x4000_0000
TRACE = f"""dataflow: exact
engines: dma0 dma1 pe exp
window: 16
tensor: K offchip base=0x0 shape=64x128
tensor: O offchip base=0x1000 shape=1x128
0 load dma0 tensor=K m=1 n=512 src0=0x0 dst={SRAM:#x}
1 matmul pe m=4 n=4 k=8 src0={SRAM:#x} src1={SRAM + 0x40:#x} dst={SRAM + 0x100:#x} deps=0
2 vector pe op=add m=4 n=8 src0={SRAM:#x} src1={SRAM + 0x40:#x} dst={SRAM + 0x200:#x} deps=0
3 exp exp m=2 n=8 src0={SRAM + 0x200:#x} dst={SRAM + 0x300:#x} deps=2
4 store dma1 tensor=O m=1 n=256 src0={SRAM + 0x300:#x} dst=0x1000 deps=3
"""
COUNTS = {
    ("hbm", "read"): 16,
    ("hbm", "write"): 8,
    ("sram", "read"): 9,
    ("sram", "write"): 11,
    ("dma_noc", "transfer"): 1536,
    ("compute_noc", "transfer"): 416,
    ("dma", "descriptor"): 2,
    ("pe", "mac_random"): 128,
    ("pe", "add"): 32,
    ("exp", "exp"): 16,
}
SIM_TIME_PS = 778_000  # the trace's replayed time, 778 ns
PJ = Fraction(1, 10**12)
# (component, action) -> (override value, joules per action): every counted action charged.
TABLE = {
    ("hbm", "read"): ("4 pJ/bit", 4 * 8 * 32 * PJ),  # 32 B bursts
    ("hbm", "write"): ("5 pJ/B", 5 * 32 * PJ),
    ("sram", "read"): ("1.5 pJ", Fraction(3, 2) * PJ),
    ("sram", "write"): ("0.25 pJ/B", Fraction(1, 4) * 64 * PJ),  # 64 B port width
    ("dma_noc", "transfer"): ("0.1 pJ/B", Fraction(1, 10) * PJ),
    ("compute_noc", "transfer"): ("0.2 pJ", Fraction(2, 10) * PJ),
    ("dma", "descriptor"): ("20 pJ", 20 * PJ),
    ("pe", "mac_random"): ("1.2616796875 pJ", Fraction("1.2616796875") * PJ),
    ("pe", "add"): ("0.4 pJ/op", Fraction(4, 10) * PJ),
    ("exp", "exp"): ("3.795625 pJ", Fraction("3.795625") * PJ),
}
LEAK_W = Fraction(12, 1000)  # sram.energy.leak = 12 mW


def _overrides(table: dict[tuple[str, str], tuple[str, Fraction]]) -> tuple[str, ...]:
    sets = [f"{c}.energy.{a}={text}" for (c, a), (text, _) in table.items()]
    return (*sets, "sram.energy.leak=12 mW")


def _replay(tmp_path: Path, overrides: tuple[str, ...]) -> dict[str, Any]:
    trace = tmp_path / "t.trace.txt"
    trace.write_text(TRACE)
    return run_in_worker(replay_trace_file, str(trace), PLATFORM, overrides, timeout=120)


def _expected_total(table: dict[tuple[str, str], tuple[str, Fraction]]) -> Fraction:
    dynamic = sum((COUNTS[key] * joules for key, (_, joules) in table.items()), Fraction(0))
    return dynamic + LEAK_W * Fraction(SIM_TIME_PS, 10**12)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _replay(tmp_path_factory.mktemp("energy"), _overrides(TABLE))


def test_counts_are_the_hand_derived_ones(base: dict[str, Any]) -> None:
    assert base["sim_time_ns"] * 1000 == SIM_TIME_PS
    by_component = base["energy"]["by_component"]
    for (comp, action), count in COUNTS.items():
        assert by_component[comp]["actions"][action]["count"] == count, (comp, action)
    uncounted = {
        (c, a)
        for c, entry in by_component.items()
        for a, v in entry["actions"].items()
        if v["count"] and (c, a) not in COUNTS
    }
    assert uncounted == set()


def test_energy_is_a_typed_result_section(base: dict[str, Any]) -> None:
    typed = RunResult.from_dict(base)
    assert typed.energy is not None
    assert typed.energy.by_component["pe"].actions["add"].count == 32
    assert typed.energy.by_component["dma"].actions["descriptor"].energy_j == float(40 * PJ)
    assert typed.to_dict()["energy"] == base["energy"]


def test_energy_is_count_times_entry_exactly(base: dict[str, Any]) -> None:
    energy = base["energy"]
    total = _expected_total(TABLE)
    assert energy["total_j"] == float(total)
    assert energy["static_j"] == float(LEAK_W * Fraction(SIM_TIME_PS, 10**12))
    pe = energy["by_component"]["pe"]
    assert pe["dynamic_j"] == float(
        128 * TABLE[("pe", "mac_random")][1] + 32 * TABLE[("pe", "add")][1]
    )
    assert energy["average_power_w"] == float(total / Fraction(SIM_TIME_PS, 10**12))
    assert energy["edp_js"] == float(total * Fraction(SIM_TIME_PS, 10**12))
    # Off-chip data energy by tensor: K read 512 B at 4 pJ/bit, O written 256 B at 5 pJ/B.
    assert energy["by_tensor"]["K"]["read_j"] == float(512 * 32 * PJ)
    assert energy["by_tensor"]["O"]["write_j"] == float(256 * 5 * PJ)


def test_one_changed_entry_moves_the_total_by_count_times_delta(
    base: dict[str, Any], tmp_path: Path
) -> None:
    changed = dict(TABLE)
    changed[("sram", "read")] = ("2.75 pJ", Fraction(275, 100) * PJ)
    result = _replay(tmp_path, _overrides(changed))
    delta = Fraction(275 - 150, 100) * PJ
    assert result["energy"]["total_j"] == float(_expected_total(TABLE) + 9 * delta)
    assert result["energy"]["by_component"]["sram"]["actions"]["read"]["count"] == 9


def _stats(counts: dict[str, dict[str, int]]) -> dict[str, Any]:
    """A hand-written statistics tree: component -> {statistic: value}."""

    def group(name: str, values: dict[str, int]) -> dict[str, Any]:
        return {"name": name, "stats": {k: {"value": v} for k, v in values.items()}, "children": []}

    idle = {"read_bursts": 0, "write_bursts": 0, "activates": 0, "precharges": 0, "refreshes": 0}
    hbm = group("hbm", {})
    hbm["children"] = [
        group("channel0", {**idle, "read_bursts": 10, "write_bursts": 2, "activates": 3}),
        group("channel1", {**idle, "read_bursts": 5, "activates": 4}),
    ]
    return {"name": "p", "stats": {}, "children": [hbm, *(group(n, v) for n, v in counts.items())]}


def test_changing_any_entry_changes_the_total_by_count_times_delta() -> None:
    stats = _stats({"pe": {"macs": 1000, "scaled_elements": 0}, "exp": {"exps": 77}})
    base = load_platform(PLATFORM, ["hbm.energy.read=3 pJ", "hbm.energy.activate=1 nJ"])
    report = compute_energy(base, stats, 1_000_000)
    assert report.component("hbm").count("read") == 15
    assert report.component("hbm").count("activate") == 7
    assert report.total == 15 * 3 * PJ + 7 * 1000 * PJ  # pe and exp: no table, counts only
    for override, count, delta in (
        ("hbm.energy.read=3.5 pJ", 15, Fraction(1, 2) * PJ),
        ("hbm.energy.activate=1.25 nJ", 7, 250 * PJ),
        ("pe.energy.mac_random=0.01 pJ", 1000, Fraction(1, 100) * PJ),
        ("exp.energy.exp=2 fJ", 77, Fraction(2, 1000) * PJ),
        ("hbm.energy.leak=5 mW", 1, Fraction(5, 1000) * Fraction(1, 10**6)),  # 1 us
    ):
        changed = load_platform(
            PLATFORM, ["hbm.energy.read=3 pJ", "hbm.energy.activate=1 nJ", override]
        )
        assert compute_energy(changed, stats, 1_000_000).total - report.total == count * delta


def test_a_missing_count_is_named() -> None:
    stats = _stats({"pe": {"macs": 1, "scaled_elements": 0}})
    stats["children"][0]["children"][1]["stats"].pop("activates")
    with pytest.raises(MissingCount, match="group 'channel1' has no 'activates'"):
        compute_energy(load_platform(PLATFORM), stats, 0)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("pe.energy.mac_random=2 pJ/B", "'mac_random' moves no bytes"),
        ("sram.energy.red=1 pJ", "a sram has no action 'red'"),
        ("sram.energy.read=5", "bare number 5"),
        ("sram.energy.read=-1 pJ", "an energy cannot be negative"),
        ("sram.energy.leak=3 pJ", "expected a power such as '120 mW'"),
        ("hbm.energy.read=3 pJ/b", "did you mean 'pJ/B'?"),
    ],
)
def test_bad_entries_are_named(override: str, message: str) -> None:
    with pytest.raises(PlatformError) as err:
        load_platform(PLATFORM, [override])
    text = str(err.value)
    assert f"--set {override}: components.{override.split('=')[0]}" in text
    assert message in text


def test_defaults_parse_on_every_reference_platform() -> None:
    root = Path(__file__).parent.parent / "platforms"
    attenio = load_platform(root / "attenio.yaml")
    pe = attenio.components["pe"].energy
    assert pe is not None and pe.joules_per("mac_random") == Fraction("2583.92") / 2048 * PJ
    hbm = attenio.components["hbm"].energy
    assert hbm is not None and hbm.joules_per("read") == Fraction("3.9") * 8 * 32 * PJ
    for name in ("edge-small", "gpu-sm-like", "vp-soc"):
        config = load_platform(root / f"{name}.yaml")
        assert any(c.energy for c in config.components.values()), name


def test_accelergy_export_and_ert_import(base: dict[str, Any], tmp_path: Path) -> None:
    counts = action_counts(base)["action_counts"]
    hbm = next(e for e in counts["local"] if e["name"] == "exact.hbm")
    assert {"name": "read", "counts": 16} in hbm["action_counts"]
    ert = tmp_path / "ert.yaml"
    ert.write_text(
        "ERT:\n  version: '0.4'\n  tables:\n"
        "  - name: system.chip.sram[0..1]\n    actions:\n"
        "    - {name: read, arguments: null, energy: 2.5}\n"
        "  - name: system.hbm\n    actions:\n    - {name: activate, energy: 900}\n"
    )
    config = load_platform(PLATFORM)
    overrides = ert_overrides(ert, config)
    assert overrides == ["sram.energy.read=2.5 pJ", "hbm.energy.activate=900 pJ"]
    applied = load_platform(PLATFORM, overrides).components["sram"].energy
    assert applied is not None and applied.joules_per("read") == Fraction(5, 2) * PJ
    ert.write_text("ERT:\n  tables:\n  - name: system.cache\n    actions: []\n")
    with pytest.raises(Exception, match=r"ERT.tables\[0\]: 'system.cache' names no component"):
        ert_overrides(ert, config)


def test_energy_cli_export_ert_and_run_option(
    base: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tlm_models.cli.main import build_parser, main
    from tlm_models.cli.run_cmd import config_of

    result = tmp_path / "r.json"
    result.write_text(json.dumps(base))
    assert main(["energy", "export", str(result)]) == 0
    exported = yaml.safe_load(capsys.readouterr().out)
    assert exported == action_counts(base)
    ert = tmp_path / "ert.yaml"
    ert.write_text(
        "ERT:\n  tables:\n  - name: s.pe\n    actions:\n    - {name: add, energy: 0.5}\n"
    )
    assert main(["energy", "ert", str(ert), "--platform", PLATFORM]) == 0
    assert capsys.readouterr().out == "--set 'pe.energy.add=0.5 pJ'\n"
    args = build_parser().parse_args(
        ["run", "--dataflow", "attenio", "--seq-len", "1K", "--head-dim", "64",
         "--platform", PLATFORM, "--ert", str(ert), "--set", "pe.energy.add=1pJ"]
    )  # fmt: skip
    assert config_of(args).overrides == ("pe.energy.add=0.5 pJ", "pe.energy.add=1pJ")
    assert main(["energy", "export", str(ert)]) == 2
    assert "ert.yaml: the result JSON is not valid JSON" in capsys.readouterr().err
    result.write_text(json.dumps({"sim_time_ns": 1.0}))
    assert main(["energy", "export", str(result)]) == 2
    assert "has no 'energy' section" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ERT: [1, 2]\n", "expected 'ERT: {tables: [...]}'"),
        ("ERT: {tables: [{name: s.pe, actions: [{name: mac, energy: 1}]}]}\n", "no action 'mac'"),
        ("ERT: {tables: [{name: s.pe, actions: [{name: add, energy: x}]}]}\n", "found 'x'"),
        ("ERT: {tables: [{name: s.pe, actions: [{name: leak, energy: 1}]}]}\n", "leak=<mW>"),
        ("a: &a [*a]\n", "alias *a refers to an anchor that contains it"),
        ("ERT: {tables: [\n", "not YAML"),
    ],
)
def test_bad_erts_are_named(tmp_path: Path, text: str, message: str) -> None:
    ert = tmp_path / "bad.yaml"
    ert.write_text(text)
    with pytest.raises(UserError) as err:
        ert_overrides(ert, load_platform(PLATFORM))
    assert str(err.value).startswith(f"{ert}")
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_a_platform_without_energy_tables_reports_energy_not_modelled() -> None:
    """It printed 'energy 0.000000 mJ (dynamic 0.000000 mJ, static 0.000000 mJ)'."""
    from tlm_models.summary import _energy_lines

    nothing = {"type": "hbm", "table": False, "total_j": 0.0, "dynamic_j": 0.0, "static_j": 0.0}
    energy = {
        "total_j": 0.0, "dynamic_j": 0.0, "static_j": 0.0, "average_power_w": 0.0,
        "edp_js": 0.0, "by_component": {"hbm": nothing, "pe": {**nothing, "type": "pe_array"}},
    }  # fmt: skip
    (line,) = _energy_lines(energy)
    assert line.startswith("energy                 not modelled: no component")
    table = {**nothing, "table": True, "total_j": 1e-3, "dynamic_j": 1e-3}
    lines = _energy_lines({**energy, "total_j": 1e-3, "dynamic_j": 1e-3,
                           "by_component": {"hbm": nothing, "pe": table}})  # fmt: skip
    assert "static not modelled (no `leak` entry, no `technology:`)" in lines[0]
    assert lines[-1] == "  counts only (no energy table): hbm"
