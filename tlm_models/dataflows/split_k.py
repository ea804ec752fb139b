"""Split-K (flash-decoding) across tiles: a block's keys in S slices on S tiles, then a combine.

A decode step has few query blocks (one per K/V group when the group's heads stack into one
block), often fewer than a chip has tiles; dealing whole blocks (``block_deal.py``) would leave
tiles idle. Split-K cuts each block's key range into S contiguous slices of whole K/V tiles
(of the block's J = ceil((hi - lo) / Bc) tiles, slice s holds [floor(s J / S), floor((s + 1) J /
S))). Each slice runs the usual online-softmax
loop over its keys on its own tile and stores its partial result, O_s (unnormalised, h x d) with
its row max m_s and row sum l_s (h each), to a slot of the off-chip tensor ``Opart``; the block's
combining tile loads the S partials and computes

    m = max_s m_s,   O = sum_s exp(m_s - m) O_s / sum_s exp(m_s - m) l_s.

Which tile does what (B blocks, C tiles):

- **S** (``--param split=auto``): 1 when B >= C (whole blocks, as before, bit for bit), else
  C / gcd(B, C), the least S with B x S a multiple of C: every tile gets B S / C slices.
  ``split=N`` sets S; B x S must still reach C, and no block may have fewer K/V tiles than S.
- **Slices**: slice s of block b is piece b S + s, dealt round robin: tile (b S + s) mod C
  (8 blocks on 16 tiles: block b on tiles 2b and 2b + 1; 3 blocks on 4 tiles: every tile one
  slice of each block).
- **Combine**: on the tile of slice b mod S (spread, so that B < C blocks do not all combine on
  the same tile), after every slice of that tile: a tile's trace is its slices in piece order,
  then its combines in block order, so its DMA never waits for other tiles' partials while it
  has keys of its own to load.
- **Ordering across tiles**: each partial store carries token b S + s + 1 (record field k) and
  the combine's load of slot (b, s) waits for its 2 posts (O_s, then m_s and l_s), resolved in
  the replay by ``tile_sync.h``.

Off-chip bytes per tile: Q h d per slice (every slice scores its keys against the block's
queries), K = V = the slice's keys x d, Opart h (d + 2) per slice written and S h (d + 2) per
combine read, O h d per combine; over the chip S times Q, K and V once, O once, and
2 S h (d + 2) per block of partials.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tlm_models.dataflows.query_blocks import BlockPlan, KeyRun, QueryBlock
from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo
from tlm_models.workload.spec import Workload

#: Posts a combine load waits for: the partial's O_s store, then its m_s, l_s store.
POSTS_PER_PARTIAL = 2
#: Tokens are stored in a record's k field; posts to wait for in a load's code byte.
MAX_TOKEN = (1 << 32) - 1


def auto_slices(blocks: int, tiles: int) -> int:
    """S for ``split=auto``: 1 with at least as many blocks as tiles, else C / gcd(B, C)."""
    return 1 if blocks >= tiles else tiles // math.gcd(blocks, tiles)


def split_slices(value: str, blocks: int, tiles: int, dense: bool) -> int:
    """S from the ``split`` parameter (``auto`` or a positive integer); UserError for a split
    the platform or the workload cannot take."""
    if value == "auto":
        return 1 if dense or tiles < 2 else auto_slices(blocks, tiles)
    slices = int(value)
    if slices == 1:
        return 1
    if tiles < 2:
        raise UserError(
            f"split={slices}: split-K spreads a block's keys over tiles; this platform has one "
            "tile (use split=1 or a tiled platform)"
        )
    if dense:
        raise UserError(
            f"split={slices}: dense self-attention is split by query rows over tiles; split-K "
            "applies to masked, grouped and decode workloads"
        )
    return slices


@dataclass(frozen=True)
class SplitPlan:
    """The slices of every block (one-tile order) over ``tiles`` tiles, ``slices`` per block."""

    blocks: tuple[QueryBlock, ...]
    key_tiles: tuple[int, ...]  # K/V tiles of Bc keys each block's key range holds
    slices: int
    tiles: int

    def __post_init__(self) -> None:
        pieces = len(self.blocks) * self.slices
        if pieces < self.tiles:
            raise UserError(
                f"split={self.slices}: {len(self.blocks)} block(s) x {self.slices} slices = "
                f"{pieces} pieces, fewer than the {self.tiles} tiles (each tile takes at "
                f"least one; use split={auto_slices(len(self.blocks), self.tiles)} or more)"
            )
        fewest = min(self.key_tiles)
        if self.slices > fewest:
            raise UserError(
                f"split={self.slices} is larger than the {fewest} K/V tile(s) of a block's "
                f"key range (each slice takes whole tiles of Bc keys); use split={fewest} or less"
            )
        if pieces + 1 > MAX_TOKEN:
            raise UserError(f"split={self.slices}: {pieces} partials exceed the token range")

    def tile_of(self, block: int, s: int) -> int:
        """The tile that computes slice ``s`` of block ``block``."""
        return (block * self.slices + s) % self.tiles

    def combiner(self, block: int) -> int:
        """The tile that combines block ``block``'s partials (the tile of slice b mod S)."""
        return self.tile_of(block, block % self.slices)

    def pieces(self, tile: int) -> list[tuple[int, int]]:
        """(block, slice) of tile ``tile``'s slices, in piece order."""
        total = len(self.blocks) * self.slices
        return [divmod(i, self.slices) for i in range(tile, total, self.tiles)]

    def combines(self, tile: int) -> list[int]:
        """The blocks tile ``tile`` combines, in block order."""
        return [b for b in range(len(self.blocks)) if self.combiner(b) == tile]

    def tile_range(self, block: int, s: int) -> tuple[int, int]:
        """K/V tiles [j0, j1) of slice ``s`` of block ``block``."""
        count = self.key_tiles[block]
        return s * count // self.slices, (s + 1) * count // self.slices

    def token(self, block: int, s: int) -> int:
        """The cross-tile token of partial (block, s): its slot in ``Opart`` plus one."""
        return block * self.slices + s + 1

    def slot(self, block: int, s: int) -> int:
        return block * self.slices + s


def slice_plan(plan: BlockPlan, j0: int, j1: int, bc: int) -> BlockPlan:
    """The block plan restricted to its K/V tiles [j0, j1), renumbered from 0 (the slice's
    first tile initialises m, l and O); keys and masks stay where they were."""
    runs: list[KeyRun] = []
    for run in plan.runs:
        lo, hi = max(run.index, j0), min(run.index + run.count, j1)
        # the slice's first tile stands alone (it initialises rather than rescales)
        for a, b in ((lo, min(hi, j0 + 1)), (max(lo, j0 + 1), hi)):
            if a < b:
                runs.append(
                    KeyRun(run.key0 + (a - run.index) * bc, b - a, run.width, run.masked, a - j0)
                )
    return BlockPlan(plan.height, plan.position, plan.period, tuple(runs))


def partial_elements(height: int, head_dim: int) -> int:
    """Elements of one partial result: O_s (h x d), m_s and l_s (h each)."""
    return height * (head_dim + 2)


def tile_bases(bases: Sequence[int], tiles: int) -> Sequence[int]:
    """The off-chip base of every tile's window (``PlatformInfo.tile_offchip``): a combining
    tile reads each partial where its slice's tile wrote it, in that tile's window."""
    if len(bases) != tiles:
        raise ValueError(f"the platform info lists {len(bases)} tile windows for {tiles} tiles")
    return bases


def split_of(
    dataflow: str, w: Workload, p: PlatformInfo, params: Mapping[str, object] | None
) -> SplitPlan | None:
    """The split-K plan of a run on a tiled platform (FlashAttention-2 only), or None."""
    if dataflow != "flash2":
        return None
    from tlm_models.dataflows.flash2 import flash2_plan  # flash2 builds on this module

    return flash2_plan(w, p, params).split


def split_section(plan: SplitPlan) -> dict[str, object]:
    """The result's ``tiles.split``: S, and per tile its slices and the blocks it combines."""
    return {
        "slices": plan.slices,
        "blocks": len(plan.blocks),
        "slices_per_tile": [len(plan.pieces(t)) for t in range(plan.tiles)],
        "combines_per_tile": [len(plan.combines(t)) for t in range(plan.tiles)],
        "key_tiles_per_block": min(plan.key_tiles),
    }
