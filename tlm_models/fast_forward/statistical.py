"""Statistical periodicity: fast-forward over a memory whose state does not repeat per iteration.

A bank-level DRAM refreshes every tREFI on its own clock and keeps rows open across
iterations, so no two of a loop's iterations see the same refresh phase or row-buffer state:
their times and bank-event counts (activates, row hits/misses/conflicts, queue waits) differ
from one iteration to the next, and the exact rule of ``fast_forward/control.py`` never finds a
period.
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

The period is W iterations. The extrapolation adds, per skipped window, the mean change over
every steady window simulated (the windows back from the last whose times agree within
``time_tolerance``), counts rounded to whole numbers (like components' so that their sum
stays whole). Skipping whole windows also keeps the tail's refresh phase where the exact run
has it (up to the residual below per skipped window). Refresh counts and times take the
memory's clock instead (a window of R refresh intervals holds R refreshes per channel), which
the whole counts of the simulated windows cannot resolve.

**Uncertainty.** Two models of how a statistic's change per window varies, the larger
taken. (1) The memory's state (refresh phase, open rows, queue contents) is bounded, so a
statistic's running total is its mean rate times the windows plus an offset that stays
bounded: S_k = k mu + C_k. Its spread sigma_C is the standard deviation of the simulated
window boundaries' totals about their least-squares line; the mean over n windows is off by
(C_n - C_0) / n, so m skipped windows by m / n of a difference of two offsets, and the
skipped stretch itself ends at another offset than it starts: a standard deviation of
sqrt(2) sigma_C sqrt((m / n)^2 + 1). (2) The windows' changes are independent with standard
deviation s (rare events: a stall, a full queue, a slow request): the mean is off by s / sqrt(n)
per window and the m skipped windows add their own s sqrt(m): s sqrt(m^2 / n + m); s is
measured over the windows starting at every steady iteration (W times as many as the
consecutive ones, so that a few windows of many iterations still show it). Measured
on the dataflows, bank events follow (1) (their running totals stay within a few hundred
events of a line over hundreds of iterations) and rare events (2). The estimated error is
that standard deviation times Student's t quantile at the level of ``sigmas`` for the n - 1
degrees of freedom the spread was measured with, relative to the statistic's extrapolated
total. While some statistic's estimated error exceeds ``error_bound`` and simulating more
windows (up to ``max_simulated_fraction`` of the loop) would bring it within, the loop is
simulated further; statistics that cannot meet the bound within that are named in the
result (``fast_forward.estimated_error``). A statistic that changed alike in every simulated
window is estimated exact. docs/runtime.md gives the measured accuracy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from tlm_models.fast_forward.control import Columns, Flat, Path, Period


@dataclass(frozen=True)
class StatisticalSettings:
    """When a loop over a refreshing memory counts as periodic (docs/runtime.md)."""

    #: The memory's refresh interval, ps (the slowest-refreshing memory's tREFI).
    refresh_ps: int
    #: The shortest time one refresh blocks a bank, ps (tRFC, or tRFCpb with per-bank
    #: refresh): the narrowest stretch of refresh phases over which a refresh meets a given
    #: access. The simulated iterations must start at every refresh phase to within it
    #: before a skip (``phase_gap``); 0: no such requirement.
    refresh_block_ps: int = 0
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
    #: Windows compared to find the period; the extrapolation then takes every steady one.
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
    #: Each extrapolated statistic's estimated error should stay within this fraction of its
    #: total: the fast-forward contract's 0.1 % (docs/runtime.md).
    error_bound: float = 1e-3
    #: Every statistic of a skipped run is within its estimated error at once with this
    #: confidence: each statistic's estimate is taken at the two-sided level
    #: (1 - confidence) / K of the K statistics (Bonferroni; ``family_sigmas``), since the
    #: promise is about all of them, not about each one on average.
    confidence: float = 0.95
    #: More windows are simulated, to meet ``error_bound``, up to this fraction of the loop's
    #: iterations: the cost a statistic's accuracy may add, i.e. fast-forward keeps at least
    #: a 1 / 0.2 = 5x speed-up from its own sampling (``--ff-max-fraction``; 1 simulates until
    #: every statistic that can meet the bound does).
    max_simulated_fraction: float = 0.2
    #: What a loop that cannot meet ``error_bound`` (or the refresh phases) within
    #: ``max_simulated_fraction`` does: ``bound`` runs exactly (the contract kept by not
    #: skipping), ``estimate`` skips once the sampling budget is spent and reports every
    #: statistic's estimated error instead (``--ff-policy``; studies far beyond what exact
    #: bank-level replay affords, e.g. ``attn-tlm reproduce attenio`` up to N = 128K).
    policy: str = "bound"
    #: Under ``estimate``, the iterations simulated before the skip stay within this many
    #: (the watching's own budget) as well as within ``max_simulated_fraction``: the policy
    #: is for loops too long to replay, where 20 % of the loop is itself too long (FLAT at
    #: N = 128K has 131,072 iterations).
    estimate_budget: int = 1024

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
    window: int | None = None,
) -> Period | None:
    """The shortest window of iterations over which the loop repeats statistically (the
    module's rule), or None; with ``window`` (a window found before, while more windows are
    simulated), that window's estimate from the rows."""
    if len(rows) < 3:
        return None
    breaks = np.flatnonzero(np.diff(iterations.astype(np.int64)) != 1)
    available = len(rows) - int(breaks[-1]) - 1 if breaks.size else len(rows)
    rows, starts = rows[-available:], starts[-available:]
    if window is not None:
        # The loop may have left the regime the window was found in (a multi-pass loop's
        # next pass): its estimate then stands on no steady window, so there is none.
        if available < settings.windows * window + 1 or not _repeats(
            rows, starts, columns, window, settings
        ):
            return None
        return _estimate(rows, starts, columns, window, settings)
    span = starts.astype(np.float64)
    iteration_ps = (span[-1] - span[0]) / (available - 1) if available > 1 else 0.0
    for w in candidate_windows(iteration_ps, available, settings):
        if _repeats(rows, starts, columns, w, settings):
            return _estimate(rows, starts, columns, w, settings)
    return None


def _repeats(
    rows: np.ndarray, starts: np.ndarray, columns: Columns, w: int, settings: StatisticalSettings
) -> bool:
    """Whether the last ``windows`` windows of ``w`` iterations agree (the module's rule)."""
    need = settings.windows * w + 1
    picks = np.arange(len(rows) - need, len(rows), w)
    times = np.diff(starts[picks].astype(np.int64)).astype(np.float64)
    mean_time = float(times.mean())
    if np.any(np.abs(times - mean_time) > settings.time_tolerance * mean_time):
        return False
    return _agree(np.diff(rows[picks], axis=0), columns, mean_time / 1e3, settings)


def _estimate(
    rows: np.ndarray, starts: np.ndarray, columns: Columns, w: int, settings: StatisticalSettings
) -> Period:
    """The period of ``w`` iterations estimated from every steady window in ``rows``: the
    windows back from the last whose times agree with the last ``windows`` ones within
    ``time_tolerance`` (the pipeline's filling is left out). Its ``spread`` is each
    statistic's sigma_C (the module's uncertainty)."""
    picks = np.arange((len(rows) - 1) % w, len(rows), w)
    times = np.diff(starts[picks].astype(np.int64)).astype(np.float64)
    recent = float(times[-settings.windows :].mean())
    off = np.abs(times - recent) > settings.time_tolerance * recent
    n = len(times) - (int(np.flatnonzero(off)[-1]) + 1 if off.any() else 0)
    bounds = rows[picks[-n - 1 :]]
    mean = (bounds[-1] - bounds[0]) / n
    # Windows at every offset within the steady iterations, not only the ones the picks
    # start: as many window sums as iterations, for the spread of a window's change.
    steady = rows[picks[-n - 1] :, columns.additive]
    scatter = (steady[w:] - steady[:-w]).std(axis=0, ddof=1)
    additive = columns.additive
    paths = [p for p, a in zip(columns.paths, additive, strict=True) if a]
    counts = [
        p for p, u, a in zip(columns.paths, columns.units, additive, strict=True) if a and u != "ns"
    ]
    mean_time = float(times[-n:].mean())
    _refreshes_by_clock(mean, columns.paths, mean_time / settings.refresh_ps)
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
        spread=dict(zip(paths, map(float, _offset_spread(bounds[:, additive])), strict=True)),
        scatter=dict(zip(paths, map(float, scatter), strict=True)),
        windows=n,
        starts=starts[picks[-n - 1] :].astype(np.float64),
    )


def _refreshes_by_clock(mean: np.ndarray, paths: list[Path], intervals: float) -> None:
    """Refreshes follow the memory's clock, not the loop: a window of ``intervals`` refresh
    intervals holds that many refreshes per refreshing unit (a channel, or each of its banks),
    a fraction the simulated windows' whole counts cannot show (their mean is off by up to one
    refresh over all of them, which the skipped windows would multiply). A component whose
    mean count per window is within ``_CLOCK_MATCH`` of a whole number k of units gets k x
    ``intervals`` per window, its refresh time in proportion (tRFC per refresh)."""
    index = {p: i for i, p in enumerate(paths)}
    for path, i in index.items():
        if path[-1] != "refreshes" or not mean[i] > 0:
            continue
        units = round(mean[i] / intervals)
        if units < 1 or abs(mean[i] - units * intervals) > _CLOCK_MATCH * units * intervals:
            continue
        scale = units * intervals / mean[i]
        mean[i] *= scale
        busy = index.get((*path[:-1], "refresh_time"))
        if busy is not None:
            mean[busy] *= scale


#: A component's refreshes per window match the clock's count within this fraction: a
#: window's refreshes are whole, so they miss the clock's by less than one per unit, and a
#: window spans at least ``min_refreshes`` = 16 intervals (1 / 16 = 0.0625).
_CLOCK_MATCH = 0.0625


def _offset_spread(bounds: np.ndarray) -> np.ndarray:
    """Per column, the standard deviation of the totals at the window boundaries about their
    least-squares line (sigma_C; two degrees of freedom go to the line)."""
    k = np.arange(len(bounds), dtype=np.float64)
    k -= k.mean()
    centred = bounds - bounds.mean(axis=0)
    slope = k @ centred / (k @ k)
    residual = centred - np.outer(k, slope)
    dof = max(1, len(bounds) - 2)
    return np.asarray(np.sqrt((residual * residual).sum(axis=0) / dof))


def estimated_errors(period: Period, skipped: int, totals: Flat, sigmas: float) -> Flat:
    """Each extrapolated statistic's estimated error relative to its total (``totals``: the
    extrapolated values) after ``skipped`` windows of ``period`` (the module's uncertainty);
    NaN statistics are left out, a total of 0 with an uncertain change is infinitely off."""
    assert period.spread is not None and period.scatter is not None
    n = period.windows
    quantile = student_quantile(sigmas, n - 1)
    out: Flat = {}
    for path, spread in period.spread.items():
        total = abs(totals.get(path, math.nan))
        scatter = period.scatter[path]
        if math.isnan(total) or math.isnan(spread):
            continue
        bounded = math.sqrt(2.0) * spread * math.hypot(skipped / n, 1.0)
        independent = scatter * math.sqrt(skipped * skipped / n + skipped)
        error = quantile * max(bounded, independent)
        out[path] = error / total if total else (math.inf if error else 0.0)
    return out


def student_quantile(z: float, dof: int) -> float:
    """Student's t quantile with ``dof`` degrees of freedom at the level of the normal
    quantile ``z`` (the t with the same one-sided tail as z): a spread measured from few
    windows is itself uncertain. With x = sqrt(v) tan(theta) the t density becomes
    cos(theta)^(v - 1), so the tail is a smooth integral over theta, found by bisection."""
    v = float(max(dof, 1))
    tail = NormalDist().cdf(-z)
    half = 0.5 * math.sqrt(math.pi) * math.exp(math.lgamma(v / 2) - math.lgamma((v + 1) / 2))

    def beyond(theta: float) -> float:  # one-sided tail of the t beyond sqrt(v) tan(theta)
        grid = np.linspace(theta, math.pi / 2, 2049)
        f = np.cos(grid) ** (v - 1)
        h = (grid[-1] - grid[0]) / 2048
        simpson = h / 3 * (f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum())
        return float(simpson) / (2 * half)

    low, high = 0.0, math.pi / 2
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if beyond(mid) > tail else (low, mid)
    return math.sqrt(v) * math.tan((low + high) / 2)


def family_sigmas(statistics: int, confidence: float) -> float:
    """The normal quantile at which ``statistics`` estimates hold all at once with
    ``confidence``: each at the two-sided level (1 - confidence) / statistics (Bonferroni,
    which assumes nothing about how the statistics depend on each other)."""
    return NormalDist().inv_cdf(1 - (1 - confidence) / (2 * max(statistics, 1)))


def phase_gap(starts_ps: np.ndarray, refresh_ps: int) -> float:
    """The widest stretch of refresh phases (ps, of ``refresh_ps``) at which none of the
    iterations starting at ``starts_ps`` starts: refreshes fall due on the memory's clock, so
    an iteration meets them at the phase its start has; a rare event tied to a refresh (a
    store that waits for one, a request queued behind it) shows in the sample only when
    some simulated iteration starts at its phase. When the iteration's length is nearly a
    whole number of intervals, the phase drifts by little per iteration and the sample must
    span the whole beat (the drift's cycle) before it closes."""
    if len(starts_ps) == 0:
        return float(refresh_ps)
    phases = np.sort(np.mod(np.asarray(starts_ps, dtype=np.float64), refresh_ps))
    return float(np.diff(np.append(phases, phases[0] + refresh_ps)).max())


@dataclass(frozen=True)
class Verdict:
    """What to do with a statistical period: ``skip`` now, simulate ``more`` windows, or
    ``decline`` (run exactly; ``reason`` says why)."""

    action: str
    reason: str = ""


def judge(
    period: Period, values: Flat, total: int, first: int, tail: int, s: StatisticalSettings
) -> Verdict:
    """Whether to skip from iteration ``first`` (of ``total``; ``values``: the statistics at
    the last snapshot, extrapolated to the end by the period). Skip only when every
    statistic's estimated error is within ``error_bound`` and the simulated iterations have
    met every refresh phase (``phase_gap`` within ``refresh_block_ps``); otherwise simulate
    more windows while the loop's ``max_simulated_fraction`` allows and every statistic would
    then meet the bound, else decline."""
    assert period.starts is not None
    w = period.iterations
    skip = max(0, (total - tail - first) // w)
    if skip == 0:
        return Verdict("decline", "too few iterations left to skip")
    now = estimated_errors(period, skip, values, sigmas_for(period, s))
    gap = phase_gap(period.starts, s.refresh_ps)
    met = gap <= s.refresh_block_ps or not s.refresh_block_ps
    if met and all(e <= s.error_bound for e in now.values()):
        return Verdict("skip")
    if s.policy == "estimate":
        return _estimate_verdict(period, skip, now, values, total, first, s)
    spare = _spare_windows(w, skip, total, s)
    cap = f"{s.max_simulated_fraction:g} of the loop's iterations"
    if spare > 0:
        later = _later(period, skip, spare, values, s)
        step = period.time_ps / w
        ahead = period.starts[-1] + step * np.arange(1, spare * w + 1)
        later_gap = phase_gap(np.concatenate([period.starts, ahead]), s.refresh_ps)
        off = {p: e for p, e in later.items() if e > s.error_bound}
        if not off and (later_gap <= s.refresh_block_ps or not s.refresh_block_ps):
            return Verdict("more")
        if off:
            path, error = max(off.items(), key=lambda item: item[1])
            return Verdict(
                "decline",
                f"{len(off)} statistics would stay above the estimated-error bound "
                f"{s.error_bound:g} after simulating {cap} (the worst, {'/'.join(path)}: "
                f"{_shown(error)})",
            )
        gap = later_gap
    else:
        off = {p: e for p, e in now.items() if e > s.error_bound}
        if off:
            path, error = max(off.items(), key=lambda item: item[1])
            return Verdict(
                "decline",
                f"{len(off)} statistics above the estimated-error bound {s.error_bound:g} "
                f"within {cap} (the worst, {'/'.join(path)}: {_shown(error)})",
            )
    return Verdict(
        "decline",
        f"the simulated iterations would not meet every refresh phase within {cap}: "
        f"{gap / 1e3:.0f} ns of the {s.refresh_ps / 1e3:g} ns refresh interval unseen, more "
        f"than the {s.refresh_block_ps / 1e3:g} ns a refresh blocks a bank",
    )


def _spare_windows(w: int, skip: int, total: int, s: StatisticalSettings) -> int:
    """Windows of ``w`` iterations that may still be simulated before a skip of ``skip``
    windows without exceeding ``max_simulated_fraction`` of the ``total`` iterations."""
    return min(skip, math.floor((s.max_simulated_fraction * total - (total - skip * w)) / w))


def _estimate_verdict(
    period: Period,
    skip: int,
    now: Flat,
    values: Flat,
    total: int,
    first: int,
    s: StatisticalSettings,
) -> Verdict:
    """``policy: estimate``: simulate more windows while the sampling budgets allow
    (``max_simulated_fraction`` of the loop, ``estimate_budget`` iterations) and they would
    bring some statistic now above the bound within it; otherwise skip, the statistics
    outside the bound named by the result's ``estimated_error``."""
    w = period.iterations
    spare = min(_spare_windows(w, skip, total, s), (s.estimate_budget - first) // w)
    if spare > 0:
        later = _later(period, skip, spare, values, s)
        if any(e > s.error_bound >= later[p] for p, e in now.items()):
            return Verdict("more")
    off = sum(1 for e in now.values() if e > s.error_bound)
    return Verdict(
        "skip",
        f"skipped under --ff-policy estimate with {off} statistics estimated above the bound "
        f"{s.error_bound:g}"
        if off
        else "",
    )


def _shown(error: float) -> str:
    return f"{error:.1e}" if math.isfinite(error) else "an uncertain change of a zero total"


def sigmas_for(period: Period, s: StatisticalSettings) -> float:
    """The normal quantile the period's estimates are taken at: ``family_sigmas`` over its
    extrapolated statistics under the ``bound`` policy, whose promise is about all of them;
    each statistic's own level under ``estimate``, which promises nothing and states each
    estimate (a family level there only makes it sample more: up to 20 % of FLAT's 131,072
    iterations at N = 128K)."""
    assert period.spread is not None
    return family_sigmas(len(period.spread) if s.policy == "bound" else 1, s.confidence)


def _later(period: Period, skip: int, spare: int, values: Flat, s: StatisticalSettings) -> Flat:
    """Estimated errors after ``spare`` more windows (sigma_C stays: the state is bounded)."""
    assert period.spread is not None
    more = Period(
        period.iterations, period.deltas, period.time_ps, exact=False,
        spread=period.spread, scatter=period.scatter, windows=period.windows + spare,
    )  # fmt: skip
    return estimated_errors(more, skip - spare, values, sigmas_for(period, s))


def error_report(
    period: Period, skipped: int, totals: Flat, s: StatisticalSettings
) -> dict[str, object]:
    """The result's ``fast_forward.estimated_error``: the bound, how many statistics met it,
    the sim time's estimated error and the worst ones (at most 10), by "/"-joined path; with
    ``skipped`` windows (when the run declined: the skip it would have taken)."""
    sigmas = sigmas_for(period, s)
    errors = estimated_errors(period, skipped, totals, sigmas)
    worst = sorted(errors.items(), key=lambda item: -item[1])
    over = [(p, e) for p, e in worst if e > s.error_bound]
    assert period.starts is not None
    return {
        "bound": s.error_bound,
        "confidence": s.confidence,
        "sigmas": sigmas,
        "max_simulated_fraction": s.max_simulated_fraction,
        "windows_sampled": period.windows,
        "statistics": len(errors),
        "within_bound": len(errors) - len(over),
        "sim_time": errors.get(("replay", "sim_time")),
        "refresh_phase_gap_ns": phase_gap(period.starts, s.refresh_ps) / 1e3,
        "worst": {"/".join(p): e if math.isfinite(e) else None for p, e in worst[:10]},
    }


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
