"""How a tiled platform splits masked, grouped-query and decode workloads: whole query blocks.

Dense self-attention is split by query rows (``partition.tile_share``). Any other workload is
split by the blocks a one-tile run computes (``query_blocks.query_blocks``: a block stacks the
positions of one or more query heads of one K/V group and loads the K/V rows of its key range
once), each block whole on one tile. A dataflow loads K and V per block, so dealing whole blocks
moves no byte more than one tile does: per tile the elements are the sum over its blocks of
(``block_traffic``) Q = O = height x d, K = V = (hi - lo) x d over the block's key range
[lo, hi), plus Standard's S and P panels, 2 height (hi - lo) each, and FLAT's spilled score rows,
2 height (hi - lo); over all tiles they are the one-tile closed forms (``io_formulas.TRAFFIC``).

Which tile computes which block:

- **K/V groups first** (G = batch x kv_heads groups, G >= C tiles): tile t takes groups
  [floor(t G / C), floor((t + 1) G / C)) with all their blocks, so a group's query heads and its
  K/V stay on one tile. Every group has the same blocks (same mask, same lengths), so C | G
  gives every tile the same work.
- **Zig-zag over blocks** (G < C, e.g. MQA): the blocks, in one-tile order (group, position
  block, head chunk), are dealt in rounds of C, round r left to right when r is even and right
  to left when odd (tile of block i: i mod C, or C - 1 - i mod C). Under a causal mask a block's
  key range grows with its position, so a round's first tile takes the shortest block of one
  round and the longest of the next: the rows of a tile pair short and long key ranges.
  A group's blocks then land on several tiles; each loads the K/V rows of its own blocks'
  ranges, which is what one tile loads for them too (no extra traffic), and the group's stacked
  heads stay together inside each block.

A workload with fewer blocks than tiles is refused (some tiles would have no work; decode with a
group stacked into one block per group needs G >= C), except by FlashAttention-2, which splits
each block's keys over several tiles (split-K, ``split_k.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar

from tlm_models.workload.spec import Workload

if TYPE_CHECKING:
    from tlm_models.dataflows.split_k import SplitPlan

_Block = TypeVar("_Block")


def deal_blocks(
    blocks: Sequence[_Block], kv_of: Sequence[int], groups: int, tile: int, tiles: int
) -> list[_Block]:
    """Tile ``tile``'s blocks of ``blocks`` (one-tile order; ``kv_of[i]``: block i's K/V
    group, one of ``groups``), in that order."""
    if not 0 <= tile < tiles:
        raise ValueError(f"tile {tile} of {tiles}")
    if groups >= tiles:
        mine = group_range(groups, tile, tiles)
        return [b for b, kv in zip(blocks, kv_of, strict=True) if kv in mine]
    return [b for i, b in enumerate(blocks) if zigzag_tile(i, tiles) == tile]


def group_range(groups: int, tile: int, tiles: int) -> range:
    """The K/V groups tile ``tile`` of ``tiles`` takes whole: [floor(t G / C), floor((t+1) G /
    C)) (approx's split too: each tile builds the state H of its own groups)."""
    return range(tile * groups // tiles, (tile + 1) * groups // tiles)


def zigzag_tile(index: int, tiles: int) -> int:
    """The tile of the ``index``-th block when blocks are dealt zig-zag over ``tiles``."""
    turn, pos = divmod(index, tiles)
    return pos if turn % 2 == 0 else tiles - 1 - pos


def assignment(w: Workload, tiles: int, split: SplitPlan | None = None) -> str:
    """How ``w``'s work goes to ``tiles`` tiles, in words (the result's ``tiles`` section);
    ``split``: FlashAttention-2's split-K plan, when its keys are split."""
    if split is not None:
        blocks = len(split.blocks)
        return (
            f"split-K: {blocks} block(s) x {split.slices} key slices on {tiles} tiles "
            f"({blocks * split.slices // tiles} slice(s) a tile), each block combined on one tile"
        )
    if w.dense:
        if w.head_count >= tiles:
            return f"whole heads per tile ({w.head_count} heads on {tiles} tiles)"
        return f"query rows split evenly ({w.head_count} head(s) on {tiles} tiles)"
    groups = w.kv_head_count
    if groups >= tiles:
        return f"whole K/V groups per tile ({groups} groups on {tiles} tiles)"
    return f"blocks dealt zig-zag ({groups} K/V group(s) on {tiles} tiles)"
