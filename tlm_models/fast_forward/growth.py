"""Fast-forward of masked loops: skips by period or by linear growth, several per run.

A masked loop (its emitter gives iteration shapes, ``IterationControl.shapes``) changes regime
within a run: under a causal mask each head's blocks grow and the next head starts small
again; under a sliding window the blocks grow until the window is full and repeat after. The
watcher here skips a regime as soon as it repeats (``fast_forward.find_period``) or grows
linearly (``linear_growth.find_growth``), then watches again from the iterations after the
skip for the next regime, up to the end of the run. Each skip's change is added at the end;
for a growth skip corrected by the first iteration simulated after it
(``Growth.correction``). Loops without shapes keep the one-skip ``FastForward``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tlm_models.fast_forward.control import (
    FastForward,
    FastForwardSettings,
    IterationControl,
    Path,
    Period,
    StatsTree,
    flatten,
)
from tlm_models.fast_forward.linear_growth import Growth, ShapeWatch, find_growth

#: Idle causes an engine's stall is charged to (``replay_metrics.h``), besides the
#: ``bandwidth``/``dma_credits`` figures, which are busy time.
IDLE_CAUSES = ("load_data", "pe_result", "exp_result", "buffer_free", "store_done", "lookahead")


@dataclass
class IdleAcross:
    """An engine that issued nothing during a skip: the exact run charges the skipped time
    to the idle gap before its next operation (one stall cause, at that issue), which the
    extrapolation of per-iteration changes (all zero for it) misses. Resolved from the
    snapshots once that operation has issued."""

    root: str  # "replay", or a tile's "replay_tile<i>"
    engine: str
    after: int  # the first iteration after the skip
    time_ns: float  # the skipped time
    cause: str | None = None


@dataclass
class Skip:
    """One executed skip: its range, the change it adds, and how the section names it."""

    first: int
    count: int
    change: Period  # over the whole skip (added once)
    describe: dict[str, Any]
    #: A statistical period (bank-level memory) and its periods skipped: the skip's
    #: estimated errors are reported against the run's final statistics.
    statistical: tuple[Period, int] | None = None


def fast_forward_for(control: IterationControl, settings: FastForwardSettings) -> FastForward:
    """The watcher for an emitter's loop: several skips when its iterations have shapes."""
    if control.shapes is None:
        return FastForward(control, settings)
    return GrowthFastForward(control, settings)


@dataclass
class GrowthFastForward(FastForward):
    """``FastForward`` for masked loops: periods or linear growth, one regime after another."""

    growth: Growth | None = None
    shape_watch: ShapeWatch | None = None
    skips: list[Skip] = field(default_factory=list)
    #: Iterations before this one are not watched (the regime before the last skip).
    resume_from: int = 0
    #: Whether some rule was found (a skip may still have been too short to take).
    found: bool = False
    watched_before: int = 0  # iterations watched for the earlier skips
    #: Engines idle across a skip, their next operation's stall cause still to be seen.
    idle: list[IdleAcross] = field(default_factory=list)
    last_row: np.ndarray | None = None  # the latest snapshot row, for changes between rows
    index: dict[tuple[str, ...], int] = field(default_factory=dict)  # snapshot column by path

    def take(self, rows: np.ndarray, iterations: np.ndarray, starts: np.ndarray) -> None:
        self._take(rows, iterations, starts)
        if any(i.cause is None for i in self.idle):
            self.done_watching = False  # the snapshots must show where the idle time went

    def _take(self, rows: np.ndarray, iterations: np.ndarray, starts: np.ndarray) -> None:
        self._resolve_idle(rows, iterations)
        if self.skipped_range is not None:
            self._follow_skip(rows, iterations, starts)
            return
        keep = iterations >= self.resume_from
        if not keep.any():
            return
        super().take(rows[keep], iterations[keep], starts[keep])
        if self.period is None and not self.done_watching:
            self._take_growth()
        if self.period is None and self.growth is None:
            return
        self.found = True
        if self.skipped_range is not None:
            self.done_watching = False  # on to the skip, and the regime after it
        else:
            # Nothing to skip before the regime (or the run) ends: watch on for the next, with
            # a fresh budget (it bounds the watching of loops that never repeat; this one did,
            # and a run of many short regimes, such as approximate attention's passes of
            # every feature block, would otherwise stop watching before its long ones).
            self.period, self.growth = None, None
            self.watched_before += self.watched
            self.watched = 0
            self.done_watching = False

    def plan(self, period: int) -> tuple[int, int] | None:
        """A regime's period applies up to the next change of kind: the emitter may already be
        in the next regime (a short one, or a long read-ahead). The last snapshot row is taken
        as its iteration starts, so the last iteration measured is the one before it."""
        return self.control.plan_skip(
            period, self.settings.tail, watched_to=int(self.iterations[-1]) - 1
        )

    def _take_growth(self) -> None:
        """Plans a skip when the loop grows linearly and the emitter's shapes agree."""
        assert self.columns is not None
        if self.shape_watch is None:
            assert self.control.shapes is not None
            self.shape_watch = ShapeWatch(self.control.shapes)
        growth = find_growth(
            self.rows, self.iterations, self.starts, self.columns, self.settings, self.shape_watch
        )
        if growth is None:
            return
        self.growth = growth
        self.skipped_range = self.control.plan_skip(
            growth.iterations, self.settings.tail, growth_from=growth.measured_from
        )
        if self.skipped_range is not None:
            first, end = self.skipped_range
            total = growth.change(first, end - first)[:-1]
            change = dict(zip(growth.paths, map(float, total), strict=True))
            self.refused(change, *self.rows[-2:])  # the tiles' places (tile_fast_forward)
        self.done_watching = self.skipped_range is None

    def _follow_skip(self, rows: np.ndarray, iterations: np.ndarray, starts: np.ndarray) -> None:
        """After planning: keeps what the growth correction needs; once the skip has run (and
        the correction's snapshots are in), records it and watches for the next regime."""
        assert self.skipped_range is not None
        end = self.skipped_range[1]
        if self.growth is not None:
            self.growth.observe(rows, iterations, starts, end)
        if self.control.skip is not None:
            return  # not run yet: the emitter has not reached it
        if self.growth is not None and len(self.growth.after) < 2:
            return
        self._close_skip()
        self.resume_from = end + self.settings.warmup
        self.watched_before += self.watched
        self.watched = 0
        self.rows = np.zeros((0, 0))
        self.iterations = np.zeros(0, dtype=np.uint64)
        self.starts = np.zeros(0, dtype=np.uint64)
        self._take(rows, iterations, starts)  # rows of the next regime, if any already

    def _close_skip(self) -> None:
        """Records the skip planned last (it has run) and forgets its rule."""
        assert self.skipped_range is not None
        first, end = self.skipped_range
        count = end - first
        if self.growth is not None:
            change = self.growth.over(first, count)
            describe = self.growth.section(first)
        else:
            assert self.period is not None
            periods = count // self.period.iterations
            change = Period(
                count,
                {path: periods * delta for path, delta in self.period.deltas.items()},
                periods * self.period.time_ps,
                exact=self.period.exact,
                count_groups=self.period.count_groups,
            )
            describe = {
                "period_iterations": self.period.iterations,
                "periodicity": "exact"
                if self.period.exact
                else self.period.rule
                or f"times within {self.settings.time_tolerance:g} of each other",
                "period_ns": self.period.time_ps / 1e3,
            }
        statistical = (
            (self.period, count // self.period.iterations)
            if self.growth is None and self.period is not None and self.period.spread is not None
            else None
        )
        self.skips.append(Skip(first, count, change, describe, statistical))
        self._note_idle(change, first + count)
        self.period, self.growth, self.skipped_range = None, None, None

    def _resolve_idle_at_end(self, trees: dict[str, dict[str, Any]]) -> None:
        """An engine whose next operation came in the last iteration (no snapshot after it):
        its cause from the final statistics against the last snapshot."""
        if self.columns is None or self.last_row is None:
            return
        last = self.last_row
        index = self._index()
        for idle in (i for i in self.idle if i.cause is None and i.root in trees):
            final = flatten(trees[idle.root], idle.root)[0]
            engine = (idle.root, "engines", idle.engine)
            ops = index.get((*engine, "ops"))
            if ops is None or final.get((*engine, "ops"), 0.0) <= last[ops]:
                continue  # it never issued again: the exact run charged nothing either
            grew = {
                c: final[(*engine, "stalls", c)] - last[index[(*engine, "stalls", c)]]
                for c in IDLE_CAUSES
                if (*engine, "stalls", c) in index and (*engine, "stalls", c) in final
            }
            if grew:
                idle.cause = max(grew, key=lambda c: grew[c])

    def _index(self) -> dict[tuple[str, ...], int]:
        """The snapshot rows' column of each statistic's path (built once)."""
        if not self.index and self.columns is not None:
            self.index = {p: i for i, p in enumerate(self.columns.paths)}
        return self.index

    def _note_idle(self, change: Period, after: int) -> None:
        """Records the engines that issued nothing over the skip ``change``."""
        for path, delta in change.deltas.items():
            if len(path) == 4 and path[1] == "engines" and path[3] == "ops" and delta == 0:
                self.idle.append(IdleAcross(path[0], path[2], after, change.time_ps / 1e3))

    def _resolve_idle(self, rows: np.ndarray, iterations: np.ndarray) -> None:
        """Finds, for each engine idle across a skip, the stall cause its next operation was
        charged to: the cause that grew most in the snapshot where its count of operations
        grew (stalls are charged at issue)."""
        if self.columns is None or len(rows) == 0:
            return
        index = self._index()
        previous = self.last_row
        self.last_row = rows[-1]
        for idle in (i for i in self.idle if i.cause is None):
            ops = index.get((idle.root, "engines", idle.engine, "ops"))
            causes = [
                (c, index[k])
                for c in IDLE_CAUSES
                if (k := (idle.root, "engines", idle.engine, "stalls", c)) in index
            ]
            if ops is None or not causes:
                continue
            before = previous
            for row, iteration in zip(rows, iterations, strict=True):
                if before is not None and iteration > idle.after and row[ops] > before[ops]:
                    grew = row - before
                    idle.cause = max(causes, key=lambda c: grew[c[1]])[0]
                    break
                before = row

    def apply(
        self, replay: StatsTree, platform: StatsTree, others: dict[str, StatsTree] | None = None
    ) -> dict[str, Any]:
        if self.session is not None:
            self.poll()
        if self.skipped_range is not None and self.control.skip is None:
            self._close_skip()  # ran, but the run ended before the correction's snapshots
        self._resolve_idle_at_end({"replay": replay, **(others or {})})
        self.done_watching = True
        self.period, self.growth, self.skipped_range = None, None, None
        self.watched += self.watched_before  # the section counts every watched iteration
        self.watched_before = 0
        if not self.skips:
            section = super().apply(replay, platform, others)
            if self.found and not self.vetoed:
                section["reason"] = "too few iterations left to skip"
            return section
        # All skips as one change, added once by FastForward.apply.
        first = self.skips[0]
        groups = [g for s in self.skips for g in s.change.count_groups]
        self.period = Period(
            self.control.skipped,
            {
                path: sum(s.change.deltas.get(path, 0.0) for s in self.skips)
                for path in first.change.deltas
            },
            sum(s.change.time_ps for s in self.skips),
            exact=all(s.change.exact for s in self.skips),
            count_groups=groups,
        )
        self.skipped_range = (first.first, first.first + first.count)
        section = super().apply(replay, platform, others)
        trees = {"replay": replay, **(others or {})}
        for idle in self.idle:
            if idle.cause is not None and idle.root in trees:
                engine = _engine_node(trees[idle.root], idle.engine)
                if engine is not None:
                    _add_stall(engine, idle.cause, idle.time_ns)
        section |= first.describe
        if self.vetoed:
            section["refused_skip"] = self.vetoed  # a later regime's, simulated instead
        self._report_estimates(section, replay, platform, others)
        if len(self.skips) > 1:
            section["skips"] = [
                {"first_skipped": s.first, "skipped_iterations": s.count, **s.describe}
                for s in self.skips
            ]
        return section

    def _report_estimates(
        self,
        section: dict[str, Any],
        replay: dict[str, Any],
        platform: dict[str, Any],
        others: dict[str, dict[str, Any]] | None,
    ) -> None:
        """Each statistical skip's estimated errors against the final statistics (in its
        ``describe``), the section's ``estimated_error`` the one with the fewest statistics
        within the bound, and the reason of a skip taken outside it (``--ff-policy
        estimate``)."""
        statistical = self.settings.statistical
        taken = [s for s in self.skips if s.statistical is not None]
        if statistical is None or not taken:
            return
        from tlm_models.fast_forward.statistical import error_report

        totals: dict[Path, float] = {}
        for root, tree in {"replay": replay, "platform": platform, **(others or {})}.items():
            totals |= flatten(tree, root)[0]
        reports = []
        for skip in taken:
            assert skip.statistical is not None
            report = error_report(*skip.statistical, totals, statistical)
            skip.describe["estimated_error"] = report
            reports.append(report)
        section["estimated_error"] = min(reports, key=lambda r: int(str(r["within_bound"])))
        if self.skip_note:
            section["reason"] = self.skip_note


def _engine_node(replay: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The replay tree's node of engine ``name`` (``replay.engines.<name>``)."""
    for group in replay.get("children", []):
        if group.get("name") == "engines":
            for node in group.get("children", []):
                if node.get("name") == name:
                    found: dict[str, Any] = node
                    return found
    return None


def _add_stall(engine: dict[str, Any], cause: str, time_ns: float) -> None:
    """Adds idle time charged to ``cause`` (and to the engine's idle total); a compute
    engine's gap in its busy time (``idle``, replay_metrics.h) grows by as much."""
    engine["stats"]["idle_waiting"]["value"] += time_ns
    for child in engine.get("children", []):
        if child.get("name") in ("stalls", "idle"):
            child["stats"][cause]["value"] += time_ns
