"""Steady-state fast-forward: the iteration control, period detection, extrapolation, and
fast-forwarded against exact replays of every dataflow (sim time and every counter)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.fast_forward_jobs import replay_stats, worst_difference
from tlm_models.fast_forward.control import (
    DERIVED,
    Columns,
    FastForwardSettings,
    IterationControl,
    _extrapolated,
    find_period,
)
from tlm_models.run.worker import run_in_worker

#: The validation bound of the fast-forward contract (docs/runtime.md records the worst case).
BOUND = 1e-3


def test_control_skips_whole_periods_after_the_iteration_being_emitted() -> None:
    control = IterationControl(20)
    control.mark(0, 0)
    assert control.following(0) == 1
    control.mark(1, 100)
    assert control.plan_skip(period=4, tail=2) == (2, 18)  # 16 iterations: 4 whole periods
    assert control.plan_skip(period=4, tail=2) is None  # planned once
    assert control.following(1) == 18
    assert control.skipped == 16


def test_iterations_follow_a_skip_planned_while_emitting() -> None:
    control = IterationControl(12)
    emitted = []
    for i in control.iterations():
        control.mark(i, 10 * i)
        emitted.append(i)
        if i == 3:
            control.plan_skip(period=2, tail=2)  # from 4: 4..9, 6 iterations = 3 periods
    assert emitted == [0, 1, 2, 3, 10, 11]


def test_control_does_not_skip_when_little_is_left() -> None:
    control = IterationControl(6)
    control.mark(3, 300)
    assert control.plan_skip(period=2, tail=2) is None
    assert list(control.iterations()) == list(range(6))


def _columns() -> Columns:
    return Columns.of([(("replay", "sim_time"), "ns"), (("replay", "offchip_read"), "B")])


def _rows(time_steps: list[float], byte_steps: list[float]) -> tuple[np.ndarray, ...]:
    times = np.concatenate([[0.0], np.cumsum(time_steps)])
    data = np.column_stack([times, np.concatenate([[0.0], np.cumsum(byte_steps)])])
    starts = (times * 1000).astype(np.uint64)  # ns -> ps
    return data, np.arange(len(data), dtype=np.uint64), starts


def test_period_of_two_iterations_is_found_exactly() -> None:
    rows, its, starts = _rows([10, 30] * 4, [64, 0] * 4)
    period = find_period(rows, its, starts, _columns(), FastForwardSettings())
    assert period is not None and period.exact
    assert period.iterations == 2
    assert period.deltas[("replay", "offchip_read")] == 64
    assert period.time_ps == 40_000


def test_no_period_when_bytes_drift_even_if_time_repeats() -> None:
    rows, its, starts = _rows([10] * 8, [64, 64, 64, 64, 64, 64, 64, 65])
    assert find_period(rows, its, starts, _columns(), FastForwardSettings()) is None


def test_time_within_tolerance_is_a_period_with_the_mean_change() -> None:
    rows, its, starts = _rows([10.0, 10.0005, 9.9995, 10.0], [64] * 4)
    period = find_period(rows, its, starts, _columns(), FastForwardSettings(max_period=1))
    assert period is not None and not period.exact
    assert period.deltas[("replay", "sim_time")] == pytest.approx(10.0)
    assert find_period(rows, its, starts, _columns(), FastForwardSettings(time_tolerance=0.0,
                       max_period=1)) is None  # fmt: skip


def test_a_period_shorter_than_the_refresh_window_is_not_taken() -> None:
    rows, its, starts = _rows([10] * 12, [64] * 12)
    settings = FastForwardSettings(min_period_ps=25_000)
    period = find_period(rows, its, starts, _columns(), settings)
    assert period is not None and period.iterations == 3  # 30 ns >= 25 ns


def test_a_period_must_span_min_span_iterations() -> None:
    # Seven equal iterations and an odd one, every 8 (a bank-level loop's rows cycling): the
    # last 3 repetitions of one iteration agree, so without a span the period found is 1,
    # which misses the odd iterations. Spanning 32 iterations, the period of 8 shows.
    steps = ([10.0] * 7 + [9.0]) * 4 + [10.0] * 4
    data = ([64.0] * 7 + [32.0]) * 4 + [64.0] * 4
    rows, its, starts = _rows(steps, data)
    period = find_period(rows, its, starts, _columns(), FastForwardSettings())
    assert period is not None and period.iterations == 1
    period = find_period(rows, its, starts, _columns(), FastForwardSettings(min_span=32))
    assert period is not None and period.exact and period.iterations == 8
    assert period.deltas[("replay", "offchip_read")] == 7 * 64 + 32


def test_a_long_exact_period_is_confirmed_by_two_repetitions() -> None:
    rows, its, starts = _rows([10, 20, 30, 40] * 2, [64, 0, 0, 128] * 2)  # 2 x 4 iterations
    period = find_period(rows, its, starts, _columns(), FastForwardSettings())
    assert period is not None and period.exact and period.iterations == 4
    rows, its, starts = _rows([10, 20] * 2, [64, 0] * 2)  # a short period needs 3 repetitions
    assert find_period(rows, its, starts, _columns(), FastForwardSettings()) is None


def _channel_columns() -> Columns:
    return Columns.of(
        [
            (("replay", "sim_time"), "ns"),
            (("platform", "hbm", "channel0", "bytes_read"), "B"),
            (("platform", "hbm", "channel1", "bytes_read"), "B"),
        ]
    )


def _channel_rows(ch0: list[float], ch1: list[float]) -> tuple[np.ndarray, ...]:
    steps = np.column_stack([[10.0] * len(ch0), ch0, ch1])
    data = np.vstack([np.zeros(3), np.cumsum(steps, axis=0)])
    starts = (data[:, 0] * 1000).astype(np.uint64)
    return data, np.arange(len(data), dtype=np.uint64), starts


def test_like_components_may_trade_bytes_when_their_sum_repeats() -> None:
    # Which channel a block's bursts hit rotates: channel 0 and 1 trade 4 B of 4 KiB, the sum
    # repeats exactly. A period within the member tolerance, not an exact one.
    rows, its, starts = _channel_rows([4096, 4100, 4096, 4100], [4096, 4092, 4096, 4092])
    columns = _channel_columns()
    period = find_period(rows, its, starts, columns, FastForwardSettings(max_period=1))
    assert period is not None and not period.exact and period.iterations == 1
    # Extrapolated members are whole bytes and their sum is the exact sum.
    values = {p: float(v) for p, v in zip(columns.paths, rows[-1], strict=True)}
    units = dict(zip(columns.paths, columns.units, strict=True))
    out = _extrapolated(values, units, period, 7)
    ch = [out[("platform", "hbm", f"channel{i}", "bytes_read")] for i in (0, 1)]
    assert all(v == int(v) for v in ch)
    assert sum(ch) == rows[-1, 1] + rows[-1, 2] + 7 * 8192
    # A sum that does not repeat is no period; nor is a member beyond the tolerance.
    rows, its, starts = _channel_rows([4096, 4100, 4096, 4100], [4096] * 4)
    assert find_period(rows, its, starts, columns, FastForwardSettings(max_period=1)) is None
    rows, its, starts = _channel_rows([4096, 4196, 4096, 4196], [4096, 3996, 4096, 3996])
    assert find_period(rows, its, starts, columns, FastForwardSettings(max_period=1)) is None


#: FlashAttention-2 with the paper's tiles (Br = 64 rows at d = 64): the many repeating blocks
#: these cases were written for (fitted tiles hold 1,024 rows: 4 blocks at N = 4K).
PAPER_TILES = {"params": {"tiling": "paper"}}


def _check(dataflow: str, seq_len: int, head_dim: int, **shape: Any) -> dict[str, Any]:
    if dataflow == "flash2":
        shape = PAPER_TILES | shape
    exact = run_in_worker(replay_stats, dataflow, seq_len, head_dim, False, **shape)
    fast = run_in_worker(replay_stats, dataflow, seq_len, head_dim, True, **shape)
    worst, where = worst_difference(exact, fast)
    section = fast["fast_forward"]
    print(f"{dataflow} N={seq_len} d={head_dim} {shape}: {section} worst {worst:.3g} at {where}")
    assert worst <= BOUND, f"{where} differs by {worst:.3g}"
    for tensor_bytes in ("offchip_read", "offchip_write"):  # bytes stay exact
        assert fast["stats"][f"replay/{tensor_bytes}"] == exact["stats"][f"replay/{tensor_bytes}"]
    return dict(section)


@pytest.mark.parametrize(("dataflow", "seq_len"), [("flash2", 4096), ("flat", 4096)])
def test_fast_forward_matches_exact_replay_small(dataflow: str, seq_len: int) -> None:
    section = _check(dataflow, seq_len, 64)
    assert section["skipped_iterations"] > 0


def test_fast_forward_runs_a_short_causal_loop_exactly() -> None:
    # Causal: every block sees more keys than the one before, so no two iterations repeat; the
    # growth repeats every 16 blocks (tests/test_linear_growth.py), which 32 blocks cannot
    # confirm, so nothing is skipped and the result is the exact one.
    section = _check("flash2", 2048, 64, mask="causal")
    assert section["skipped_iterations"] == 0


def test_fast_forward_skips_only_the_repeating_sliding_window_blocks() -> None:
    # Sliding window over two heads: the blocks past the first window repeat, but each head's
    # first blocks see fewer keys; a skip planned in head 0 stops before head 1 begins, and
    # head 1 is watched and skipped anew (fast_forward/growth.py), so every counter and byte
    # still matches the exact replay.
    # (128 blocks a head: the emitter runs about 64 one-tile blocks ahead of the replay)
    section = _check("flash2", 8192, 64, heads=2, mask="sliding", window=256)
    skips = section["skips"]
    assert len(skips) == 2
    assert skips[0]["first_skipped"] + skips[0]["skipped_iterations"] <= 128 - 2
    assert skips[1]["first_skipped"] >= 128


@pytest.mark.parametrize(
    ("dataflow", "shape"),
    [
        ("standard", {"kv_len": 4096, "heads": 8, "kv_heads": 2, "batch": 32, "phase": "decode"}),
        ("flat", {"kv_len": 4096, "heads": 8, "kv_heads": 2, "batch": 32, "phase": "decode"}),
    ],
)
def test_fast_forward_matches_exact_replay_of_a_decode_batch(
    dataflow: str, shape: dict[str, Any]
) -> None:
    """One block per K/V head (the group's 4 query rows stacked): 64 iterations of equal
    shape, which repeat exactly (period 8 on the paper platform's HBM mapping)."""
    section = _check(dataflow, 1, 64, **shape)
    assert section["skipped_iterations"] > 0


def test_fast_forward_matches_exact_replay_of_a_sliding_window() -> None:
    """Once the window is full every FLAT block has the same key span and mask geometry (69
    blocks). Standard's panels at N = 16K do not repeat exactly on this platform (their K
    tiles start W - 1 keys before each panel, at addresses the HBM maps differently)."""
    dataflow, seq_len = "flat", 4096
    section = _check(dataflow, seq_len, 64, mask="sliding", window=512)
    assert section["skipped_iterations"] > 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("dataflow", "seq_len", "head_dim"),
    [
        ("flash2", 16384, 64),
        ("flash2", 16384, 128),
        ("flat", 8192, 128),
        ("flat", 16384, 64),
        ("standard", 16384, 64),
        ("standard", 16384, 128),
        ("attenio", 16384, 128),
    ],
)
def test_fast_forward_matches_exact_replay(dataflow: str, seq_len: int, head_dim: int) -> None:
    _check(dataflow, seq_len, head_dim)


def test_every_ratio_of_a_replay_is_recomputed() -> None:
    fast = run_in_worker(replay_stats, "flash2", 4096, 64, True)
    ratios = {p.split("/")[-1] for p in fast["stats"] if p.split("/")[-1].endswith("_mean")}
    assert ratios <= set(DERIVED)
    # Names of ratio statistics the reference platform reports (units 1 and B/s) other than
    # constants; a new ratio needs a rule in DERIVED.
    for name in ("overlap_efficiency", "memory_stall_fraction", "busy_fraction",
                 "achieved_bandwidth", "utilization", "bandwidth"):  # fmt: skip
        assert any(p.endswith("/" + name) for p in fast["stats"]), name
        assert name in DERIVED
