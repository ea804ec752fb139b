"""Simulated time always advances: slow platforms finish with the exact simulated time, a model
that cannot progress ends with an error naming the record, warnings stay off stdout, and the
worker processes end with the process that started them, however it ends.

Times on tests/data/platforms/exact.yaml, derived as in tests/test_replay_exact.py: one 256 B
load issued at s on an idle machine is done at s + 10 (setup) + 1 (hop) + 256 / channel
bandwidth + latency + 1 (hop) + 7 (the write into the SRAM through the link).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests import worker_jobs
from tlm_models.cli.main import main
from tlm_models.errors import SimulationError
from tlm_models.run.trace_job import replay_trace_file
from tlm_models.run.worker import run_in_worker

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = str(Path(__file__).parent / "data" / "platforms" / "exact.yaml")
SRAM = 0x4000_0000
HEADER = """dataflow: slow
engines: dma0 dma1 pe
window: 16
tensor: K offchip base=0x0 shape=64x128
"""
LOAD = f"load dma0 tensor=K m=1 n=256 src0=0x0 dst={SRAM:#x}"


def _replay(tmp_path: Path, body: str, *overrides: str) -> dict[str, Any]:
    trace = tmp_path / "t.trace.txt"
    trace.write_text(HEADER + body)
    return run_in_worker(replay_trace_file, str(trace), PLATFORM, overrides, timeout=60)


def test_millisecond_memory_latency_is_crossed(tmp_path: Path) -> None:
    # Two dependent loads: each 10 + 1 + 256 + 1_000_000 + 1 + 7 = 1_000_275 ns; the gaps of
    # 1 ms between events are five times the kernel slice.
    r = _replay(tmp_path, f"0 {LOAD}\n1 {LOAD} deps=0\n", "hbm.latency=1ms")
    assert r["sim_time_ns"] == 2 * 1_000_275.0


def test_slow_memory_channel_is_crossed(tmp_path: Path) -> None:
    # 256 B at 1 MB/s = 256 us on one channel: 10 + 1 + 256_000 + 100 + 1 + 7 = 256_119 ns.
    r = _replay(tmp_path, f"0 {LOAD}\n", "hbm.channel_bandwidth=1MB/s")
    assert r["sim_time_ns"] == 256_119.0


def test_kilohertz_pe_clock_is_crossed(tmp_path: Path) -> None:
    # matmul 4x4x8 on 4 x 4 broadcast: ceil(16 / 16) * 8 + 8 (pipeline) = 16 cycles of 1 ms;
    # its SRAM traffic (a few ns) ends long before.
    r = _replay(
        tmp_path,
        f"0 matmul pe m=4 n=4 k=8 src0={SRAM:#x} src1={SRAM + 0x40:#x} dst={SRAM + 0x100:#x}\n",
        "pe.clock=1kHz",
    )
    assert r["sim_time_ns"] == 16_000_000.0


def test_slow_platform_run_prints_only_json(capsys: pytest.CaptureFixture[str]) -> None:
    started = time.monotonic()
    code = main(
        [
            "run",
            "--dataflow",
            "flash2",
            "--seq-len",
            "256",
            "--head-dim",
            "64",
            "--json",
            "--set",
            "hbm.latency=1ms",
        ]
    )
    out, _ = capsys.readouterr()
    assert code == 0
    result = json.loads(out)
    # Every off-chip load waits at least the 1 ms latency.
    assert result["sim_time_ns"] > 1e6
    assert time.monotonic() - started < 60


def test_engine_that_never_returns_is_named() -> None:
    with pytest.raises(SimulationError, match=r"cannot progress.*record 0 \(load on dma0\)"):
        run_in_worker(worker_jobs.stuck_replay, timeout=60)


def test_worker_output_goes_to_stderr() -> None:
    # SystemC prints its reports on stdout; in a worker stdout is stderr, so a --json result
    # on the caller's stdout stays the only thing there.
    assert run_in_worker(worker_jobs.stdout_is_stderr, timeout=60)


_ORPHAN_SCRIPT = """
import multiprocessing, sys
from tests import worker_jobs
from tlm_models.run import worker
# No warm-up preload: what is tested is how the processes end, not the models.
worker._context = multiprocessing.get_context("forkserver")
worker.run_in_worker(worker_jobs.sleep_with_pid_file, sys.argv[1])
"""


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in state  # a zombie has ended; only its parent's reaping is left


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")
def test_sigkill_of_the_caller_ends_forkserver_and_worker(tmp_path: Path) -> None:
    pid_file = tmp_path / "worker.pid"
    started: list[int] = []
    caller = subprocess.Popen(
        [sys.executable, "-c", _ORPHAN_SCRIPT, str(pid_file)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text().strip():
            assert time.monotonic() < deadline, "the worker did not start"
            assert caller.poll() is None, "the caller ended early"
            time.sleep(0.05)
        worker_pid = int(pid_file.read_text())
        forkserver_pid = int(
            Path(f"/proc/{worker_pid}/status").read_text().split("PPid:\t")[1].split()[0]
        )
        assert forkserver_pid != caller.pid
        started += [worker_pid, forkserver_pid]
        caller.send_signal(signal.SIGKILL)
        caller.wait()
        deadline = time.monotonic() + 10
        while not (_gone(worker_pid) and _gone(forkserver_pid)):
            assert time.monotonic() < deadline, "forkserver or worker outlived the caller"
            time.sleep(0.05)
    finally:
        if caller.poll() is None:
            caller.kill()
            caller.wait()
        for pid in started:  # leave nothing running if the test failed
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)
