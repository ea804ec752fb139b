"""Fast-forward on the bank-level HBM: the statistical period (fast_forward/statistical.py) on
hand-made snapshots (docs/runtime.md, "On the bank-level HBM"); the replays against exact
ones are in test_bank_fast_forward_accuracy.py."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from tlm_models.fast_forward.control import (
    Columns,
    FastForwardSettings,
    Path,
    Period,
    _extrapolated,
    find_period,
    settings_for,
)
from tlm_models.fast_forward.statistical import (
    StatisticalSettings,
    Verdict,
    candidate_windows,
    estimated_errors,
    family_sigmas,
    judge,
    phase_gap,
    student_quantile,
)

REFRESH_PS = 3_900_000  # tREFI of the paper machine's HBM2 (hbm2-attenio.yaml)


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


def test_a_window_sampled_on_is_dropped_when_the_loop_leaves_its_regime() -> None:
    from tlm_models.fast_forward.statistical import statistical_period

    s = StatisticalSettings(REFRESH_PS, max_window=8)
    acts = _windows([402.0, 398.0, 400.0, 401.0, 400.0], 3.0, 2)
    steady = _rows(_windows([62_400.0] * 5, 50.0, 1), [8192.0] * 20, acts)
    period = statistical_period(*steady, _columns(), s, window=4)
    assert period is not None and period.iterations == 4 and period.windows == 5
    # The last two windows take twice as long (the loop's next pass): no estimate, rather
    # than one over no steady window (a NaN period that broke the extrapolation).
    moved = _rows(_windows([62_400.0] * 3 + [124_800.0] * 2, 50.0, 1), [8192.0] * 20, acts)
    assert statistical_period(*moved, _columns(), s, window=4) is None


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


def _uncertain(
    spread: float, scatter: float, windows: int, iteration_ps: float = 4.37 * REFRESH_PS
) -> Period:
    """A period of one iteration measured on ``windows`` iterations of ``iteration_ps``."""
    path: Path = ("platform", "hbm", "activates")
    return Period(
        1, {path: 100.0}, iteration_ps, exact=False,
        spread={path: spread}, scatter={path: scatter}, windows=windows,
        starts=iteration_ps * np.arange(windows + 1, dtype=np.float64),
    )  # fmt: skip


def test_estimated_error_takes_the_larger_model() -> None:
    path: Path = ("platform", "hbm", "activates")
    totals = {path: 1e5}
    # 4 windows simulated, 12 skipped: bounded offsets sqrt(2) x 2 x sqrt(3^2 + 1) = 8.94;
    # independent windows 3 x sqrt(144 / 4 + 12) = 20.78, the larger.
    errors = estimated_errors(_uncertain(2.0, 3.0, 4), 12, totals, 2.0)
    assert errors[path] == pytest.approx(student_quantile(2.0, 3) * 3 * math.sqrt(48) / 1e5)
    errors = estimated_errors(_uncertain(20.0, 3.0, 4), 12, totals, 2.0)
    bounded = math.sqrt(2) * 20 * math.sqrt(10)
    assert errors[path] == pytest.approx(student_quantile(2.0, 3) * bounded / 1e5)
    assert estimated_errors(_uncertain(0.0, 0.0, 4), 12, totals, 2.0)[path] == 0.0


def test_every_statistic_at_once_takes_the_bonferroni_quantile() -> None:
    # One statistic: the two-sided 95 % of the normal; 625 (a bank-level run's): each at
    # 0.05 / 625, 3.94 standard deviations (normal table: 3.944).
    assert family_sigmas(1, 0.95) == pytest.approx(1.95996, rel=1e-5)
    assert family_sigmas(625, 0.95) == pytest.approx(3.9444, rel=1e-4)
    # Student's t at that level from the t table: 5 degrees of freedom, two-sided 8e-5.
    assert student_quantile(family_sigmas(625, 0.95), 5) == pytest.approx(11.70, rel=2e-3)


def test_the_phase_gap_is_the_widest_refresh_phase_no_iteration_starts_at() -> None:
    # Starts at 0, 1 and 2 us of a 4 us interval: 2 us from 2 to 4 (= 0) unseen.
    assert phase_gap(np.array([0.0, 1e6, 2e6]), 4_000_000) == 2e6
    # 4.37 tREFI per iteration: phases 0.37 apart; 30 iterations meet every phase to within
    # 0.07 tREFI (273 ns), less than the 350 ns a refresh blocks a bank.
    starts = 4.37 * REFRESH_PS * np.arange(30)
    assert phase_gap(starts, REFRESH_PS) <= 0.07 * REFRESH_PS
    # 4 tREFI + 10 ns: the phase drifts by 10 ns an iteration, a beat of 390 iterations.
    assert phase_gap((4 * REFRESH_PS + 10_000) * np.arange(30), REFRESH_PS) > 3_500_000


def test_skip_only_when_every_statistic_meets_the_bound() -> None:
    path: Path = ("platform", "hbm", "activates")
    s = StatisticalSettings(REFRESH_PS, refresh_block_ps=350_000)  # 1e-3, 20 % of the loop
    values = {path: 1e5}
    # 1,000 iterations, 30 windows of 1 simulated, the skip would start at 32: 966 skipped.
    # A spread of 0.01 event: within the bound now, and every refresh phase was met: skip.
    assert judge(_uncertain(0.01, 0.0, 30), values, 1000, 32, 2, s) == Verdict("skip")
    # A spread of 2 events: 1.9e-3 now, 2.3e-4 after the 166 more windows 20 % allows.
    assert judge(_uncertain(2.0, 0.0, 30), values, 1000, 32, 2, s) == Verdict("more")
    # A spread of 100: 1.2e-2 even then: run exactly, and say why.
    declined = judge(_uncertain(100.0, 0.0, 30), values, 1000, 32, 2, s)
    assert declined.action == "decline"
    assert declined.reason.startswith("1 statistics would stay above the estimated-error")
    assert "platform/hbm/activates" in declined.reason
    # No more windows allowed: above the bound now is a decline too.
    tight = StatisticalSettings(REFRESH_PS, refresh_block_ps=350_000, max_simulated_fraction=0.01)
    assert judge(_uncertain(2.0, 0.0, 30), values, 1000, 32, 2, tight).action == "decline"
    # A total of 0 with an uncertain change can never meet a relative bound.
    zero = judge(_uncertain(1.0, 1.0, 30), {path: 0.0}, 1000, 32, 2, s)
    assert zero.action == "decline" and "uncertain change of a zero total" in zero.reason


def test_skip_only_when_the_simulated_iterations_met_every_refresh_phase() -> None:
    path: Path = ("platform", "hbm", "activates")
    s = StatisticalSettings(REFRESH_PS, refresh_block_ps=350_000)
    values = {path: 1e5}
    # Every statistic alike in every window, but 4 tREFI + 10 ns an iteration: 30 iterations
    # saw 0.3 ns of the phases; the 200 iterations 20 % allows would see 2 ns: decline.
    drift = 4 * REFRESH_PS + 10_000.0
    declined = judge(_uncertain(0.0, 0.0, 30, drift), values, 1000, 32, 2, s)
    assert declined.action == "decline" and "would not meet every refresh phase" in declined.reason
    # 4 tREFI + 40 ns: a beat of 97.5 iterations, spanned once 20 % of the loop is simulated.
    beat = 4 * REFRESH_PS + 40_000.0
    assert judge(_uncertain(0.0, 0.0, 30, beat), values, 1000, 32, 2, s) == Verdict("more")
    assert judge(_uncertain(0.0, 0.0, 120, beat), values, 1000, 122, 2, s) == Verdict("skip")
    # Without a refresh block time (a memory that does not refresh) the phases do not matter.
    free = StatisticalSettings(REFRESH_PS)
    assert judge(_uncertain(0.0, 0.0, 30, drift), values, 1000, 32, 2, free) == Verdict("skip")


def test_the_estimate_policy_samples_while_it_helps_then_skips_and_says_so() -> None:
    path: Path = ("platform", "hbm", "activates")
    s = StatisticalSettings(REFRESH_PS, refresh_block_ps=350_000, policy="estimate")
    values = {path: 1e5}
    # Within the bound: the same skip as under the bound policy, with nothing to report.
    assert judge(_uncertain(0.01, 0.0, 30), values, 1000, 32, 2, s) == Verdict("skip")
    # 1.9e-3 now, 2.3e-4 after the windows 20 % allows: sample more, as the bound policy does.
    assert judge(_uncertain(2.0, 0.0, 30), values, 1000, 32, 2, s) == Verdict("more")
    # 1.2e-2 even after them: more windows would not bring it within, so skip now and say so.
    skipped = judge(_uncertain(100.0, 0.0, 30), values, 1000, 32, 2, s)
    assert skipped.action == "skip"
    assert skipped.reason == (
        "skipped under --ff-policy estimate with 1 statistics estimated above the bound 0.001"
    )
    # The budget spent: skip with the statistic above the bound.
    spent = StatisticalSettings(
        REFRESH_PS, refresh_block_ps=350_000, max_simulated_fraction=0.01, policy="estimate"
    )
    assert judge(_uncertain(2.0, 0.0, 30), values, 1000, 32, 2, spent).action == "skip"
    # Within 40 iterations in all (8 more windows): too few to help, so skip now.
    capped = StatisticalSettings(
        REFRESH_PS, refresh_block_ps=350_000, policy="estimate", estimate_budget=40
    )
    assert judge(_uncertain(2.0, 0.0, 30), values, 1000, 32, 2, capped).action == "skip"
    # Unmet refresh phases alone do not hold the skip back.
    drift = 4 * REFRESH_PS + 10_000.0
    assert judge(_uncertain(0.0, 0.0, 30, drift), values, 1000, 32, 2, s) == Verdict("skip")
    # Too few iterations left is a decline under either policy.
    assert judge(_uncertain(0.0, 0.0, 30), values, 34, 32, 2, s).action == "decline"


def test_the_policy_option_reaches_the_rule_and_the_record() -> None:
    from tlm_models.cli.main import build_parser
    from tlm_models.cli.run_cmd import config_of
    from tlm_models.errors import UserError
    from tlm_models.run.config import RunConfig

    argv = ["run", "--dataflow", "flash2", "--seq-len", "1K", "--head-dim", "64"]
    config = config_of(build_parser("run").parse_args([*argv, "--ff-policy", "estimate"]))
    assert config.ff_policy == "estimate"
    assert RunConfig.from_dict(config.as_dict()) == config
    assert "ff_policy=estimate" in config.key()
    assert "ff_policy" not in replace(config, ff_policy="bound").as_dict()
    with pytest.raises(UserError, match="fast-forward policy: expected one of bound, estimate"):
        replace(config, ff_policy="sometimes")
    from tlm_models.study.attenio_repro import PUBLISHED, QUICK, main_configs

    assert {c.ff_policy for c in main_configs(QUICK, PUBLISHED)} == {"estimate"}


def test_the_accuracy_options_reach_the_statistical_rule() -> None:
    from tlm_models.cli.main import build_parser
    from tlm_models.cli.run_cmd import config_of
    from tlm_models.run.resolve import resolve_run

    argv = ["run", "--dataflow", "flash2", "--seq-len", "1K", "--head-dim", "64"]
    more = ["--set", "hbm.fidelity=bank", "--ff-error-bound", "1e-2", "--ff-max-fraction", "0.5"]
    config = config_of(build_parser("run").parse_args([*argv, *more]))
    assert (config.ff_error_bound, config.ff_max_fraction) == (1e-2, 0.5)
    platform = resolve_run(config).platform
    statistical = settings_for(platform, config.ff_error_bound, config.ff_max_fraction).statistical
    assert statistical is not None
    assert (statistical.error_bound, statistical.max_simulated_fraction) == (1e-2, 0.5)
    assert statistical.refresh_ps == REFRESH_PS
    assert statistical.refresh_block_ps == 350_000  # tRFC of the HBM2 (all-bank refresh)
