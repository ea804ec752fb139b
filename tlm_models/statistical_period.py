"""Statistical periodicity: fast-forward over a memory whose state does not repeat per iteration.

A bank-level DRAM refreshes every tREFI on its own clock and keeps rows open across
iterations, so no two of a loop's iterations see the same refresh phase or row-buffer state:
their times and bank-event counts (activates, row hits/misses/conflicts, queue waits) differ
from one iteration to the next, and the exact rule of ``fast_forward.py`` never finds a period.
Over a window of W iterations that spans many refresh intervals, and whose length is (nearly)
a whole number of them, the refresh phase returns to where it was and those fluctuations
average out. This rule compares the last ``windows`` such windows:

- off-chip bytes (the replay's off-chip and per-tensor bytes, the HBM's bytes; a channel's
  bytes as part of its channels' sum) repeat exactly, so extrapolated bytes stay equal to the
  closed forms;
- the windows' simulated times agree within ``time_tolerance`` of each other;
- every other statistic (times, operation counts, bank events) agrees within
  ``stat_tolerance`` of the window's mean change or within ``time_floor`` of the window's time
  (for times) / ``count_floor`` events (for counts): a statistic that is a small part of the
  run may fluctuate more, relatively, without weighing on any total.

The period is W iterations; the extrapolation adds the mean change over the compared windows
per skipped window (counts rounded to whole numbers, like components' so that their sum
stays whole). Skipping whole windows also keeps the tail's refresh phase where the exact run
has it (up to the residual below per skipped window). docs/runtime.md gives the measured
accuracy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tlm_models.fast_forward import Columns, Path, Period


@dataclass(frozen=True)
class StatisticalSettings:
    """When a loop over a refreshing memory counts as periodic (docs/runtime.md)."""

    #: The memory's refresh interval, ps (the slowest-refreshing memory's tREFI).
    refresh_ps: int
    #: A window spans at least this many refresh intervals: a refresh's effect (tRFC of
    #: stalls, its reopened rows) is then at most about 1/16 of a window's refresh activity,
    #: and the windows' mean averages 3 x 16 = 48 or more of them.
    min_refreshes: int = 16
    #: A window's length is within this fraction of tREFI of a whole number of refresh
    #: intervals, so that each window holds the same number of refreshes at nearly the same
    #: phase (a window that held one refresh more than the next would differ by a whole
    #: refresh's cost, 1/16 of the refresh activity). A window of R intervals may miss a
    #: whole number by up to R x ``time_tolerance`` intervals as well: a refresh more or less
    #: then changes its refresh activity by no more than the time tolerance.
    max_residual: float = 0.05
    #: Windows compared; the extrapolation uses their mean.
    windows: int = 3
    #: Longest window, iterations (settings_for: 256 for loops of thousands of short
    #: iterations, FLAT's).
    max_window: int = 64
    #: The windows' simulated times agree within this fraction of each other: a quarter of the
    #: 1e-3 accuracy the fast-forward contract promises on the run's time.
    time_tolerance: float = 2.5e-4
    #: Other statistics agree within this fraction of their mean change per window ...
    stat_tolerance: float = 0.01
    #: ... or, for times, within this fraction of the window's simulated time ...
    time_floor: float = 1e-3
    #: ... or, for counts, within this many events per window.
    count_floor: float = 64.0

    def depth(self) -> int:
        """Snapshot rows the rule needs at most."""
        return self.windows * self.max_window + 1


#: Bytes that must repeat exactly: the replay's off-chip and per-tensor bytes and the HBM's.
def _offchip_bytes(path: Path, unit: str) -> bool:
    if unit != "B":
        return False
    if path[0] == "replay":
        return path[-1] in ("offchip_read", "offchip_write") or (
            len(path) > 1 and path[1] == "tensors"
        )
    return len(path) > 1 and path[0] == "platform" and path[1] == "hbm"


def candidate_windows(
    iteration_ps: float, available: int, settings: StatisticalSettings
) -> list[int]:
    """Window lengths W (iterations) that span ``min_refreshes`` refresh intervals and end
    within ``max_residual`` of a whole number of them, shortest first, that ``available``
    snapshot rows can compare."""
    if iteration_ps <= 0:
        return []
    refreshes = iteration_ps / settings.refresh_ps
    shortest = max(1, math.ceil(settings.min_refreshes / refreshes))
    longest = min(settings.max_window, (available - 1) // settings.windows)
    return [
        w
        for w in range(shortest, longest + 1)
        if abs(w * refreshes - round(w * refreshes))
        <= max(settings.max_residual, w * refreshes * settings.time_tolerance)
    ]


def statistical_period(
    rows: np.ndarray,
    iterations: np.ndarray,
    starts: np.ndarray,
    columns: Columns,
    settings: StatisticalSettings,
) -> Period | None:
    """The shortest window of iterations over which the loop repeats statistically (the
    module's rule), or None."""
    if len(rows) < 3:
        return None
    breaks = np.flatnonzero(np.diff(iterations.astype(np.int64)) != 1)
    available = len(rows) - int(breaks[-1]) - 1 if breaks.size else len(rows)
    span = starts[-available:].astype(np.float64)
    iteration_ps = (span[-1] - span[0]) / (available - 1) if available > 1 else 0.0
    for w in candidate_windows(iteration_ps, available, settings):
        period = _window_period(rows, starts, columns, w, settings)
        if period is not None:
            return period
    return None


def _window_period(
    rows: np.ndarray, starts: np.ndarray, columns: Columns, w: int, settings: StatisticalSettings
) -> Period | None:
    need = settings.windows * w + 1
    picks = np.arange(len(rows) - need, len(rows), w)
    times = np.diff(starts[picks].astype(np.int64)).astype(np.float64)
    mean_time = float(times.mean())
    if np.any(np.abs(times - mean_time) > settings.time_tolerance * mean_time):
        return None
    steps = np.diff(rows[picks], axis=0)
    if not _agree(steps, columns, mean_time / 1e3, settings):
        return None
    additive = columns.additive
    mean = steps.mean(axis=0)
    paths = [p for p, a in zip(columns.paths, additive, strict=True) if a]
    counts = [
        p for p, u, a in zip(columns.paths, columns.units, additive, strict=True) if a and u != "ns"
    ]
    refreshes = mean_time / settings.refresh_ps
    return Period(
        w,
        dict(zip(paths, map(float, mean[additive]), strict=True)),
        mean_time,
        exact=False,
        count_groups=[
            [columns.paths[i] for i in g] for g in columns.groups if not columns.time[g[0]]
        ],
        whole=counts,
        rule=f"statistical over {w} iterations spanning {round(refreshes)} refresh intervals",
    )


def _agree(steps: np.ndarray, columns: Columns, window_ns: float, s: StatisticalSettings) -> bool:
    """Whether every additive column's change per window agrees across the windows (the
    module's rule); off-chip bytes exactly, members of like components through their sum."""
    exact, in_group, groups = _offchip_columns(columns)
    if not np.all(steps[:, exact & ~in_group] == steps[-1, exact & ~in_group]):
        return False
    for group in groups:
        sums = steps[:, group].sum(axis=1)
        if not np.all(sums == sums[-1]):
            return False
    mean = steps.mean(axis=0)
    dev = np.abs(steps - mean).max(axis=0)
    floor = np.where(columns.time, s.time_floor * window_ns, s.count_floor)
    ok = (dev <= np.maximum(s.stat_tolerance * np.abs(mean), floor)) | np.isnan(dev)
    return bool(ok[columns.additive].all())


_OFFCHIP: dict[int, tuple[Columns, np.ndarray, np.ndarray, list[np.ndarray]]] = {}


def _offchip_columns(columns: Columns) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Which columns are off-chip bytes, which are members of like components, and the groups
    of off-chip byte members (computed once per layout)."""
    known = _OFFCHIP.get(id(columns))
    if known is None or known[0] is not columns:
        exact = np.array(
            [_offchip_bytes(p, u) for p, u in zip(columns.paths, columns.units, strict=True)],
            dtype=bool,
        )
        in_group = np.zeros(len(columns.paths), dtype=bool)
        for group in columns.groups:
            in_group[group] = True
        groups = [g for g in columns.groups if exact[g[0]]]
        known = _OFFCHIP[id(columns)] = (columns, exact, in_group, groups)
    return known[1], known[2], known[3]
