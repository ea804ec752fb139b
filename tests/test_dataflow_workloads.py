"""Standard, FLAT and the polynomial dataflow on the workloads of real models: grouped-query
and multi-query attention, cross/decode (Nq != Nk) and (approx) causal and sliding masks.
Bytes equal the closed forms exactly; results equal numpy references of masked attention."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from tests.dataflow_helpers import emit_all, offchip_elements, relative_error, worst_error
from tests.dataflow_platforms import KIB, attenio_machine
from tests.workload_reference import masked_attention, masked_polynomial, workload_inputs
from tlm_models.dataflows import Workload, emit, reference_machine
from tlm_models.dataflows.builder import counting_ops
from tlm_models.dataflows.io_formulas import TRAFFIC, approx_traffic, flat_work, standard_work
from tlm_models.dataflows.query_blocks import (
    BlockShape,
    block_count,
    block_shape,
    key_span_sum,
    query_blocks,
    score_elements,
)
from tlm_models.errors import UserError
from tlm_models.platform.compose import Platform
from tlm_models.trace.record import Broadcast, OpKind, VectorOp, vector_code

TOL = 1e-3
EXACT = ("standard", "flat")
WORK = {"standard": standard_work, "flat": flat_work}

# (Nq, Nk, d, Hq, Hkv): MHA, GQA, MQA; self-attention, prefill with a cache, decode.
GRID = [
    (nq, nk, d, hq, hkv)
    for (nq, nk), d, (hq, hkv) in itertools.product(
        [(64, 64), (37, 100), (1, 300), (4, 257)], (16, 32), [(2, 2), (4, 2), (6, 1)]
    )
]


@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize(("nq", "nk", "d", "hq", "hkv"), GRID)
def test_exact_dataflow_bytes_equal_closed_form(
    name: str, nq: int, nk: int, d: int, hq: int, hkv: int
) -> None:
    w = Workload(nq, d, heads=hq, kv_heads=hkv, kv_len=nk, batch=2)
    p = attenio_machine(4 * KIB)
    header, recs = emit_all(name, w, p)
    assert offchip_elements(header, recs) == TRAFFIC[name](w, p, None).elements


MASKED_GRID = [
    (nq, nk, mask, window, hq, hkv)
    for (nq, nk), (mask, window), (hq, hkv) in itertools.product(
        [(64, 64), (37, 100), (1, 300), (200, 200)],
        [("causal", 0), ("sliding", 1), ("sliding", 17), ("sliding", 64)],
        [(2, 2), (4, 1)],
    )
]


@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize(("nq", "nk", "mask", "window", "hq", "hkv"), MASKED_GRID)
def test_masked_bytes_and_work_equal_closed_forms(
    name: str, nq: int, nk: int, mask: str, window: int, hq: int, hkv: int
) -> None:
    """Keys outside a block's range are never loaded (nor stored as S/P): bytes, MACs and exps
    equal the closed forms over the blocks' key ranges."""
    w = Workload(nq, 16, heads=hq, kv_heads=hkv, kv_len=nk, mask=mask, window=window)
    p = attenio_machine(4 * KIB)
    header, recs = emit_all(name, w, p)
    assert offchip_elements(header, recs) == TRAFFIC[name](w, p, None).elements
    kind = recs["kind"]
    size = recs["m"].astype(np.int64) * recs["n"].astype(np.int64)
    macs = int((size * recs["k"].astype(np.int64))[kind == OpKind.MATMUL].sum())
    exps = int(size[kind == OpKind.EXP].sum())
    assert {"macs": macs, "exps": exps} == WORK[name](w, p)
    assert macs >= 2 * 16 * hq * w.visible_pairs()  # never fewer than the visible scores


@pytest.mark.parametrize("name", EXACT)
def test_causal_prefill_does_about_half_the_work(name: str) -> None:
    """Exact counts on the paper's machine at N = 8K, d = 64 (counted, not built)."""
    p = reference_machine.attenio_machine()
    work = {}
    for mask in ("none", "causal"):
        w = Workload(8192, 64, mask=mask)
        with counting_ops() as count:
            for _ in emit(name, w, p).chunks:
                pass
        assert {"macs": count.macs, "exps": count.exps} == WORK[name](w, p)
        work[mask] = count.macs
    assert work["none"] == 2 * 64 * 8192 * 8192
    assert 0.5 < work["causal"] / work["none"] < 0.52  # 1/2 + P/2N: the diagonal blocks


def test_flat_spilling_score_rows_with_a_kv_cache() -> None:
    w = Workload(3, 16, heads=4, kv_heads=2, kv_len=500)
    p = attenio_machine(1 * KIB)
    never = {"spill": "never"}
    header, recs = emit_all("flat", w, p, params=never)
    assert header.params["spill"] is True
    traffic = offchip_elements(header, recs)
    assert traffic["S"] == 2 * 4 * 3 * 500  # every score row out and back, per query head
    assert traffic == TRAFFIC["flat"](w, p, never).elements


@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize(("nq", "group"), [(1, 4), (1, 8), (2, 4)])
def test_gqa_loads_kv_once_per_kv_head(name: str, nq: int, group: int) -> None:
    """Decode: the group's query rows share one K/V pass; K/V bytes are 1/g of MHA's."""
    p = attenio_machine(32 * KIB)  # room for a whole group's rows beside score rows of 1024
    mha = Workload(nq, 32, heads=8, kv_len=1024, phase="decode")
    gqa = Workload(nq, 32, heads=8, kv_heads=8 // group, kv_len=1024, phase="decode")
    full, grouped = TRAFFIC[name](mha, p, None).elements, TRAFFIC[name](gqa, p, None).elements
    for tensor in ("K", "V"):
        assert grouped[tensor] * group == full[tensor] == 8 * 1024 * 32
    header, recs = emit_all(name, gqa, p)
    assert offchip_elements(header, recs) == grouped
    assert grouped["Q"] == full["Q"] and grouped["O"] == full["O"]


def test_approx_builds_h_once_per_kv_head() -> None:
    p = attenio_machine(8 * KIB)
    mha, gqa = Workload(100, 16, heads=8), Workload(100, 16, heads=8, kv_heads=2)
    full, grouped = approx_traffic(mha, p).elements, approx_traffic(gqa, p).elements
    assert grouped["K"] * 4 == full["K"] and grouped["V"] * 4 == full["V"]
    assert grouped["Q"] == full["Q"] == 8 * 100 * 16


@pytest.mark.parametrize(
    ("nq", "nk", "mask", "window"),
    [
        (nq, nk, mask, win)
        for nq, nk in [(1, 1), (7, 7), (64, 64), (10, 100), (100, 100), (3, 50)]
        for mask, win in [("none", 0), ("causal", 0), ("sliding", 1), ("sliding", 5)]
        if win <= nk
    ],
)
def test_key_spans_in_closed_form_equal_the_blocks(
    nq: int, nk: int, mask: str, window: int
) -> None:
    w = Workload(nq, 8, heads=4, kv_heads=2, kv_len=nk, mask=mask, window=window)
    for height in (1, 2, 3, 8, 16, 1000):
        shape = block_shape(w, height)
        assert shape.height <= max(height, 1)
        blocks = query_blocks(w, shape)
        assert len(blocks) == block_count(w, shape)
        spans = {(b.row0, b.rows): w.block_key_range(b.row0, b.rows) for b in blocks}
        assert key_span_sum(w, shape.positions) == sum(hi - lo for lo, hi in spans.values())
        assert score_elements(w, shape.positions) == sum(
            rows * (hi - lo) for (_, rows), (lo, hi) in spans.items()
        )
        # every (query head, row) exactly once, and heads of one block share a K/V head
        covered = sorted((b.head0 + j, b.row0 + i) for b in blocks for j in range(b.heads)
                         for i in range(b.rows))  # fmt: skip
        assert covered == [(h, i) for h in range(w.head_count) for i in range(nq)]
        assert all(w.kv_head_of(b.head0 + b.heads - 1) == b.kv_head for b in blocks)


NUMERIC = [
    (16, 16, 4, 2, "none", 0, 4 * KIB),  # GQA
    (12, 12, 3, 1, "none", 0, 4 * KIB),  # MQA
    (1, 48, 4, 1, "none", 0, 4 * KIB),  # decode, MQA
    (3, 40, 4, 2, "none", 0, 2 * KIB),  # decode of a few rows, GQA
    (5, 20, 2, 1, "none", 0, 1 * KIB),  # small SRAM: several blocks (FLAT spills)
    (24, 24, 1, 1, "causal", 0, 2 * KIB),  # causal prefill, diagonal tiles masked
    (24, 24, 4, 2, "causal", 0, 2 * KIB),  # causal GQA: stacked heads wrap the mask rows
    (20, 50, 2, 1, "causal", 0, 2 * KIB),  # causal prefill over a KV cache, MQA
    (1, 40, 4, 2, "causal", 0, 2 * KIB),  # causal decode
    (30, 30, 2, 2, "sliding", 5, 2 * KIB),  # sliding window: both edges
    (30, 30, 4, 1, "sliding", 1, 2 * KIB),
    (10, 40, 2, 1, "sliding", 13, 2 * KIB),
    (2, 40, 4, 1, "sliding", 13, 2 * KIB),  # sliding decode: the cache's last W keys
    (12, 30, 2, 1, "sliding", 6, 1 * KIB),  # small SRAM (FLAT spills masked rows)
]


@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize(("nq", "nk", "hq", "hkv", "mask", "window", "sram"), NUMERIC)
def test_exact_dataflows_compute_masked_grouped_and_decode_attention(
    name: str, nq: int, nk: int, hq: int, hkv: int, mask: str, window: int, sram: int
) -> None:
    w = Workload(nq, 16, heads=hq, kv_heads=hkv, kv_len=nk, mask=mask, window=window)
    p = attenio_machine(sram)
    header, recs = emit_all(name, w, p)
    assert worst_error(header, recs, p, workload_inputs(w), masked_attention) < TOL


@pytest.mark.parametrize("name", EXACT)
def test_dropping_the_mask_ops_breaks_the_result(name: str) -> None:
    w = Workload(24, 16, heads=2, kv_heads=1, mask="causal")
    p = attenio_machine(2 * KIB)
    header, recs = emit_all(name, w, p)
    masks = recs["kind"] == OpKind.VECTOR
    masks &= (recs["code"] & 0x0F) == VectorOp.MASK
    assert masks.sum() > 0
    inputs = workload_inputs(w)
    assert relative_error(header, recs, p, inputs, None, masked_attention) < TOL
    broken = recs.copy()
    broken["code"][masks] = vector_code(VectorOp.COPY, Broadcast.FULL)  # a copy onto itself
    assert relative_error(header, broken, p, inputs, None, masked_attention) > 0.01


APPROX = [
    (16, 16, 2, 1, "none", 0, 6 * KIB),  # GQA, case I
    (1, 40, 4, 1, "none", 0, 6 * KIB),  # decode, MQA
    (16, 16, 1, 1, "causal", 0, 8 * KIB),  # causal prefix form, case I
    (10, 24, 4, 2, "causal", 0, 8 * KIB),  # causal over a KV cache, GQA
    (16, 16, 2, 1, "causal", 0, 3 * KIB),  # causal, H in column blocks
    (14, 14, 2, 1, "sliding", 4, 8 * KIB),  # window: keys leaving it are subtracted
    (6, 24, 2, 2, "sliding", 7, 8 * KIB),
    (6, 20, 4, 2, "none", 0, 1 * KIB),  # GQA with feature blocks (partial sums off chip)
]


@pytest.mark.parametrize(("nq", "nk", "hq", "hkv", "mask", "window", "sram"), APPROX)
def test_approx_prefix_form_and_groups(
    nq: int, nk: int, hq: int, hkv: int, mask: str, window: int, sram: int
) -> None:
    d = 16
    w = Workload(nq, d, heads=hq, kv_heads=hkv, kv_len=nk, mask=mask, window=window)
    p = attenio_machine(sram)
    header, recs = emit_all("approx", w, p)
    expected = approx_traffic(w, p)
    assert offchip_elements(header, recs) == expected.elements
    keys = w.needed_keys() + (w.key_range(nq - 1)[0] - w.key_range(0)[0])
    passes = header.params["blocks"] if header.params["case"] == "features" else 1
    assert expected.elements["V"] == w.kv_head_count * keys * d * passes
    inputs = workload_inputs(w, scale=d**-0.25)  # |q.k| / sqrt(d) <= 1: the bounded regime
    assert worst_error(header, recs, p, inputs, masked_polynomial) < TOL


def test_approx_prefix_reads_h_at_each_position() -> None:
    """The causal result differs from the non-causal one: rows read H up to their position."""
    p = attenio_machine(8 * KIB)
    out = {}
    for mask in ("none", "causal"):
        w = Workload(8, 16, mask=mask)
        header, recs = emit_all("approx", w, p)
        inputs = workload_inputs(w, scale=0.5)
        assert worst_error(header, recs, p, inputs, masked_polynomial) < TOL
        out[mask] = masked_polynomial(header, inputs)
    assert np.allclose(out["none"][0, -1], out["causal"][0, -1])  # the last row sees all
    assert not np.allclose(out["none"][0, 0], out["causal"][0, 0])


def test_approx_mask_without_room_for_a_column_of_h_is_refused() -> None:
    with pytest.raises(UserError, match=r"mask=causal \(prefix form.*feature blocks"):
        emit("approx", Workload(64, 16, mask="causal"), attenio_machine(1 * KIB))


def test_flat_fits_n1024_d64_on_the_paper_platform() -> None:
    """R counts all three row statistics (max, sum, tile max): the staging always fits."""
    info = Platform.load("platforms/attenio.yaml").info
    w = Workload(1024, 64)
    trace = emit("flat", w, info)
    m, r, stage = (
        info.capacity_elements(2),
        trace.header.params["rows"],
        trace.header.params["stage"],
    )
    assert r == (m - 2 * 64 * 64) // (2 * 64 + 1024 + 3) == 219
    assert r * (2 * 64 + 1024 + 3) + 2 * stage * 64 <= m
    recs = np.concatenate(list(trace.chunks))
    assert offchip_elements(trace.header, recs) == TRAFFIC["flat"](w, info, None).elements
    assert int((recs["kind"] == OpKind.MATMUL).sum()) == 2 * math.ceil(1024 / r) * math.ceil(
        1024 / stage
    )


@pytest.mark.parametrize("name", EXACT)
def test_masks_without_overlap_and_at_larger_sizes(name: str) -> None:
    """overlap=none (each tile waits for the previous one) with a causal GQA mask, and a
    sliding window over a KV cache at d = 64 with several blocks."""
    w = Workload(20, 16, heads=4, kv_heads=2, mask="causal")
    p = attenio_machine(2 * KIB)
    header, recs = emit_all(name, w, p, params={"overlap": "none"})
    assert offchip_elements(header, recs) == TRAFFIC[name](w, p, {"overlap": "none"}).elements
    assert worst_error(header, recs, p, workload_inputs(w), masked_attention) < TOL
    w = Workload(300, 64, heads=2, kv_heads=1, kv_len=400, mask="sliding", window=150)
    p = attenio_machine(32 * KIB)
    header, recs = emit_all(name, w, p)
    assert offchip_elements(header, recs) == TRAFFIC[name](w, p, None).elements
    order = ["pe", "exp", "dma1", "dma0"]
    assert relative_error(header, recs, p, workload_inputs(w), order, masked_attention) < TOL


@pytest.mark.parametrize("name", EXACT)
def test_iteration_kinds_let_fast_forward_skip_only_equal_blocks(name: str) -> None:
    """Causal blocks all differ (no skip may cross them); a full sliding window's blocks and
    a decode batch's are alike up to addresses."""
    p = attenio_machine(16 * KIB)
    causal = emit(name, Workload(512, 16, mask="causal"), p).iterations
    sliding = emit(name, Workload(512, 16, mask="sliding", window=64), p).iterations
    decode = emit(name, Workload(1, 16, heads=4, kv_heads=2, batch=8, kv_len=300), p).iterations
    assert causal is not None and sliding is not None and decode is not None
    assert causal.kinds is not None and len(set(causal.kinds)) == causal.total
    assert sliding.kinds is not None and sliding.kinds[-3] == sliding.kinds[-2] != sliding.kinds[0]
    assert decode.kinds is not None and len(set(decode.kinds)) == 1 and decode.total == 16


@pytest.mark.parametrize(
    "w",
    [
        Workload(8192, 128, heads=32, kv_heads=8, mask="causal"),
        Workload(8192, 128, heads=32, kv_heads=8, mask="sliding", window=4096),
        Workload(1000, 64, heads=6, kv_heads=2),
        Workload(3, 128, heads=32, kv_heads=4, kv_len=8192, batch=2, phase="decode"),
    ],
    ids=lambda w: w.describe(),
)
def test_grouping_never_loads_more_kv_than_mha(w: Workload) -> None:
    """Blocks take the number of heads that loads the fewest K/V rows: one head per block
    (MHA's blocks) is among the choices, so a group never costs more than its heads alone."""
    p = reference_machine.attenio_machine()
    mha = Workload(w.seq_len, w.head_dim, heads=w.heads, batch=w.batch, kv_len=w.kv_len,
                   mask=w.mask, window=w.window, phase=w.phase)  # fmt: skip
    for name in EXACT:
        assert TRAFFIC[name](w, p, None).elements["K"] <= TRAFFIC[name](mha, p, None).elements["K"]


def test_block_shape_stacks_heads_where_it_saves_kv_rows() -> None:
    # 29 rows (FLAT's R at d = 128, 512 KiB): 7 positions of 4 heads would need 1171 passes
    # over K per K/V head, 29 positions of one head 4 x 283 = 1132.
    prefill = Workload(8192, 128, heads=32, kv_heads=8, mask="causal")
    assert block_shape(prefill, 29) == BlockShape(29, 1)
    decode = Workload(3, 128, heads=32, kv_heads=4, kv_len=8192, phase="decode")
    assert block_shape(decode, 29) == BlockShape(3, 8)  # the whole group in one block
    assert block_shape(Workload(64, 64, heads=6, kv_heads=2), 300) == BlockShape(64, 3)
