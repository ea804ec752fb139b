"""The first model chain: a traffic generator and an HBM channel, simulated from Python through
the worker runner and from a plain C++ sc_main (examples/vp/memory_traffic.cpp), report the same
simulated time and bytes, equal to the bandwidth-server formula."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests import worker_jobs
from tests.cpp_build import build_cpp_test
from tlm_models.run.worker import run_in_worker

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = ROOT / "tests" / "data" / "platforms" / "traffic_direct.yaml"

# latency + requests x size / bandwidth: 100 ns + 1024 x 256 B / (8 B/ns) = 32868 ns; with 16
# requests in flight the channel never idles after the first request.
EXPECTED_PS = (100 + 1024 * 256 // 8) * 1000


def _cpp(args: list[str]) -> dict[str, int]:
    binary = build_cpp_test(ROOT / "examples" / "vp" / "memory_traffic.cpp")
    out = subprocess.run(
        [str(binary), *args], capture_output=True, text=True, check=True, timeout=120,
        env={"SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"},
    )  # fmt: skip
    return {key: int(value) for key, value in (line.split() for line in out.stdout.splitlines())}


def test_python_and_cpp_report_the_same_time_and_bytes() -> None:
    python = run_in_worker(worker_jobs.traffic_platform, str(PLATFORM))
    cpp = _cpp(["1024", "256", "16", "1", "8", "100"])
    assert python == cpp
    assert python["last_completion_ps"] == EXPECTED_PS
    assert python["bytes"] == 1024 * 256
    assert python["completed"] == 1024 and python["errors"] == 0


def test_one_request_in_flight_pays_the_latency_every_time() -> None:
    # Serialised: each request takes 256 B / 8 B/ns + 100 ns = 132 ns.
    cpp = _cpp(["1024", "256", "1", "1", "8", "100"])
    assert cpp["last_completion_ps"] == 1024 * 132 * 1000
