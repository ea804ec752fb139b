"""Branch and bound over the points of a space: simulate in order of the lower bound, never
simulate a point whose bound cannot beat what has been simulated.

Every point first gets its closed-form figures (``prune.py``): points whose tiles do not fit,
or whose exact bytes, area, leakage or time bound already break a limit, are dropped without a
simulation. The rest are taken in increasing order of their bound on the first objective, a
batch at a time (as many as run in parallel); after each batch a point is pruned when a
simulated point that meets every limit is at least as good in every objective as the point's
bounds (one objective: bound >= best so far). A pruned point cannot be better than the best
found (its bound is not), so the optimum (the Pareto front) is exact; with one simulation at
a time the search simulates only points whose bound is below the optimum.

Results already in the exploration's store (an earlier, interrupted run) count as simulated:
the search goes on from them, and an interrupted search loses nothing that finished.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tlm_models.explore.pareto import (
    Constraints,
    Measured,
    front,
    objective_value,
    weakly_dominates,
)
from tlm_models.explore.prune import Estimate, Infeasible, estimate
from tlm_models.run.config import RunConfig

__all__ = ["Candidate", "Outcome", "Simulator", "explore"]

#: Runs configurations (resumably) and returns the result records of those that finished,
#: by key, and whether the run was interrupted.
Simulator = Callable[[Sequence[RunConfig]], tuple[Mapping[str, dict[str, Any]], bool]]
#: A simulated value may sit this far below its bound before it is reported (float rounding).
BOUND_SLACK = 1e-9


@dataclass(frozen=True)
class Candidate:
    """A point that fits and passes the closed-form limits."""

    config: RunConfig
    estimate: Estimate

    @property
    def key(self) -> str:
        return self.config.key()

    def bound(self, objectives: Sequence[str]) -> tuple[float, ...]:
        e = self.estimate
        area = e.area.total_mm2 if e.area is not None else None
        return tuple(
            objective_value(o, e.time_lb_s, e.energy_lb_j, e.bytes, area) for o in objectives
        )


@dataclass
class Outcome:
    """What a search found and what it cost."""

    objectives: tuple[str, ...]
    space_size: int
    candidates: list[Candidate]
    dropped: list[tuple[RunConfig, str]] = field(default_factory=list)
    measured: dict[str, Measured] = field(default_factory=dict)  # met every limit
    rejected: dict[str, str] = field(default_factory=dict)  # simulated, broke a limit
    failed: dict[str, str] = field(default_factory=dict)  # the simulation failed
    reused: int = 0  # results found in the store
    ran: int = 0  # simulations run by this search
    bound_violations: list[str] = field(default_factory=list)
    interrupted: bool = False

    @property
    def simulated(self) -> int:
        """Points whose simulation the search used (run now or found in the store)."""
        return len(self.measured) + len(self.rejected) + len(self.failed)

    def vector(self, key: str) -> tuple[float, ...]:
        return tuple(self.measured[key].value(o) for o in self.objectives)

    def front(self) -> list[str]:
        """Keys of the Pareto front (one objective: the best point, ties: the first)."""
        return front([(key, self.vector(key)) for key in self.measured])

    def candidate(self, key: str) -> Candidate:
        return next(c for c in self.candidates if c.key == key)


def screen(
    configs: Sequence[RunConfig], constraints: Constraints, with_area: bool
) -> tuple[list[Candidate], list[tuple[RunConfig, str]]]:
    """The closed-form pass: the points that may run, and the others with the reason."""
    kept: list[Candidate] = []
    dropped: list[tuple[RunConfig, str]] = []
    for config in configs:
        try:
            est = estimate(config, with_area=with_area)
        except Infeasible as exc:
            dropped.append((config, f"does not fit: {exc}"))
            continue
        why = _closed_form_violation(est, constraints)
        if why:
            dropped.append((config, why))
        else:
            kept.append(Candidate(config, est))
    return kept, dropped


def _closed_form_violation(e: Estimate, c: Constraints) -> str:
    if c.max_bytes is not None and e.bytes > c.max_bytes:
        return f"bytes {e.bytes / 2**20:.1f} MiB > {c.max_bytes / 2**20:.1f} MiB (closed form)"
    if c.max_time_s is not None and e.time_lb_s > c.max_time_s:
        return f"time >= {e.time_lb_s * 1e3:.3f} ms > {c.max_time_s * 1e3:.3f} ms (bound)"
    if e.area is not None and c.max_area_mm2 is not None and e.area.total_mm2 > c.max_area_mm2:
        return f"area {e.area.total_mm2:.3f} mm^2 > {c.max_area_mm2:.3f} mm^2"
    if e.area is not None and c.max_power_w is not None and e.area.leakage_w > c.max_power_w:
        return f"leakage alone {e.area.leakage_w:.3f} W > {c.max_power_w:.3f} W"
    return ""


def explore(
    configs: Sequence[RunConfig],
    objectives: Sequence[str],
    constraints: Constraints,
    simulate: Simulator,
    *,
    stored: Mapping[str, dict[str, Any]] | None = None,
    batch: int = 1,
    enumerate_all: bool = False,
    must_run: Sequence[str] = (),
    with_area: bool = False,
) -> Outcome:
    """Searches ``configs`` for the best points under ``constraints`` (module docstring).

    ``stored``: records already in the store, by key; ``enumerate_all`` simulates every
    candidate (to check the search); ``must_run``: keys simulated whatever their bounds (the
    reference points a study compares against)."""
    objectives = tuple(objectives)
    candidates, dropped = screen(configs, constraints, with_area)
    out = Outcome(objectives, len(configs), candidates, dropped)
    by_key = {c.key: c for c in candidates}
    done: set[str] = set()

    def take(records: Mapping[str, dict[str, Any]], fresh: bool) -> None:
        for key, record in records.items():
            cand = by_key.get(key)
            if cand is None or key in done:
                continue
            done.add(key)
            if fresh:
                out.ran += 1
            else:
                out.reused += 1
            _record(out, cand, record, constraints)

    take(stored or {}, fresh=False)
    forced = {key for key in must_run if key in by_key}
    bounds = {c.key: c.bound(objectives) for c in candidates}
    while True:
        # a point some simulated point weakly dominates is weakly dominated by the front
        front_now = [out.vector(k) for k in out.front()]
        ready = [
            c
            for c in candidates
            if c.key not in done
            and (
                enumerate_all
                or c.key in forced
                or not any(weakly_dominates(f, bounds[c.key]) for f in front_now)
            )
        ]
        if not ready:
            return out
        ready.sort(key=lambda c: (c.key not in forced, bounds[c.key]))
        chosen = ready[: max(1, batch)]
        records, interrupted = simulate([c.config for c in chosen])
        take({c.key: records[c.key] for c in chosen if c.key in records}, fresh=True)
        if interrupted:
            out.interrupted = True
            return out
        for c in chosen:  # a run the sweep did not record (it never does): not retried here
            done.add(c.key)


def _record(out: Outcome, cand: Candidate, record: dict[str, Any], limits: Constraints) -> None:
    if "error" in record:
        out.failed[cand.key] = str(record["error"])
        return
    area = cand.estimate.area
    measured = Measured.of_record(
        record,
        area.total_mm2 if area is not None else None,
        area.leakage_w if area is not None else None,
    )
    for objective, bound in zip(out.objectives, cand.bound(out.objectives), strict=True):
        value = measured.value(objective)
        if value < bound * (1 - BOUND_SLACK):
            out.bound_violations.append(
                f"{cand.key}: {objective} {value:.6g} below its bound {bound:.6g}"
            )
    why = limits.violated(measured)
    if why:
        out.rejected[cand.key] = why
    else:
        out.measured[cand.key] = measured
