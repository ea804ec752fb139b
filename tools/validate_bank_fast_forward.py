"""Fast-forward on the bank-level HBM against exact replays: every dataflow, as published and
with its defaults, at several (N, d), under a causal mask and at 32K; prints, per case, the
decision (skipped, or the ``reason`` it ran exactly), the wall and CPU times of both replays,
the worst relative difference of any statistic from its exact value and, for a run that
skipped, the worst per class of statistic, the simulated fraction and how many of the
statistics that differ measurably (by 1e-4 of themselves or more) lie within their
estimated error (docs/runtime.md, "On the bank-level HBM").

    .venv/bin/python tools/validate_bank_fast_forward.py [--cache DIR] [--only CASE ...]
        [--ff-error-bound FRACTION] [--ff-max-fraction FRACTION]

Each replay runs in its own worker, one after the other; exact results are kept in ``--cache``
(they do not depend on fast-forward), so a second run replays only the fast-forwarded side.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

#: (name, dataflow, N, d, dataflow parameters, mask): every dataflow with its defaults at 8K
#: and 16K, d = 64 and 128, as published (docs/study.md), under a causal mask, and at 32K.
Case = tuple[str, str, int, int, tuple[tuple[str, str], ...], str]
PUBLISHED = {
    "flash2": (("tiling", "paper"), ("overlap", "none")),
    "flat": (("overlap", "none"),),
    "standard": (("overlap", "none"),),
}
DATAFLOWS = ("flash2", "flat", "standard", "attenio", "approx")
CASES: list[Case] = (
    [
        (f"{df}-{n // 1024}K-{d}", df, n, d, (), "none")
        for n in (8192, 16384)
        for df in DATAFLOWS
        for d in (64, 128)
    ]
    + [
        (f"published-{df}-{n // 1024}K-{d}", df, n, d, params, "none")
        for n in (8192, 16384)
        for df, params in PUBLISHED.items()
        for d in (64, 128)
    ]
    + [
        (f"causal-{df}-{n // 1024}K-64", df, n, 64, (), "causal")
        for n in (8192, 16384)
        for df in DATAFLOWS
    ]
    + [(f"{df}-32K-64", df, 32768, 64, (), "none") for df in DATAFLOWS]
    + [(f"published-{df}-32K-64", df, 32768, 64, p, "none") for df, p in PUBLISHED.items()]
)

#: Statistics that stand as simulated (largest values, percentiles, time averages).
STANDS = ("latency_max", "latency_min", "queue_occupancy")
BANK_EVENTS = ("activates", "precharges", "row_hits", "row_misses", "row_conflicts", "refreshes")
CLASSES = ("bank events", "queue full", "latency buckets", "times", "counts", "bytes", "ratios",
           "as simulated")  # fmt: skip


def statistic_class(path: str, unit: str) -> str:
    name = path.rsplit("/", 1)[-1]
    if name in STANDS or "_p" in name:
        return "as simulated"
    if name in ("backpressured", "backpressure_time"):
        return "queue full"
    if "latency_histogram" in path:
        return "latency buckets"
    if path.startswith("platform/hbm") and name in BANK_EVENTS:
        return "bank events"
    return {"ns": "times", "B": "bytes", "1": "ratios", "B/s": "ratios"}.get(unit, "counts")


def compare(exact: dict[str, Any], fast: dict[str, Any]) -> dict[str, Any]:
    """Worst difference of any statistic (relative to itself; the host's figures left out),
    per class, the sim time's, and the estimated errors' coverage."""
    from tests.fast_forward_bank_jobs import differences

    worst: dict[str, tuple[float, str]] = {c: (0.0, "") for c in CLASSES}
    covered = measurable = 0
    for path, own in differences(exact, fast):
        kind = statistic_class(path, exact["units"].get(path, "ns"))
        worst[kind] = max(worst[kind], (own, path))
        estimate = fast["estimated_errors"].get(path)
        if estimate is not None and own >= 1e-4:
            measurable += 1
            covered += own <= estimate
    sim = exact["stats"]["replay/sim_time"]
    return {
        "sim_time": abs(fast["stats"]["replay/sim_time"] - sim) / sim,
        "worst": worst,
        "every": max(worst.values()),
        "covered": (covered, measurable),
    }


def main() -> None:
    from tests.fast_forward_bank_jobs import bank_replay_stats
    from tlm_models.run.config import FF_POLICIES
    from tlm_models.run.worker import run_in_worker

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path(".bank-ff-cache"))
    parser.add_argument("--only", nargs="*", help="case names (default: all)")
    parser.add_argument("--ff-error-bound", type=float, default=1e-3, metavar="FRACTION")
    parser.add_argument("--ff-max-fraction", type=float, default=0.2, metavar="FRACTION")
    parser.add_argument("--ff-policy", choices=FF_POLICIES, default="bound")
    args = parser.parse_args()
    args.cache.mkdir(exist_ok=True)
    accuracy = (args.ff_error_bound, args.ff_max_fraction, args.ff_policy)
    for name, dataflow, n, d, params, mask in CASES:
        if args.only and name not in args.only:
            continue
        cached = args.cache / f"{name}.json"
        if cached.exists():
            exact = json.loads(cached.read_text())
        else:
            exact = run_in_worker(bank_replay_stats, dataflow, n, d, False, params, mask)
            cached.write_text(json.dumps(exact))
        fast = run_in_worker(bank_replay_stats, dataflow, n, d, True, params, mask, *accuracy)
        section = fast["fast_forward"]
        result = compare(exact, fast)
        estimate = section.get("estimated_error") or {}
        walls = (
            f"wall exact {exact['wall_s']:.1f} s fast {fast['wall_s']:.1f} s, CPU exact "
            f"{exact.get('cpu_s', math.nan):.1f} s fast {fast['cpu_s']:.1f} s"
        )
        every = f"every statistic within {result['every'][0]:.1e} ({result['every'][1]})"
        if not section.get("skipped_iterations"):
            print(f"{name}: run exactly ({section.get('reason')}); {walls}; {every}")
            continue
        print(
            f"{name}: {section['periodicity']}, simulated {section['simulated_fraction']:.3f}, "
            f"{walls}, sim time {result['sim_time']:.1e} (estimated "
            f"{estimate.get('sim_time', math.nan):.1e}), within the bound "
            f"{estimate.get('within_bound')}/{estimate.get('statistics')}, measured within "
            f"their estimate {result['covered'][0]}/{result['covered'][1]}; {every}"
        )
        for kind, (own, path) in result["worst"].items():
            print(f"    {kind:16s} {own:.1e}  {path}")


if __name__ == "__main__":
    main()
