"""Fast-forward of loops whose iterations grow by the same amount per period (causal masks).

Under a causal mask each query block of an online-softmax or standard loop sees more keys
than the one before: a block of Br rows over tiles of Bc keys gains one K/V tile every Bc/Br
blocks (or Br/Bc tiles every block), so no two iterations repeat and ``find_period`` finds
nothing. Once the pipeline is full such a loop is periodic in its second differences: over a
period of ``p`` iterations, the change of every statistic from one iteration to the one ``p``
later is the same in every period (one more tile's bytes, operations and time per block).

Rule ("linear growth, period p"): with d_k the change of the snapshot row over iteration k,
the loop grows linearly with period p when c_r = d_k - d_{k-p} (r = k mod p) is the same in
each of the last ``repetitions`` periods: exactly for counts and bytes, and for times exactly
(to 1e-6 ns) or, failing that, with every iteration's change predicted by d_{k-p} + c_r within
``time_tolerance`` of itself. Then for k = origin + q p + r beyond the measured iterations
d_k = d_{origin + r} + q c_r, and the change over m skipped periods from iteration ``first`` is
sum_r m (d_{origin+r} + q0_r c_r) + m (m - 1) / 2 c_r (q0_r: the phase's first q), i.e.
S(k + m p) = S(k) + m D + m (m - 1) / 2 E with D the first skipped period's change and
E = sum_r c_r. The emitter's iteration shapes (``IterationControl.shapes``) must agree: equal a
period apart, with the growing counts (tiles, keys) changing by the same amount every period.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tlm_models.fast_forward.control import (
    TIME_TOLERANCE_NS,
    Columns,
    FastForwardSettings,
    Period,
)

#: Counts that include how far the replayer has read ahead, a figure of the host's chunking:
#: at the end of a run they equal the count named here, whose change they take.
READ_AHEAD = {"records_read": "ops"}

#: One iteration's shape for linear growth: what must be equal a period apart, and the counts
#: (tiles per run, keys) that may grow by the same amount every period.
Shape = tuple[Hashable, tuple[int, ...]]


def grows_linearly(shapes: Sequence[Shape], period: int, start: int, stop: int) -> int:
    """The first iteration in [start, stop) whose shape breaks linear growth with ``period``
    (differs from the one a period before, or its counts change by other amounts than a
    period before); ``stop`` when none does. Iterations before ``2 * period`` have no
    reference and break it."""
    for i in range(max(start, 0), stop):
        if i < 2 * period:
            return i
        (shape, counts), (prev, before), (_, oldest) = (
            shapes[i],
            shapes[i - period],
            shapes[i - 2 * period],
        )
        if shape != prev or len(counts) != len(before) or len(before) != len(oldest):
            return i
        if any(c - b != b - o for c, b, o in zip(counts, before, oldest, strict=True)):
            return i
    return stop


class ShapeWatch:
    """Where linear growth of the emitter's iteration shapes last broke, per period, scanned
    incrementally as the watched iterations advance (each iteration is compared once per
    period, not once per decision)."""

    def __init__(self, shapes: Sequence[Shape]) -> None:
        self.shapes = shapes
        self.scanned: dict[int, tuple[int, int]] = {}  # period -> (scanned up to, last break)

    def since(self, period: int, end: int) -> int:
        """The first iteration from which every one before ``end`` grows linearly."""
        scanned, broken = self.scanned.get(period, (0, -1))
        while scanned < end:
            scanned = grows_linearly(self.shapes, period, scanned, end)
            if scanned < end:
                broken = scanned
                scanned += 1
        self.scanned[period] = (scanned, broken)
        return broken + 1


@dataclass
class Growth:
    """A loop growing linearly with period ``iterations``: the changes of the additive columns
    and of the iteration start time over the iterations ``origin`` .. ``origin + p - 1``
    (``base``, one row per phase) and their change from one period to the next (``step``)."""

    iterations: int
    origin: int
    measured_from: int  # the first iteration of the rows that confirmed it
    paths: list[tuple[str, ...]]
    base: np.ndarray  # p x (additive columns + 1): the last column is the time in ps
    step: np.ndarray
    additive: np.ndarray  # which snapshot columns the paths are
    exact: bool = True
    tolerance: float = 0.0  # of times, relative to an iteration's change, when not exact
    #: Snapshot rows (additive columns, start time) of the first iterations after the skip.
    after: dict[int, np.ndarray] = field(default_factory=dict)

    @property
    def time_ps(self) -> float:
        """The last measured period's length."""
        return float(self.base[:, -1].sum())

    @property
    def periodicity(self) -> str:
        """How the result's ``fast_forward`` section names the rule."""
        rule = f"linear growth, period {self.iterations}"
        return rule if self.exact else f"{rule}, times within {self.tolerance:g} of prediction"

    def at(self, k: int) -> np.ndarray:
        """The predicted change of every column over iteration ``k`` (``k >= origin``)."""
        q, r = divmod(k - self.origin, self.iterations)
        return np.asarray(self.base[r] + q * self.step[r])

    def observe(
        self, rows: np.ndarray, iterations: np.ndarray, starts: np.ndarray, skip_end: int
    ) -> bool:
        """Keeps the snapshot rows of iterations ``skip_end`` and ``skip_end + 1`` (the first
        simulated after the skip); whether both are in."""
        for row, it, start in zip(rows, iterations, starts, strict=True):
            if int(it) in (skip_end, skip_end + 1):
                self.after[int(it)] = np.append(row[self.additive], float(start))
        return len(self.after) == 2

    def correction(self, skip_end: int) -> np.ndarray | None:
        """What the skipped iterations' change lacks: the predicted change over the first
        iteration after the skip minus the simulated one (module docstring), or None when its
        snapshots were not taken."""
        if len(self.after) < 2:
            return None
        return np.asarray(self.at(skip_end) - (self.after[skip_end + 1] - self.after[skip_end]))

    def change(self, first: int, count: int) -> np.ndarray:
        """The change of every column over iterations first .. first + count - 1 (whole
        periods, from ``origin`` on)."""
        p = self.iterations
        if count % p or first < self.origin:
            raise ValueError(
                f"{count} iterations from {first}: not whole periods past {self.origin}"
            )
        m = count // p
        total = np.zeros(self.base.shape[1])
        for r in range(p):
            q0 = -(-(first - self.origin - r) // p)  # the phase's first period index
            total += m * self.base[r] + (m * q0 + m * (m - 1) // 2) * self.step[r]
        return total

    def over(self, first: int, count: int) -> Period:
        """The skipped iterations as one ``Period`` (``fast_forward._extrapolated`` adds it
        once), corrected at the boundary when the snapshots after the skip were taken."""
        total = self.change(first, count)
        fix = self.correction(first + count)
        if fix is not None:
            total = total + fix
        deltas = dict(zip(self.paths, map(float, total[:-1]), strict=True))
        for path in deltas:
            same = (*path[:-1], READ_AHEAD.get(path[-1], ""))
            if same in deltas:
                deltas[path] = deltas[same]
        return Period(count, deltas, float(total[-1]), exact=self.exact)

    def section(self, first: int) -> dict[str, Any]:
        """What the result's ``fast_forward`` section says of the rule: the period, the length
        of the first skipped period and how much each period grows."""
        return {
            "period_iterations": self.iterations,
            "periodicity": self.periodicity,
            "period_ns": float(self.change(first, self.iterations)[-1]) / 1e3,
            "growth_per_period_ns": float(self.step[:, -1].sum()) / 1e3,
            "boundary_corrected": len(self.after) == 2,
        }


def find_growth(
    rows: np.ndarray,
    iterations: np.ndarray,
    starts: np.ndarray,
    columns: Columns,
    settings: FastForwardSettings,
    shapes: ShapeWatch | None = None,
) -> Growth | None:
    """The shortest period over whose last repetitions every additive statistic and the
    iteration start times grew linearly (module docstring): exactly if any period does, else
    with times within ``time_tolerance``; with ``shapes``, only periods over which the
    iterations' shapes grow linearly too (up to the last watched one, whose records the one
    before prefetches for)."""
    periods = range(1, settings.max_period + 1)
    for tolerance, p in itertools.product((0.0, settings.time_tolerance), periods):
        reps = settings.repetitions(p, exact=tolerance == 0.0)
        need = (reps + 1) * p + 1  # reps changes of the first differences over reps + 1 periods
        if len(rows) >= need:
            if np.any(np.diff(iterations[-need:].astype(np.int64)) != 1):
                return None  # not consecutive iterations: watching stopped and resumed
            start, end = int(iterations[-need]), int(iterations[-1]) + 1
            if shapes is not None and shapes.since(p, end) > start + 2 * p:
                continue
            growth = _growth_of(rows, iterations, starts, columns, p, reps, tolerance)
            if growth is not None and growth.time_ps >= settings.min_period_ps:
                return growth
    return None


def _growth_of(
    rows: np.ndarray,
    iterations: np.ndarray,
    starts: np.ndarray,
    columns: Columns,
    p: int,
    reps: int,
    tolerance: float,
) -> Growth | None:
    need = (reps + 1) * p + 1
    lengths = np.diff(starts[-need:].astype(np.int64)).reshape(reps + 1, p)
    second = np.diff(lengths, axis=0)
    slack = tolerance * np.abs(lengths[1:]) + TIME_TOLERANCE_NS * 1e3
    if np.any(np.abs(second - second[-1]) > slack):
        return None  # the iteration lengths do not grow alike: no need to look further
    values = np.column_stack(
        [rows[-need:, columns.additive], starts[-need:].astype(np.int64).astype(np.float64)]
    )
    time = np.append(columns.time[columns.additive], True)
    # The start time is in ps; it is compared like the other times, in ns.
    scale = np.append(np.ones(int(columns.additive.sum())), 1e-3)
    d = np.diff(values, axis=0).reshape(reps + 1, p, -1)  # periods x phases x columns
    e = np.diff(d, axis=0)  # each phase's change from one period to the next
    last = e[-1]
    if tolerance:
        # Times: each iteration's change predicted from a period earlier within the tolerance
        # of itself; counts and bytes: exactly.
        allowed = np.where(
            time, np.maximum(TIME_TOLERANCE_NS, tolerance * np.abs(d[1:]) * scale), 0
        )
    else:
        allowed = np.where(time, TIME_TOLERANCE_NS, 0) * np.ones_like(e)
    counts_slack = 1e-9 * np.maximum(np.abs(e), np.abs(last))
    ok = np.abs(e - last) * scale <= np.where(time, allowed, counts_slack)
    ok |= np.isnan(e) & np.isnan(last)
    if not ok.all():
        return None
    paths = [q for q, a in zip(columns.paths, columns.additive, strict=True) if a]
    return Growth(
        iterations=p,
        origin=int(iterations[-1]) - p,
        measured_from=int(iterations[-need]),
        paths=paths,
        additive=columns.additive,
        base=d[-1],
        step=e.mean(axis=0) if tolerance else last,
        exact=tolerance == 0.0,
        tolerance=tolerance,
    )
