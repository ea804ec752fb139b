"""`make bench`: every benchmark of the project, one after the other, printing its numbers.

The figures are recorded in the docs pages named beside each step (docs/runtime.md,
docs/models/*.md, docs/replayer.md, docs/dataflows.md, docs/study.md). They take about
20-40 minutes on a 2-core machine, most of it the full 40-configuration study grid.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.cpp_build import build_cpp_test  # noqa: E402  (the project's cached C++ build)

PYTHON = sys.executable
ENV = {**os.environ, "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"}


def step(title: str, cmd: list[str]) -> None:
    print(f"\n=== {title}\n$ {' '.join(cmd)}", flush=True)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, env=ENV)
    print(f"({time.perf_counter() - start:.1f} s)", flush=True)


def main() -> None:
    step("start-up and per-run cost (docs/runtime.md)", [PYTHON, "tools/bench_startup.py"])
    for name, args in (
        ("bench_memory", []),
        ("bench_memory", ["tg"]),
        ("bench_memory", ["onchip"]),
        ("bench_engines", ["64"]),
        ("bench_replayer", ["10000000"]),
    ):
        binary = build_cpp_test(ROOT / "tools" / f"{name}.cpp")
        step(f"{name} {' '.join(args)} (docs/models/, docs/replayer.md)", [str(binary), *args])
    step("replay end to end (docs/replayer.md)", [PYTHON, "tools/bench_replay.py"])
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
        "full study grid, 40 configurations (docs/study.md)",
        [PYTHON, "-m", "tlm_models.cli.main", "demo", "--full", "--out", "results/bench-grid"],
    )


if __name__ == "__main__":
    main()
