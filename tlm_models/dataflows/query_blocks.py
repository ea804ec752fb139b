"""Query blocks and the K/V tiles each needs, for the Q-outer online-softmax dataflows.

A block is ``rows`` consecutive rows of one K/V head's group of query heads, taken head-major:
the group's ``g`` heads of Nq rows are consecutive in the Q tensor, so a block is one load and
one store whichever heads it spans, and every K/V tile loaded for it serves all of its rows.
A block whose rows run past its head's last query position wraps to position 0 of the next
head (decode packs a whole group's single rows into one block this way).

The block needs the keys any of its query positions sees (``Workload.key_range``): an
interval per run of consecutive positions, merged. Those keys are tiled ``bc`` at a time from
the start of each interval; tiles outside are never loaded or computed. A tile some row does
not wholly see (it crosses the causal diagonal or the window's lower edge) gets a mask record.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from tlm_models.dataflows.workload import Workload


@dataclass(frozen=True)
class TileRun:
    """``count`` tiles of ``width`` keys from ``key0``, ``bc`` apart; ``index``: the first's
    position among the block's tiles (the first tile initialises m, l and O)."""

    key0: int
    count: int
    width: int
    masked: bool
    index: int


@dataclass(frozen=True)
class BlockPlan:
    """The K/V tiles of one query block and its rows' mask geometry."""

    rows: int
    position: int  # query position of row 0
    period: int  # Nq when the rows wrap into the next head, else 0
    runs: tuple[TileRun, ...]

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
        return (self.rows, self.period, self.position if self.period else None, runs)


def position_runs(w: Workload, first: int, rows: int) -> list[tuple[int, int]]:
    """Runs (first, last) of consecutive query positions of flat group rows first..first+rows-1
    (head-major: flat row f is position f mod Nq)."""
    nq = w.seq_len
    if rows >= nq:
        return [(0, nq - 1)]
    p0 = first % nq
    if p0 + rows <= nq:
        return [(p0, p0 + rows - 1)]
    return [(p0, nq - 1), (0, p0 + rows - 1 - nq)]


def key_intervals(w: Workload, first: int, rows: int) -> list[tuple[int, int]]:
    """Disjoint, sorted key intervals [lo, hi) that the block's positions see."""
    spans = sorted(w.block_key_range(a, b - a + 1) for a, b in position_runs(w, first, rows))
    merged: list[tuple[int, int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def block_plan(w: Workload, first: int, rows: int, bc: int) -> BlockPlan:
    """Tiles of ``bc`` keys covering what flat group rows first..first+rows-1 see, as runs of
    equal tiles (computed per run, not per tile: AttenIO's tiles are single keys)."""
    runs_of_positions = position_runs(w, first, rows)
    lowest = min(a for a, _ in runs_of_positions)
    highest = max(b for _, b in runs_of_positions)
    # Every row sees [lo(highest), hi(lowest)) (both ends are monotone in the position).
    common_lo, common_hi = w.key_range(highest)[0], w.key_range(lowest)[1]
    runs: list[TileRun] = []
    index = 0
    for lo, hi in key_intervals(w, first, rows):
        tiles = -(-(hi - lo) // bc)
        # The wholly visible tiles are a contiguous range [j_a, j_b) (both conditions are
        # monotone in the tile); the first tile of the block and a short last one stand alone.
        j_a = min(tiles, max(0, -(-(common_lo - lo) // bc)))  # first tile starting >= lo
        # tiles ending <= hi: full ones up to (common_hi - lo) // bc, the last if hi <= it
        j_b = tiles if hi <= common_hi else min(tiles, max(0, (common_hi - lo) // bc))
        cuts = {0, tiles, tiles - 1 if (hi - lo) % bc else tiles}
        if w.mask != "none":
            cuts |= {j_a, j_b}
        if index == 0:
            cuts.add(min(1, tiles))
        edges = sorted(cuts)
        for j0, j1 in itertools.pairwise(edges):
            key = lo + j0 * bc
            width = min(bc, hi - key)
            masked = w.mask != "none" and not (j_a <= j0 < j_b)
            runs.append(TileRun(key, j1 - j0, width, masked, index + j0))
        index += tiles
    p0 = first % w.seq_len
    wraps = p0 + rows > w.seq_len
    return BlockPlan(rows, p0, w.seq_len if wraps else 0, tuple(runs))


def query_blocks(w: Workload, rows: int) -> list[tuple[int, int]]:
    """(first flat row, rows) of each block of one K/V head's group (g * Nq rows)."""
    total = w.group * w.seq_len
    return [(f, min(rows, total - f)) for f in range(0, total, rows)]
