"""Start-up and per-run costs of simulations: prints the numbers docs/runtime.md records.

- import time of the package (must not load cppyy);
- time to the first result in a fresh process (forkserver start, SystemC + models loaded and
  warmed by one smoke replay, then the smoke replay in a worker);
- per-run cost of later runs (the same smoke replay in a fresh worker each time).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def _import_seconds() -> float:
    code = "import time; t = time.perf_counter(); import tlm_models; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


def main() -> None:
    print(f"import tlm_models: {_import_seconds() * 1e3:.1f} ms")
    start = time.perf_counter()
    from tlm_models.smoke import smoke_summary
    from tlm_models.worker import run_in_worker

    first = run_in_worker(smoke_summary)
    print(
        f"first result in a fresh process: {time.perf_counter() - start:.2f} s "
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
    main()
