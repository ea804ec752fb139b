"""Fast-forward on the bank-level HBM against exact replays: every dataflow, as published and
with its defaults, at several (N, d); prints, per case and per class of statistic, the worst
relative difference of a statistic from its exact value, the simulated fraction, the wall
times, and how many of the statistics that differ measurably (by 1e-4 of themselves or more)
lie within their estimated error (docs/runtime.md, "On the bank-level HBM").

    .venv/bin/python tools/validate_bank_fast_forward.py [--cache DIR] [--only CASE ...]

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

#: (name, dataflow, N, d, dataflow parameters): as published (docs/study.md) and defaults,
#: and FA2 at 32K, long enough for the extra windows to pay.
CASES: list[tuple[str, str, int, int, tuple[tuple[str, str], ...]]] = (
    [
        (f"{tag}{df}-{n // 1024}K-{d}", df, n, d, params)
        for df, published in (
            ("flash2", (("tiling", "paper"), ("overlap", "none"))),
            ("flat", (("overlap", "none"),)),
            ("standard", (("overlap", "none"),)),
        )
        for n in (8192, 16384)
        for d in (64, 128)
        for tag, params in (("", ()), ("published-", published))
    ]
    + [(f"attenio-16K-{d}", "attenio", 16384, d, ()) for d in (64, 128)]
    + [
        ("flash2-32K-64", "flash2", 32768, 64, ()),
        (
            "published-flash2-32K-64",
            "flash2",
            32768,
            64,
            (("tiling", "paper"), ("overlap", "none")),
        ),
        ("flash2-32K-128", "flash2", 32768, 128, ()),
    ]
)

#: Statistics that stand as simulated (largest values, percentiles, averages, the host's).
STANDS = ("latency_max", "latency_min", "queue_occupancy", "buffer_capacity",
          "lookahead_limited", "timeline_entries", "timeline_dropped")  # fmt: skip
BANK_EVENTS = ("activates", "precharges", "row_hits", "row_misses", "row_conflicts", "refreshes")
CLASSES = ("bank events", "queue full", "latency buckets", "times", "counts", "bytes", "ratios")


def statistic_class(path: str, unit: str) -> str:
    name = path.rsplit("/", 1)[-1]
    if name in ("backpressured", "backpressure_time"):
        return "queue full"
    if "latency_histogram" in path:
        return "latency buckets"
    if path.startswith("platform/hbm") and name in BANK_EVENTS:
        return "bank events"
    return {"ns": "times", "B": "bytes", "1": "ratios", "B/s": "ratios"}.get(unit, "counts")


def compare(exact: dict[str, Any], fast: dict[str, Any]) -> dict[str, Any]:
    """Worst difference per class, sim time's, and the estimated errors' coverage."""
    worst: dict[str, tuple[float, str]] = {c: (0.0, "") for c in CLASSES}
    covered = measurable = 0
    for path, want in exact["stats"].items():
        got = fast["stats"][path]
        name = path.rsplit("/", 1)[-1]
        if name in STANDS or "_p" in name or (math.isnan(want) and math.isnan(got)):
            continue
        diff = abs(got - want)
        own = diff / abs(want) if want else (math.inf if diff else 0.0)
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
        "covered": (covered, measurable),
    }


def main() -> None:
    from tests.fast_forward_bank_jobs import bank_replay_stats
    from tlm_models.worker import run_in_worker

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path(".bank-ff-cache"))
    parser.add_argument("--only", nargs="*", help="case names (default: all)")
    args = parser.parse_args()
    args.cache.mkdir(exist_ok=True)
    for name, dataflow, n, d, params in CASES:
        if args.only and name not in args.only:
            continue
        cached = args.cache / f"{name}.json"
        if cached.exists():
            exact = json.loads(cached.read_text())
        else:
            exact = run_in_worker(bank_replay_stats, dataflow, n, d, False, params)
            cached.write_text(json.dumps(exact))
        fast = run_in_worker(bank_replay_stats, dataflow, n, d, True, params)
        section = fast["fast_forward"]
        if not section.get("skipped_iterations"):
            print(f"{name}: run exactly ({section.get('reason')}); wall {fast['wall_s']:.1f} s")
            continue
        result = compare(exact, fast)
        estimate = section["estimated_error"]
        print(
            f"{name}: {section['periodicity']}, simulated {section['simulated_fraction']:.3f}, "
            f"wall exact {exact['wall_s']:.1f} s fast {fast['wall_s']:.1f} s, sim time "
            f"{result['sim_time']:.1e} (estimated {estimate['sim_time']:.1e}), within the "
            f"bound {estimate['within_bound']}/{estimate['statistics']}, measured within "
            f"their estimate {result['covered'][0]}/{result['covered'][1]}"
        )
        for kind, (own, path) in result["worst"].items():
            print(f"    {kind:16s} {own:.1e}  {path}")


if __name__ == "__main__":
    main()
