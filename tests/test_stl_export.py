"""``attn-tlm run --export-stl``: the off-chip request stream of a run, with its issue times,
as an STL trace that the STL replayer reads back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tlm_models.cli.main import main
from tlm_models.run.config import RunConfig
from tlm_models.run.execute import run_one
from tlm_models.run.worker import run_in_worker
from tlm_models.trace.stl import load_stl

ROOT = Path(__file__).resolve().parent.parent


def test_export_holds_every_offchip_byte_in_time_order(tmp_path: Path) -> None:
    out = tmp_path / "attenio.stl"
    config = RunConfig.of(dataflow="attenio", seq_len=1024, head_dim=64)
    result = run_in_worker(run_one, config, None, None, None, str(out), 1e9)
    requests = load_stl(out)
    reads = requests[~requests["is_write"]]
    writes = requests[requests["is_write"]]
    # Q, K, V read and O written through DMA bursts of at most 8 KiB (platforms/attenio.yaml).
    assert int(reads["length"].sum()) == result["offchip_bytes"]["read"]
    assert int(writes["length"].sum()) == result["offchip_bytes"]["write"]
    assert int(requests["length"].max()) == 8192
    assert np.all(np.diff(requests["time_ps"].astype(np.int64)) >= 0)
    # The first load issues after the DMA set-up (10 ns) and the interconnect hop (1 ns).
    assert int(requests["time_ps"][0]) == 11_000
    # Issue times lie within the run.
    assert int(requests["time_ps"][-1]) < result["sim_time_ns"] * 1000
    assert out.read_text().startswith("# off-chip requests of an attn-tlm run: ")


def test_replay_writes_every_request_latency(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Bandwidth level, one channel for both: 64 B / 8 GB/s + 100 ns = 108 ns, then 116 ns.
    trace = tmp_path / "two.stl"
    trace.write_text("0: read 0x0\n0: read 0x1000\n")
    out = tmp_path / "lat.csv"
    assert main(["replay", str(trace), "--latencies", str(out)]) == 0
    capsys.readouterr()
    assert out.read_text() == "request,latency_ns\n0,108.000\n1,116.000\n"
    bad = main(
        ["replay", str(ROOT / "traces/samples/load_then_matmul.trace.txt"), "--latencies", str(out)]
    )
    assert bad == 2
    assert "--latencies applies to STL" in capsys.readouterr().err
