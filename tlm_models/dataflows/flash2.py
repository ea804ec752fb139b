"""FlashAttention-2: Q-outer, K/V-inner tiles with online softmax (row max / row sum per tile).

Tiles (``flash2_tiles.py``): ``tiling=paper`` is the rule the AttenIO paper used for its FA2
baseline, Br = min(ceil(M/4d), d), Bc = ceil(M/4d), whose single K and V tiles fill the cache
beside Q, O and S; ``tiling=fit`` (default) sizes both from the on-chip memory and the machine
(the (Br, Bc) of least estimated time among those that fit the ``overlap``'s buffers). Off-chip
traffic depends on Br only: T = Nd + 2Nd*ceil(N/Br) + Nd for every variant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

from tlm_models.dataflows.builder import Ext, Template
from tlm_models.dataflows.flash2_tiles import (
    NO_RESERVE,
    FlashTiling,
    Reserve,
    fit_bc,
    fit_tiling,
    paper_tiling,
)
from tlm_models.dataflows.online_softmax import (
    OnlineSoftmaxLoop,
    SoftmaxBuffers,
    TileShape,
    lazy_counts,
    mask_scores,
    rescale_o,
)
from tlm_models.dataflows.query_blocks import block_count, block_plan, block_shape, query_blocks
from tlm_models.dataflows.setup import DataflowTrace, make_setup
from tlm_models.dataflows.split_combine import alloc_combine
from tlm_models.dataflows.split_k import SplitPlan, partial_elements, split_slices
from tlm_models.dataflows.variants import resolve
from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo
from tlm_models.trace.record import Broadcast, VectorOp
from tlm_models.workload.spec import Workload


def flash2_tiling(
    workload: Workload,
    platform: PlatformInfo,
    tiling: str = "fit",
    buffers: int = 1,
    reserve: Reserve = NO_RESERVE,
) -> FlashTiling:
    """Br, Bc on ``platform`` (its capacity M in elements) with ``buffers`` K and V tiles each
    (``flash2_tiles.py``): ``paper`` keeps Br = min(ceil(M/4d), d), Bc = ceil(M/4d) or fails,
    ``fit`` takes the (Br, Bc) of least estimated time that fits. A block holds up to Br rows
    of a K/V head's group (g * Nq rows); tiles hold up to Bc of the Nk keys. ``reserve``: the
    elements split-K's partials take, which the tiles leave free."""
    capacity = platform.capacity_elements(workload.elem_bytes)
    if tiling == "paper":
        return paper_tiling(workload, capacity, buffers, reserve)
    return fit_tiling(workload, capacity, platform, buffers, reserve)


def _given_tiling(
    w: Workload, platform: PlatformInfo, variant: Mapping[str, str], nbuf: int, reserve: Reserve
) -> FlashTiling:
    """The tiling rule's (Br, Bc) with ``br`` and ``bc`` replaced where given: a given Br
    takes the widest Bc that fits beside it unless ``bc`` is given too (Bc at most Nk)."""
    br_text, bc_text = variant["br"], variant["bc"]
    if br_text == bc_text == "auto":
        return flash2_tiling(w, platform, variant["tiling"], nbuf, reserve)
    capacity = platform.capacity_elements(w.elem_bytes)
    rule = None if br_text != "auto" else flash2_tiling(w, platform, variant["tiling"], nbuf)
    br = int(br_text) if rule is None else rule.br
    rows = min(br, w.group * w.seq_len)
    widest = min(fit_bc(capacity, reserve(w, rows), rows, w.head_dim, nbuf), w.kv_len)
    bc = min(int(bc_text), w.kv_len) if bc_text != "auto" else widest
    if bc < 1 or bc > widest:
        raise UserError(
            f"flash2 br={br}, bc={bc_text} does not fit: beside Br = {rows} rows, d = "
            f"{w.head_dim} and {nbuf} K/V tile buffer(s), Bc is at most {widest} (M = "
            f"{capacity} elements)"
        )
    quarter = -(-capacity // (4 * w.head_dim))
    return FlashTiling(br, quarter, bc, f"given: Br = {br}, Bc = {bc}")


@dataclass(frozen=True)
class FlashPlan:
    """The tiling, the stacked rows of a block and, on tiles, the split-K plan (or None)."""

    tiling: FlashTiling
    rows: int
    split: SplitPlan | None


def flash2_plan(
    workload: Workload, platform: PlatformInfo, params: Mapping[str, object] | None = None
) -> FlashPlan:
    """Tiling and split-K plan of ``workload`` on ``platform`` (a tile of a tiled platform):
    ``split`` S > 1 reserves the partials' buffers (``split_combine.combine_elements``) beside
    the tiles; S = 1 is the unsplit plan."""
    variant = resolve("flash2", params)
    nbuf = 2 if variant["overlap"] == "double" else 1
    reserve = Reserve(variant["split"], platform.tiles)
    tiling = _given_tiling(workload, platform, variant, nbuf, reserve)
    rows = min(tiling.br, workload.group * workload.seq_len)
    if reserve(workload, rows) == 0:
        return FlashPlan(tiling, rows, None)
    shape = block_shape(workload, rows)
    slices = split_slices(
        variant["split"], block_count(workload, shape), platform.tiles, workload.dense
    )
    blocks = tuple(query_blocks(workload, shape))
    key_tiles = tuple(block_plan(workload, blk, tiling.bc).tiles for blk in blocks)
    return FlashPlan(tiling, rows, SplitPlan(blocks, key_tiles, slices, platform.tiles))


def _tile_body(
    tpl: Template,
    bufs: SoftmaxBuffers,
    shape: TileShape,
    *,
    serial: bool = False,
    rescale: str = "separate",
) -> None:
    """One K/V tile: S = Q K^T, row max, P = exp(S - m), row sum, rescale O, O += P V;
    ``serial``: S waits for both loads (no transfer overlaps compute); ``rescale``: O *= alpha
    as its own pass over every row (separate) or the rows whose max rose (lazy), or within
    the P V matmul (fused)."""
    r, c = shape.rows, shape.cols
    d = bufs.q.cols
    ldk, ldv = tpl.roles["ldk"], tpl.roles["ldv"]
    mcur, mnext, s, t = bufs.m[0].addr, bufs.m[1].addr, bufs.s.addr, bufs.t
    assert t is not None
    smm = tpl.matmul(
        bufs.q.addr, bufs.k[0].addr, s, r, c, d, trans_b=True, deps=[ldk, ldv if serial else None]
    )
    tpl.roles["smm"] = smm
    mask_scores(tpl, shape, s)
    if shape.first:
        tpl.vector(VectorOp.ROWMAX, mnext, s, r, c)
        sub = tpl.vector(VectorOp.SUB, s, s, r, c, src1=mnext, bcast=Broadcast.ROW)
        p = tpl.exp(s, s, r, c, deps=[sub])
        tpl.vector(VectorOp.ROWSUM, bufs.l.addr, s, r, c, deps=[p])
        tpl.roles["omm"] = tpl.matmul(
            s, bufs.v[0].addr, bufs.o.addr, r, d, c, deps=[ldv, p, Ext("o_free")]
        )
        return
    tpl.vector(VectorOp.ROWMAX, t.addr, s, r, c)
    tpl.vector(VectorOp.MAX, mnext, mcur, r, 1, src1=t.addr)
    sub = tpl.vector(VectorOp.SUB, s, s, r, c, src1=mnext, bcast=Broadcast.ROW)
    dm = tpl.vector(VectorOp.SUB, mcur, mcur, r, 1, src1=mnext)
    p = tpl.exp(s, s, r, c, deps=[sub])
    alpha = tpl.exp(mcur, mcur, r, 1, rescale=True, deps=[dm])
    tpl.vector(VectorOp.ROWSUM, t.addr, s, r, c, deps=[p])
    tpl.vector(VectorOp.MUL, bufs.l.addr, bufs.l.addr, r, 1, src1=mcur, deps=[alpha])
    tpl.vector(VectorOp.ADD, bufs.l.addr, bufs.l.addr, r, 1, src1=t.addr)
    if rescale == "fused":
        tpl.roles["omm"] = tpl.matmul(
            s, bufs.v[0].addr, bufs.o.addr, r, d, c, scale_rows=mcur, deps=[ldv, p, alpha]
        )
        return
    # Ordered after alpha by the l update above (the PE array runs in order).
    rescale_o(tpl, bufs, r, lazy=rescale == "lazy", deps=[])
    tpl.roles["omm"] = tpl.matmul(
        s, bufs.v[0].addr, bufs.o.addr, r, d, c, accumulate=True, deps=[ldv, p]
    )


def trace_flash2(
    workload: Workload, platform: PlatformInfo, params: Mapping[str, object]
) -> DataflowTrace:
    """FlashAttention-2 trace on ``platform``.
    ``params``: ``tiling`` (paper|fit), ``overlap`` (none|split|double), ``rescale``
    (separate|fused|lazy), ``scores`` (where lazy's counts come from)."""
    variant = resolve("flash2", params)
    overlap = variant["overlap"]
    nbuf = 2 if overlap == "double" else 1
    d = workload.head_dim
    plan = flash2_plan(workload, platform, params)
    tiling, rows, split = plan.tiling, plan.rows, plan.split
    extra: dict[str, object] = {}
    spill: list[tuple[str, tuple[int, ...]]] | None = None
    if split is not None:
        extra = {"split": split.slices}
        pieces = len(split.blocks) * split.slices
        spill = [("Opart", (pieces, partial_elements(rows, d)))]
    setup = make_setup(
        "flash2",
        workload,
        platform,
        {
            "br": tiling.br,
            "bc": tiling.bc,
            "bc_rule": tiling.bc_rule,
            "tile_choice": tiling.reason,
            "variant": variant,
            **extra,
        },
        spill,
    )
    a = setup.scratch
    bufs = SoftmaxBuffers(
        q=a.alloc("Q_i", rows, d),
        o=a.alloc("O_i", rows, d),
        s=a.alloc("S_ij", rows, tiling.bc),
        m=(a.alloc("m_a", rows), a.alloc("m_b", rows)),
        l=a.alloc("l_i", rows),
        t=a.alloc("rowstat", rows),
        k=tuple(a.alloc(f"K_j.{i}", tiling.bc, d) for i in range(nbuf)),
        v=tuple(a.alloc(f"V_j.{i}", tiling.bc, d) for i in range(nbuf)),
    )
    serial = overlap == "none"
    lazy = lazy_counts(workload, tiling.bc, variant)
    loop = OnlineSoftmaxLoop(
        setup,
        bufs,
        rows,
        tiling.bc,
        partial(_tile_body, serial=serial, rescale=variant["rescale"]),
        # none: the next tile's loads wait for this tile's last operation
        k_reader="omm" if serial else "smm",
        q_overlap=not serial,
        split=None if split is None else (split, alloc_combine(a, split.slices, rows, d)),
        rescale_counts=lazy,
    )
    # Split-K runs exactly: skipping slices would skip partials another tile waits for; so do
    # lazy rescales whose counts differ from block to block.
    exact = split is not None or (lazy is not None and not lazy.uniform)
    iterations = None if exact else loop.iterations
    return DataflowTrace(setup, loop, iterations)
