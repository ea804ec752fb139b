"""`make bench`: every benchmark of the project, one after the other, printing its numbers.

The figures are recorded in the docs pages named beside each step (docs/runtime.md,
docs/models/*.md, docs/replayer.md, docs/dataflows.md, docs/study.md); the issue's goals are
printed next to their figures (start-up, replay speed, FLAT at N = 128K, the full grid).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.cpp_build import build_cpp_test  # noqa: E402  (the project's cached C++ build)

PYTHON = sys.executable
ENV = {**os.environ, "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"}


#: Lines of the steps' output that state a figure against its goal, for the closing summary.
GOALS: list[str] = []


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"


def step(title: str, cmd: list[str]) -> None:
    """Runs one benchmark, echoing its output; keeps its lines that name a goal."""
    print(f"\n=== {title}\n$ {' '.join(cmd)}\n({_load()})", flush=True)
    start = time.perf_counter()
    with subprocess.Popen(cmd, cwd=ROOT, env=ENV, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            print(line, end="", flush=True)
            if "goal" in line:
                GOALS.append(line.strip())
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, cmd)
    print(f"({time.perf_counter() - start:.1f} s; {_load()})", flush=True)


def main() -> None:
    step("start-up and per-run cost (docs/runtime.md)", [PYTHON, "tools/bench_startup.py"])
    for name, args in (
        ("bench_memory", []),
        ("bench_memory", ["tg"]),
        ("bench_memory", ["onchip"]),
        ("bench_engines", ["64"]),
        ("bench_replayer", ["10000000"]),
        ("bench_dram_controller", []),
    ):
        binary = build_cpp_test(ROOT / "tools" / f"{name}.cpp")
        step(f"{name} {' '.join(args)} (docs/models/, docs/replayer.md)", [str(binary), *args])
    step("replay end to end (docs/replayer.md)", [PYTHON, "tools/bench_replay.py"])
    step(
        "predicted against measured wall time of runs (docs/study.md)",
        [PYTHON, "tools/bench_cost.py", "--reps", "1"],
    )
    for dataflow, n, d in (
        ("attenio", "131072", "64"),
        ("flash2", "131072", "128"),
        ("standard", "131072", "128"),
    ):
        step(
            f"emission {dataflow} N={n} d={d} (docs/dataflows.md)",
            [PYTHON, "tools/measure_emission.py", dataflow, n, d],
        )
    step(
        "wall time against N, exact and fast-forwarded (docs/runtime.md)",
        [PYTHON, "tools/bench_fast_forward.py"],
    )
    step(
        "exact replays with DMA burst trains on and off (docs/runtime.md, docs/models/dma.md)",
        [PYTHON, "tools/bench_burst_trains.py"],
    )
    grid = ROOT / "results" / "bench-grid"
    if grid.exists():
        shutil.rmtree(grid)  # a sweep resumes: time the whole grid, not what is left of it
    start = time.perf_counter()
    step(
        "the paper's grid, 40 configurations, fast-forward on (docs/runtime.md, docs/study.md)",
        [PYTHON, "-m", "tlm_models.cli.main", "sweep", "--out", str(grid), "--no-report",
         "--dataflows", "standard,flat,flash2,attenio", "--seq-lens", "8K,16K,32K,64K,128K",
         "--head-dims", "64,128"],
    )  # fmt: skip
    wall = time.perf_counter() - start
    verdict = "met" if wall < 120 else "NOT met"
    GOALS.append(
        f"the paper's 40-configuration grid wall time: {wall:.0f} s; goal < 120 s: {verdict}"
    )
    print(f"\n=== every figure against its goal ({_load()})")
    for line in GOALS:
        print(line)


if __name__ == "__main__":
    main()
