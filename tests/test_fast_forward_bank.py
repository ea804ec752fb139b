"""Fast-forward on the bank-level HBM: the statistical period (statistical_period.py) on
hand-made snapshots, and fast-forwarded against exact replays of the dataflows on the paper
machine with ``hbm.fidelity=bank`` (docs/runtime.md, "On the bank-level HBM")."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from tests.fast_forward_bank_jobs import bank_replay_stats
from tlm_models.fast_forward import (
    AVERAGES,
    EXTREMES,
    HOST_FIGURES,
    PERCENTILES,
    RATIO_UNITS,
    Columns,
    FastForwardSettings,
    Period,
    _extrapolated,
    find_period,
    settings_for,
)
from tlm_models.statistical_period import (
    StatisticalSettings,
    candidate_windows,
    estimated_errors,
    student_quantile,
    wants_more,
)
from tlm_models.worker import run_in_worker

REFRESH_PS = 3_900_000  # tREFI of the paper machine's HBM2 (hbm2-attenio.yaml)
#: Sim time of a fast-forwarded run against the exact one (the issue's contract).
TIME_BOUND = 1e-3
#: Every other time and count: within this of its full scale (times: the run's sim time or
#: the component's largest time, for summed waits; counts: the component's largest count of
#: the same unit, so row conflicts against the HBM's row hits). Low-activity statistics (the
#: store channel's busy time, rare bank events) differ by more relative to themselves;
#: docs/runtime.md gives both worst cases.
SCALE_BOUND = 1e-2


def test_windows_span_whole_refresh_intervals() -> None:
    s = StatisticalSettings(REFRESH_PS)
    # 38,162 ns per iteration = 9.785 tREFI: 2 iterations span the 16 intervals, and 14
    # iterations (136.99 tREFI) are the first within 0.05 tREFI of a whole number.
    assert candidate_windows(38_162_000.0, 200, s)[0] == 14
    # 5 x 9.4 = 47.0 tREFI exactly: the first window of at least 16 intervals that is whole.
    assert candidate_windows(36_660_000.0, 200, s)[:2] == [5, 10]
    # A long iteration is a window of its own when it spans whole intervals.
    assert candidate_windows(16 * 3_900_000.0, 4, s) == [1]
    assert candidate_windows(38_162_000.0, 3 * 14, s) == []  # too few rows to compare


def _columns() -> Columns:
    return Columns.of(
        [
            (("replay", "sim_time"), "ns"),
            (("replay", "offchip_read"), "B"),
            (("platform", "hbm", "activates"), "commands"),
        ]
    )


def _rows(
    times: list[float], reads: list[float], acts: list[float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Snapshots after each iteration with the given per-iteration changes."""
    steps = np.column_stack([times, reads, acts])
    data = np.vstack([np.zeros(3), np.cumsum(steps, axis=0)])
    starts = np.round(data[:, 0] * 1000).astype(np.uint64)
    return data, np.arange(len(data), dtype=np.uint64), starts


def _bank_settings() -> FastForwardSettings:
    return FastForwardSettings(statistical=StatisticalSettings(REFRESH_PS, max_window=8))


def _windows(totals: list[float], spread: float, seed: int) -> list[float]:
    """Per-iteration changes, 4 iterations a window, that differ from iteration to iteration
    (so that no period repeats exactly) and add up to ``totals`` per window."""
    noise = np.random.default_rng(seed).uniform(-spread, spread, (len(totals), 4))
    noise -= noise.mean(axis=1, keepdims=True)
    return [float(v) for t, row in zip(totals, noise, strict=True) for v in t / 4 + row]


def test_a_loop_whose_bank_events_fluctuate_has_a_statistical_period() -> None:
    # 4 tREFI per iteration: windows of 4 iterations (16 intervals); their times differ by
    # 1e-4 and their activates by 0.5 %, off-chip bytes repeat exactly.
    times = _windows([62_400.0, 62_400.0, 62_406.24], 50.0, 1)
    acts = _windows([402.0, 398.0, 400.0], 3.0, 2)
    rows, its, starts = _rows(times, [8192.0] * 12, acts)
    period = find_period(rows, its, starts, _columns(), _bank_settings())
    assert period is not None and not period.exact and period.iterations == 4
    assert period.rule == "statistical over 4 iterations spanning 16 refresh intervals"
    assert period.deltas[("replay", "offchip_read")] == 4 * 8192
    assert period.deltas[("platform", "hbm", "activates")] == pytest.approx((402 + 398 + 400) / 3)
    # Extrapolated counts are whole numbers; bytes add whole windows exactly.
    values = {p: float(v) for p, v in zip(_columns().paths, rows[-1], strict=True)}
    units = dict(zip(_columns().paths, _columns().units, strict=True))
    out = _extrapolated(values, units, period, 7)
    assert out[("platform", "hbm", "activates")] == values[("platform", "hbm", "activates")] + 2800
    assert out[("replay", "offchip_read")] == values[("replay", "offchip_read")] + 7 * 4 * 8192


def test_no_statistical_period_when_bytes_or_time_differ() -> None:
    times = _windows([62_400.0] * 3, 50.0, 1)
    acts = _windows([400.0] * 3, 3.0, 2)
    reads = [8192.0] * 11 + [8448.0]  # a window moves 256 B more off-chip
    assert find_period(*_rows(times, reads, acts), _columns(), _bank_settings()) is None
    reads = [8192.0] * 12
    slow = _windows([62_400.0, 62_400.0, 62_440.0], 50.0, 1)  # a window 6.4e-4 slower
    assert find_period(*_rows(slow, reads, acts), _columns(), _bank_settings()) is None
    more = _windows([400.0, 400.0, 412.0], 3.0, 2)  # 3 % more activates in the last window
    bank = FastForwardSettings(
        statistical=StatisticalSettings(REFRESH_PS, max_window=8, count_floor=1.0)
    )
    assert find_period(*_rows(times, reads, more), _columns(), bank) is None
    assert find_period(*_rows(times, reads, acts), _columns(), bank) is not None


def _stands(path: str) -> bool:
    """Statistics that stand as simulated (largest values, percentiles, averages, host)."""
    name = path.split("/")[-1]
    return name in EXTREMES | HOST_FIGURES | AVERAGES or bool(PERCENTILES.search(name))


#: Waits of requests that found their bank queue full: they come in clusters of iterations
#: that start just before a refresh, recurring over more iterations than a window holds
#: (docs/runtime.md, "Full-queue waits"), and are left out of the bound (their estimated
#: error in the result says how far off they may be).
QUEUE_FULL = ("backpressured", "backpressure_time")


def compare_bank(exact: dict[str, Any], fast: dict[str, Any]) -> dict[str, tuple[float, str]]:
    """Worst differences of a fast-forwarded against the exact replay: sim time; every
    statistic relative to itself; times and counts relative to their full scale (see
    SCALE_BOUND); the queue-full waits relative to themselves."""
    stats = exact["stats"]
    units = {p: exact["units"].get(p, "ns") for p in stats}  # latency sums are in ns
    sim = stats["replay/sim_time"]
    scale: dict[tuple[str, str], float] = {}
    for path, value in stats.items():
        if not _stands(path) and not math.isnan(value):
            key = (path.rsplit("/", 1)[0], units[path])
            scale[key] = max(scale.get(key, 0.0), abs(value), sim if units[path] == "ns" else 0.0)
    worst = {k: (0.0, "") for k in ("sim_time", "itself", "time", "count", "queue_full")}
    for path, want in stats.items():
        got = fast["stats"][path]
        if _stands(path) or (math.isnan(want) and math.isnan(got)):
            continue
        diff = abs(got - want)
        own = diff / abs(want) if want else diff
        worst["itself"] = max(worst["itself"], (own, path))
        if path.split("/")[-1] in QUEUE_FULL:
            worst["queue_full"] = max(worst["queue_full"], (own, path))
        elif units[path] not in RATIO_UNITS:  # ratios follow from the times and counts
            kind = "time" if units[path] == "ns" else "count"
            ref = scale[(path.rsplit("/", 1)[0], units[path])]
            worst[kind] = max(worst[kind], (diff / ref if diff else 0.0, path))
    worst["sim_time"] = (abs(fast["stats"]["replay/sim_time"] - sim) / sim, "replay/sim_time")
    return worst


def _check(
    dataflow: str, seq_len: int, head_dim: int, params: tuple[tuple[str, str], ...] = ()
) -> dict[str, Any]:
    exact = run_in_worker(bank_replay_stats, dataflow, seq_len, head_dim, False, params)
    fast = run_in_worker(bank_replay_stats, dataflow, seq_len, head_dim, True, params)
    worst = compare_bank(exact, fast)
    section = fast["fast_forward"]
    print(f"{dataflow} N={seq_len} d={head_dim} {params}: {section} {worst}")
    assert section["skipped_iterations"] > 0, section
    assert section["periodicity"].startswith("statistical over")
    assert worst["sim_time"][0] <= TIME_BOUND
    assert worst["time"][0] <= SCALE_BOUND, worst["time"]
    assert worst["count"][0] <= SCALE_BOUND, worst["count"]
    # The section states each statistic's estimated error; the sim time is within its own.
    estimate = section["estimated_error"]
    assert estimate["statistics"] > 0 and estimate["bound"] == 1e-3
    assert estimate["windows_sampled"] > 0 and len(estimate["worst"]) == 10
    assert worst["sim_time"][0] <= estimate["sim_time"], estimate
    for path, want in exact["stats"].items():  # off-chip bytes stay exact
        if (
            exact["units"].get(path) == "B"
            and ("offchip" in path or "/tensors/" in path or path.count("/") == 2)
            and path.startswith(("replay/", "platform/hbm/"))
        ):
            assert fast["stats"][path] == want, path
    return dict(section)


def test_bank_level_fast_forward_matches_exact_replay_small() -> None:
    _check("flash2", 8192, 64)


#: The dataflows beyond the fast case, at sizes where each replays in seconds (as published:
#: FA2 with the paper's tiles and no overlap, Standard without overlap). docs/runtime.md's
#: table has more rows, run with ``_check`` outside the suite (FLAT and Standard at 16K take
#: 25-60 s each for the exact and fast-forwarded replays).
@pytest.mark.slow
@pytest.mark.parametrize(
    ("dataflow", "seq_len", "head_dim", "params"),
    [
        ("flash2", 8192, 64, (("tiling", "paper"), ("overlap", "none"))),
        ("flat", 8192, 128, ()),
        ("standard", 16384, 64, (("overlap", "none"),)),
    ],
)
def test_bank_level_fast_forward_matches_exact_replay(
    dataflow: str, seq_len: int, head_dim: int, params: tuple[tuple[str, str], ...]
) -> None:
    _check(dataflow, seq_len, head_dim, params)


def test_percentiles_occupancy_and_efficiency_are_not_summed() -> None:
    # A DRAM channel's percentiles and mean queue occupancy stand as simulated; its
    # efficiency scales with its recomputed achieved bandwidth (bytes / window).
    ch = ("platform", "hbm", "channel0")
    layout = [
        ((*ch, "window"), "ns"),
        ((*ch, "bytes_read"), "B"),
        ((*ch, "bytes_written"), "B"),
        ((*ch, "achieved_bandwidth"), "B/s"),
        ((*ch, "efficiency"), "1"),
        ((*ch, "queue_occupancy"), "requests"),
        ((*ch, "read_latency_p90"), "ns"),
    ]
    columns = Columns.of(layout)
    assert [p[-1] for p, a in zip(columns.paths, columns.additive, strict=True) if a] == [
        "window",
        "bytes_read",
        "bytes_written",
    ]
    values = {
        (*ch, "window"): 1000.0,
        (*ch, "bytes_read"): 4000.0,
        (*ch, "bytes_written"): 0.0,
        (*ch, "achieved_bandwidth"): 4e9,
        (*ch, "efficiency"): 0.5,
        (*ch, "queue_occupancy"): 3.25,
        (*ch, "read_latency_p90"): 512.0,
    }
    units = dict(layout)
    period = Period(1, {(*ch, "window"): 1000.0, (*ch, "bytes_read"): 6000.0}, 1e6, exact=False)
    out = _extrapolated(values, units, period, 1)  # 10,000 B in 2,000 ns: 5 GB/s
    assert out[(*ch, "achieved_bandwidth")] == pytest.approx(5e9)
    assert out[(*ch, "efficiency")] == pytest.approx(0.625)
    assert out[(*ch, "queue_occupancy")] == 3.25
    assert out[(*ch, "read_latency_p90")] == 512.0


def _refresh_columns() -> Columns:
    ch = ("platform", "hbm", "channel0")
    return Columns.of(
        [
            (("replay", "sim_time"), "ns"),
            ((*ch, "refreshes"), "commands"),
            ((*ch, "refresh_time"), "ns"),
            ((*ch, "activates"), "commands"),
        ]
    )


def test_the_estimate_takes_every_steady_window_and_refreshes_follow_the_clock() -> None:
    # 4.01 tREFI per iteration: windows of 4 iterations span 16.04 intervals. Five windows;
    # the first is slower by 1e-3 (the pipeline filling) and is left out; the other four give
    # the mean. Each window's whole refreshes (16) miss the clock's 16.04, which the
    # extrapolation takes instead (tRFC = 350 ns each).
    it_ns = 4.01 * REFRESH_PS / 1e3
    times = _windows([4 * it_ns * 1.001] + [4 * it_ns] * 4, 50.0, 3)
    acts = _windows([500.0, 392.0, 410.0, 404.0, 396.0], 3.0, 4)
    steps = np.column_stack([times, [4.0] * 20, [1400.0] * 20, acts])
    data = np.vstack([np.zeros(4), np.cumsum(steps, axis=0)])
    starts = np.round(data[:, 0] * 1000).astype(np.uint64)
    settings = FastForwardSettings(statistical=StatisticalSettings(REFRESH_PS, max_window=8))
    period = find_period(data, np.arange(21, dtype=np.uint64), starts, _refresh_columns(), settings)
    assert period is not None and period.iterations == 4 and period.windows == 4
    ch = ("platform", "hbm", "channel0")
    assert period.deltas[(*ch, "activates")] == pytest.approx((392 + 410 + 404 + 396) / 4)
    assert period.time_ps == pytest.approx(4 * it_ns * 1e3)
    assert period.deltas[(*ch, "refreshes")] == pytest.approx(16.04)
    assert period.deltas[(*ch, "refresh_time")] == pytest.approx(16.04 * 350.0)


def test_student_quantile_matches_the_t_table() -> None:
    # Two-sided 95 % (z = 1.96): t = 4.303, 3.182, 2.571, 2.228 for 2, 3, 5, 10 degrees of
    # freedom; the expansion is within 1 % from 2 degrees of freedom.
    for dof, t in ((2, 4.303), (3, 3.182), (5, 2.571), (10, 2.228), (1000, 1.962)):
        assert student_quantile(1.96, dof) == pytest.approx(t, rel=1e-2)


def _uncertain(spread: float, scatter: float, windows: int) -> Period:
    path = ("platform", "hbm", "activates")
    return Period(
        1, {path: 100.0}, 1e6, exact=False,
        spread={path: spread}, scatter={path: scatter}, windows=windows,
    )  # fmt: skip


def test_estimated_error_takes_the_larger_model() -> None:
    path = ("platform", "hbm", "activates")
    totals = {path: 1e5}
    # 4 windows simulated, 12 skipped: bounded offsets sqrt(2) x 2 x sqrt(3^2 + 1) = 8.94;
    # independent windows 3 x sqrt(144 / 4 + 12) = 20.78, the larger.
    errors = estimated_errors(_uncertain(2.0, 3.0, 4), 12, totals, 2.0)
    assert errors[path] == pytest.approx(student_quantile(2.0, 3) * 3 * math.sqrt(48) / 1e5)
    errors = estimated_errors(_uncertain(20.0, 3.0, 4), 12, totals, 2.0)
    bounded = math.sqrt(2) * 20 * math.sqrt(10)
    assert errors[path] == pytest.approx(student_quantile(2.0, 3) * bounded / 1e5)
    assert estimated_errors(_uncertain(0.0, 0.0, 4), 12, totals, 2.0)[path] == 0.0


def test_more_windows_only_while_a_statistic_can_meet_the_bound() -> None:
    path = ("platform", "hbm", "activates")
    s = StatisticalSettings(REFRESH_PS)  # bound 1e-3, up to 20 % of the loop simulated
    values = {path: 1e5}
    # 1,000 iterations, 10 windows of 1 simulated, the skip would start at 12: 986 skipped.
    # A spread of 1 event: 3.2e-3 now, 1.2e-4 after 186 more windows (20 %): simulate more.
    assert wants_more(_uncertain(1.0, 0.0, 10), values, 1000, 12, 2, s)
    # A spread of 100: 1.2e-2 even then: no use simulating more for it.
    assert not wants_more(_uncertain(100.0, 0.0, 10), values, 1000, 12, 2, s)
    # Already within the bound, or no more windows allowed: skip now.
    assert not wants_more(_uncertain(0.01, 0.0, 10), values, 1000, 12, 2, s)
    tight = StatisticalSettings(REFRESH_PS, max_simulated_fraction=0.01)
    assert not wants_more(_uncertain(1.0, 0.0, 10), values, 1000, 12, 2, tight)


def test_the_accuracy_options_reach_the_statistical_rule() -> None:
    from tlm_models.cli.main import build_parser
    from tlm_models.cli.run_cmd import config_of
    from tlm_models.resolved_run import resolve_run

    argv = ["run", "--dataflow", "flash2", "--seq-len", "1K", "--head-dim", "64"]
    more = ["--set", "hbm.fidelity=bank", "--ff-error-bound", "1e-2", "--ff-max-fraction", "0.5"]
    config = config_of(build_parser("run").parse_args([*argv, *more]))
    assert (config.ff_error_bound, config.ff_max_fraction) == (1e-2, 0.5)
    platform = resolve_run(config).platform
    statistical = settings_for(platform, config.ff_error_bound, config.ff_max_fraction).statistical
    assert statistical is not None
    assert (statistical.error_bound, statistical.max_simulated_fraction) == (1e-2, 0.5)
    assert statistical.refresh_ps == REFRESH_PS
