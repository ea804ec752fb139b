"""One study configuration end to end: emit, replay on the reference platform, result JSON."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tlm_models.replay.replayer import TimelineWindow
from tlm_models.run.config import RunConfig
from tlm_models.run.execute import run_one
from tlm_models.run.smoke import smoke_summary
from tlm_models.run.worker import run_in_worker

CONTRACT_KEYS = {
    "schema", "dataflow", "platform", "seq_len", "head_dim", "heads", "sim_time_ns",
    "offchip_bytes", "pe", "exp", "memory_stall_fraction", "overlap_efficiency",
    "exposed_io_ns", "stalls", "ops", "wall_s", "ops_per_s",
}  # fmt: skip


@pytest.fixture(scope="module")
def attenio_1k() -> dict[str, Any]:
    result: dict[str, Any] = run_in_worker(
        run_one, RunConfig.of(dataflow="attenio", seq_len=1024, head_dim=64)
    )
    return result


def test_result_carries_the_contract_keys(attenio_1k: dict[str, Any]) -> None:
    assert attenio_1k.keys() >= CONTRACT_KEYS
    assert attenio_1k["schema"] == "attn-tlm.result/1"
    assert set(attenio_1k["offchip_bytes"]) == {"read", "write", "total"}
    assert {"busy_fraction", "mac_utilization"} <= attenio_1k["pe"].keys()
    assert {"busy_fraction", "lane_utilization"} <= attenio_1k["exp"].keys()
    assert set(attenio_1k["stalls"]) == {"dma0", "dma1", "pe", "exp"}


def test_replayed_bytes_equal_the_closed_form(attenio_1k: dict[str, Any]) -> None:
    # AttenIO, M = 262144 elements, d = 64: a = floor((M - 4d) / (2d + 4)) = 1984 >= N, so one
    # Q block: T = Nd + 2Nd + Nd = 4 * 1024 * 64 elements = 524288 B.
    assert attenio_1k["offchip_bytes"]["total"] == 524288
    assert attenio_1k["offchip_bytes"]["read"] == 3 * 1024 * 64 * 2
    assert attenio_1k["bounds"]["closed_form"] == 524288


def test_time_is_at_least_the_compute_and_the_io_bound(attenio_1k: dict[str, Any]) -> None:
    # QK^T and PV: 2 * N^2 * d MACs on 2048 MACs at 1 GHz.
    compute_ns = 2 * 1024 * 1024 * 64 / 2048
    io_ns = 524288 / 128.0  # 128 GB/s = 128 B/ns
    assert attenio_1k["sim_time_ns"] >= max(compute_ns, io_ns)
    assert attenio_1k["pe"]["macs"] == 2 * 1024 * 1024 * 64
    utilization = attenio_1k["pe"]["mac_utilization"]
    assert utilization == pytest.approx(compute_ns / attenio_1k["sim_time_ns"])
    assert 0.0 < attenio_1k["overlap_efficiency"] <= 1.0


def test_results_are_deterministic(attenio_1k: dict[str, Any]) -> None:
    again = run_in_worker(run_one, RunConfig.of(dataflow="attenio", seq_len=1024, head_dim=64))
    for key in ("sim_time_ns", "offchip_bytes", "pe", "exp", "stalls", "overlap_efficiency"):
        assert again[key] == attenio_1k[key], key


def test_timeline_is_written_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "flash2.json"
    result = run_in_worker(
        run_one,
        RunConfig.of(dataflow="flash2", seq_len=1024, head_dim=64),
        str(path),
        TimelineWindow(0.0, 5_000.0, 1000),
    )
    data = json.loads(path.read_text())
    complete = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert complete, "no operations recorded in the window"
    assert all(0.0 <= e["ts"] <= 5.0 and e["dur"] >= 0.0 for e in complete)
    tracks = {e["args"]["name"] for e in data["traceEvents"] if e["name"] == "thread_name"}
    assert {"dma0", "dma1", "pe", "exp"} <= tracks
    assert {f"hbm.ch{c}" for c in range(16)} <= tracks
    assert not math.isnan(result["sim_time_ns"])


def test_smoke_replay_moves_the_closed_form_bytes() -> None:
    summary = run_in_worker(smoke_summary)
    # AttenIO, N = 256, d = 64, one Q block: Q, K, V read once, O written once.
    assert summary["offchip_read"] == 3 * 256 * 64 * 2
    assert summary["offchip_write"] == 256 * 64 * 2
