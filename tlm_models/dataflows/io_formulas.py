"""Closed-form off-chip traffic of each dataflow's tiling, and the I/O lower bounds.

Counts are elements moved between off-chip memory and the chip (loads + stores), per tensor,
for all heads; the emitted traces move exactly these (tests check it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tlm_models.dataflows.approx import approx_params, approx_tiling
from tlm_models.dataflows.attenio import attenio_tiling
from tlm_models.dataflows.block_deal import group_range
from tlm_models.dataflows.flash2 import flash2_plan
from tlm_models.dataflows.flat import flat_plan, spilled_scores
from tlm_models.dataflows.fusemax import fusemax_plan
from tlm_models.dataflows.partition import RowRange, share_traffic, tile_share
from tlm_models.dataflows.query_blocks import (
    BlockShape,
    block_count,
    block_shape,
    key_span_sum,
    score_elements,
    tile_query_blocks,
)
from tlm_models.dataflows.split_k import SplitPlan
from tlm_models.dataflows.standard import standard_tiling
from tlm_models.dataflows.variants import resolve
from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo
from tlm_models.workload.spec import Workload

#: A dataflow's ``--param`` switches (``variants.py``); None = the defaults.
Params = Mapping[str, object] | None


@dataclass(frozen=True)
class Traffic:
    """Off-chip elements per tensor (all heads) and the tile parameter that set them."""

    dataflow: str
    elements: dict[str, int]
    elem_bytes: int
    tile: dict[str, int | str]  # tile parameters (approx also names its case)

    @property
    def total_elements(self) -> int:
        return sum(self.elements.values())

    @property
    def total_bytes(self) -> int:
        return self.total_elements * self.elem_bytes


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def online_softmax_elements(w: Workload, rows: int) -> dict[str, int]:
    """FlashAttention-2 and AttenIO with blocks of at most ``rows`` stacked query rows
    (``query_blocks.block_shape``): Q and O once, K and V over each block's key range, once
    per block. Mask none: K = V = Hkv B Nk d ceil(Nq / P) ceil(g / h) (P positions of h heads a
    block), the paper's Nd + 2Nd ceil(N/R) + Nd for self-attention; causal and sliding:
    ``key_span_sum`` in closed form."""
    return _stacked(w, block_shape(w, rows), {})


def online_softmax_macs(w: Workload, rows: int) -> int:
    """MACs of FlashAttention-2 and AttenIO: S = Q K^T and O += P V over the keys each block
    loads, 2 d x (block rows x keys) per block: 2 d Hq B sum_j rows_j (hi_j - lo_j)."""
    positions = block_shape(w, rows).positions
    return 2 * w.head_dim * w.head_count * score_elements(w, positions)


def attenio_traffic(w: Workload, p: PlatformInfo, params: Params = None) -> Traffic:
    """T = Nd + 2Nd*ceil(N/a) + Nd with a = floor((M - 2*stage*d)/(2d + 4)) for dense
    self-attention; masks, GQA and decode: :func:`online_softmax_elements` with R = a."""
    a = attenio_tiling(w, p, params)
    return Traffic("attenio", online_softmax_elements(w, a), w.elem_bytes, {"a": a})


def flash2_traffic(w: Workload, p: PlatformInfo, params: Params = None) -> Traffic:
    """T = Nd + 2Nd*ceil(N/Br) + Nd for any (Br, Bc) (Bc does not enter) and either overlap,
    for dense self-attention; masks, GQA and decode: :func:`online_softmax_elements` with
    R = Br. Br: the paper's min(ceil(M/4d), d) with ``tiling=paper``, the chosen one with
    ``fit`` (``flash2_tiles.py``)."""
    t = flash2_plan(w, p, params).tiling  # a split the platform cannot take fails here
    elements = online_softmax_elements(w, t.br)
    return Traffic("flash2", elements, w.elem_bytes, {"br": t.br, "bc": t.bc})


def fusemax_traffic(w: Workload, p: PlatformInfo, params: Params = None) -> Traffic:
    """T = Nd + 2Nd*ceil(N/R) + Nd with R resident query rows (``fusemax.fusemax_rows``) for
    dense self-attention, AttenIO's closed form with R for a: both are N d (4 when every row
    fits, R = N); masks, GQA and decode: :func:`online_softmax_elements` with R."""
    plan = fusemax_plan(w, p, params)
    tile: dict[str, int | str] = {"rows": plan.rows, "p0": plan.p0, "m0": plan.m0}
    return Traffic("fusemax", online_softmax_elements(w, plan.rows), w.elem_bytes, tile)


def _stacked(w: Workload, shape: BlockShape, extra: dict[str, int]) -> dict[str, int]:
    """Q and O once; K and V over each block's key range, once per block of stacked query rows
    (``query_blocks``): Hkv * B * ceil(g / heads per block) * sum over position blocks of
    (hi - lo) rows of d elements."""
    qo = w.head_count * w.tensor_elements
    kv = w.kv_head_count * -(-w.group // shape.heads) * key_span_sum(w, shape.positions)
    kv *= w.head_dim
    return {"Q": qo, "K": kv, "V": kv, "O": qo, **extra}


def standard_traffic(w: Workload, p: PlatformInfo, params: Params = None) -> Traffic:
    """T = 2 Nq d Hq + 2 d Hkv ceil(g/h) sum_j (hi_j - lo_j) + 4 Hq sum_j rows_j (hi_j - lo_j):
    K and V once per panel of stacked query rows (P positions of h heads of a group, P h <= T),
    S written and read, P written and read once each over each panel's key range [lo_j, hi_j)
    (dense: 2Nd + 2Nd*ceil(N/T) + 4N^2 per head; the same for either overlap)."""
    resolve("standard", params)
    t = standard_tiling(w, p.capacity_elements(w.elem_bytes))
    shape = block_shape(w, t.tile)
    scores = 2 * w.head_count * score_elements(w, shape.positions)
    return Traffic(
        "standard",
        _stacked(w, shape, {"S": scores, "P": scores}),
        w.elem_bytes,
        {"tile": t.tile, "softmax_rows": t.softmax_rows},
    )


def flat_traffic(w: Workload, p: PlatformInfo, params: Params = None) -> Traffic:
    """T = 2 Nq d Hq + 2 d Hkv ceil(g/h) sum_j (hi_j - lo_j) over blocks of R stacked rows
    (P positions of h heads, P h <= R; dense: 2Nd + 2Nd*ceil(N/R) per head), either overlap,
    plus the spilled scores, each written and read: whole rows (keep = 0) 2 Hq
    sum_j P (hi_j - lo_j); the columns past the first ``keep`` of every row (partial spill,
    unmasked) 2 Hq Nq (Nk - keep)."""
    t = flat_plan(w, p, params)
    shape = block_shape(w, t.rows)
    extra = {"S": 2 * spilled_scores(w, t)} if t.spill else {}
    return Traffic(
        "flat",
        _stacked(w, shape, extra),
        w.elem_bytes,
        {"rows": t.rows, "stage": t.stage, "spill": int(t.spill), "keep": t.keep},
    )


def score_work(w: Workload, positions: int) -> dict[str, int]:
    """MACs and exps of a dataflow that computes every score of each block of ``positions``
    rows per head over the block's key range (Standard, FLAT): Q K^T and P V take d MACs per
    score, softmax one exp; masked scores inside the range are computed and set to -inf."""
    scores = w.head_count * score_elements(w, positions)
    return {"macs": 2 * w.head_dim * scores, "exps": scores}


def standard_work(w: Workload, p: PlatformInfo) -> dict[str, int]:
    """MACs and exps Standard emits (panels of P positions, ``standard_traffic``)."""
    t = standard_tiling(w, p.capacity_elements(w.elem_bytes))
    return score_work(w, block_shape(w, t.tile).positions)


def flat_work(w: Workload, p: PlatformInfo, params: Params = None) -> dict[str, int]:
    """MACs and exps FLAT emits (blocks of P positions, ``flat_traffic``)."""
    t = flat_plan(w, p, params)
    return score_work(w, block_shape(w, t.rows).positions)


def approx_traffic(
    w: Workload, p: PlatformInfo, params: Mapping[str, object] | None = None
) -> Traffic:
    """Polynomial attention, per query row (Q, O, partial sums) and per K/V row entering (or,
    with a sliding window, leaving) H of each K/V head; B blocks:
    Case I (H on chip): every input row read once and every output row written once
    (T = 4Nd for self-attention);
    "columns" (c of the d value columns per block): K and Q once per block, V and O once;
    "features" (w-variable groups, B = sum_{s<=g} C(G, s) blocks): K and Q rows give
    L = d*sum_{s<=g} C(G-1, s-1) columns over all blocks, V is read once per block and the
    partial sums [D | numerators] are written after the first block, read and written after
    the middle ones and read before the last: T = 2NL + NdB + Nd + 2N(d+1)(B-1).
    H is built once per K/V head and read by all g query heads of its group. Masks use the
    prefix form: the needed keys enter once; a sliding window also subtracts each key that
    leaves it, lo(Nq-1) - lo(0) more K/V rows per head."""
    g = approx_params(params).degree
    t = approx_tiling(w, p.capacity_elements(w.elem_bytes), g)
    query_rows = w.seq_len * w.head_count
    key_rows = w.needed_keys()
    if w.mask == "sliding":
        key_rows += w.key_range(w.seq_len - 1)[0] - w.key_range(0)[0]
    key_rows *= w.kv_head_count
    elements = {k: v * key_rows for k, v in t.key_row_traffic(w.head_dim).items()}
    elements |= {k: v * query_rows for k, v in t.query_row_traffic(w.head_dim).items()}
    return Traffic("approx", elements, w.elem_bytes, {"degree": g, **t.tile()})


def approx_lower_bound(n: int, d: int) -> int:
    """Any attention algorithm reads Q, K, V and writes O at least once: 4Nd elements. This is
    Omega(Nd), the Case I bound, met exactly by the approx dataflow when H fits on chip."""
    return 4 * n * d


def approx_tiled_order(n: int, d: int, r: int, m: int) -> float:
    """N d * r(d+1)/M: the growth of re-reading the inputs once per M-sized slice of H when
    H (r x (d+1)) does not fit; evaluated with constant 1."""
    return n * d * r * (d + 1) / m


def query_block_height(dataflow: str, w: Workload, p: PlatformInfo, params: Params = None) -> int:
    """The most query rows a block of ``dataflow`` stacks on chip (AttenIO a,
    FlashAttention-2 Br, FuseMax R, Standard T, FLAT R)."""
    if dataflow == "standard":
        resolve("standard", params)
        return standard_tiling(w, p.capacity_elements(w.elem_bytes)).tile
    if dataflow == "flat":
        return flat_plan(w, p, params).rows
    key = {"attenio": "a", "fusemax": "rows"}.get(dataflow, "br")
    return int(TRAFFIC[dataflow](w, p, params).tile[key])


def tiled_block_count(dataflow: str, w: Workload, p: PlatformInfo, params: Params = None) -> int:
    """Blocks a masked, grouped or decode workload has to deal over tiles (``block_deal.py``);
    FlashAttention-2 split-K: its slices, blocks x S (``split_k.py``)."""
    if dataflow == "flash2":
        split = flash2_plan(w, p, params).split
        if split is not None:
            return len(split.blocks) * split.slices
    return block_count(w, block_shape(w, query_block_height(dataflow, w, p, params)))


def split_traffic(w: Workload, p: PlatformInfo, split: SplitPlan, bc: int) -> dict[str, int]:
    """Off-chip elements of tile ``p.tile``'s split-K share (``split_k.py``): per slice of a
    block of h stacked rows and key range [lo, hi), Q h d, K = V = d x its keys (K/V tiles
    [j0, j1) of Bc: min(hi, lo + j1 Bc) - (lo + j0 Bc)) and its partial written, h (d + 2);
    per combine the S partials read, S h (d + 2), and O h d."""
    d = w.head_dim
    q = keys = part = o = 0
    for block, s in split.pieces(p.tile):
        blk = split.blocks[block]
        lo, hi = w.block_key_range(blk.row0, blk.rows)
        j0, j1 = split.tile_range(block, s)
        q += blk.height * d
        keys += min(hi, lo + j1 * bc) - (lo + j0 * bc)
        part += blk.height * (d + 2)
    for block in split.combines(p.tile):
        h = split.blocks[block].height
        part += split.slices * h * (d + 2)
        o += h * d
    out = {"Q": q, "K": keys * d, "V": keys * d, "O": o, "Opart": part}
    return {name: count for name, count in out.items() if count}  # a tile may combine none


def tiled_traffic(
    dataflow: str, w: Workload, p: PlatformInfo, params: Params = None
) -> dict[str, int]:
    """Off-chip elements of tile ``p.tile`` of ``p.tiles``'s share of any workload: dense
    self-attention's row ranges (``tile_traffic``), otherwise the sum over the tile's whole
    blocks (``query_blocks.tile_query_blocks``) of Q = O = h d, K = V = (hi - lo) d, plus
    Standard's S and P, 2 h (hi - lo) each, and FLAT's spilled S, 2 h (hi - lo - keep) (h: the
    block's stacked rows, [lo, hi): its key range). approx: its whole K/V groups, g_t of G,
    carry g_t / G of every tensor of ``approx_traffic`` (each is a per-group count times G).
    Over all tiles: the one-tile closed form (``TRAFFIC``, ``approx_traffic``)."""
    if dataflow == "approx":
        groups = w.kv_head_count
        mine = len(group_range(groups, p.tile, p.tiles))
        return {k: v * mine // groups for k, v in approx_traffic(w, p, params).elements.items()}
    if w.dense:
        share = tile_share(w.head_count, w.seq_len, p.tile, p.tiles)
        return tile_traffic(dataflow, w, p, share, params)
    if dataflow == "flash2":
        plan = flash2_plan(w, p, params)
        if plan.split is not None:
            return split_traffic(w, p, plan.split, plan.tiling.bc)
    height = query_block_height(dataflow, w, p, params)
    # FLAT keeps the first ``keep`` score columns of a row on chip and spills the rest
    keep = flat_plan(w, p, params).keep if dataflow == "flat" else 0
    rows = keys = scores = spilled = 0
    for blk in tile_query_blocks(w, height, p.tile, p.tiles):
        lo, hi = w.block_key_range(blk.row0, blk.rows)
        rows += blk.height
        keys += hi - lo
        scores += blk.height * (hi - lo)
        spilled += blk.height * max(0, hi - lo - keep)
    d = w.head_dim
    out = {"Q": rows * d, "K": keys * d, "V": keys * d, "O": rows * d}
    if dataflow == "standard":
        out |= {"S": 2 * scores, "P": 2 * scores}
    elif dataflow == "flat" and spilled:
        out |= {"S": 2 * spilled}
    return out


def tile_traffic(
    dataflow: str, w: Workload, p: PlatformInfo, share: tuple[RowRange, ...], params: Params = None
) -> dict[str, int]:
    """Off-chip elements of one tile's ``share`` of dense self-attention (``partition.py``):
    Q = O = sum_k r_k d and K = V = sum_k N d ceil(r_k / x) over its row ranges (x: the
    dataflow's query block, AttenIO a, FlashAttention-2 Br, Standard T, FLAT R, at most N),
    plus Standard's S and P panels, each written and read once, 2 N r elements each, and FLAT's
    spilled scores, 2 (N - keep) r (r = sum_k r_k, the tile's query rows)."""
    n, d = w.seq_len, w.head_dim
    rows = sum(r.rows for r in share)
    extra: dict[str, int] = {}
    if dataflow == "standard":
        extra = {"S": 2 * n * rows, "P": 2 * n * rows}
    elif dataflow == "flat" and (t := flat_plan(w, p, params)).spill:
        extra = {"S": 2 * rows * (n - t.keep)}
    block = query_block_height(dataflow, w, p, params)
    return share_traffic(share, n, d, min(block, n)) | extra


TRAFFIC: dict[str, Callable[[Workload, PlatformInfo, Params], Traffic]] = {
    "standard": standard_traffic,
    "flat": flat_traffic,
    "flash2": flash2_traffic,
    "attenio": attenio_traffic,
    "fusemax": fusemax_traffic,
}


def mmm_lower_bound(n: int, d: int, m: int) -> float:
    """Tall-and-skinny MMM bound (elements): Nd + N^2 d(d+1)/(M - d) + N^2."""
    if m <= d:
        raise UserError(f"the MMM lower bound needs M > d (M = {m}, d = {d})")
    return n * d + n * n * d * (d + 1) / (m - d) + n * n


def attention_order_bound(n: int, d: int, m: int) -> float:
    """Order of growth of exact attention I/O, Theta(N^2 d^2 / M), evaluated with constant 1."""
    return n * n * d * d / m
