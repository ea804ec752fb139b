"""The SystemC-from-Python path against the compiled library on the same traffic
(docs/python-systemc.md records the numbers).

Traffic: N reads of 256 B at sequential addresses of the paper machine's HBM
(platforms/attenio.yaml: 16 channels x 8 GB/s, 256 B interleave, 100 ns), one request in flight,
each issued when the previous one completed: every read takes 256 B / 8 GB/s + 100 ns = 132 ns
on the memory alone, so both paths must end at N x 132 ns.

- ``compiled``: the requests as an ``.rstl`` trace (delay 0) would give them to the StlPlayer of
  ``attn-tlm replay``: the player and the HBM in the g++-built library, bound with ctypes (no
  cppyy in the process).
- ``fed``: ``tlm_models.systemc.Simulation`` on the same memory alone, a ``FedTrafficGenerator``
  fed from Python in chunks of C requests (C = 65536: Python once per chunk; C = 1: once per
  request), every model JIT-compiled by cling.
- ``fed-paper``: the same generator on the whole paper platform, through ``dma_noc`` (link +
  HBM: 134 ns per read).

Each case runs in a fresh process. Reported: requests per second of the simulation itself
(wall and CPU time around ``sc_start`` / the replay, after a first slice that JIT-compiles the
path), the process's wall and CPU time from start to result (with cling's loading and the
platform's construction apart), and the simulated time.

    python tools/bench_python_systemc.py [--requests 1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PAPER = ROOT / "platforms" / "attenio.yaml"
READ = 256


def _compiled(count: int) -> dict[str, Any]:
    """The StlPlayer of ``attn-tlm replay x.rstl`` fed the requests as columns (no text to
    parse), on the platform's memory alone, as that command elaborates it."""
    import numpy as np

    from tlm_models.platform import load_platform
    from tlm_models.replay.stl_in import memory_only
    from tlm_models.runtime.session import NativeSession

    reduced, _, _ = memory_only(load_platform(PAPER))
    session = NativeSession(reduced)
    session.new_stl_player(next(iter(reduced.components)), True, 1 << 26, 1)
    index = np.arange(count, dtype=np.uint64)
    session.stl_feed(
        np.zeros(count, dtype=np.uint64),  # .rstl: no delay after the previous completion
        np.zeros(count, dtype=np.uint8),
        (index * np.uint64(READ)) % np.uint64(1 << 32),
        np.full(count, READ, dtype=np.uint32),
    )
    started, cpu0 = time.perf_counter(), time.process_time()
    session.stl_run()
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu0
    values = {k: v["value"] for k, v in session.stl_stats()["stats"].items()}
    return {
        "requests": int(values["requests"]),
        "sim_wall_s": wall,
        "sim_cpu_s": cpu,
        "sim_time_ns": float(values["last_completion"]),
    }


def _fed(count: int, chunk: int, paper: bool) -> dict[str, Any]:
    import numpy as np

    from tlm_models.platform import load_platform
    from tlm_models.replay.stl_in import memory_only
    from tlm_models.systemc import Simulation, requests

    config = load_platform(PAPER)
    sim = Simulation(config if paper else memory_only(config)[0])
    cpu0 = time.process_time()
    sim.cpp  # noqa: B018 -- SystemC, TLM and the models into cppyy
    cpu1 = time.process_time()
    sim.modules  # noqa: B018 -- the platform's modules, constructed and bound
    cpu2 = time.process_time()

    def chunks() -> Any:
        for start in range(0, count, chunk):
            index = np.arange(start, min(start + chunk, count), dtype=np.uint64)
            yield requests((index * np.uint64(READ)) % np.uint64(1 << 32), READ)

    gen = sim.add_traffic("gen", chunks())
    sim.bind("gen.socket", "dma_noc.in" if paper else "hbm.target")
    sim.run("2 us")  # cling compiles the path on its first execution: not counted
    warm = int(gen.requests())
    started, cpu3 = time.perf_counter(), time.process_time()
    end_ns = sim.run()
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu3
    return {
        "requests": int(gen.requests()),
        "sim_wall_s": wall,
        "sim_cpu_s": cpu,
        "timed_requests": int(gen.requests()) - warm,
        "sim_time_ns": end_ns,
        "load_cpu_s": cpu1 - cpu0,
        "platform_cpu_s": cpu2 - cpu1,
    }


def _child(case: str, count: int, chunk: int) -> None:
    result = _compiled(count) if case == "compiled" else _fed(count, chunk, case == "fed-paper")
    result["process_cpu_s"] = time.process_time()
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)  # a cppyy process takes ~0.3 s to tear down; the result is written


def _run(case: str, count: int, chunk: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"}
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, __file__, "--child", case, str(count), str(chunk)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    result["process_wall_s"] = time.perf_counter() - started
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], int(args.child[1]), int(args.child[2]))
        return
    n = args.requests
    cases = [
        ("compiled", "compiled library (StlPlayer, ctypes)", n, 0),
        ("fed", "Python-fed, chunks of 65536", n, 65536),
        ("fed", "Python-fed, one request per chunk", max(1, n // 10), 1),
        ("fed-paper", "Python-fed via dma_noc, chunks of 65536", n, 65536),
    ]
    print(f"load average {os.getloadavg()[0]:.1f}; {n:,} reads of {READ} B, one in flight")
    for case, label, count, chunk in cases:
        r = _run(case, count, chunk)
        timed = r.get("timed_requests", r["requests"])
        print(
            f"{label:42s} {r['requests']:>9,} requests  "
            f"{timed / r['sim_wall_s'] / 1e6:5.2f} M/s wall, "
            f"{timed / r['sim_cpu_s'] / 1e6:5.2f} M/s CPU  "
            f"process {r['process_wall_s']:5.1f} s wall, {r['process_cpu_s']:5.1f} s CPU"
            + (
                f" (loading {r['load_cpu_s']:.1f} s, platform {r['platform_cpu_s']:.1f} s CPU)"
                if "load_cpu_s" in r
                else ""
            )
            + f"  simulated {r['sim_time_ns'] / 1e6:.4f} ms"
        )


if __name__ == "__main__":
    main()
