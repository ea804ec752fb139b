"""Start-up and per-run costs of simulations: prints the numbers docs/runtime.md records, each
next to its goal.

- import time of the package (must not load cppyy);
- `attn-tlm --help` in a fresh process (goal < 0.3 s);
- the first result of `attn-tlm run --dataflow flash2 --seq-len 1K --head-dim 64` in a fresh
  process, the compiled models already cached (goal < 2 s);
- the compile of the models itself (once per change of headers, compiler or flags), into a
  scratch cache directory so the user's cache is left alone;
- time to the first result in a fresh Python process through the worker API, and the per-run
  cost of later runs (the smoke replay in a fresh worker each time).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = [sys.executable, "-m", "tlm_models.cli.main"]
RUN = [*CLI, "run", "--dataflow", "flash2", "--seq-len", "1K", "--head-dim", "64"]


def _import_seconds() -> float:
    code = "import time; t = time.perf_counter(); import tlm_models; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


def _wall(cmd: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def _median_wall(cmd: list[str], runs: int) -> tuple[float, float, float]:
    walls = [_wall(cmd) for _ in range(runs)]
    return statistics.median(walls), min(walls), max(walls)


def _verdict(value: float, goal: float) -> str:
    return "met" if value < goal else "NOT met"


def main() -> None:
    print(f"import tlm_models: {_import_seconds() * 1e3:.1f} ms")
    help_s = _median_wall([*CLI, "--help"], 5)
    print(
        f"attn-tlm --help, fresh process (5 runs): median {help_s[0]:.2f} s "
        f"(min {help_s[1]:.2f}, max {help_s[2]:.2f}); goal < 0.3 s: {_verdict(help_s[0], 0.3)}"
    )
    subprocess.run(
        [sys.executable, "-m", "tlm_models.runtime.aot"], check=True, capture_output=True
    )
    run_s = _median_wall(RUN, 5)
    print(
        f"first result of `attn-tlm run --dataflow flash2 --seq-len 1K --head-dim 64`, fresh "
        f"process (5 runs): median {run_s[0]:.2f} s (min {run_s[1]:.2f}, max {run_s[2]:.2f}); "
        f"goal < 2 s: {_verdict(run_s[0], 2.0)}"
    )
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "XDG_CACHE_HOME": scratch}
        compile_s = _wall([sys.executable, "-m", "tlm_models.runtime.aot"], env)
        print(f"compiling the models once (g++ -O2, empty cache): {compile_s:.1f} s")
        cold_s = _wall(RUN, env)
    print(f"the same run with an empty cache (compile included): {cold_s:.1f} s")

    start = time.perf_counter()
    from tlm_models.run.smoke import smoke_summary
    from tlm_models.run.worker import run_in_worker

    first = run_in_worker(smoke_summary)
    print(
        f"first result in a fresh process through run_in_worker: "
        f"{time.perf_counter() - start:.2f} s "
        f"(smoke replay: {first['ops']:.0f} ops, {first['sim_time_ns'] / 1e3:.1f} us simulated)"
    )
    runs = []
    for _ in range(10):
        t = time.perf_counter()
        run_in_worker(smoke_summary)
        runs.append(time.perf_counter() - t)
    print(
        f"later runs (10): median {statistics.median(runs) * 1e3:.0f} ms, "
        f"min {min(runs) * 1e3:.0f} ms, max {max(runs) * 1e3:.0f} ms"
    )


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
