"""The verdict, the bottleneck sentence and the hints after a run: judged by work against
capacity, not by busy time (tlm_models/run/diagnosis.py, docs/study.md "Diagnosis after a run")."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tlm_models.run.config import RunConfig
from tlm_models.run.diagnosis import diagnose
from tlm_models.run.execute import run_one
from tlm_models.run.worker import run_in_worker

ROOT = Path(__file__).resolve().parent.parent


def _result(**changes: Any) -> dict[str, Any]:
    """A result JSON with round numbers: 10 ms; 64 x 32 MACs at 1 GHz; 128 GB/s."""
    result: dict[str, Any] = {
        "sim_time_ns": 10_000_000.0,
        "offchip_bytes": {"total": 128_000_000},
        "pe": {"busy_fraction": 0.9, "mac_utilization": 0.05, "macs": 1_024_000_000},
        "exp": {"busy_fraction": 0.1, "lane_utilization": 0.02},
        "io_active_ns": 2_000_000.0,
        "memory_stall_fraction": 0.05,
        "overlap_efficiency": 0.9,
        "stalls": {"pe": {"load_data": 1_000_000.0, "exp_result": 200_000.0}},
        "peaks": {"macs_per_s": 2.048e12, "exps_per_s": 1.28e11, "offchip_bytes_per_s": 1.28e11},
    }
    result.update(changes)
    return result


def test_a_busy_array_doing_few_macs_is_operation_overhead_with_its_time_named() -> None:
    pe = {
        "busy_fraction": 0.9,
        "mac_utilization": 0.05,
        "macs": 1_024_000_000,
        "time": {
            "busy": {"mac": 2_000_000.0, "elementwise": 5_000_000.0, "drain": 2_000_000.0},
            "idle": {"load_data": 1_000_000.0},
            "idle_no_work": 0.0,
        },
    }
    diagnosis = diagnose(_result(pe=pe), "broadcast")
    assert diagnosis["verdict"] == "operation_overhead"
    assert diagnosis["bottleneck"] == (
        "Operation overhead: the PE array is busy 90.0 % of 10.0 ms yet does 5.0 % of the "
        "MACs it could; its time: element-wise ops 50.0 %, matmuls 20.0 %, pipeline drain "
        "20.0 %, idle waiting for off-chip loads 10.0 % (no resource within half its roof: "
        "off-chip bandwidth 10.0 %, compute 5.0 %, Exp 2.0 %)."
    )
    assert diagnosis["roofline"]["intensity_macs_per_byte"] == 8.0
    assert len(diagnosis["hints"]) == 1 and "larger blocks per operation" in diagnosis["hints"][0]


def test_busy_io_far_below_the_bandwidth_roof_is_latency_bound_not_bandwidth_bound() -> None:
    """The reported contradiction: I/O busy 100 % at 1.3 % of the bandwidth roof was called
    the critical resource. Here compute waits 70 % of the time on transfers that are in
    flight 95 % of it, using 10 % of the bandwidth."""
    result = _result(
        io_active_ns=9_500_000.0,
        memory_stall_fraction=0.7,
        overlap_efficiency=0.2,
        pe={"busy_fraction": 0.3, "mac_utilization": 0.25, "macs": 1},
    )
    diagnosis = diagnose(result, "broadcast")
    assert diagnosis["verdict"] == "latency_bound_transfers"
    assert diagnosis["bottleneck"].startswith(
        "Off-chip transfers are latency-bound: in flight 95.0 % of 10.0 ms yet moving 10.0 % "
        "of the off-chip bandwidth roof, and compute idles 70.0 % of the time, mostly waiting "
        "for off-chip loads"
    )
    assert "max_outstanding" in diagnosis["hints"][0]
    assert not any("sram.capacity" in hint for hint in diagnosis["hints"])


def test_the_nearest_roof_wins_over_the_busiest_engine() -> None:
    resources = {
        "compute": {"component": "pe", "use": 0.3},
        "offchip": {"component": "hbm", "use": 0.2},
        "links": {"component": "dma_noc.out0", "use": 0.95},
    }
    diagnosis = diagnose(_result(resources=resources), "broadcast")
    assert diagnosis["verdict"] == "links"
    assert diagnosis["bottleneck"] == (
        "An interconnect link (dma_noc.out0) is the critical resource: 95.0 % of its roof "
        "over 10.0 ms (the others: compute 30.0 %, off-chip bandwidth 20.0 %)."
    )


def test_idle_engines_far_from_every_roof_are_dependency_bound() -> None:
    result = _result(
        pe={"busy_fraction": 0.2, "mac_utilization": 0.1, "macs": 1},
        memory_stall_fraction=0.3,
        stalls={"pe": {"exp_result": 6_000_000.0}},
    )
    diagnosis = diagnose(result, "broadcast")
    assert diagnosis["verdict"] == "dependency_bound"
    assert "mostly waiting for Exp-unit results" in diagnosis["bottleneck"]


def test_no_hint_proposes_less_traffic_at_the_compulsory_minimum() -> None:
    common = {
        "io_active_ns": 10_000_000.0,
        "memory_stall_fraction": 0.7,
        "overlap_efficiency": 0.3,
        "offchip_bytes": {"total": 1_280_000_000},  # 100 % of 128 GB/s over 10 ms
        "pe": {"busy_fraction": 0.3, "mac_utilization": 0.1, "macs": 1},
    }
    at_floor = diagnose(_result(**common, bounds={"compulsory": 1_280_000_000.0}), "broadcast")
    assert at_floor["verdict"] == "offchip_bandwidth"
    assert len(at_floor["hints"]) == 1
    assert "the compulsory minimum" in at_floor["hints"][0]
    assert "sram.capacity" not in at_floor["hints"][0]
    above = diagnose(_result(**common, bounds={"compulsory": 128_000_000.0}), "broadcast")
    assert "sram.capacity" in above["hints"][0] and "10.0x the compulsory" in above["hints"][0]


def test_the_mapping_hint_fires_on_an_output_stationary_array_that_idles_its_macs() -> None:
    hints = diagnose(_result(), "output_stationary")["hints"]
    assert len(hints) == 1 and "--set pe.mapping=broadcast" in hints[0]


#: Runs whose verdict is known by construction: one platform parameter pushed until that
#: resource is the limit (N = 2K, d = 64 unless said; each simulates in well under a second).
_X4 = str(ROOT / "platforms" / "attenio-x4.yaml")
CONSTRUCTED = {
    # FlashAttention-2 on the paper's machine overlaps its loads: its MACs are 86 % of peak.
    "compute": RunConfig.of("flash2", 2048, 64),
    # 4 exp lanes instead of 128: 4.2 M exps take 1.05 ms against 0.3 ms of matmuls.
    "exp": RunConfig.of("flash2", 2048, 64, overrides=("exp.lanes=4",)),
    # GQA decode reads each K/V row once: the compulsory bytes at the full 128 GB/s.
    "offchip_bandwidth": RunConfig.of(
        "flash2", 1, 128, heads=32, kv_heads=8, kv_len=2048, phase="decode", batch=2
    ),
    # 64 B SRAM ports: a 64 x 32 matmul's operands take 64x longer to read than to multiply.
    "sram_ports": RunConfig.of("flash2", 2048, 64, overrides=("sram.port_width=64B",)),
    # An 8 B/cycle DMA path: 8 GB/s in front of a 128 GB/s HBM, carrying the paper tiles' K/V
    # re-reads (fitted tiles keep every row of 2K on chip: too few bytes to fill the link).
    "links": RunConfig.of(
        "flash2", 2048, 64, overrides=("dma_noc.width=8B",), extra=(("tiling", "paper"),)
    ),
    # One 256 B request in flight: each waits out the HBM's 100 ns, 2.56 GB/s of 128.
    "latency_bound_transfers": RunConfig.of(
        "flash2", 2048, 64, overrides=("dma.max_outstanding=1", "dma.max_burst=256B")
    ),
    # AttenIO's matrix-vector products on an output-stationary array use one column of 32.
    "operation_overhead": RunConfig.of(
        "attenio", 2048, 64, overrides=("pe.mapping=output_stationary",)
    ),
}


@pytest.mark.parametrize("verdict", sorted(CONSTRUCTED))
def test_runs_built_to_be_limited_by_one_resource_get_that_verdict(verdict: str) -> None:
    result = run_in_worker(run_one, CONSTRUCTED[verdict])
    diagnosis = result["diagnosis"]
    assert diagnosis["verdict"] == verdict, diagnosis["bottleneck"]
    if verdict == "offchip_bandwidth":
        assert result["offchip_bytes"]["total"] == result["bounds"]["compulsory"]
        assert not any("sram.capacity" in hint for hint in diagnosis["hints"])
        assert any("compulsory minimum" in hint for hint in diagnosis["hints"])


def test_a_tiled_chip_limited_by_its_shared_crossbar_names_that_link() -> None:
    """Four tiles behind an 8 B/cycle crossbar output (8 GB/s for the chip)."""
    config = RunConfig.of("flash2", 2048, 64, heads=4, platform=_X4, overrides=("noc.width=8B",))
    result = run_in_worker(run_one, config)
    assert result["diagnosis"]["verdict"] == "links"
    assert result["resources"]["links"]["component"] == "noc.out0"
    assert result["resources"]["links"]["use"] > 0.9


class _Reports:
    def __init__(self) -> None:
        self.updates: list[tuple[float, int]] = []

    def update(self, sim_ns: float, ops: int) -> None:
        self.updates.append((sim_ns, ops))

    def tick(self) -> None:
        pass


def test_a_platform_without_pe_mapping_gets_the_hint_for_attenio(tmp_path: Path) -> None:
    """The reported case: a platform written from the docs without `pe.mapping` runs AttenIO
    on the default output-stationary array, several times slower, and the run says why."""
    text = (ROOT / "platforms" / "attenio.yaml").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.strip().startswith("mapping:")]
    assert len(lines) == len(text.splitlines()) - 1
    shutil.copytree(ROOT / "platforms" / "parts", tmp_path / "parts")  # its includes
    platform = tmp_path / "no_mapping.yaml"
    platform.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reports = _Reports()
    slow = run_in_worker(
        run_one, RunConfig.of("attenio", 2048, 64, platform=str(platform)), progress=reports
    )
    fast = run_in_worker(run_one, RunConfig.of("attenio", 2048, 64))
    assert slow["sim_time_ns"] > 5 * fast["sim_time_ns"]
    assert any("pe.mapping=broadcast" in hint for hint in slow["diagnosis"]["hints"])
    assert not any("pe.mapping" in hint for hint in fast["diagnosis"]["hints"])
    # The worker reported progress from the replay loop: the first report comes at once.
    assert reports.updates and reports.updates[0] == (0.0, reports.updates[0][1])


def test_transfers_queued_far_below_the_roof_point_at_concentrated_addresses() -> None:
    """Standard as published: its score-panel rows sit a power-of-two pitch apart and queue on
    3-4 of 16 channels; a larger DMA window changes nothing (docs/study.md), so the hint must
    not propose one. The DMA's queued time (its `bandwidth` stall) tells the two apart."""
    queued = {"bandwidth": 4_000_000.0, "dma_credits": 3_000_000.0}
    result = _result(
        io_active_ns=9_500_000.0,
        memory_stall_fraction=0.7,
        overlap_efficiency=0.2,
        pe={"busy_fraction": 0.3, "mac_utilization": 0.25, "macs": 1},
        stalls={"dma0": queued, "pe": {"load_data": 7_000_000.0}},
    )
    diagnosis = diagnose(result, "broadcast")
    assert diagnosis["verdict"] == "latency_bound_transfers"
    assert "42.1 % of their in-flight time queued" in diagnosis["hints"][0]
    assert not any("max_outstanding" in hint for hint in diagnosis["hints"])
