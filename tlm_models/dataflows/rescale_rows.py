"""How many rows an online softmax must rescale at each K/V tile: the lazy rescale's counts.

The O update of an online softmax (AttenIO's Alg. 1 line 13, FlashAttention-2's per-tile
rescale) multiplies row i of O by alpha_i = exp(m_old_i - m_new_i). Where a row's running
max did not rise, alpha_i is exactly 1 and the multiply changes nothing, so a lazy rescale
(``--param rescale=lazy``) touches only the rows whose max rose. How many that is depends on
the scores:

- ``scores=iid`` (default): exchangeable continuous scores (e.g. i.i.d.). The largest of the
  first K visible keys of a row is equally likely to be any of them, so the chance that it
  lies among the v keys of the newest tile is v / K: 1/j at key j for AttenIO's one-key tiles
  (about ln N rises per row), 1/t at tile t for tiles of equal width. The expected rows per
  tile are summed over the rows (each with its own visible key range under a mask) and made
  integers by rounding the running total, so the total equals the expectation to within
  half a row.
- ``scores=FILE.npz``: the run's own Q and K (arrays ``Q`` of shape (query heads, Nq, d)
  and ``K`` of (K/V heads, Nk, d)); the rises are counted from their scores Q K^T / sqrt(d)
  (float64), tile by tile, as the trace's numeric execution finds them.

A block's first tile initialises m, l and O and rescales nothing (count 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tlm_models.dataflows.query_blocks import BlockPlan, QueryBlock
from tlm_models.errors import UserError
from tlm_models.workload.spec import Workload

#: Beyond this many (key-range group x tile) terms the expectation is refused (a sliding
#: window's rows each start at their own key, and AttenIO's tiles are single keys).
_MAX_TERMS = 200_000_000
#: Keys per chunk when counting rises from scores (bounds the rows x keys score block).
_KEY_CHUNK = 4096


def row_key_ranges(w: Workload, blk: QueryBlock) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) per on-chip row of ``blk``: the keys [lo, hi) each row attends to (head j's
    rows start at row j * blk.rows, as the block stacks them)."""
    rows = blk.row0 + np.arange(blk.rows, dtype=np.int64)
    if w.mask == "none":
        lo = np.zeros(blk.rows, dtype=np.int64)
        hi = np.full(blk.rows, w.kv_len, dtype=np.int64)
    else:
        hi = rows + w.key_offset + 1
        lo = np.maximum(0, hi - w.window) if w.mask == "sliding" else np.zeros_like(hi)
    return np.tile(lo, blk.heads), np.tile(hi, blk.heads)


def tile_edges(plan: BlockPlan, bc: int) -> tuple[np.ndarray, np.ndarray]:
    """(first key, end key) of every tile of ``plan`` in order (tiles ``bc`` keys apart)."""
    starts = [r.key0 + bc * np.arange(r.count, dtype=np.int64) for r in plan.runs]
    ends = [s + r.width for s, r in zip(starts, plan.runs, strict=True)]
    if not starts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(starts), np.concatenate(ends)


def expected_rises(
    lo: np.ndarray, hi: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> np.ndarray:
    """Expected rows whose running max rises at each tile [starts[t], ends[t]) for
    exchangeable scores: row r, seeing keys [lo_r, hi_r), rises at tile t with probability
    (its visible keys in the tile) / (its visible keys up to the tile's end)."""
    out = np.zeros(len(starts), dtype=np.float64)
    groups = np.unique(lo)
    if len(groups) * len(starts) > _MAX_TERMS:
        raise UserError(
            f"rescale=lazy with scores=iid: {len(groups)} key ranges x {len(starts)} tiles is "
            "too many terms to sum; give the run's Q and K as scores=FILE.npz"
        )
    for first in groups.tolist():
        his = np.sort(hi[lo == first])
        # Rows that see the whole tile up to its end: v = end - max(start, lo), K = end - lo.
        whole = len(his) - np.searchsorted(his, ends, side="left")
        seen = ends - np.maximum(starts, first)
        upto = ends - first
        ok = (seen > 0) & (whole > 0)
        out[ok] += whole[ok] * seen[ok] / upto[ok]
        # Rows whose keys end inside a tile: v = hi - max(start, lo), K = hi - lo.
        tile = np.searchsorted(starts, his, side="left") - 1
        inside = (tile >= 0) & (his < ends[np.maximum(tile, 0)])
        t, h = tile[inside], his[inside]
        part = h - np.maximum(starts[t], first)
        keep = part > 0
        np.add.at(out, t[keep], part[keep] / (h[keep] - first))
    return out


def integer_counts(expected: np.ndarray, rows: int) -> np.ndarray:
    """Whole rows per tile whose running total follows the expectation's (tile 0: none)."""
    if len(expected) == 0:
        return np.zeros(0, dtype=np.int64)
    total = np.round(np.cumsum(np.concatenate([[0.0], expected[1:]])))
    counts = np.diff(total, prepend=0.0).astype(np.int64)
    return np.clip(counts, 0, rows)


def observed_rises(
    q: np.ndarray,
    k: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
) -> np.ndarray:
    """Rows whose running max rises at each tile, from scores ``q`` (rows x d, scaled) against
    keys ``k`` (Nk x d); row r sees keys [lo_r, hi_r); tile 0 counts none."""
    tiles = len(starts)
    counts = np.zeros(tiles, dtype=np.int64)
    running = np.full(len(q), -np.inf)
    t0 = 0
    while t0 < tiles:
        # Whole tiles of about _KEY_CHUNK keys at a time.
        t1 = max(t0 + 1, int(np.searchsorted(ends, starts[t0] + _KEY_CHUNK, side="right")))
        t1 = min(t1, tiles)
        c0, c1 = int(starts[t0]), int(ends[t1 - 1])
        keys = np.arange(c0, c1)
        s = q @ k[c0:c1].T
        s[(keys[None, :] < lo[:, None]) | (keys[None, :] >= hi[:, None])] = -np.inf
        tile_max = np.maximum.reduceat(s, starts[t0:t1] - c0, axis=1)
        before = np.maximum.accumulate(np.column_stack([running, tile_max[:, :-1]]), axis=1)
        counts[t0:t1] = (tile_max > before).sum(axis=0)
        running = np.maximum(before[:, -1], tile_max[:, -1])
        t0 = t1
    counts[:1] = 0
    return counts


@dataclass(frozen=True)
class ScoreArrays:
    """A run's Q and K as given by ``scores=FILE.npz``."""

    q: np.ndarray  # (query heads, Nq, d)
    k: np.ndarray  # (K/V heads, Nk, d)


def load_scores(path: str, w: Workload) -> ScoreArrays:
    """Q and K from ``path`` (.npz with arrays Q and K in the workload's shapes)."""
    file = Path(path)
    if not file.is_file():
        raise UserError(f"scores={path}: no such file (expected a .npz with arrays Q and K)")
    try:
        with np.load(file) as data:
            arrays = {name: np.asarray(data[name]) for name in ("Q", "K") if name in data}
    except (OSError, ValueError) as exc:
        raise UserError(f"scores={path}: not a readable .npz file ({exc})") from None
    want = {
        "Q": (w.head_count, w.seq_len, w.head_dim),
        "K": (w.kv_head_count, w.kv_len, w.head_dim),
    }
    for name, shape in want.items():
        if name not in arrays:
            raise UserError(f"scores={path}: no array {name!r} (expected {name} of shape {shape})")
        if arrays[name].shape != shape:
            raise UserError(
                f"scores={path}: {name} has shape {arrays[name].shape}, expected {shape} "
                "(heads, rows, d) for this workload"
            )
    return ScoreArrays(arrays["Q"].astype(np.float64), arrays["K"].astype(np.float64))


class RescaleCounts:
    """Rows to rescale per tile of each block: expected (``scores=iid``) or counted from the
    run's Q and K (``scores=FILE.npz``)."""

    def __init__(self, w: Workload, bc: int, scores: str):
        self.workload = w
        self.bc = bc
        self.arrays = None if scores == "iid" else load_scores(scores, w)

    @property
    def uniform(self) -> bool:
        """Whether blocks of one fast-forward signature get the same counts (dense, iid)."""
        return self.arrays is None and self.workload.mask == "none"

    def counts(self, blk: QueryBlock, plan: BlockPlan) -> np.ndarray:
        w = self.workload
        lo, hi = row_key_ranges(w, blk)
        starts, ends = tile_edges(plan, self.bc)
        if self.arrays is None:
            return integer_counts(expected_rises(lo, hi, starts, ends), blk.height)
        heads = blk.head0 + np.arange(blk.heads)
        q = np.concatenate(
            [self.arrays.q[h, blk.row0 : blk.row0 + blk.rows] for h in heads.tolist()]
        )
        return observed_rises(q * w.scale, self.arrays.k[blk.kv_head], lo, hi, starts, ends)
