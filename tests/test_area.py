"""Area and leakage (docs/models/area.md): the technology section, node scaling, each
component's formula against the published figures of sources.py, `attn-tlm area`, and the
run result's `area_mm2` and static energy."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from tests.test_energy import PLATFORM as EXACT_PLATFORM
from tests.test_energy import SIM_TIME_PS, TRACE
from tlm_models.cli.replay_cmd import replay_trace_file
from tlm_models.errors import UserError
from tlm_models.platform import PlatformError, load_platform
from tlm_models.platform.area.estimate import platform_area, run_area
from tlm_models.platform.area.report import AreaReport, ComponentArea
from tlm_models.platform.area.scaling import area_scale, area_vs_45nm
from tlm_models.platform.area.sources import (
    FP16_ADD,
    FP16_MUL,
    MUX2_BIT,
    REGISTER_BIT,
    cacti_table,
)
from tlm_models.platform.area.sram import sram
from tlm_models.platform.area.technology import Technology
from tlm_models.platform.compose import Platform
from tlm_models.worker import run_in_worker

ROOT = Path(__file__).resolve().parent.parent
ATTENIO = str(ROOT / "platforms" / "attenio.yaml")
FUSEMAX = str(ROOT / "platforms" / "fusemax.yaml")
AT_22 = Technology(22.0, 0.8)
# Stillmaker & Baas's 45 nm row between 32 nm (0.46) and 20 nm (0.21), log-log at 22 nm.
S22 = math.exp(math.log(0.46) + math.log(22 / 32) / math.log(20 / 32) * math.log(0.21 / 0.46))
S40 = math.exp(math.log(40 / 45) / math.log(32 / 45) * math.log(0.46))


def test_technology_section_is_read_and_overridable() -> None:
    assert load_platform(ATTENIO).technology == AT_22
    config = load_platform(FUSEMAX, ["technology.node=16nm", "technology.voltage=750mV"])
    assert config.technology == Technology(16.0, 0.75)
    with pytest.raises(PlatformError, match=r"technology.node: expected a positive quantity"):
        load_platform(ATTENIO, ["technology.node=fast"])
    with pytest.raises(PlatformError, match=r"technology.voltage: missing"):
        load_platform(FUSEMAX, ["technology.node=16nm"])


def test_node_scaling_is_stillmakers_table_interpolated_log_log() -> None:
    assert area_vs_45nm(45) == 1.0
    assert area_vs_45nm(32) == pytest.approx(0.46, rel=1e-15)
    assert area_vs_45nm(20) == pytest.approx(0.21, rel=1e-15)
    assert area_vs_45nm(22) == pytest.approx(S22, rel=1e-15)
    assert area_scale(22, 22) == 1.0
    assert area_scale(45, 7) == pytest.approx(0.059, rel=1e-15)
    with pytest.raises(UserError, match=r"technology.node = 5 nm: .* covers 7-130 nm"):
        area_vs_45nm(5)


def test_pe_array_exp_unit_dma_and_interconnect_formulas() -> None:
    report = platform_area(load_platform(ATTENIO))
    # A broadcast PE: FP16 mul 1640 um^2 + add 1360 um^2 (45 nm) and 2 x 16 register bits of
    # 5.98 um^2 (40 nm); leakage = area x Aladdin's W/um^2 of the kind x 0.8 V / 0.9 V.
    mul, add, reg = 1640 * S22, 1360 * S22, 5.98 * S22 / S40
    pe_um2 = mul + add + 32 * reg
    pe_leak = (
        mul * FP16_MUL.leak_w_per_um2 + add * FP16_ADD.leak_w_per_um2
        + 32 * reg * REGISTER_BIT.leak_w_per_um2
    ) * 0.8 / 0.9  # fmt: skip
    assert report.component("pe").area_mm2 == pytest.approx(2048 * pe_um2 / 1e6, rel=1e-12)
    assert report.component("pe").leakage_w == pytest.approx(2048 * pe_leak, rel=1e-12)
    exp_um2 = 4 * mul + 3 * add + 7 * 16 * reg
    assert report.component("exp").area_mm2 == pytest.approx(128 * exp_um2 / 1e6, rel=1e-12)
    # DMA: 2 channels x (192 + 8 x 96 register bits + two 32-bit adders of 278 um^2 at 40 nm).
    dma_um2 = 2 * ((192 + 8 * 96) * reg + 2 * 278 * S22 / S40)
    assert report.component("dma").area_mm2 == pytest.approx(dma_um2 / 1e6, rel=1e-12)
    # compute_noc: 2 outputs x 8 KiB links x (2 - 1) 2:1 muxes of 1.862 um^2 (45 nm).
    noc = report.component("compute_noc")
    assert noc.area_mm2 == pytest.approx(2 * 65536 * 1.862 * S22 / 1e6, rel=1e-12)
    assert noc.leakage_w == pytest.approx(
        2 * 65536 * 1.862 * S22 * MUX2_BIT.leak_w_per_um2 * 0.8 / 0.9, rel=1e-12
    )
    assert report.component("hbm").area_mm2 == 0.0
    assert "PHY is not modelled" in report.component("hbm").source


def test_sram_is_cacti_macros_interpolated_and_scaled() -> None:
    row = next(
        m for m in cacti_table().series(22, 1) if m.bytes == 512 * 1024
    )  # one 512 KiB macro: CACTI's own figures
    one, source = sram(512 * 1024, 1, 1, 64, AT_22)
    assert (one.area_mm2, one.leakage_w) == (row.area_mm2, row.leakage_w)
    assert "CACTI 7.0 at 22 nm" in source
    # Banks and a wide port split it into macros: 8 banks x 64 KiB, and a 1 KiB port = 16 macros.
    eight = next(m for m in cacti_table().series(22, 2) if m.bytes == 64 * 1024)
    banked, _ = sram(512 * 1024, 8, 2, 64, AT_22)
    assert banked.area_mm2 == pytest.approx(8 * eight.area_mm2, rel=1e-15)
    wide, _ = sram(512 * 1024, 8, 2, 1024, AT_22)
    quarter = next(m for m in cacti_table().series(22, 2) if m.bytes == 32 * 1024)
    assert wide.area_mm2 == pytest.approx(16 * quarter.area_mm2, rel=1e-15)
    # Between CACTI's capacities: log-log, 96 KiB between 64 KiB and 128 KiB.
    between, _ = sram(96 * 1024, 1, 2, 64, AT_22)
    low, high = (
        next(m for m in cacti_table().series(22, 2) if m.bytes == b) for b in (65536, 131072)
    )
    t = math.log(1.5) / math.log(2)
    assert between.area_mm2 == pytest.approx(low.area_mm2 ** (1 - t) * high.area_mm2**t, rel=1e-12)
    assert between.leakage_w == pytest.approx(
        low.leakage_w ** (1 - t) * high.leakage_w**t, rel=1e-12
    )
    # Another node: CACTI's nearest (32 nm for 28 nm), area by Stillmaker, leakage by area and V.
    at_28, source = sram(512 * 1024, 1, 1, 64, Technology(28.0, 0.45))
    row32 = next(m for m in cacti_table().series(32, 1) if m.bytes == 512 * 1024)
    k = area_vs_45nm(28) / area_vs_45nm(32)
    assert at_28.area_mm2 == pytest.approx(row32.area_mm2 * k, rel=1e-12)
    assert at_28.leakage_w == pytest.approx(row32.leakage_w * k * 0.45 / 0.9, rel=1e-12)
    assert "CACTI 7.0 at 32 nm" in source
    # Below CACTI's smallest macro: a register file of flip-flops (the 256 B KV buffer).
    kv, source = sram(256, 1, 2, 256, AT_22)
    assert kv.area_mm2 == pytest.approx(2048 * 5.98 * S22 / S40 / 1e6, rel=1e-12)
    assert source.startswith("register file")
    with pytest.raises(UserError, match=r"an SRAM with 3 ports"):
        sram(512 * 1024, 1, 3, 64, AT_22)


def test_report_interface_and_platform_objects() -> None:
    report = platform_area(Platform.load(ATTENIO))
    assert isinstance(report, AreaReport)
    assert all(isinstance(c, ComponentArea) for c in report.components)
    assert (report.node_nm, report.voltage_v, report.clock_hz) == (22.0, 0.8, 1e9)
    assert report.total_mm2 == sum(c.area_mm2 for c in report.components)
    assert report.leakage_w == sum(c.leakage_w for c in report.components)
    assert [c.name for c in report.components] == list(load_platform(ATTENIO).components)
    smaller = platform_area(load_platform(ATTENIO, ["pe.rows=32"]))
    assert smaller.component("pe").area_mm2 == pytest.approx(
        report.component("pe").area_mm2 / 2, rel=1e-12
    )
    with pytest.raises(UserError, match=r"platform 'fusemax' states no technology"):
        platform_area(load_platform(FUSEMAX))
    assert run_area(load_platform(FUSEMAX)) == (None, {})


def test_area_cli_prints_breakdown_json_and_one_line_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tlm_models.cli.main import main

    assert main(["area", ATTENIO]) == 0
    out = capsys.readouterr().out
    report = platform_area(load_platform(ATTENIO))
    assert out.startswith("attenio: 22 nm, 0.8 V, clock 1 GHz\n")
    total = next(line for line in out.splitlines() if line.startswith("total"))
    assert total.split()[1:] == [
        f"{report.total_mm2:.4f}",
        "100.0%",
        f"{1e3 * report.leakage_w:.3f}",
    ]
    assert "CACTI 7.0 at 22 nm" in out and "Horowitz ISSCC 2014" in out
    assert main(["area", ATTENIO, "--set", "sram.capacity=1MiB", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    bigger = platform_area(load_platform(ATTENIO, ["sram.capacity=1MiB"]))
    assert data["total_mm2"] == bigger.total_mm2
    assert data["components"][1] == {
        "name": "sram", "kind": "sram", "area_mm2": bigger.component("sram").area_mm2,
        "leakage_w": bigger.component("sram").leakage_w,
        "source": bigger.component("sram").source,
    }  # fmt: skip
    for argv, message in (
        (["area", FUSEMAX], "states no technology"),
        (["area", ATTENIO, "--set", "technology.node=3nm"], "covers 7-130 nm"),
        (["area", "no-such.yaml"], "no-such.yaml"),
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err
    # A platform problem is reported like any other: a heading and one line per problem.
    assert main(["area", ATTENIO, "--set", "technology.volt=1V"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "attn-tlm: error: 1 problem in platform",
        "  --set technology.volt=1V: technology.volt: unknown key (expected: node, voltage); "
        "did you mean 'voltage'?",
    ]


def test_run_result_carries_area_and_charges_leakage_over_time(tmp_path: Path) -> None:
    trace = tmp_path / "t.trace.txt"
    trace.write_text(TRACE)
    tech = ("technology.node=22nm", "technology.voltage=0.8V", "sram.energy.leak=12 mW")
    result: dict[str, Any] = run_in_worker(
        replay_trace_file, str(trace), EXACT_PLATFORM, tech, timeout=120
    )
    report = platform_area(load_platform(EXACT_PLATFORM, tech))
    assert result["area_mm2"] == report.total_mm2
    seconds = Fraction(SIM_TIME_PS, 10**12)
    by_component = result["energy"]["by_component"]
    for c in report.components:
        # The table's explicit `leak` wins; elsewhere the model's leakage is charged.
        leak = Fraction(12, 1000) if c.name == "sram" else Fraction(c.leakage_w)
        assert by_component[c.name]["static_j"] == float(leak * seconds), c.name
    assert by_component["pe"]["static_j"] > 0
