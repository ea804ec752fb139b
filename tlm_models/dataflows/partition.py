"""How a multi-tile platform splits an attention workload: each tile gets contiguous rows of Q.

The (batch x heads) problems are independent, so they are dealt first: with H >= C tiles, tile t
takes heads [floor(t H / C), floor((t + 1) H / C)), every query row of each (sizes differ by at
most one head). With fewer heads than tiles the query dimension is split too: the H x N query
rows, head-major, are cut into C contiguous ranges of floor(H N / C) or one more rows, so a tile
holds part of one head (or the end of one and the start of the next). Each tile reads all of K
and V of every head it touches, since its query rows need every key.

Masked, grouped-query and decode workloads are split by whole query blocks instead
(``block_deal.py``).

A tile's share is a list of ``RowRange``s; the emitters block each range by their own tile size
(``share_blocks``), so the closed-form traffic of a share follows from the ranges alone
(``share_traffic``; Standard's S/P panels and FLAT's spilled rows: ``io_formulas.tile_traffic``).
"""

from __future__ import annotations

from dataclasses import dataclass

from tlm_models.errors import UserError
from tlm_models.workload.spec import Workload


@dataclass(frozen=True)
class RowRange:
    """Query rows [row0, row1) of head ``head`` (a batch x heads index)."""

    head: int
    row0: int
    row1: int

    @property
    def rows(self) -> int:
        return self.row1 - self.row0


def tile_share(heads: int, seq_len: int, tile: int, tiles: int) -> tuple[RowRange, ...]:
    """Tile ``tile`` of ``tiles``'s query rows; every row belongs to exactly one tile."""
    if not 0 <= tile < tiles:
        raise ValueError(f"tile {tile} of {tiles}")
    if heads >= tiles:
        lo, hi = tile * heads // tiles, (tile + 1) * heads // tiles
        return tuple(RowRange(h, 0, seq_len) for h in range(lo, hi))
    total = heads * seq_len
    if total < tiles:
        raise UserError(
            f"{heads} head(s) x {seq_len} query rows = {total} rows cannot be spread over "
            f"{tiles} tiles (each needs at least one row)"
        )
    lo, hi = tile * total // tiles, (tile + 1) * total // tiles
    ranges = []
    for head in range(lo // seq_len, (hi - 1) // seq_len + 1):
        start, end = max(lo, head * seq_len), min(hi, (head + 1) * seq_len)
        ranges.append(RowRange(head, start - head * seq_len, end - head * seq_len))
    return tuple(ranges)


def share_blocks(share: tuple[RowRange, ...], block_rows: int) -> list[tuple[int, int, int]]:
    """(head, first row, rows) of each Q block of at most ``block_rows`` rows, range by range."""
    return [
        (r.head, row, min(block_rows, r.row1 - row))
        for r in share
        for row in range(r.row0, r.row1, block_rows)
    ]


def whole_workload(share: tuple[RowRange, ...], heads: int, seq_len: int) -> bool:
    """The share is every row of every head (a platform of one tile)."""
    return len(share) == heads and all(r.row0 == 0 and r.row1 == seq_len for r in share)


def share_traffic(
    share: tuple[RowRange, ...], seq_len: int, head_dim: int, block_rows: int
) -> dict[str, int]:
    """Off-chip elements of a Q-outer share: Q and O once per row, all of K and V once per Q
    block: sum over ranges of r d, N d ceil(r / x), N d ceil(r / x), r d (r rows, x = block)."""
    q = sum(r.rows for r in share) * head_dim
    blocks = sum(-(-r.rows // block_rows) for r in share)
    kv = seq_len * head_dim * blocks
    return {"Q": q, "K": kv, "V": kv, "O": q}


#: Dataflows that split their query blocks over tiles (``query_blocks.share_query_blocks``).
QUERY_BLOCK_DATAFLOWS = ("attenio", "flash2", "flat", "fusemax", "standard")
#: Every dataflow that runs on tiles; approx, which builds each K/V head's state H from every
#: key row, takes whole K/V groups per tile (``approx.tile_groups``).
TILED_DATAFLOWS = (*QUERY_BLOCK_DATAFLOWS, "approx")


def check_tiled(dataflow: str, workload: Workload, tiles: int, blocks: int | None = None) -> None:
    """UserError unless ``dataflow`` can be spread over ``tiles`` tiles (checked in the caller,
    before any worker starts). ``blocks``: how many whole query blocks a masked, grouped or
    decode workload deals over the tiles (``block_deal.py``); each tile needs one."""
    heads, seq_len = workload.head_count, workload.seq_len
    if dataflow not in TILED_DATAFLOWS:
        raise UserError(
            f"dataflow {dataflow!r} does not partition its work across tiles yet; on a tiled "
            f"platform use one of {', '.join(TILED_DATAFLOWS)}"
        )
    groups = workload.kv_head_count
    if dataflow == "approx":
        if groups < tiles:
            raise UserError(
                f"approx splits its work by whole K/V groups (each tile builds the state H of "
                f"its own groups): {workload.describe()} has {groups} group(s), fewer than the "
                f"{tiles} tiles; use at most {groups} tiles (--set tiles.count=N)"
            )
    elif workload.dense:
        tile_share(heads, seq_len, tiles - 1, tiles)  # the last tile has the fewest rows
    elif blocks is not None and blocks < tiles:
        raise UserError(
            f"{dataflow} computes {workload.describe()} in {blocks} query block(s), fewer than "
            f"the {tiles} tiles (each tile takes whole blocks); use at most {blocks} tiles "
            "(--set tiles.count=N)"
            + (" or split-K (--param split=auto)" if dataflow == "flash2" else "")
        )
