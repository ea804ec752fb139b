"""The bottleneck sentence and the platform hints after a run."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from tlm_models.diagnosis import diagnose
from tlm_models.study.config import RunConfig
from tlm_models.study.run import run_one
from tlm_models.worker import run_in_worker

ROOT = Path(__file__).resolve().parent.parent


def _result(**changes: Any) -> dict[str, Any]:
    """A result JSON with round numbers: 10 ms; 64 x 32 MACs at 1 GHz; 128 GB/s."""
    result: dict[str, Any] = {
        "sim_time_ns": 10_000_000.0,
        "offchip_bytes": {"total": 128_000_000},
        "pe": {"busy_fraction": 0.9, "mac_utilization": 0.05, "macs": 1_024_000_000},
        "exp": {"busy_fraction": 0.1},
        "io_active_ns": 2_000_000.0,
        "memory_stall_fraction": 0.05,
        "overlap_efficiency": 0.9,
        "stalls": {"pe": {"load_data": 1_000_000.0, "exp_result": 200_000.0}},
        "peaks": {"macs_per_s": 2.048e12, "exps_per_s": 1.28e11, "offchip_bytes_per_s": 1.28e11},
    }
    result.update(changes)
    return result


def test_the_sentence_names_engine_stall_and_roof_distances() -> None:
    diagnosis = diagnose(_result(), "broadcast")
    assert diagnosis["bottleneck"] == (
        "The PE array is the critical resource (busy 90.0 % of 10.0 ms), with 5.0 % of its "
        "MACs in use; the PE array idles mostly waiting for off-chip loads (10.0 % of the "
        "time); it reaches 5.0 % of the compute roof and 10.0 % of the off-chip bandwidth roof."
    )
    assert diagnosis["roofline"]["intensity_macs_per_byte"] == 8.0
    assert diagnosis["hints"] == []  # a broadcast array: no mapping hint


def test_memory_bound_runs_name_off_chip_io_and_get_the_traffic_hint() -> None:
    result = _result(
        io_active_ns=9_500_000.0,
        memory_stall_fraction=0.7,
        overlap_efficiency=0.2,
        pe={"busy_fraction": 0.3, "mac_utilization": 0.25, "macs": 1},
    )
    diagnosis = diagnose(result, "broadcast")
    assert diagnosis["bottleneck"].startswith("Off-chip I/O is the critical resource (busy 95.0 %")
    assert "waits on memory 70.0 %" in diagnosis["hints"][0]


def test_the_mapping_hint_fires_on_an_output_stationary_array_that_idles_its_macs() -> None:
    hints = diagnose(_result(), "output_stationary")["hints"]
    assert len(hints) == 1 and "--set pe.mapping=broadcast" in hints[0]


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
        run_one, RunConfig("attenio", 2048, 64, platform=str(platform)), progress=reports
    )
    fast = run_in_worker(run_one, RunConfig("attenio", 2048, 64))
    assert slow["sim_time_ns"] > 5 * fast["sim_time_ns"]
    assert any("pe.mapping=broadcast" in hint for hint in slow["diagnosis"]["hints"])
    assert not any("pe.mapping" in hint for hint in fast["diagnosis"]["hints"])
    # The worker reported progress from the replay loop: the first report comes at once.
    assert reports.updates and reports.updates[0] == (0.0, reports.updates[0][1])
