"""Blocks of query rows stacked across the query heads of one K/V group.

With grouped-query attention the ``group`` query heads of a K/V head read the same K and V,
so a block of query rows holds ``rows`` consecutive positions of ``heads`` of those query
heads (the heads' rows one after another on chip): every K/V tile loaded for the block serves
all of them. Blocks take the number of the group's heads that loads the fewest K/V rows
(decode with one query row per head stacks the whole group into one block), and positions stay
together so that a mask's key range, which depends on the position only, stays narrow.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from tlm_models.dataflows.block_deal import deal_blocks
from tlm_models.dataflows.builder import DepRef, OpSink, tile_runs
from tlm_models.dataflows.partition import share_blocks, whole_workload
from tlm_models.dataflows.setup import DataflowSetup
from tlm_models.workload.spec import Workload


@dataclass(frozen=True)
class QueryBlock:
    """Positions row0 .. row0+rows-1 of global query heads head0 .. head0+heads-1, which all
    read K/V head ``kv_head``; on chip, head j's rows start at row j * rows."""

    kv_head: int
    head0: int
    heads: int
    row0: int
    rows: int

    @property
    def height(self) -> int:
        """Query rows of the block on chip."""
        return self.heads * self.rows


@dataclass(frozen=True)
class BlockShape:
    """Positions per block and query heads per block (the tiling of the stacked rows)."""

    positions: int
    heads: int

    @property
    def height(self) -> int:
        return self.positions * self.heads


def block_shape(w: Workload, height: int) -> BlockShape:
    """The shape of blocks of at most ``height`` rows that loads the fewest K/V rows: h heads
    of the group (1..g) with P = floor(height / h) positions each (at least one, at most Nq),
    costing ceil(g / h) passes over the key ranges of the position blocks (``key_span_sum``);
    ties go to more heads. Decode (P = 1 whatever h) stacks the whole group when it fits;
    prefill with g * Nq > height often keeps one head per block, whose P rows then fill it
    (floor(height / g) positions of g heads may leave rows of it unused)."""
    best: tuple[int, BlockShape] | None = None
    for heads in range(min(w.group, max(1, height)), 0, -1):
        positions = min(w.seq_len, max(1, height // heads))
        cost = -(-w.group // heads) * key_span_sum(w, positions)
        if best is None or cost < best[0]:
            best = (cost, BlockShape(positions, heads))
    assert best is not None
    return best[1]


def query_blocks(w: Workload, shape: BlockShape) -> list[QueryBlock]:
    """Every block, K/V head by K/V head, position block by position block, then head chunk."""
    g, nq = w.group, w.seq_len
    out: list[QueryBlock] = []
    for kv in range(w.kv_head_count):
        batch, j = divmod(kv, w.kv_heads)
        first = batch * w.heads + j * g
        for r0 in range(0, nq, shape.positions):
            rows = min(shape.positions, nq - r0)
            for h0 in range(0, g, shape.heads):
                out.append(QueryBlock(kv, first + h0, min(shape.heads, g - h0), r0, rows))
    return out


def tile_query_blocks(w: Workload, height: int, tile: int, tiles: int) -> list[QueryBlock]:
    """Tile ``tile`` of ``tiles``'s whole blocks of a masked, grouped or decode workload
    (``block_deal.py``: whole K/V groups, or zig-zag when there are fewer groups than tiles)."""
    blocks = query_blocks(w, block_shape(w, height))
    return deal_blocks(blocks, [b.kv_head for b in blocks], w.kv_head_count, tile, tiles)


def share_query_blocks(setup: DataflowSetup, height: int) -> list[QueryBlock]:
    """The blocks of at most ``height`` stacked rows this trace computes: every block of the
    workload (``query_blocks``), or on a tiled platform the tile's share: dense
    self-attention's row ranges (``partition.py``) in blocks of ``height`` rows of one head,
    any other workload's whole blocks (``tile_query_blocks``)."""
    w = setup.workload
    if setup.platform.tiles > 1 and not w.dense:
        return tile_query_blocks(w, height, setup.platform.tile, setup.platform.tiles)
    if whole_workload(setup.share, w.head_count, w.seq_len):
        return query_blocks(w, block_shape(w, height))
    return [
        QueryBlock(w.kv_head_of(head), head, 1, row0, rows)
        for head, row0, rows in share_blocks(setup.share, height)
    ]


def block_count(w: Workload, shape: BlockShape) -> int:
    """len(query_blocks(w, shape)) without listing them."""
    return w.kv_head_count * -(-w.seq_len // shape.positions) * -(-w.group // shape.heads)


def _row_segments(setup: DataflowSetup, blk: QueryBlock) -> list[tuple[int, int, int]]:
    """(off-chip address, on-chip row, rows) of the block's contiguous pieces of Q or O: one
    when the heads' rows are adjacent off chip (one head, or every position of each head)."""
    w = setup.workload
    row_bytes = w.head_dim * setup.elem_bytes
    head_bytes = w.seq_len * row_bytes
    if blk.heads == 1 or blk.rows == w.seq_len:
        return [(blk.head0 * head_bytes + blk.row0 * row_bytes, 0, blk.height)]
    return [
        ((blk.head0 + j) * head_bytes + blk.row0 * row_bytes, j * blk.rows, blk.rows)
        for j in range(blk.heads)
    ]


def load_block(
    sink: OpSink, setup: DataflowSetup, dst: int, blk: QueryBlock, deps: Iterable[DepRef] = ()
) -> int:
    """Load the block's Q rows to ``dst``; returns the last load (DMA loads run in order)."""
    row_bytes = setup.workload.head_dim * setup.elem_bytes
    last = -1
    for src, row, rows in _row_segments(setup, blk):
        last = sink.load(
            setup.base("Q") + src,
            dst + row * row_bytes,
            rows,
            row_bytes,
            tensor=setup.tensor["Q"],
            deps=deps,
        )
    return last


def store_block(
    sink: OpSink, setup: DataflowSetup, src: int, blk: QueryBlock, deps: Iterable[DepRef]
) -> int:
    """Store the block's O rows from ``src``; returns the last store (stores run in order)."""
    row_bytes = setup.workload.head_dim * setup.elem_bytes
    last = -1
    for dst, row, rows in _row_segments(setup, blk):
        last = sink.store(
            src + row * row_bytes,
            setup.base("O") + dst,
            rows,
            row_bytes,
            tensor=setup.tensor["O"],
            deps=deps,
        )
    return last


def key_span_sum(w: Workload, positions: int) -> int:
    """Sum over position blocks of ``positions`` rows of the block's key range hi - lo
    (``Workload.block_key_range``), in closed form: the K (or V) rows a dataflow loads per
    head chunk when it skips every key no row of the block sees."""
    nq, nk, p = w.seq_len, w.kv_len, positions
    blocks = -(-nq // p)
    if w.mask == "none":
        return blocks * nk
    off = w.key_offset
    # hi of block j: min((j + 1) p, Nq) + off; the last block ends at Nq.
    hi_sum = p * blocks * (blocks - 1) // 2 + nq + blocks * off
    if w.mask == "causal":
        return hi_sum
    # lo of block j: max(0, j p + off - W + 1), zero until j p >= W - 1 - off.
    start = w.window - 1 - off
    first = 0 if start <= 0 else -(-start // p)
    if first >= blocks:
        return hi_sum
    count = blocks - first
    lo_sum = p * (first + blocks - 1) * count // 2 + count * (off - w.window + 1)
    return hi_sum - lo_sum


def score_elements(w: Workload, positions: int) -> int:
    """Scores a block of ``positions`` rows per head holds, summed over the position blocks of
    one query head: sum of rows x (hi - lo) (the S or P panel elements of one head)."""
    last_row0 = (w.seq_len - 1) // positions * positions
    last_rows = w.seq_len - last_row0
    lo, hi = w.block_key_range(last_row0, last_rows)
    return positions * key_span_sum(w, positions) - (positions - last_rows) * (hi - lo)


@dataclass(frozen=True)
class TileMask:
    """Geometry of the element-wise mask of one score tile (``OpSink.mask``): row i (head
    ``i // period``, position t(i) = i mod period in the block) sees tile column j when
    j <= diagonal + t(i) (and j > diagonal + t(i) - window with a window)."""

    diagonal: int
    window: int
    period: int


def tile_mask(w: Workload, blk: QueryBlock, key0: int, cols: int) -> TileMask | None:
    """The mask of the score tile of ``blk``'s rows by keys key0 .. key0+cols-1, or None when
    every row sees every key of the tile."""
    if w.mask == "none":
        return None
    diagonal = blk.row0 + w.key_offset - key0  # the last key position 0 sees, tile-relative
    window = w.window if w.mask == "sliding" else 0
    all_below = cols - 1 <= diagonal  # even the first row sees the last column
    all_above = not window or diagonal + blk.rows - 1 - window < 0  # the last row sees column 0
    if all_below and all_above:
        return None
    return TileMask(diagonal, window, blk.rows if blk.heads > 1 else 0)


@dataclass(frozen=True)
class TileRun:
    """``count`` tiles of ``width`` keys from tile ``first_tile``; ``mask`` set for a single
    tile that needs the element-wise mask."""

    first_tile: int
    count: int
    width: int
    first: bool  # the run starts with the block's first tile
    mask: TileMask | None


def masked_tile_runs(
    w: Workload, blk: QueryBlock, keys: tuple[int, int], tile: int, masked: bool = True
) -> list[TileRun]:
    """The tiles of ``tile`` keys over the block's key range [lo, hi): runs of equally wide
    tiles no row masks, and every tile a mask crosses on its own (with its geometry);
    ``masked`` False: the plain runs (a pass over tiles masked before)."""
    lo, hi = keys
    if w.mask == "none" or not masked:
        return [TileRun(*run, None) for run in tile_runs(hi - lo, tile)]
    runs: list[TileRun] = []
    for c0, count, width, _ in tile_runs(hi - lo, tile):
        start = c0
        for c in range(c0, c0 + count):
            mask = tile_mask(w, blk, lo + c * tile, width)
            if mask is None:
                continue
            if c > start:
                runs.append(TileRun(start, c - start, width, start == 0, None))
            runs.append(TileRun(c, 1, width, c == 0, mask))
            start = c + 1
        if start < c0 + count:
            runs.append(TileRun(start, c0 + count - start, width, start == 0, None))
    return runs


def block_kind(
    w: Workload, blk: QueryBlock, keys: tuple[int, int], tile: int
) -> tuple[object, ...]:
    """Equal for blocks whose records (``tile``-key tiles over ``keys``) differ only in
    addresses: fast-forward's iteration kinds (``IterationControl``)."""
    runs = tuple((r.count, r.width, r.mask) for r in masked_tile_runs(w, blk, keys, tile))
    return (blk.heads, blk.rows, keys[1] - keys[0], runs)


def block_growth_shape(
    w: Workload, blk: QueryBlock, keys: tuple[int, int], tile: int
) -> tuple[tuple[object, ...], tuple[int, ...]]:
    """``block_kind`` with the key span and the counts of the runs no mask crosses set apart:
    blocks along a causal diagonal differ only in those (fast-forward's linear-growth rule)."""
    runs = masked_tile_runs(w, blk, keys, tile)
    shape = tuple((None if r.mask is None else r.count, r.width, r.mask) for r in runs)
    counts = (keys[1] - keys[0], *(r.count for r in runs if r.mask is None))
    return (blk.heads, blk.rows, shape), counts


@dataclass(frozen=True)
class KeyRun:
    """``count`` K/V tiles of ``width`` keys from key ``key0``, ``bc`` apart; ``index``: the
    first's position among the block's tiles (tile 0 initialises m, l and O)."""

    key0: int
    count: int
    width: int
    masked: bool
    index: int


@dataclass(frozen=True)
class BlockPlan:
    """The K/V tiles of one block of stacked query rows, as runs of equal tiles (computed per
    run, not per tile: AttenIO's tiles are single keys), for the online-softmax loop."""

    height: int  # query rows on chip
    position: int  # query position of each head's first row
    period: int  # rows per head when heads are stacked (the mask's row wrap), else 0
    runs: tuple[KeyRun, ...]

    @property
    def tiles(self) -> int:
        return sum(r.count for r in self.runs)

    @property
    def keys(self) -> int:
        """Keys loaded (K rows, and V rows) for this block."""
        return sum(r.count * r.width for r in self.runs)

    def diagonal(self, w: Workload, key: int) -> int:
        """Mask diagonal of a tile starting at ``key`` (``record.mask_visible``)."""
        return self.position + w.key_offset - key

    def signature(self, w: Workload) -> tuple[object, ...]:
        """Equal for blocks whose records differ only in addresses: what fast-forward may
        treat as repetitions of one another."""
        runs = tuple(
            (r.count, r.width, r.masked, self.diagonal(w, r.key0) if r.masked else None)
            for r in self.runs
        )
        return (self.height, self.period, runs)

    def growth_shape(self, w: Workload) -> tuple[tuple[object, ...], tuple[int, ...]]:
        """The signature with the counts of the runs no mask crosses set apart: blocks along
        a causal diagonal differ only in those (fast-forward's linear-growth rule)."""
        runs = tuple(
            (None, r.width, False, None)
            if not r.masked
            else (r.count, r.width, True, self.diagonal(w, r.key0))
            for r in self.runs
        )
        return (self.height, self.period, runs), tuple(r.count for r in self.runs if not r.masked)


def block_plan(w: Workload, blk: QueryBlock, bc: int) -> BlockPlan:
    """Tiles of ``bc`` keys over the block's key range; a tile is masked unless every row sees
    all of its keys, i.e. unless it lies in [lo(last position), hi(first position))."""
    lo, hi = w.block_key_range(blk.row0, blk.rows)
    common_lo = w.key_range(blk.row0 + blk.rows - 1)[0]
    common_hi = w.key_range(blk.row0)[1]
    tiles = -(-(hi - lo) // bc)
    # The wholly visible tiles are a contiguous range [j_a, j_b) (both conditions are monotone
    # in the tile); the first tile of the block and a short last one stand alone.
    j_a = min(tiles, max(0, -(-(common_lo - lo) // bc)))  # first tile starting >= common_lo
    # tiles ending <= common_hi: the full ones below it, and the short last one if hi <= it
    j_b = tiles if hi <= common_hi else min(tiles, max(0, (common_hi - lo) // bc))
    cuts = {0, min(1, tiles), tiles, tiles - 1 if (hi - lo) % bc else tiles}
    if w.mask != "none":
        cuts |= {j_a, j_b}
    runs = []
    for j0, j1 in itertools.pairwise(sorted(cuts)):
        key = lo + j0 * bc
        masked = w.mask != "none" and not j_a <= j0 < j_b
        runs.append(KeyRun(key, j1 - j0, min(bc, hi - key), masked, j0))
    return BlockPlan(blk.height, blk.row0, blk.rows if blk.heads > 1 else 0, tuple(runs))
