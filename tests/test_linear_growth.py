"""Fast-forward of causal loops by the linear-growth rule: the extrapolation formula, the
detection, the skip's limits, and fast-forwarded against exact replays of causal FlashAttention-2
and AttenIO (sim time and every counter within 0.1 %, off-chip bytes equal to the closed forms)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.fast_forward_jobs import replay_stats, worst_difference
from tlm_models.fast_forward.control import Columns, FastForwardSettings, IterationControl
from tlm_models.fast_forward.linear_growth import Growth, ShapeWatch, find_growth, grows_linearly
from tlm_models.run.worker import run_in_worker

#: The validation bound of the fast-forward contract (docs/runtime.md records the worst case).
BOUND = 1e-3


def _columns() -> Columns:
    return Columns.of([(("replay", "sim_time"), "ns"), (("replay", "offchip_read"), "B")])


def _growing(p: int, iterations: int, base: list[list[float]], step: list[list[float]]) -> Any:
    """Snapshot rows of a loop whose iteration k changes (time ns, bytes) by
    base[k % p] + (k // p) * step[k % p]; iteration starts follow the time column."""
    d = np.array([np.add(base[k % p], np.multiply(k // p, step[k % p])) for k in range(iterations)])
    rows = np.vstack([np.zeros(2), np.cumsum(d, axis=0)])
    starts = np.round(rows[:, 0] * 1000).astype(np.uint64)  # ns -> ps
    return rows, np.arange(len(rows), dtype=np.uint64), starts, d


def test_change_over_skipped_periods_is_the_sum_of_the_growing_iterations() -> None:
    rng = np.random.default_rng(7)
    p = 3
    growth = Growth(
        iterations=p, origin=5, measured_from=0, paths=[("x",)],
        base=rng.integers(0, 100, (p, 2)).astype(float),
        step=rng.integers(-5, 20, (p, 2)).astype(float),
        additive=np.array([True]),
    )  # fmt: skip
    for first in (5, 6, 13):
        for count in (3, 12, 300):
            brute = sum(growth.at(k) for k in range(first, first + count))
            assert np.array_equal(growth.change(first, count), brute)
    # Period 1: S(k + m) = S(k) + m D + m (m - 1) / 2 E, D the change of the first skipped one.
    one = Growth(1, 0, 0, [("x",)], np.array([[10.0, 0.0]]), np.array([[2.0, 0.0]]),
                 np.array([True]))  # fmt: skip
    m, first = 40, 9
    d, e = 10.0 + first * 2.0, 2.0
    assert one.change(first, m)[0] == m * d + m * (m - 1) // 2 * e
    with pytest.raises(ValueError, match="not whole periods"):
        growth.change(6, 4)


def test_growth_with_a_period_of_two_is_found_exactly() -> None:
    # A block gains a K/V tile every second block: (time, bytes) grow alike every 2 iterations.
    rows, its, starts, _ = _growing(2, 16, [[100, 4096], [130, 4096]], [[40, 8192], [40, 0]])
    growth = find_growth(rows, its, starts, _columns(), FastForwardSettings())
    assert growth is not None and growth.exact and growth.iterations == 2
    assert growth.periodicity == "linear growth, period 2"
    assert growth.origin == 14  # its base period: iterations 14 and 15, the last measured
    # Extrapolated iterations continue the loop: iterations 20..29 of the same sequence.
    _, _, _, longer = _growing(2, 30, [[100, 4096], [130, 4096]], [[40, 8192], [40, 0]])
    assert np.array_equal(growth.change(20, 10)[:2], longer[20:30].sum(axis=0))
    assert growth.change(20, 10)[2] == longer[20:30, 0].sum() * 1000  # ps


def test_no_growth_when_bytes_grow_unevenly_even_if_time_does() -> None:
    rows, its, starts, _ = _growing(1, 10, [[100, 4096]], [[40, 4096]])
    rows[-1, 1] += 1  # one byte more in the last iteration
    assert find_growth(rows, its, starts, _columns(), FastForwardSettings()) is None


def test_times_within_tolerance_grow_with_the_mean_step() -> None:
    rows, its, starts, _ = _growing(1, 8, [[1000, 4096]], [[50, 4096]])
    jitter = np.array([0, 0, 0, 0.02, -0.02, 0.01, 0, 0, 0])  # ns, 2e-5 of an iteration
    rows[:, 0] += jitter
    starts = np.round(rows[:, 0] * 1000).astype(np.uint64)
    exact_only = FastForwardSettings(time_tolerance=0.0)
    assert find_growth(rows, its, starts, _columns(), exact_only) is None
    growth = find_growth(rows, its, starts, _columns(), FastForwardSettings())
    assert growth is not None and not growth.exact and growth.iterations == 1
    assert growth.periodicity == "linear growth, period 1, times within 0.0001 of prediction"
    assert growth.step[0, 1] == 4096  # bytes still exactly
    assert growth.step[0, 0] == pytest.approx(50, abs=0.05)


def _causal_shapes(total: int, last_differs: bool = True) -> list[Any]:
    """A causal loop's shapes: block k has a first tile, k interior tiles and a diagonal tile;
    the last block is partial (another diagonal) when ``last_differs``."""
    shapes = [(("first", None, "diag0"), (1, k)) for k in range(total)]
    if last_differs:
        shapes[-1] = (("first", None, "diag7"), (1, total - 1))
    return shapes


def test_shapes_grow_linearly_until_another_shape() -> None:
    shapes = _causal_shapes(12)
    assert grows_linearly(shapes, 1, 2, 12) == 11  # the partial last block breaks it
    assert grows_linearly(shapes, 1, 0, 12) == 0  # no reference before 2 periods
    uneven = [(("s",), (k * k,)) for k in range(12)]  # growth that itself grows: not linear
    assert grows_linearly(uneven, 1, 2, 12) == 2
    watch = ShapeWatch(shapes)
    assert watch.since(1, 8) == 2 and watch.since(1, 12) == 12  # incremental, same answers
    assert watch.since(2, 12) == 12  # a period of 2 fits the counts too but not the last block


def test_a_growth_skip_keeps_two_growing_iterations_after_it() -> None:
    # The first simulated iteration after the skip is compared with its prediction and
    # prefetches for the next, so both must still grow alike: a second head from iteration 24
    # (its first block sees few keys again) ends the skip at 22.
    heads = _causal_shapes(24, last_differs=False) + _causal_shapes(6, last_differs=False)
    control = IterationControl(30, shapes=heads)
    control.mark(9, 900)
    assert control.plan_skip(period=4, tail=2, growth_from=2) == (10, 22)
    assert control.following(9) == 22 and control.skipped == 12
    # One head of 30 blocks skips up to its tail.
    control = IterationControl(30, shapes=_causal_shapes(30, last_differs=False))
    control.mark(9, 900)
    assert control.plan_skip(period=4, tail=2, growth_from=2) == (10, 26)
    # Measured growth that the shapes do not share (from iteration 2 + 2 periods on) skips none.
    control = IterationControl(30, shapes=_causal_shapes(30, last_differs=False))
    control.mark(9, 900)
    assert control.plan_skip(period=4, tail=2, growth_from=-5) is None


def _check(
    dataflow: str, seq_len: int, head_dim: int, expect_period: int | None = None, **kw: Any
) -> dict[str, Any]:
    if dataflow == "flash2":  # the paper's tiles: Br = 64 (d = 64) or 128 rows, many blocks
        kw = {"params": {"tiling": "paper"}} | kw
    exact = run_in_worker(replay_stats, dataflow, seq_len, head_dim, False, mask="causal", **kw)
    fast = run_in_worker(replay_stats, dataflow, seq_len, head_dim, True, mask="causal", **kw)
    worst, where = worst_difference(exact, fast)
    section = fast["fast_forward"]
    print(f"{dataflow} N={seq_len} d={head_dim} {kw}: {section} worst {worst:.3g} at {where}")
    assert worst <= BOUND, f"{where} differs by {worst:.3g}"
    stats = fast["stats"]
    assert stats["replay/offchip_read"] + stats["replay/offchip_write"] == fast["closed_form_bytes"]
    if expect_period is not None:
        assert section["skipped_iterations"] > 0
        assert section["periodicity"] == f"linear growth, period {expect_period}"
        assert section["boundary_corrected"]
    return dict(section)


def test_causal_flash2_is_fast_forwarded_by_linear_growth() -> None:
    """Br = 64 rows, Bc = 1024 keys: a block gains a tile every 16 blocks, and the last tile
    widens by 64 keys in between, so the changes grow alike with a period of 16 blocks."""
    _check("flash2", 8192, 64, expect_period=16)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("dataflow", "seq_len", "head_dim", "period", "kw"),
    [
        ("flash2", 16384, 64, 16, {}),
        ("flash2", 8192, 128, 8, {}),
        ("flash2", 16384, 128, 8, {}),
        ("flash2", 8192, 64, 16, {"params": {"tiling": "paper", "overlap": "none"}}),
        ("flash2", 8192, 64, 16, {"params": {"tiling": "paper", "overlap": "split"}}),
        # AttenIO's blocks of a = 251 rows (128 KiB cache) grow by 251 one-key tiles.
        ("attenio", 16384, 128, 8, {"overrides": ("sram.capacity=128KiB",)}),
        # At d = 64 AttenIO's 1,984-row blocks repeat their growth exactly from N = 32K.
        ("attenio", 32768, 64, 1, {}),
    ],
)
def test_causal_fast_forward_matches_exact_replay(
    dataflow: str, seq_len: int, head_dim: int, period: int, kw: dict[str, Any]
) -> None:
    _check(dataflow, seq_len, head_dim, expect_period=period, **kw)


def test_each_head_of_a_causal_run_is_skipped_on_its_own() -> None:
    # Two heads of 128 blocks: the skip in head 0 stops before head 1's first blocks, whose
    # shapes differ; head 1 is watched anew and skipped at the same blocks of its own.
    section = _check("flash2", 8192, 64, expect_period=16, heads=2)
    skips = section["skips"]
    assert [s["skipped_iterations"] for s in skips] == [32, 32]
    assert skips[0]["first_skipped"] + 32 <= 128 - 2
    assert 128 <= skips[1]["first_skipped"] <= 256 - 2 - 32
    assert section["skipped_iterations"] == 64


def test_only_masked_loops_get_the_watcher_that_skips_several_times() -> None:
    from tlm_models.fast_forward.control import FastForward
    from tlm_models.fast_forward.growth import GrowthFastForward, fast_forward_for

    settings = FastForwardSettings()
    unmasked = fast_forward_for(IterationControl(10), settings)
    assert type(unmasked) is FastForward  # unmasked loops keep the one-skip watcher
    masked = fast_forward_for(IterationControl(12, shapes=_causal_shapes(12)), settings)
    assert isinstance(masked, GrowthFastForward)
