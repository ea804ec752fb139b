"""Fast-forward of polynomial approximate attention: its row loops are marked as iterations of
whole rows (or position loop bodies, prefix form), the passes of each block are skipped one
regime after the other, and the result equals the exact replay (every statistic within
0.1 %, bytes equal to the closed form). Also the corrections this needed: a skip never uses a
period measured in another regime, and an engine idle across a skip gets the skipped time in
its next stall."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.fast_forward_jobs import replay_stats, worst_difference
from tlm_models.dataflows import emit
from tlm_models.dataflows.approx import (
    ITERATION_OPS,
    row_alignment,
    rows_per_cycle,
    rows_per_iteration,
)
from tlm_models.fast_forward.control import IterationControl
from tlm_models.platform import load_platform
from tlm_models.run.worker import run_in_worker
from tlm_models.trace.record import OpKind
from tlm_models.workload.spec import Workload

#: The validation bound of the fast-forward contract (docs/runtime.md records the worst case).
BOUND = 1e-3


def _bytes(result: dict[str, Any]) -> float:
    stats = result["stats"]
    return float(stats["replay/offchip_read"] + stats["replay/offchip_write"])


def test_rows_per_iteration_is_aligned_and_holds_enough_operations() -> None:
    for align in (2, 32, 128):
        for ops in (1, 7, 36, 255, 256, 513, 5000):
            rows = rows_per_iteration(ops, align)
            assert rows % align == 0 and rows >= align
            assert rows * ops >= ITERATION_OPS or rows == align
            assert (rows - align) * ops < ITERATION_OPS  # the smallest multiple that does
    # 16 channels x 256 B: rows of 32 B (d = 16) move by whole 4 KiB cycles every 128 rows,
    # of 96 B (d = 48) every 128 rows (3 cycles), of 128 B every 32; 8 KiB rows every 2.
    assert [row_alignment(b, 4096) for b in (32, 96, 128, 8192)] == [128, 128, 32, 2]
    assert row_alignment(32, 0) == 2  # no interleave known: only the buffer parity


def test_each_iteration_starts_with_its_first_row_load() -> None:
    info = load_platform("platforms/attenio.yaml").info()
    workload = Workload(seq_len=300, head_dim=32, heads=4, kv_heads=2)
    emitted = emit("approx", workload, info, 1024, params={"degree": "2"})
    control = emitted.iterations
    assert control is not None
    records = np.concatenate(list(emitted.chunks))
    marks = dict(control.marks)
    assert sorted(marks) == list(range(control.total))
    tensors = {t.name: i for i, t in enumerate(emitted.header.tensors)}
    first = records[[marks[i] for i in range(control.total)]]
    assert set(first["kind"].tolist()) == {int(OpKind.LOAD)}
    assert control.kinds is not None
    kinds = [str(control.kinds[i][0]) for i in range(control.total)]  # type: ignore[index]
    loads = ["K" if k.startswith("key") else "Q" for k in kinds]
    assert [tensors[t] for t in loads] == first["tensor"].tolist()
    # Two K/V groups, each a key pass over 300 rows then a query pass over 2 x 300 rows.
    assert kinds.count("key0") == 2 and kinds.count("query_end") == 2


def test_a_skip_never_uses_a_period_measured_in_another_regime() -> None:
    control = IterationControl(40, kinds=["key"] * 10 + ["query"] * 30)
    control.mark(12, 0)  # the emitter is already in the query rows
    assert control.plan_skip(1, 2, watched_to=6) is None  # measured on key rows
    assert control.plan_skip(1, 2, watched_to=11) == (13, 38)  # on query rows


@pytest.mark.parametrize(
    ("seq_len", "head_dim", "shape"),
    [
        (2048, 32, {"params": {"degree": "2"}}),  # Case I: a key pass and a query pass
        (512, 16, {"params": {"degree": "1"}, "heads": 8, "kv_heads": 2}),  # GQA, two groups
        # 32 B rows: iterations of whole interleave cycles, or a channel's share drifts.
        (4096, 16, {"params": {"degree": "2"}}),
        # A short key pass the emitter is past before its period is confirmed.
        (1024, 16, {"params": {"degree": "3"}, "overrides": ("sram.capacity=64KiB",)}),
        # Prefix form: keys before position 0, then position loops (adding, then dropping).
        (4096, 32, {"params": {"degree": "2"}, "mask": "causal"}),
        (4096, 32, {"params": {"degree": "2"}, "mask": "sliding", "window": 512}),
        (2048, 16, {"params": {"degree": "2"}, "mask": "causal", "heads": 4, "kv_heads": 2}),
        # Decode-like: 8,177 keys before position 0, the store channel idle across their skip
        # and its first store in the last iterations (resolved from the final statistics).
        (16, 16, {"params": {"degree": "2"}, "mask": "causal", "kv_len": 8192}),
        # Column blocks of 5, 5 and 2 columns, a key pass of 8 iterations: the last snapshot
        # row before the query pass is taken as its first iteration starts, so a period
        # measured up to it is the key rows' (it was once used for the query rows).
        (
            4096,
            12,
            {
                "params": {"degree": "2"},
                "heads": 4,
                "kv_heads": 1,
                "overrides": ("sram.capacity=1600B",),
            },
        ),
    ],
)
def test_fast_forwarded_equals_exact(seq_len: int, head_dim: int, shape: dict[str, Any]) -> None:
    exact = run_in_worker(replay_stats, "approx", seq_len, head_dim, False, **shape)
    fast = run_in_worker(replay_stats, "approx", seq_len, head_dim, True, **shape)
    worst, where = worst_difference(exact, fast)
    assert worst <= BOUND, f"{where} differs by {worst:.2e}"
    assert _bytes(fast) == _bytes(exact) == fast["closed_form_bytes"]
    if "mask" in shape:
        assert fast["fast_forward"]["skipped_iterations"] > 0


def test_both_passes_are_skipped_and_the_idle_store_channel_keeps_its_stall() -> None:
    exact = run_in_worker(replay_stats, "approx", 2048, 32, False, params={"degree": "2"})
    fast = run_in_worker(replay_stats, "approx", 2048, 32, True, params={"degree": "2"})
    section = fast["fast_forward"]
    skips = section["skips"]
    info = load_platform("platforms/attenio.yaml").info()
    control = emit("approx", Workload(seq_len=2048, head_dim=32), info, params={"degree": "2"})
    assert control.iterations is not None and control.iterations.kinds is not None
    kinds = control.iterations.kinds
    keys = sum(str(kinds[i][0]).startswith("key") for i in range(len(kinds)))  # type: ignore[index]
    assert [s["first_skipped"] < keys for s in skips] == [True, False]  # keys, then queries
    assert section["simulated_fraction"] < 0.8
    assert fast["simulated_ops"] < 0.8 * exact["simulated_ops"]
    # dma1 stores only in the query pass: the skipped key rows are idle time its first store
    # is charged with (waiting for the PE's result), as in the exact replay.
    stall = "replay/engines/dma1/stalls/pe_result"
    assert fast["stats"][stall] == pytest.approx(exact["stats"][stall], rel=1e-12)
    assert fast["stats"][stall] > 0.4 * exact["stats"]["replay/sim_time"]


def _pass_of(kinds: Any, iteration: int) -> str:
    """ "key" or "query": the pass of an iteration (kinds like ("block3:query", 16))."""
    return "key" if "key" in str(kinds[iteration][0]) else "query"


def test_feature_blocks_are_fast_forwarded_pass_by_pass() -> None:
    """The feature-block tiling (d = 16, g = 2 on a 1 KiB SRAM: 10 blocks, each a K/V pass
    and a query pass over the partial sums): iterations of whole rows, the query rows' a
    divisor of the partial sums' interleave cycle (34 B rows: 2,048 rows), so that each pass
    repeats exactly and both are skipped; every statistic equals the exact replay's."""
    shape: dict[str, Any] = {
        "params": {"degree": "2"},
        "heads": 4,
        "kv_heads": 1,
        "overrides": ("sram.capacity=1KiB",),
    }
    exact = run_in_worker(replay_stats, "approx", 4096, 16, False, **shape)
    fast = run_in_worker(replay_stats, "approx", 4096, 16, True, **shape)
    worst, where = worst_difference(exact, fast)
    assert worst <= 1e-12, f"{where} differs by {worst:.2e}"
    assert _bytes(fast) == _bytes(exact) == fast["closed_form_bytes"]
    info = load_platform("platforms/attenio.yaml", ("sram.capacity=1KiB",)).info()
    workload = Workload(seq_len=4096, head_dim=16, heads=4, kv_heads=1)
    emitted = emit("approx", workload, info, params={"degree": "2"})
    assert emitted.header.params["case"] == "features"
    assert emitted.iterations is not None
    kinds = emitted.iterations.kinds
    passes = {_pass_of(kinds, s["first_skipped"]) for s in fast["fast_forward"]["skips"]}
    assert passes == {"key", "query"}
    assert fast["simulated_ops"] < 0.8 * exact["simulated_ops"]


def test_rows_per_cycle_divide_the_cycle() -> None:
    # 34 B partial rows on 16 x 256 B channels repeat every 2,048 rows; the Q/O rows every
    # 128: iterations of 512 rows (a period of 4), more when a row has few operations.
    assert rows_per_cycle(20, 128, 2048) == 512
    assert rows_per_cycle(1, 128, 2048) == 512
    assert rows_per_cycle(400, 2, 2048) == 512  # at least a quarter of the cycle
    assert rows_per_cycle(20, 128, 128) == 128  # whole cycles already
    assert rows_per_cycle(20, 96, 1440) == 480  # a divisor that is a multiple of 96
    assert rows_per_cycle(20, 96, 96 * 7) == 96 * 7  # no such divisor: the whole cycle


def test_on_tiles_alike_loops_of_passes_or_of_growing_blocks_may_be_skipped() -> None:
    from tlm_models.fast_forward.tiles import unbalanced_reason

    info = load_platform("platforms/attenio.yaml").info()
    workload = Workload(seq_len=256, head_dim=16)
    controls = [emit("approx", workload, info, 1024).iterations for _ in range(2)]
    assert unbalanced_reason(controls) is None  # alike passes (equal kinds)
    causal = Workload(seq_len=4096, head_dim=64, mask="causal")
    grows = [emit("flash2", causal, info, 1024).iterations for _ in range(2)]
    assert unbalanced_reason(grows) is None  # alike growth (equal shapes)


@pytest.mark.parametrize("mask", ["none", "causal"])
def test_on_tiles_each_pass_is_skipped_on_every_tile(mask: str) -> None:
    """attenio-x4, 4 heads (a K/V group a tile), N = 4K, d = 16: the tiles' passes are
    skipped together, regime by regime; every statistic of every tile and of the platform
    equals the exact replay's, and each tile's bytes too, summing to the closed form."""
    from tests.tile_jobs import equal_tile_bytes, tiled_replay_stats
    from tlm_models.dataflows.io_formulas import approx_traffic

    shape: dict[str, Any] = {"params": {"degree": "2"}, "mask": mask}
    exact = run_in_worker(tiled_replay_stats, "approx", 4096, 16, 4, False, **shape)
    fast = run_in_worker(tiled_replay_stats, "approx", 4096, 16, 4, True, **shape)
    section = fast["fast_forward"]
    worst, where = worst_difference(exact, fast)
    assert worst <= 1e-12, f"{where} differs by {worst:.2e} ({section})"
    assert section["tiles_skipped_together"] == 4
    assert fast["simulated_ops"] < 0.7 * exact["simulated_ops"]
    if mask == "none":
        assert len(section["skips"]) == 2  # the key pass, then the query pass
    total = equal_tile_bytes(exact, fast, 4)
    workload = Workload(seq_len=4096, head_dim=16, heads=4, mask=mask)
    info = load_platform("platforms/attenio.yaml").info()
    assert total == approx_traffic(workload, info, {"degree": "2"}).total_bytes
