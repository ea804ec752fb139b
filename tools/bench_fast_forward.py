"""Wall time against N per dataflow, exact and fast-forwarded; the plot docs/runtime.md shows.

Each point is one `run_one` (emission and replay, in a fresh worker) on platforms/attenio.yaml
at d = 64. Exact runs stop at --exact-max (their cost grows with N; FLAT at N = 128K takes a
quarter of an hour); fast-forwarded runs go to --max. Prints a table, the goal for FLAT at
N = 128K (< 30 s), and writes the plot.

    .venv/bin/python tools/bench_fast_forward.py [--max 131072] [--exact-max 16384]
        [--plot docs/runtime_scaling.png]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DATAFLOWS = ("standard", "flat", "flash2", "attenio")
HEAD_DIM = 64


def _wall(dataflow: str, seq_len: int, exact: bool) -> tuple[float, float]:
    """(wall seconds, simulated fraction) of one configuration in a fresh worker."""
    from tlm_models.run.config import RunConfig
    from tlm_models.run.execute import run_one
    from tlm_models.run.worker import run_in_worker

    config = RunConfig.of(dataflow=dataflow, seq_len=seq_len, head_dim=HEAD_DIM, exact=exact)
    result = run_in_worker(run_one, config)
    fraction = float(result["fast_forward"].get("simulated_fraction", 1.0))
    return float(result["wall_s"]), fraction


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=131072)
    parser.add_argument("--exact-max", type=int, default=16384)
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "runtime_scaling.png")
    args = parser.parse_args()
    sizes = [n for n in (4096, 8192, 16384, 32768, 65536, 131072) if n <= args.max]
    points: dict[tuple[str, bool], list[tuple[int, float]]] = {}
    print(f"{'dataflow':<9} {'N':>7}  {'exact':>9}  {'fast-forward':>12}  simulated")
    for dataflow in DATAFLOWS:
        for n in sizes:
            exact = _wall(dataflow, n, True)[0] if n <= args.exact_max else None
            fast, fraction = _wall(dataflow, n, False)
            if exact is not None:
                points.setdefault((dataflow, True), []).append((n, exact))
            points.setdefault((dataflow, False), []).append((n, fast))
            exact_text = f"{exact:8.2f}s" if exact is not None else f"{'-':>9}"
            print(f"{dataflow:<9} {n:>7}  {exact_text}  {fast:11.2f}s  {fraction:8.1%}")
    flat = dict(points.get(("flat", False), [])).get(131072)
    if flat is not None:
        verdict = "met" if flat < 30 else "NOT met"
        label = f"FLAT at N = 128K, d = {HEAD_DIM}, fast-forwarded"
        print(f"{label}: {flat:.1f} s; goal < 30 s: {verdict}")
    _plot(points, args.plot)
    print(f"plot: {args.plot}")


def _plot(points: dict[tuple[str, bool], list[tuple[int, float]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    colours = dict(zip(DATAFLOWS, ("C0", "C1", "C2", "C3"), strict=True))
    for (dataflow, exact), series in sorted(points.items()):
        ns, walls = zip(*series, strict=True)
        ax.plot(
            ns, walls, marker="o", color=colours[dataflow], linestyle="-" if exact else "--",
            label=f"{dataflow} ({'exact' if exact else 'fast-forward'})",
        )  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length N (d = 64)")
    ax.set_ylabel("wall time per configuration (s)")
    ax.set_title("Simulation wall time on platforms/attenio.yaml (2-core machine)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
