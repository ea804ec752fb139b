"""Exact replays with DMA burst trains on (the default) and off (one call per burst): CPU time,
wall time, and a check that both give every statistic alike; the figures of docs/runtime.md
("Burst trains").

Each run is one process (`python tools/bench_burst_trains.py child ...`) that emits the trace
and replays it exactly on platforms/attenio.yaml at d = 64; trains on and off run back to back.
The CPU time (user + system of that process: emission and replay) is the figure to compare on
a shared machine, where wall time mostly measures the wait for a core.

    .venv/bin/python tools/bench_burst_trains.py [--seq-lens 16384,32768]
        [--dataflows flat,standard]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _child(dataflow: str, seq_len: int, trains: str) -> None:
    from tests.burst_train_jobs import replay_stats

    result = replay_stats(dataflow, seq_len, 64, [f"dma.burst_trains={trains}"])
    print(json.dumps(result))


def _run(dataflow: str, seq_len: int, trains: bool) -> tuple[dict[str, Any], float]:
    """The replay's statistics and wall time, and the CPU seconds of its process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [sys.executable, __file__, "child", dataflow, str(seq_len), str(trains).lower()]
    out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    result: dict[str, Any] = json.loads(out.splitlines()[-1])
    return result, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq-lens", default="16384,32768")
    parser.add_argument("--dataflows", default="flat,standard")
    args = parser.parse_args()
    print("| dataflow | N | load | CPU s, trains on / off | replay wall s, on / off | same |")
    print("|---|---|---|---|---|---|")
    same_all, cpu_on, cpu_off = True, 0.0, 0.0
    for dataflow in args.dataflows.split(","):
        for seq_len in (int(n) for n in args.seq_lens.split(",")):
            load = os.getloadavg()[0]
            (on, on_cpu), (off, off_cpu) = (
                _run(dataflow, seq_len, True),
                _run(dataflow, seq_len, False),
            )
            same = on["stats"] == off["stats"]
            same_all, cpu_on, cpu_off = same_all and same, cpu_on + on_cpu, cpu_off + off_cpu
            print(
                f"| {dataflow} | {seq_len} | {load:.1f} | {on_cpu:.2f} / {off_cpu:.2f} "
                f"| {on['wall_s']:.2f} / {off['wall_s']:.2f} | {same} |",
                flush=True,
            )
    verdict = "met" if same_all and cpu_on <= cpu_off else "not met"
    print(
        f"exact replays with burst trains: same statistics, CPU {cpu_on:.1f} s against "
        f"{cpu_off:.1f} s one call per burst (goal: same statistics, less CPU): {verdict}"
    )


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "child":
        _child(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        main()
