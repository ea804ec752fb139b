"""Steady-state fast-forward: simulate a dataflow's outer loop until it repeats, skip the rest.

The dataflows are loops whose iterations repeat the same timing once the pipeline is full. An
emitter marks where each iteration of its outer loop starts (:class:`IterationControl`); the
replayer snapshots every statistic (its own and every component's) when an iteration's first
record is issued. When the per-iteration changes of time and of every additive statistic are
identical over ``confirm`` consecutive periods of ``p`` iterations, the remaining iterations up
to a tail are not emitted at all: the models are time-invariant, so the shortened loop's tail
runs exactly as the full loop's would, only earlier. At the end every additive statistic gets
the skipped periods' changes added, and the ratios are recomputed from the extrapolated sums
(:data:`DERIVED`). Periodicity is exact (equal to the picosecond and the byte), so off-chip
bytes stay equal to the closed forms. ``--exact`` turns fast-forward off (DESIGN decision 14).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tlm_models.fast_forward.statistical import StatisticalSettings

Path = tuple[str, ...]
Flat = dict[Path, float]

#: Statistics that are largest values over a run: in a periodic run the largest value of the
#: skipped iterations is already among the simulated ones, so the simulated value stands.
EXTREMES = frozenset({"latency_max", "latency_min"})
#: Percentiles of a latency distribution: a periodic run's are the simulated part's (within
#: the histogram's bucket), so they stand as simulated.
PERCENTILES = re.compile(r"_p\d+$")
#: Time averages of a periodic quantity (a DRAM channel's mean queue occupancy): the simulated
#: part's average is the whole run's, so they stand as simulated.
AVERAGES = frozenset({"queue_occupancy"})
#: Ratios to a constant peak (a DRAM's efficiency = achieved bandwidth / peak bandwidth): they
#: scale with the statistic named here (of the same component) once that is recomputed.
SCALED = {"efficiency": "achieved_bandwidth"}
#: Figures of the simulating process rather than of the simulated machine (its record buffer,
#: its read-ahead decisions, the timeline it keeps): they stand as simulated.
HOST_FIGURES = frozenset(
    {"buffer_capacity", "lookahead_limited", "timeline_entries", "timeline_dropped"}
)
#: Equal means equal: times are whole picoseconds, but the statistics carry them as
#: nanoseconds in doubles, whose sums may differ in the last bits.
TIME_TOLERANCE_NS = 1e-6
#: Records per emitted chunk when fast-forwarding (the emitter runs at most this far ahead).
FAST_FORWARD_CHUNK_OPS = 1024


#: A replay's or platform's statistics as the result holds them: group -> statistic or subgroup.
StatsTree = dict[str, Any]


@dataclass(frozen=True)
class FastForwardSettings:
    """When to fast-forward: ``confirm`` equal periods of up to ``max_period`` iterations,
    after ``warmup`` iterations, keeping the last ``tail`` iterations simulated."""

    enabled: bool = True
    warmup: int = 2
    confirm: int = 3
    #: A period of ``long_period`` iterations or more that repeats exactly is confirmed by
    #: ``confirm_long`` repetitions: that already compares 2 x 4 = 8 or more iterations, to the
    #: picosecond and the byte. (AttenIO at d = 128 repeats every 8 iterations, and its runs
    #: have 9-131 iterations.)
    long_period: int = 4
    confirm_long: int = 2
    max_period: int = 32
    tail: int = 2
    #: Iterations watched at most; a loop that has not repeated by then runs exactly.
    budget: int = 256
    #: When no exact period shows: times (and iteration lengths) may differ by this fraction
    #: between periods; every count and byte must still repeat exactly, except as below.
    time_tolerance: float = 1e-4
    #: In that case, a statistic of one of a group of like components (HBM channels, SRAM
    #: banks and ports: siblings named ``channel0``, ``channel1``, ...) may also differ by this
    #: fraction of itself between periods, provided the group's sum repeats (exactly for counts
    #: and bytes): the loop repeats, but which channel a block's bursts hit rotates with the
    #: block's address over more iterations than the loop has.
    member_tolerance: float = 1e-3
    #: Shortest period in simulated picoseconds: several HBM refresh intervals when refresh is
    #: on, so that refreshes are averaged in rather than missed or over-counted.
    min_period_ps: int = 0
    #: When the loop runs on a bank-level memory that refreshes: the statistical rule
    #: (fast_forward/statistical.py), tried when no period repeats exactly or within the tolerances.
    statistical: StatisticalSettings | None = None
    #: Search for a period once this many new snapshot rows have come (1: at every poll).
    search_every: int = 1
    #: Iterations a period's repetitions must span at least (0: ``confirm`` repetitions are
    #: enough). On a bank-level memory the rows and banks a loop's blocks hit can cycle over
    #: several iterations, so a short period may repeat a few times inside a longer one and miss
    #: its odd iteration (FlashAttention-2 at 8K on HBM2 with shared command buses: seven equal
    #: iterations, then one with fewer row conflicts, every 8).
    min_span: int = 0

    def depth(self) -> int:
        """Snapshot rows kept while watching: enough for every rule."""
        own = (self.confirm + 1) * self.max_period + 1  # linear growth: one period more
        return max(own, self.statistical.depth()) if self.statistical else own

    def repetitions(self, period: int, exact: bool) -> int:
        """Repetitions of a period of ``period`` iterations that confirm it."""
        own = self.confirm_long if exact and period >= self.long_period else self.confirm
        return max(own, -(-self.min_span // period))


class IterationControl:
    """Between an emitter's outer loop and the replay: where iterations start, which to skip.

    The emitter calls :meth:`mark` at the start of each iteration it emits and
    :meth:`following` to learn which iteration comes next; the replay side calls
    :meth:`plan_skip` once it has seen the loop repeat. ``kinds`` (one hashable per iteration,
    equal for iterations whose records differ only in addresses) keeps a skip from crossing
    an iteration that differs from the one a period before it: masked attention's blocks
    change along the diagonal, and a loop over heads changes at each head's last block.
    ``shapes`` (optional, one ``(shape, counts)`` per iteration) let a loop whose blocks grow
    along a causal diagonal be skipped by the linear-growth rule
    (``fast_forward/linear_growth.py``); its watcher may then skip several times
    (``fast_forward/growth.py``).
    """

    def __init__(
        self,
        total: int,
        kinds: Sequence[Hashable] | None = None,
        shapes: Sequence[tuple[Hashable, tuple[int, ...]]] | None = None,
    ) -> None:
        if kinds is not None and len(kinds) != total:
            raise ValueError(f"{len(kinds)} iteration kinds for {total} iterations")
        if shapes is not None and len(shapes) != total:
            raise ValueError(f"{len(shapes)} iteration shapes for {total} iterations")
        self.total = total
        self.kinds = kinds
        self.shapes = shapes
        self.marks: list[tuple[int, int]] = []  # (iteration, first record) not yet sent
        self.next_fixed = 0  # the iteration the emitter emits next; it can no longer be skipped
        self.skip: tuple[int, int] | None = None
        self.skipped = 0

    def mark(self, iteration: int, record: int) -> None:
        self.marks.append((iteration, record))
        self.next_fixed = max(self.next_fixed, iteration)

    def following(self, iteration: int) -> int:
        """The iteration after ``iteration``: the next one, or the first after a planned skip."""
        nxt = iteration + 1
        if self.skip is not None and self.skip[0] == nxt:
            self.skipped += self.skip[1] - self.skip[0]
            nxt = self.skip[1]
            self.skip = None
        self.next_fixed = max(self.next_fixed, nxt)
        return nxt

    def plan_skip(
        self,
        period: int,
        tail: int,
        growth_from: int | None = None,
        watched_to: int | None = None,
    ) -> tuple[int, int] | None:
        """Skips whole periods from the first iteration still open up to ``tail`` before the end;
        returns the skipped range, or None when too little is left to skip or a skip is still
        pending. With ``growth_from`` (the loop grows linearly, ``fast_forward/linear_growth.py``)
        the skip stops before the first iteration whose shape breaks linear growth from
        ``growth_from`` on. With ``watched_to`` (the last iteration the period was measured on) and
        kinds, nothing is skipped when the kinds change between it and the skip: the emitter ran
        ahead into another regime than the one measured."""
        first = self.next_fixed + 1
        if watched_to is not None and self.kinds is not None:
            for i in range(max(watched_to + 1, period), min(first, self.total)):
                if self.kinds[i] != self.kinds[i - period]:
                    return None
        count = (self.total - tail - first) // period * period
        if growth_from is not None:
            from tlm_models.fast_forward.linear_growth import grows_linearly

            assert self.shapes is not None
            # The two iterations after the skip must grow alike too: the first corrects the
            # boundary, and it prefetches for the second (``Growth.correction``).
            limit = min(first + count + 2, self.total)
            stop = grows_linearly(self.shapes, period, growth_from + 2 * period, limit)
            if stop < limit:
                count = min(count, max(0, stop - 2 - first) // period * period)
        elif self.kinds is not None and count > 0 and first >= period:
            # Only iterations equal to the one a period earlier, back to the simulated ones.
            same = 0
            while same < count and self.kinds[first + same] == self.kinds[first + same - period]:
                same += 1
            count = same // period * period
        if count <= 0 or self.skip is not None:
            return None
        self.skip = (first, first + count)
        return self.skip

    def iterations(self) -> Iterator[int]:
        """The iterations to emit, in order (for loops that need no look-ahead)."""
        i = 0
        while i < self.total:
            yield i
            i = self.following(i)


def flatten(tree: dict[str, Any], root: str) -> tuple[Flat, dict[Path, str]]:
    """A statistics tree as {path: value} and {path: unit}; the root is named ``root``."""
    values: Flat = {}
    units: dict[Path, str] = {}

    def walk(node: dict[str, Any], prefix: Path) -> None:
        for name, stat in node.get("stats", {}).items():
            value = stat["value"]  # JSON null is a NaN (a ratio of zeros)
            values[(*prefix, name)] = math.nan if value is None else float(value)
            units[(*prefix, name)] = str(stat["unit"])
        for child in node.get("children", []):
            walk(child, (*prefix, str(child["name"])))

    walk(tree, (root,))
    _add_latency_sums(values)
    return values, units


def _histogram_count(values: Flat, group: Path) -> float:
    prefix = (*group, "latency_histogram")
    return sum(v for p, v in values.items() if p[:-1] == prefix)


def _add_latency_sums(values: Flat) -> None:
    """Means become sums (mean x count), which add up over iterations like any other count."""
    for path in [p for p in values if p[-1] == "latency_mean"]:
        group = path[:-1]
        values[(*group, "latency_sum")] = values[path] * _histogram_count(values, group)


def _ratio(num: float, den: float) -> float:
    return num / den if den else math.nan


def _window(values: Flat, group: Path) -> float:
    own = values.get((*group, "window"))
    return own if own is not None else values.get((*group[:-1], "window"), 0.0)


def _replay_root(values: Flat, group: Path) -> str:
    """The replay a group's time is a fraction of: its own (a tile's ``replay_tile<i>``), else
    the watched one's (platform components)."""
    return group[0] if (group[0], "sim_time") in values else "replay"


def _latency_mean(values: Flat, g: Path) -> float:
    count = _histogram_count(values, g)
    return values[(*g, "latency_sum")] / count if count else 0.0


#: Ratios and means, recomputed from the extrapolated sums with the formulas of the models
#: (replay_metrics.h, hbm.h, dma_channel.h, latency_stats.h); tests check that every ratio a
#: reference platform reports has an entry here.
DERIVED: dict[str, Callable[[Flat, Path], float]] = {
    "overlap_efficiency": lambda v, g: _ratio(v[(*g, "io_compute_overlap")], v[(*g, "io_active")]),
    "memory_stall_fraction": lambda v, g: (
        1.0 - _ratio(v[(*g, "compute_active")], v[(*g, "sim_time")])
    ),
    "busy_fraction": lambda v, g: _ratio(v[(*g, "busy_time")], v[(_replay_root(v, g), "sim_time")]),
    "achieved_bandwidth": lambda v, g: (
        (v[(*g, "bytes_read")] + v[(*g, "bytes_written")]) / (_window(v, g) * 1e-9)
        if _window(v, g) > 0
        else 0.0
    ),
    "utilization": lambda v, g: v[(*g, "busy_time")] / _window(v, g) if _window(v, g) > 0 else 0.0,
    "bandwidth": lambda v, g: (
        v[(*g, "bytes_read")] / (v[(*g, "busy_time")] * 1e-9) if v[(*g, "busy_time")] else 0.0
    ),
    "latency_mean": _latency_mean,
}


#: Units of ratios: a statistic named in DERIVED with one of these (or a mean) is recomputed;
#: the same name with another unit (a stall cause "bandwidth" in ns) is an ordinary sum.
RATIO_UNITS = frozenset({"1", "B/s"})


def _is_derived(path: Path, unit: str) -> bool:
    return path[-1] in DERIVED and (unit in RATIO_UNITS or path[-1] == "latency_mean")


def _is_additive(path: Path, unit: str) -> bool:
    return (
        not _is_derived(path, unit)
        and path[-1] not in EXTREMES | HOST_FIGURES | AVERAGES
        and not (path[-1] in SCALED and unit == "1")
        and not PERCENTILES.search(path[-1])
    )


def settings_for(
    config: Any, error_bound: float = 1e-3, max_fraction: float = 0.2, policy: str = "bound"
) -> FastForwardSettings:
    """Settings for a platform (a PlatformConfig): periods span four refresh intervals of its
    slowest-refreshing memory when any refreshes; a bank-level one adds the statistical rule,
    with its accuracy (``StatisticalSettings.error_bound``, ``max_simulated_fraction``)."""
    from tlm_models.fast_forward.statistical import StatisticalSettings

    refresh = max(
        (int(c.params.get("t_refi", 0) or 0) for c in config.components.values()), default=0
    )
    banked = [c.params for c in config.components.values() if c.params.get("fidelity") == "bank"]
    bank = max((int(p.get("t_refi", 0) or 0) for p in banked), default=0)
    if not bank:
        return FastForwardSettings(min_period_ps=4 * refresh)
    # The shortest time a refresh blocks a bank (tRFCpb under per-bank refresh).
    block = min(
        int(p.get("t_rfc_pb" if p.get("refresh") == "per_bank" else "t_rfc", 0) or 0)
        for p in banked
        if int(p.get("t_refi", 0) or 0)
    )
    # Windows of up to 256 iterations, 3 of them compared: watch up to 1,024 iterations, and
    # search every 8 new ones (a search scans up to 769 snapshot rows). The estimate policy
    # samples within the same budget.
    budget = 1024
    statistical = StatisticalSettings(
        bank,
        refresh_block_ps=block,
        max_window=256,
        error_bound=error_bound,
        max_simulated_fraction=max_fraction,
        policy=policy,
        estimate_budget=budget,
    )
    # Exact periods are confirmed over max_period iterations: a period up to that long shows.
    return FastForwardSettings(
        min_period_ps=4 * refresh,
        statistical=statistical,
        budget=budget,
        search_every=8,
        min_span=FastForwardSettings.max_period,
    )


@dataclass
class Period:
    """The loop's measured period: ``iterations`` per period, the change of every additive
    statistic over one period, and its simulated time."""

    iterations: int
    deltas: Flat
    time_ps: float
    exact: bool = True
    #: Groups of like components' counts whose members' changes are means (not whole numbers):
    #: extrapolated members are rounded so that each group's sum stays exact.
    count_groups: list[list[Path]] = field(default_factory=list)
    #: Counts whose changes are means over statistical windows: rounded to whole numbers.
    whole: list[Path] = field(default_factory=list)
    #: How the period was found, when not by the rules above (the result's ``periodicity``).
    rule: str = ""
    #: Statistical periods (fast_forward/statistical.py): each statistic's spread of its running
    #: total about its trend, and the windows the deltas are the mean of.
    spread: Flat | None = None
    #: ... and the standard deviation of its change per window.
    scatter: Flat | None = None
    windows: int = 0
    #: ... and the start times (ps) of the iterations they were measured on.
    starts: np.ndarray | None = None


@dataclass
class Columns:
    """What each snapshot column is: its path and unit, and how it is treated."""

    paths: list[Path]
    units: list[str]
    additive: np.ndarray  # checked for periodicity and extrapolated
    time: np.ndarray  # compared to TIME_TOLERANCE_NS rather than relatively
    #: Column indices of each group of like components' statistic (see member_tolerance).
    groups: list[np.ndarray] = field(default_factory=list)
    sum_columns: list[tuple[int, list[int]]] | None = None

    @staticmethod
    def of(layout: list[tuple[Path, str]]) -> Columns:
        paths = [p for p, _ in layout] + [(*p[:-1], "latency_sum") for p, _ in layout
                                           if p[-1] == "latency_mean"]  # fmt: skip
        units = [u for _, u in layout] + ["ns"] * (len(paths) - len(layout))
        additive = np.array([_is_additive(p, u) for p, u in zip(paths, units, strict=True)])
        time = np.array([u == "ns" for u in units])
        return Columns(paths, units, additive, time, _member_groups(paths, additive))

    def with_sums(self, rows: np.ndarray) -> np.ndarray:
        """``rows`` with the latency sums appended (mean x the histogram's count)."""
        extra = [rows[:, m] * rows[:, hist].sum(axis=1) for m, hist in self._sums(rows.shape[1])]
        return np.column_stack([rows, *extra]) if extra else rows

    def _sums(self, width: int) -> list[tuple[int, list[int]]]:
        """Per latency sum (the paths beyond the snapshot's ``width``), its mean's column and
        its histogram's columns (found once: a watched loop appends sums to every row)."""
        if self.sum_columns is None:
            index = {p: i for i, p in enumerate(self.paths)}
            buckets: dict[Path, list[int]] = {}
            for p, i in index.items():
                if p[-2:-1] == ("latency_histogram",):
                    buckets.setdefault(p[:-2], []).append(i)
            self.sum_columns = [
                (index[(*p[:-1], "latency_mean")], buckets.get(p[:-1], []))
                for p in self.paths[width:]
            ]
        return self.sum_columns


_NUMBERED = re.compile(r"^([A-Za-z_]+)(\d+)$")


def _member_groups(paths: list[Path], additive: np.ndarray) -> list[np.ndarray]:
    """Additive statistics of like components of the platform, grouped: the same statistic of
    siblings named ``<name><number>`` (``platform/hbm/channel3/bytes_read`` is in the group
    ``platform/hbm/channel*/bytes_read``). Groups of one are left out."""
    groups: dict[Path, list[int]] = {}
    for i, path in enumerate(paths):
        if not additive[i] or path[0] != "platform":
            continue
        for k in range(len(path) - 2, 0, -1):  # the innermost numbered component
            match = _NUMBERED.match(path[k])
            if match:
                key = (*path[:k], match.group(1) + "*", *path[k + 1 :])
                groups.setdefault(key, []).append(i)
                break
    return [np.array(m) for m in groups.values() if len(m) > 1]


def find_period(
    rows: np.ndarray,
    iterations: np.ndarray,
    starts: np.ndarray,
    columns: Columns,
    settings: FastForwardSettings,
) -> Period | None:
    """The shortest period over whose last ``confirm`` repetitions every additive statistic
    and the iteration start times changed by the same amounts: exactly if any period does,
    else with times within ``time_tolerance``."""
    for tolerance in (0.0, settings.time_tolerance):
        for p in range(1, settings.max_period + 1):
            need = settings.repetitions(p, exact=tolerance == 0.0) * p + 1
            if len(rows) < need:
                continue  # a longer period may need fewer repetitions
            if np.any(np.diff(iterations[-need:].astype(np.int64)) != 1):
                return None
            period = _period_of(rows, starts, columns, p, need, tolerance, settings)
            if period is not None and period.time_ps >= settings.min_period_ps:
                return period
    if settings.statistical is not None:
        from tlm_models.fast_forward.statistical import statistical_period

        return statistical_period(rows, iterations, starts, columns, settings.statistical)
    return None


def _period_of(
    rows: np.ndarray,
    starts: np.ndarray,
    columns: Columns,
    p: int,
    need: int,
    tolerance: float,
    settings: FastForwardSettings,
) -> Period | None:
    picks = np.arange(len(rows) - need, len(rows), p)
    times = np.diff(starts[picks].astype(np.int64)).astype(np.float64)
    if np.any(np.abs(times - times[-1]) > tolerance * times[-1]):
        return None
    all_steps = np.diff(rows[picks], axis=0)
    if not _repeats(all_steps, columns, tolerance, settings.member_tolerance):
        return None
    steps = all_steps[:, columns.additive]
    # With a tolerance the mean change stands for the period (counts are equal, but for the
    # members of a group, whose sums are).
    mean = steps.mean(axis=0) if tolerance else steps[-1]
    paths = [q for q, a in zip(columns.paths, columns.additive, strict=True) if a]
    counted = [[columns.paths[i] for i in g] for g in columns.groups if not columns.time[g[0]]]
    return Period(
        p,
        dict(zip(paths, map(float, mean), strict=True)),
        float(times.mean()),
        exact=tolerance == 0.0,
        count_groups=counted if tolerance else [],
    )


def _same(steps: np.ndarray, time: np.ndarray, tolerance: float, counts: float) -> np.ndarray:
    """Per column: whether every period's change equals the last one's (times within
    ``tolerance``, other columns within ``counts``, relatively)."""
    last = steps[-1]
    scale = np.maximum(np.abs(steps), np.abs(last))
    allowed = np.where(time, np.maximum(TIME_TOLERANCE_NS, tolerance * scale), counts * scale)
    ok = (np.abs(steps - last) <= allowed) | (np.isnan(steps) & np.isnan(last))
    return np.asarray(ok.all(axis=0), dtype=bool)


def _repeats(steps: np.ndarray, columns: Columns, tolerance: float, member: float) -> bool:
    """Whether the additive columns of ``steps`` (one row per period) repeat. Exactly
    (``tolerance`` 0): every column. With a tolerance: times within it, other columns exactly,
    except that a member of a group of like components may differ by ``member_tolerance`` of
    itself when the group's sum repeats."""
    time = columns.time
    same = _same(steps, time, tolerance, 1e-9)
    if tolerance:
        for group in columns.groups:
            sums = steps[:, group].sum(axis=1, keepdims=True)
            if _same(sums, time[group[:1]], tolerance, 1e-9).all():
                same[group] |= _same(steps[:, group], time[group], max(tolerance, member), member)
    return bool(same[columns.additive].all())


def _extrapolated(values: Flat, units: dict[Path, str], period: Period, periods: int) -> Flat:
    out = dict(values)
    for path, delta in period.deltas.items():
        if path in out:
            out[path] = values[path] + periods * delta
    for path in period.whole:
        if path in out:
            out[path] = values[path] + round(periods * period.deltas[path])
    for group in period.count_groups:
        _round_members(out, values, group)
    for path in out:
        if _is_derived(path, units.get(path, "")):
            out[path] = DERIVED[path[-1]](out, path[:-1])
    for path in out:
        base = (*path[:-1], SCALED.get(path[-1], ""))
        if units.get(path) == "1" and values.get(base):
            out[path] = values[path] * out[base] / values[base]
    return out


def _round_members(out: Flat, values: Flat, group: list[Path]) -> None:
    """Rounds the extrapolated members of a group of counts to whole numbers whose sum is the
    group's (exact) extrapolated sum: each added amount rounded down, the remainder given one
    by one to the members with the largest fractions."""
    added = np.array([out[p] - values[p] for p in group if p in out])
    members = [p for p in group if p in out]
    floors = np.floor(added)
    short = round(float(added.sum() - floors.sum()))
    order = np.argsort(floors - added, kind="stable")  # largest fraction first
    floors[order[:short]] += 1
    for path, add in zip(members, floors, strict=True):
        out[path] = values[path] + float(add)


def _write_back(tree: dict[str, Any], values: Flat, root: str) -> None:
    def walk(node: dict[str, Any], prefix: Path) -> None:
        for name, stat in node.get("stats", {}).items():
            value = values[(*prefix, name)]
            stat["value"] = None if math.isnan(value) else value
        for child in node.get("children", []):
            walk(child, (*prefix, str(child["name"])))

    walk(tree, (root,))


@dataclass
class FastForward:
    """Runs beside the replay: reads snapshots, plans the skip, extrapolates the results."""

    control: IterationControl
    settings: FastForwardSettings = field(default_factory=FastForwardSettings)
    period: Period | None = None
    skipped_range: tuple[int, int] | None = None
    done_watching: bool = False
    watched: int = 0
    session: Any = None
    columns: Columns | None = None
    rows: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    iterations: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))
    starts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))
    #: Snapshot rows taken but not yet searched (see FastForwardSettings.search_every).
    pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    #: A statistical period's window while more windows are simulated for its accuracy.
    sampling: int | None = None
    #: Why a statistical period was not skipped, and its estimated errors (the result's
    #: ``reason`` and ``estimated_error``).
    declined: tuple[str, dict[str, object]] | None = None
    #: A statistical skip taken with statistics outside the bound (``--ff-policy estimate``):
    #: the result's ``reason`` says so.
    skip_note: str = ""
    #: On tiles (``tile_fast_forward.drift``): why a planned skip, given the change of every
    #: count over it (and, for a growth skip, the counts at the last two watched iteration
    #: starts), would shift a tile against the watched one; the skip is then not taken.
    veto: Callable[[dict[Path, float], tuple[dict[Path, float], ...]], str | None] | None = None
    vetoed: str = ""  # the last refused skip's reason

    def attach(self, session: Any) -> None:
        """Sets ``session`` (a NativeSession) up to snapshot the marked iterations."""
        self.session = session
        session.observe_iterations()

    def poll(self) -> None:
        """Between kernel slices: hands new iteration marks to the replayer, reads the
        snapshots taken, and plans the skip once the loop repeats."""
        if self.done_watching:
            return
        for iteration, record in self.control.marks:
            self.session.mark_iteration(iteration, record)
        self.control.marks.clear()
        rows, iterations, starts = self.session.take_snapshots()
        if len(rows):
            if self.columns is None:
                self.columns = Columns.of(self.session.snapshot_layout())
            self.take(self.columns.with_sums(rows), iterations, starts)
        if self.done_watching:
            self.session.stop_iteration_snapshots()

    def take(self, rows: np.ndarray, iterations: np.ndarray, starts: np.ndarray) -> None:
        """Adds snapshot rows and plans the skip once the loop repeats."""
        assert self.columns is not None
        self.watched += len(rows)
        keep = iterations >= self.settings.warmup
        self.pending.append((rows[keep], iterations[keep], starts[keep]))
        # Search once enough rows have come (long histories are costly to scan); the watcher
        # of masked loops (fast_forward/growth.py) reads the rows after every take.
        every = self.settings.search_every if self.control.shapes is None else 1
        if sum(len(r) for r, _, _ in self.pending) < every and (
            self.watched < self.settings.budget or self.sampling is not None
        ):
            return  # while sampling, also past the budget (the simulated-fraction cap bounds it)
        if len(self.rows) == 0:
            self.rows = np.vstack([r for r, _, _ in self.pending])
        else:
            self.rows = np.vstack([self.rows, *(r for r, _, _ in self.pending)])
        self.iterations = np.concatenate([self.iterations, *(i for _, i, _ in self.pending)])
        self.starts = np.concatenate([self.starts, *(t for _, _, t in self.pending)])
        self.pending.clear()
        self.period = self._search()
        if self.period is not None:
            self.skipped_range = self.plan(self.period.iterations)
            if self.skipped_range is not None:
                first, end = self.skipped_range
                periods = (end - first) // self.period.iterations
                self.refused({p: periods * d for p, d in self.period.deltas.items()})
            self.done_watching = True
            self.sampling = None  # a later regime (fast_forward/growth.py) is searched afresh
            return
        if self.sampling is not None:
            return  # every steady window counts: keep the rows
        depth = self.settings.depth()
        self.rows, self.iterations, self.starts = (
            self.rows[-depth:],
            self.iterations[-depth:],
            self.starts[-depth:],
        )
        if self.watched >= self.settings.budget:
            self.done_watching = True

    def _search(self) -> Period | None:
        """The period found in the rows, unless a statistical one wants more windows
        simulated first (``sampling``; statistical_period.wants_more)."""
        assert self.columns is not None
        statistical = self.settings.statistical
        if self.sampling is not None and statistical is not None:
            from tlm_models.fast_forward.statistical import statistical_period

            period = statistical_period(
                self.rows, self.iterations, self.starts, self.columns, statistical, self.sampling
            )
            if period is None:
                self.sampling = None  # the window no longer repeats: search afresh
        else:
            period = find_period(
                self.rows, self.iterations, self.starts, self.columns, self.settings
            )
        if period is None or period.spread is None or statistical is None:
            return period
        from tlm_models.fast_forward.statistical import error_report, judge

        last = dict(zip(self.columns.paths, map(float, self.rows[-1]), strict=True))
        remaining = self.control.total - int(self.iterations[-1])
        ahead = {p: last[p] + remaining / period.iterations * d for p, d in period.deltas.items()}
        first = self.control.next_fixed + 1
        verdict = judge(period, ahead, self.control.total, first, self.settings.tail, statistical)
        if verdict.action == "skip":
            self.skip_note = verdict.reason
            return period
        if verdict.action == "more":
            self.sampling = period.iterations
            return None
        # Declined: the run goes on exactly, and its result says why.
        skip = max(0, (self.control.total - self.settings.tail - first) // period.iterations)
        self.declined = (verdict.reason, error_report(period, skip, ahead, statistical))
        self.sampling = None
        self.done_watching = True
        return None

    def plan(self, period: int) -> tuple[int, int] | None:
        """Plans the skip of whole periods of ``period`` iterations (``IterationControl``)."""
        return self.control.plan_skip(period, self.settings.tail)

    def refused(self, change: dict[Path, float], *rows: np.ndarray) -> bool:
        """Un-plans the skip just planned when ``veto`` refuses the change of its counts
        (``change`` minus the times; ``rows``: snapshot rows it is also shown, as counts by
        path); the emitter has not reached it yet."""
        if self.veto is None or self.skipped_range is None or self.columns is None:
            return False
        counts = [p for p, t in zip(self.columns.paths, self.columns.time, strict=True) if not t]
        index = {p: i for i, p in enumerate(self.columns.paths)}
        reason = self.veto(
            {p: change[p] for p in counts if p in change},
            tuple({p: float(row[index[p]]) for p in counts} for row in rows),
        )
        if reason is None:
            return False
        self.control.skip = None
        self.skipped_range = None
        self.vetoed = reason
        return True

    def apply(
        self, replay: StatsTree, platform: StatsTree, others: dict[str, StatsTree] | None = None
    ) -> dict[str, Any]:
        """Adds the skipped iterations to ``replay`` and ``platform`` (in place), and to the
        ``others`` trees (the other tiles' replays, by their snapshot root names); returns the
        result's ``fast_forward`` section."""
        if self.session is not None:
            self.poll()  # count the snapshots taken since the last slice
        total = self.control.total
        skipped = self.control.skipped
        section: dict[str, Any] = {
            "enabled": True,
            "iterations": total,
            "skipped_iterations": skipped,
            "simulated_iterations": total - skipped,
            "simulated_fraction": (total - skipped) / total if total else 1.0,
            "watched_iterations": self.watched,
        }
        if not skipped and self.declined is not None:
            section["reason"] = self.declined[0]
            section["estimated_error"] = self.declined[1]
            return section
        if not skipped and self.vetoed:
            section["reason"] = self.vetoed
            return section
        if not skipped or self.period is None:
            section["reason"] = (
                f"the loop did not repeat "
                f"{'exactly or statistically' if self.settings.statistical else 'exactly'} "
                f"within {self.watched} watched iterations"
                if self.period is None
                else "too few iterations left to skip"
            )
            return section
        periods = skipped // self.period.iterations
        trees = {"replay": replay, "platform": platform, **(others or {})}
        flat: Flat = {}
        units: dict[Path, str] = {}
        for root, tree in trees.items():
            tree_values, tree_units = flatten(tree, root)
            flat |= tree_values
            units |= tree_units
        values = _extrapolated(flat, units, self.period, periods)
        for root, tree in trees.items():
            _write_back(tree, values, root)
        assert self.skipped_range is not None
        if self.period.spread is not None and self.settings.statistical is not None:
            from tlm_models.fast_forward.statistical import error_report

            section["estimated_error"] = error_report(
                self.period, periods, values, self.settings.statistical
            )
            if self.skip_note:
                section["reason"] = self.skip_note
        section |= {
            "first_skipped": self.skipped_range[0],
            "period_iterations": self.period.iterations,
            "periodicity": self.period.rule
            or (
                "exact"
                if self.period.exact
                else f"times within {self.settings.time_tolerance:g} of each other"
            ),
            "period_ns": self.period.time_ps / 1e3,
            "skipped_time_ns": periods * self.period.time_ps / 1e3,
        }
        return section
