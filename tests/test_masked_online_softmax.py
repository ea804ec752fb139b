"""FlashAttention-2, AttenIO and FuseMax on real-model workloads: causal and sliding masks, GQA/MQA,
decode and cross attention. Numeric proof against masked attention in the adversarial engine
orders, off-chip elements equal to the closed forms on a grid, skipped tiles and MAC counts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.dataflow_helpers import emit_all, offchip_elements, worst_error
from tests.dataflow_platforms import KIB, attenio_machine
from tlm_models.dataflows import Workload
from tlm_models.dataflows.attenio import attenio_tiling
from tlm_models.dataflows.flash2 import flash2_plan
from tlm_models.dataflows.fusemax import fusemax_plan
from tlm_models.dataflows.io_formulas import TRAFFIC, online_softmax_elements, online_softmax_macs
from tlm_models.dataflows.query_blocks import QueryBlock, block_plan, block_shape, query_blocks
from tlm_models.fast_forward.control import IterationControl
from tlm_models.platform.info import PlatformInfo
from tlm_models.replay.reference import workload_attention
from tlm_models.trace.header import TraceHeader
from tlm_models.trace.record import OpKind, VectorOp

TOL = 1e-3
NAMES = ("flash2", "attenio", "fusemax")

#: Small workloads of every kind: rows of a block wrap across heads where Nq is not a multiple
#: of the block (48 and 40 rows at 2 KiB), decode packs a group's rows into one block.
CASES = {
    "causal": Workload(64, 16, heads=2, mask="causal"),
    "sliding": Workload(64, 16, mask="sliding", window=20),
    "gqa-causal": Workload(48, 16, heads=4, kv_heads=2, mask="causal"),
    "mqa-sliding": Workload(40, 16, heads=4, kv_heads=1, mask="sliding", window=9),
    "decode": Workload(1, 16, heads=4, kv_heads=2, kv_len=100, phase="decode"),
    "decode-sliding": Workload(
        3, 16, heads=4, kv_heads=1, kv_len=70, mask="sliding", window=30, phase="decode"
    ),
    "decode-causal": Workload(
        3, 16, batch=2, heads=2, kv_heads=1, kv_len=70, mask="causal", phase="decode"
    ),
    "cross": Workload(20, 16, kv_len=70),
}


def _inputs(w: Workload, seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((w.head_count, w.seq_len, w.head_dim)).astype(np.float32)
    kv = [
        rng.standard_normal((w.kv_head_count, w.kv_len, w.head_dim)).astype(np.float32)
        for _ in "KV"
    ]
    return {"Q": q, "K": kv[0], "V": kv[1]}


def _rows(name: str, w: Workload, p: PlatformInfo) -> int:
    """The block rows R the dataflow uses (FA2: Br, AttenIO: a, FuseMax: resident rows)."""
    if name == "flash2":
        return flash2_plan(w, p).tiling.br
    if name == "fusemax":
        return fusemax_plan(w, p).rows
    return attenio_tiling(w, p)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_computes_masked_attention_in_every_adversarial_order(name: str, case: str) -> None:
    w, p = CASES[case], attenio_machine(2 * KIB)
    header, recs = emit_all(name, w, p)

    def truth(_h: TraceHeader, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return workload_attention(w, inputs["Q"], inputs["K"], inputs["V"])

    assert worst_error(header, recs, p, _inputs(w), truth) < TOL


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("flash2", {"overlap": "none"}),
        ("flash2", {"overlap": "double"}),
        ("attenio", {"rescale": "separate", "stage": "3"}),
        ("fusemax", {"pipeline": "none"}),
        ("fusemax", {"rows": "fit", "subblock": "5", "keys": "7"}),
    ],
)
def test_variants_compute_masked_grouped_attention(name: str, params: dict[str, str]) -> None:
    # Stacked heads (Q and O in one piece per head) with masks, in every variant's ordering.
    w, p = CASES["gqa-causal"], attenio_machine(2 * KIB)
    header, recs = emit_all(name, w, p, params=params)

    def truth(_h: TraceHeader, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return workload_attention(w, inputs["Q"], inputs["K"], inputs["V"])

    assert worst_error(header, recs, p, _inputs(w), truth) < TOL


def test_attenio_streamed_stages_stay_exact_with_masks() -> None:
    # Forwarded granules of the streamed softmax stages interleave with the masked scores.
    w = Workload(24, 8, heads=2, kv_heads=1, mask="sliding", window=5)
    p = attenio_machine(1 * KIB)
    header, recs = emit_all("attenio", w, p)

    def truth(_h: TraceHeader, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return workload_attention(w, inputs["Q"], inputs["K"], inputs["V"])

    assert worst_error(header, recs, p, _inputs(w), truth, granularity=4) < TOL


GRID = [
    Workload(nq, d, heads=hq, kv_heads=hkv, kv_len=nk, mask=mask, window=win)
    for (nq, nk), d, (hq, hkv), (mask, win) in itertools.product(
        [(64, 64), (50, 50), (1, 90), (4, 130), (33, 80)],
        [8, 16],
        [(1, 1), (4, 2), (4, 1)],
        [("none", 0), ("causal", 0), ("sliding", 17), ("sliding", 1)],
    )
]


@pytest.mark.parametrize("name", NAMES)
def test_offchip_elements_equal_the_closed_forms_on_a_grid(name: str) -> None:
    p = attenio_machine(2 * KIB)
    for w in GRID:
        header, recs = emit_all(name, w, p)
        formula = TRAFFIC[name](w, p, None)
        assert offchip_elements(header, recs) == formula.elements, w.describe()
        assert formula.elements == online_softmax_elements(w, _rows(name, w, p))


@pytest.mark.parametrize("w", GRID[::3], ids=lambda w: w.describe())
def test_blocks_load_exactly_the_keys_their_rows_see(w: Workload) -> None:
    # Independent of the tiling: a block's keys are the columns of the mask matrix any of its
    # positions sees; the closed form sums them over the blocks.
    visible = w.mask_matrix()
    for rows in (1, 7, 16, 64):
        blocks = query_blocks(w, block_shape(w, rows))
        for bc in (1, 5):
            keys = [block_plan(w, blk, bc).keys for blk in blocks]
            expected = [int(visible[b.row0 : b.row0 + b.rows].any(axis=0).sum()) for b in blocks]
            assert keys == expected
        assert online_softmax_elements(w, rows)["K"] == w.head_dim * sum(expected)


@pytest.mark.parametrize("name", NAMES)
def test_grouped_heads_read_kv_once_per_kv_head(name: str) -> None:
    # Decode: a group's single query rows share one block, so K and V come in once per K/V
    # head: group g reads 1/g of the K/V bytes of MHA, and the same Q and O.
    p = attenio_machine(4 * KIB)
    mha = Workload(1, 16, heads=8, kv_len=300, phase="decode")
    base = offchip_elements(*emit_all(name, mha, p))
    for hkv in (4, 2, 1):
        w = Workload(1, 16, heads=8, kv_heads=hkv, kv_len=300, phase="decode")
        got = offchip_elements(*emit_all(name, w, p))
        g = 8 // hkv
        assert got["K"] * g == base["K"] and got["V"] * g == base["V"]
        assert got["Q"] == base["Q"] and got["O"] == base["O"]


def _macs(recs: np.ndarray) -> int:
    mm = recs[recs["kind"] == OpKind.MATMUL]
    return int((mm["m"].astype(np.int64) * mm["n"] * mm["k"]).sum())


@pytest.mark.parametrize("name", NAMES)
def test_causal_prefill_does_about_half_the_macs(name: str) -> None:
    p = attenio_machine(4 * KIB)
    n, d = 256, 16
    dense = Workload(n, d, heads=2)
    causal = Workload(n, d, heads=2, mask="causal")
    r = _rows(name, causal, p)
    macs = {m: _macs(emit_all(name, w, p)[1]) for m, w in (("none", dense), ("causal", causal))}
    assert macs["none"] == 2 * 2 * n * n * d
    assert macs["causal"] == online_softmax_macs(causal, r)
    if n % r == 0:  # block b sees (b + 1) R keys: 2 d R^2 nb (nb + 1) / 2 per head
        nb = n // r
        assert macs["causal"] == 2 * 2 * d * r * r * nb * (nb + 1) // 2
    # (1 + R/N) / 2 of the dense MACs: the diagonal tiles are computed whole and masked
    assert macs["causal"] / macs["none"] <= 0.5 + r / (2 * n) + 1e-12
    assert macs["causal"] / macs["none"] >= 0.5


def test_flash2_masks_only_the_tiles_crossing_the_diagonal() -> None:
    p = attenio_machine(2 * KIB)
    w = Workload(64, 16, mask="causal")
    header, recs = emit_all("flash2", w, p)
    br, bc = header.params["br"], header.params["bc"]
    vec = recs[recs["kind"] == OpKind.VECTOR]
    masks = vec[(vec["code"] & 0x0F) == VectorOp.MASK]
    blocks = -(-64 // br)
    # block b's rows [b Br, (b+1) Br) cross key tiles from b Br // Bc to its last one
    crossing = sum(-(-((b + 1) * br) // bc) - (b * br) // bc for b in range(blocks))
    assert len(masks) == crossing
    # a sliding window's blocks load only their window's keys: (Br + W - 1) or fewer each
    sliding = Workload(64, 16, mask="sliding", window=16)
    k = offchip_elements(*emit_all("flash2", sliding, p))["K"]
    assert k <= 16 * blocks * (br + 16 - 1) < 16 * 64 * blocks


def test_iteration_kinds_stop_a_skip_at_the_first_differing_iteration() -> None:
    kinds = ["a"] * 8 + ["b"] + ["a"] * 11
    control = IterationControl(20, kinds)
    control.mark(1, 100)
    # period 1 from iteration 2: 2..7 repeat iteration 1, iteration 8 differs
    assert control.plan_skip(period=1, tail=2) == (2, 8)
    control = IterationControl(20, ["a", "b"] * 10)
    control.mark(3, 100)
    assert control.plan_skip(period=2, tail=2) == (4, 18)
    with pytest.raises(ValueError, match="3 iteration kinds for 4 iterations"):
        IterationControl(4, ["a"] * 3)


def _tiles_one_by_one(w: Workload, blk: QueryBlock, bc: int) -> list[tuple[int, int, bool]]:
    """(key, width, masked) of every tile, from the definition: a tile is masked unless every
    row of the block sees all of its keys."""
    seen = w.mask_matrix()[blk.row0 : blk.row0 + blk.rows]
    lo, hi = w.block_key_range(blk.row0, blk.rows)
    tiles = []
    for key in range(lo, hi, bc):
        width = min(bc, hi - key)
        tiles.append((key, width, not seen[:, key : key + width].all()))
    return tiles


@pytest.mark.parametrize("bc", [1, 3, 8])
def test_tile_runs_are_the_tiles_one_by_one(bc: int) -> None:
    for w in GRID[::2]:
        for rows in (1, 5, 16):
            for blk in query_blocks(w, block_shape(w, rows)):
                plan = block_plan(w, blk, bc)
                tiles = [
                    (run.key0 + i * bc, run.width, run.masked)
                    for run in plan.runs
                    for i in range(run.count)
                ]
                assert tiles == _tiles_one_by_one(w, blk, bc), (w.describe(), blk)
                assert plan.runs[0].count == 1  # the first tile initialises m, l, O alone
