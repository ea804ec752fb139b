"""Split-K (flash-decoding) across tiles (dataflows/split_k.py, split_combine.py, tile_sync.h):
the plan, bytes per tile and in total against closed forms, the tiles' traces computing
attention together, and the replay's cross-tile wait."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.dataflow_helpers import emit_all, offchip_elements
from tests.split_k_jobs import wait_job, x16_run_job
from tests.tile_jobs import workload_run_job
from tests.workload_reference import masked_attention, workload_inputs
from tlm_models.dataflows import Workload
from tlm_models.dataflows.flash2 import flash2_plan
from tlm_models.dataflows.io_formulas import TRAFFIC, tiled_traffic
from tlm_models.dataflows.split_k import SplitPlan, auto_slices
from tlm_models.errors import SimulationError, UserError
from tlm_models.platform.compose import Platform
from tlm_models.platform.schema import PlatformConfig
from tlm_models.replay.reference_tiles import run_tiles
from tlm_models.run.config import RunConfig
from tlm_models.run.resolve import resolve_run
from tlm_models.run.worker import run_in_worker
from tlm_models.trace.record import OpKind
from tlm_models.trace.validate import check_trace

ROOT = Path(__file__).resolve().parent.parent
X4 = Platform.load(ROOT / "platforms/attenio-x4.yaml").config
X16 = Platform.load(ROOT / "platforms/attenio-x16.yaml").config


#: Cross-attention-like MQA, 128 query rows of 4 heads on 4,096 keys: 8 blocks of 16 positions
#: x 4 heads; with split=2 each tile computes 4 slices and combines 2 blocks.
CROSS = Workload(seq_len=128, kv_len=4096, head_dim=64, heads=4, kv_heads=1)

#: A causal chunk of 64 queries after 3,936 cached keys (MQA, 4 heads): 4 blocks whose last
#: K/V tile crosses the mask, 4 tiles of 1,024 keys each.
CHUNK = Workload(seq_len=64, kv_len=4000, head_dim=64, heads=4, kv_heads=1, mask="causal")


def decode(heads: int, kv_heads: int, kv_len: int, head_dim: int = 64) -> Workload:
    return Workload(
        seq_len=1, kv_len=kv_len, head_dim=head_dim, heads=heads, kv_heads=kv_heads,
        phase="decode", mask="causal",
    )  # fmt: skip


def test_slices_cover_the_tiles_evenly() -> None:
    """S = C / gcd(B, C): 8 K/V groups on 16 tiles give S = 2 (block b on tiles 2b, 2b + 1),
    3 on 4 give S = 4 (every tile one slice of each block), and with B >= C, S = 1. The combine
    sits on the tile of slice b mod S, so 3 blocks on 4 tiles combine on tiles 0, 1, 2."""
    assert [auto_slices(b, 16) for b in (1, 2, 3, 6, 8, 16, 32)] == [16, 8, 16, 8, 2, 1, 1]
    w = decode(32, 8, 8192, 128)
    plan = flash2_plan(w, X16.tile_info(0)).split
    assert plan is not None and plan.slices == 2
    assert [plan.pieces(t) for t in (0, 1, 2, 15)] == [[(0, 0)], [(0, 1)], [(1, 0)], [(7, 1)]]
    assert [plan.combiner(b) for b in range(8)] == [0, 3, 4, 7, 8, 11, 12, 15]
    three = SplitPlan(tuple(plan.blocks[:3]), (8, 8, 8), 4, 4)
    assert [three.pieces(t) for t in range(4)] == [[(b, t) for b in range(3)] for t in range(4)]
    assert [three.combiner(b) for b in range(3)] == [0, 1, 2]
    assert [three.tile_range(0, s) for s in range(4)] == [(0, 2), (2, 4), (4, 6), (6, 8)]


@pytest.mark.parametrize(
    ("name", "config", "workload", "params"),
    [
        ("2 groups on 4 tiles, S = 2", X4, decode(8, 2, 2048), {}),
        ("3 groups on 4 tiles, S = 4", X4, decode(6, 3, 4096), {}),
        ("4 groups on 4 tiles, split=2", X4, decode(8, 4, 2048), {"split": "2"}),
        ("MQA, 128 queries on 4,096 keys, split=2", X4, CROSS, {"split": "2"}),
        ("causal chunk, split=3", X4, CHUNK, {"split": "3"}),
        ("3 groups on 16 tiles, S = 16, two stacks", X16, decode(12, 3, 16384), {}),
    ],
)  # fmt: skip
def test_bytes_per_tile_and_total_equal_closed_forms(
    name: str, config: PlatformConfig, workload: Workload, params: dict[str, str]
) -> None:
    """Every tile's trace moves exactly ``tiled_traffic`` (its slices' Q, keys and partials
    written, its combines' partials read and O). Over the chip: K, V and O as one tile moves
    them, Q once per slice (S times), and the partials 2 S h (d + 2) per block of h rows."""
    total: dict[str, int] = {}
    for t in range(config.tile_count):
        info = config.tile_info(t)
        header, recs = emit_all("flash2", workload, info, params=params)
        got = offchip_elements(header, recs)
        assert got == tiled_traffic("flash2", workload, info, params), (name, t)
        for tensor, count in got.items():
            total[tensor] = total.get(tensor, 0) + count
    plan = flash2_plan(workload, config.tile_info(0), params).split
    assert plan is not None
    one = TRAFFIC["flash2"](workload, config.info(), params).elements
    d, s = workload.head_dim, plan.slices
    assert total == {
        "Q": s * one["Q"], "K": one["K"], "V": one["V"], "O": one["O"],
        "Opart": 2 * s * sum(b.height * (d + 2) for b in plan.blocks),
    }, name  # fmt: skip


@pytest.mark.parametrize(
    ("config", "workload", "params"),
    [
        (X4, decode(8, 2, 2048), {}),
        (X16, decode(12, 3, 16384), {}),
        (X4, CROSS, {"split": "2"}),
        (X4, CHUNK, {"split": "3"}),
    ],
    ids=["x4-S2", "x16-S16-two-windows", "x4-4-slices-a-tile", "x4-causal-chunk-S3"],
)
def test_tiles_together_compute_attention(
    config: PlatformConfig, workload: Workload, params: dict[str, str]
) -> None:
    """The tiles' traces executed together (``reference_tiles.run_tiles``: shared off-chip
    windows, loads waiting for their tokens' posts) write O = attention: on attenio-x16 with
    16 slices a block's partials come from both stacks' windows; with 4 slices and 2 combines
    a tile, its buffers are reused."""
    traces = []
    for t in range(config.tile_count):
        info = config.tile_info(t)
        header, recs = emit_all("flash2", workload, info, params=params)
        traces.append((header, recs, info))
    inputs = workload_inputs(workload)
    executors = run_tiles(traces, inputs)
    plan = flash2_plan(workload, config.tile_info(0), params).split
    assert plan is not None and plan.slices > 1
    out = np.full((workload.head_count, workload.seq_len, workload.head_dim), np.nan, np.float32)
    for t, ex in enumerate(executors):
        for b in plan.combines(t):
            blk = plan.blocks[b]
            heads = slice(blk.head0, blk.head0 + blk.heads)
            rows = slice(blk.row0, blk.row0 + blk.rows)
            out[heads, rows] = ex.tensor("O")[heads, rows]
    ref = masked_attention(traces[0][0], inputs)
    assert float(np.abs(out - ref).max() / np.abs(ref).max()) < 1e-5


def test_split_one_keeps_whole_blocks() -> None:
    """split=1 is the unsplit plan: the same records as on a chip with blocks >= tiles, and a
    workload with fewer blocks than tiles is refused again, naming split-K."""
    w = decode(32, 4, 2048)
    for t in range(4):
        info = X4.tile_info(t)
        _, auto = emit_all("flash2", w, info)
        _, one = emit_all("flash2", w, info, params={"split": "1"})
        assert np.array_equal(auto, one)
        assert not auto["k"][auto["kind"] <= 2].any()  # no token on any load or store
    config = RunConfig.of(
        "flash2", 1, 64, 8, "platforms/attenio-x4.yaml", kv_heads=2, kv_len=2048,
        phase="decode", mask="causal", extra=(("split", "1"),),
    )  # fmt: skip
    with pytest.raises(UserError, match=r"2 query block\(s\), fewer than the 4 tiles.*split-K"):
        resolve_run(config)


@pytest.mark.parametrize(
    ("platform", "split", "message"),
    [
        ("attenio-x4.yaml", "4", r"split=4 is larger than the 2 K/V tile\(s\) of a block"),
        ("attenio.yaml", "2", r"split=2: split-K spreads a block's keys over tiles"),
        ("attenio-x4.yaml", "two", r"flash2 split must be auto or a positive integer"),
    ],
)
def test_bad_splits_are_refused(platform: str, split: str, message: str) -> None:
    """S beyond the K/V tiles of a block (2,048 keys in the paper's tiles of 1,024; the fitted
    tiles narrow to give every slice one), split-K on one tile, a split that is not a count:
    one-line UserErrors before anything runs."""
    config = RunConfig.of("flash2", 1, 64, 8, f"platforms/{platform}", kv_heads=2, kv_len=2048,
                       phase="decode", mask="causal",
                       extra=(("split", split), ("tiling", "paper")))  # fmt: skip
    with pytest.raises(UserError, match=message) as info:
        resolve_run(config)
    assert "\n" not in str(info.value)


def test_combine_waits_for_the_last_partial() -> None:
    """Hand-written: tiles 0 and 1 compute (1 and 3 matmuls of 158 ns) and store a 1 KiB
    partial (119.024 ns) posting token 1; tile 2 loads 1 KiB, waiting for 2 posts. The load
    starts exactly when the later store is done (3 x 158 + 119.024 = 593.024 ns), whichever
    tile that is, and takes as long as on an idle chip (119.024 ns: the same load without a
    token starts at 0)."""
    free = run_in_worker(wait_job, (1, 3), 0, 0)
    assert free["first_start"][2] == 0.0
    load = free["last_done"][2]
    assert load == pytest.approx(119.024, abs=1e-9)
    assert free["last_done"][:2] == pytest.approx([158 + 119.024, 3 * 158 + 119.024], abs=1e-9)
    for matmuls in ((1, 3), (3, 1)):
        got = run_in_worker(wait_job, matmuls, 1, 2)
        assert sorted(got["last_done"][:2]) == free["last_done"][:2]  # producers unchanged
        assert got["first_start"][2] == free["last_done"][1]
        assert got["last_done"][2] == free["last_done"][1] + load


def test_a_missing_post_is_reported() -> None:
    """A load waiting for more posts than any tile makes ends the run with an error naming the
    token, instead of hanging."""
    with pytest.raises(SimulationError, match=r"waits on cross-tile token 1 \(2 of 3 posts made\)"):
        run_in_worker(wait_job, (1, 3), 1, 3)


def test_decode_run_reports_the_split() -> None:
    """GQA decode with 2 K/V groups (8 query heads, 2,048 keys) on attenio-x4's 4 tiles, which
    whole blocks refused, replayed: 2 slices a block, one slice per tile, combines on tiles 0
    and 3; off-chip bytes = the tiles' closed form (partials included)."""
    fields: dict[str, Any] = {"seq_len": 1, "kv_len": 2048, "head_dim": 64, "heads": 8,
                              "kv_heads": 2, "phase": "decode", "mask": "causal"}  # fmt: skip
    result = run_in_worker(workload_run_job, "flash2", fields)
    assert result["bytes"] == result["closed_form"]
    split = result["tiles"]["split"]
    assert split == {
        "slices": 2, "blocks": 2, "slices_per_tile": [1, 1, 1, 1],
        "combines_per_tile": [1, 0, 0, 1], "key_tiles_per_block": 2,
    }  # fmt: skip
    assert result["tiles"]["assignment"].startswith("split-K: 2 block(s) x 2 key slices")


def test_split_traces_pass_the_checker() -> None:
    """Every tile's split trace on attenio-x16 (partials read across both stacks' windows) is
    a valid trace for its tile (tokens on loads and stores, posts in a load's code); tiles
    0, 1 and 2 combine a block each, loading its 16 partials."""
    w = decode(12, 3, 16384)
    for t in (0, 8, 15):
        info = X16.tile_info(t)
        header, recs = emit_all("flash2", w, info)
        report = check_trace(header, [recs], info)
        assert report.ok, report.problems
        assert (recs["k"][recs["kind"] == OpKind.LOAD] != 0).sum() == 16 * (t in (0, 1, 2))


def test_partials_cross_the_stacks_in_the_replay() -> None:
    """3 K/V groups of 16,384 keys on attenio-x16, replayed: S = 16, every block's slices on all
    16 tiles (half of them in the other stack's window), combined on tiles 0, 1 and 2; off-chip
    bytes = the tiles' closed form, the run exact."""
    fields = {"seq_len": 1, "kv_len": 16384, "head_dim": 64, "heads": 12, "kv_heads": 3,
              "phase": "decode", "mask": "causal"}  # fmt: skip
    got = run_in_worker(x16_run_job, fields)
    assert got["bytes"] == got["closed_form"]
    assert got["split"]["slices"] == 16
    assert got["split"]["combines_per_tile"] == [1, 1, 1] + [0] * 13
    assert got["fast_forward"]["enabled"] is False
    assert "split-K runs exactly" in got["fast_forward"]["reason"]
