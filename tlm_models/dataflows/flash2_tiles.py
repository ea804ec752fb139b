"""FlashAttention-2's tile sizes (Br query rows, Bc keys per K/V tile) for a given machine.

``tiling=paper`` is the rule the AttenIO paper used for its FA2 baseline, FlashAttention's own:
Bc = ceil(M/4d), Br = min(ceil(M/4d), d) (the cap at d comes from a GPU's register budget).
``tiling=fit`` sizes both tiles from the on-chip memory and the machine at hand, as a designer
of a dataflow accelerator would: every (Br, Bc) whose buffers fit is a candidate, and the
candidates are ranked by an estimated time built from closed forms only (no simulation):

    T(Br, Bc) = bytes(Br) / B  +  tiles(Br, Bc) x (PE cycles / f_pe + Exp cycles / f_exp)

- bytes(Br): the off-chip elements of blocks of Br stacked query rows
  (``io_formulas.online_softmax_elements``, exact) times the element width; B the peak
  off-chip bandwidth. Bc does not change them.
- per tile: the issue cycles of the tile body's operations on the PE array and the Exp unit
  (docs/models/pe_array.md, exp_unit.md): S = Q K^T and O += P V (broadcast mapping
  ceil(Br Bc / P) x d and ceil(Br d / P) x Bc, output-stationary ceil(Br/rows) ceil(Bc/cols) d
  and ceil(Br/rows) ceil(d/cols) Bc), three Br x Bc vector passes (row max, subtract, row sum),
  O *= alpha (Br x d), four Br-element statistics updates, each operation's pipeline latency
  (and the systolic fill of an output-stationary matmul), and exp of Br x Bc and of Br on the
  Exp lanes, all as if they ran one after another (the PE array waits for the exponentials).
  Array occupancy enters here: a tile that leaves MACs idle takes more cycles per MAC.

The two terms are added, not overlapped: the estimate is an upper bound that charges every
byte, so a tiling trades bytes for compute only when the compute it saves takes longer than the
transfers it adds (with Br = d's 64 rows on the AttenIO machine FA2 is compute-bound and hides
its transfers, but moves 14x the bytes of the 1,024-row tiles fit takes, for the same time at
d = 64 and 2 % less at d = 128; docs/study.md). Ties go to fewer bytes, then to more query
rows (more compute per loaded K/V tile: the most room to overlap the next tile's load), then to
wider K/V tiles.

Candidates: Br = ceil(R/p) for every block count p (R: the stacked query rows of a K/V group,
the smallest Br with p blocks, leaving Bc the most room) and the same rounded up to the
array's row granule (broadcast: P / gcd(P, d), so Br x d fills whole passes; output-stationary:
the array rows) while it keeps p blocks; Bc the largest that fits beside them (at most Nk)
and that rounded down to the column granule (P / gcd(P, Br), or the array columns). About a
thousand candidates at N = 128K (0.1 s); the choice is cached per (workload, M, machine).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from tlm_models.dataflows.query_blocks import (
    BlockShape,
    block_count,
    block_shape,
    key_span_sum,
    query_blocks,
)
from tlm_models.dataflows.split_combine import combine_elements
from tlm_models.dataflows.split_k import split_slices
from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo
from tlm_models.workload.spec import Workload

#: Pipeline latencies when a platform does not give them: the PE array's and Exp unit's
#: parameter defaults (docs/models/pe_array.md, exp_unit.md).
DEFAULT_PE_LATENCY = 2
DEFAULT_EXP_LATENCY = 4


@dataclass(frozen=True)
class FlashTiling:
    br: int  # Q rows per block
    bc_rule: int  # the paper's K/V tile width ceil(M/4d)
    bc: int  # K/V tile width actually used
    #: ``fit``: why these tiles (the estimate and what it weighed); ``paper``: the rule.
    reason: str = ""


@dataclass(frozen=True)
class Machine:
    """The figures of a platform the estimate needs (hashable, for the cache)."""

    pe_rows: int
    pe_cols: int
    broadcast: bool
    pe_latency: int
    pe_hz: float
    exp_lanes: int
    exp_latency: int
    exp_hz: float
    bandwidth: float  # off-chip bytes/s

    @classmethod
    def of(cls, p: PlatformInfo) -> Machine:
        return cls(
            pe_rows=p.pe_rows,
            pe_cols=p.pe_cols,
            broadcast=bool(p.extra.get("pe_broadcast", 0.0)),
            pe_latency=int(p.extra.get("pe_latency", DEFAULT_PE_LATENCY)),
            pe_hz=p.pe_clock_hz,
            exp_lanes=p.exp_lanes,
            exp_latency=int(p.extra.get("exp_latency", DEFAULT_EXP_LATENCY)),
            exp_hz=p.exp_clock_hz,
            bandwidth=p.offchip_bandwidth,
        )

    @property
    def macs(self) -> int:
        return self.pe_rows * self.pe_cols

    def matmul(self, m: int, n: int, k: int) -> int:
        """Issue plus latency cycles of C[m x n] = A[m x k] B[k x n] (pe_array.md)."""
        if self.broadcast:
            return -(-m * n // self.macs) * k + self.pe_latency
        passes = -(-m // self.pe_rows) * -(-n // self.pe_cols)
        return passes * k + self.pe_rows + self.pe_cols - 2 + self.pe_latency

    def vector(self, elements: int, reduce_cols: int = 0) -> int:
        tree = math.ceil(math.log2(reduce_cols)) if reduce_cols > 1 else 0
        return -(-elements // self.macs) + self.pe_latency + tree

    def row_granule(self, d: int) -> int:
        """Br a multiple of this keeps the O update's passes whole."""
        return self.macs // math.gcd(self.macs, d) if self.broadcast else self.pe_rows

    def col_granule(self, br: int) -> int:
        """Bc a multiple of this keeps the score matmul's passes whole."""
        return self.macs // math.gcd(self.macs, br) if self.broadcast else self.pe_cols


def tile_seconds(m: Machine, br: int, bc: int, d: int) -> float:
    """Estimated time of one K/V tile of the FA2 loop body (``flash2._tile_body``): its PE
    and Exp operations one after another."""
    pe = m.matmul(br, bc, d) + m.matmul(br, d, bc)  # S = Q K^T, O += P V
    pe += m.vector(br * bc, bc) + m.vector(br * bc) + m.vector(br * bc, bc)  # rowmax, sub, rowsum
    pe += m.vector(br * d)  # O *= alpha
    pe += 4 * m.vector(br)  # m_new = max, m_old - m_new, l *= alpha, l += rowsum
    exp = -(-br * bc // m.exp_lanes) + -(-br // m.exp_lanes) + 2 * m.exp_latency
    return pe / m.pe_hz + exp / m.exp_hz


def compute_seconds(m: Machine, w: Workload, br: int, bc: int) -> float:
    """Estimated compute time of every K/V tile over all blocks of Br rows: per pass over a
    position block's key range, the full tiles of Bc keys and a last, narrower one (exact
    without a mask; with one, the ranges are summed in closed form and each block's last tile
    is taken as Bc / 2 wide)."""
    d = w.head_dim
    shape = block_shape(w, br)
    rows = shape.height
    passes = w.kv_head_count * -(-w.group // shape.heads)
    blocks = -(-w.seq_len // shape.positions)
    if w.mask == "none":
        full, last = divmod(w.kv_len, bc)
        per_block = full * tile_seconds(m, rows, bc, d)
        if last:
            per_block += tile_seconds(m, rows, last, d)
        return passes * blocks * per_block
    full = max(0, key_span_sum(w, shape.positions) - blocks * bc // 2) // bc
    short = tile_seconds(m, rows, max(1, bc // 2), d)
    return passes * (full * tile_seconds(m, rows, bc, d) + blocks * short)


def fit_bc(capacity: int, reserved: int, rows: int, d: int, buffers: int) -> int:
    """The widest K/V tile beside ``rows`` query rows: Q, O (rows x d), S (rows x Bc), m0, m1,
    t, l (rows each) and ``buffers`` K and V tiles (Bc x d each)."""
    return (capacity - reserved - 2 * rows * d - 4 * rows) // (2 * buffers * d + rows)


def key_ranges(w: Workload, shape: BlockShape) -> list[tuple[int, int]]:
    """The key range of every block of ``shape`` (few: split-K runs where blocks < tiles)."""
    return [w.block_key_range(b.row0, b.rows) for b in query_blocks(w, shape)]


def need_elements(reserved: int, rows: int, bc: int, d: int, buffers: int) -> int:
    return reserved + 2 * rows * d + 4 * rows + bc * (2 * buffers * d + rows)


@dataclass(frozen=True)
class Reserve:
    """What split-K asks of blocks of a given height (``split_k.py``): the on-chip elements
    its partials take beside the tiles (``split_combine``) and the widest K/V tile that still
    gives every block at least one tile per slice. ``split`` the parameter, ``tiles`` the
    platform's tiles (``split`` "1" or one tile: nothing)."""

    split: str = "1"
    tiles: int = 1

    def slices(self, w: Workload, rows: int) -> int:
        if self.split == "1" or (self.split == "auto" and self.tiles < 2):
            return 1
        blocks = block_count(w, block_shape(w, rows))
        slices = split_slices(self.split, blocks, self.tiles, w.dense)
        if slices > 1 and blocks * slices < self.tiles:
            raise UserError(
                f"split={slices}: {blocks} block(s) x {slices} slices = {blocks * slices} "
                f"pieces, fewer than the {self.tiles} tiles"
            )
        return slices

    def __call__(self, w: Workload, rows: int) -> int:
        slices = self.slices(w, rows)
        return 0 if slices == 1 else combine_elements(slices, rows, w.head_dim)

    def widest(self, w: Workload, rows: int) -> int:
        """Bc at most this (Nk without a split)."""
        slices = self.slices(w, rows)
        if slices == 1:
            return w.kv_len
        spans = (hi - lo for lo, hi in key_ranges(w, block_shape(w, rows)))
        return max(1, min(spans) // slices)


NO_RESERVE = Reserve()


def paper_tiling(
    w: Workload, capacity: int, buffers: int, reserve: Reserve = NO_RESERVE
) -> FlashTiling:
    """Br = min(ceil(M/4d), d), Bc = ceil(M/4d) (at most Nk); UserError when it does not fit."""
    d = w.head_dim
    quarter = -(-capacity // (4 * d))
    br = min(quarter, d)
    rows = min(br, w.group * w.seq_len)
    bc = min(quarter, w.kv_len)
    reserved = reserve(w, rows)
    if bc > fit_bc(capacity, reserved, rows, d, buffers):
        raise UserError(
            f"FlashAttention-2 needs {need_elements(reserved, rows, bc, d, buffers)} elements "
            f"on chip for Br = {rows}, Bc = {bc}, d = {d} and {buffers} K/V tile buffer(s), "
            f"but M = {capacity} elements (tiling=paper does not fit the overlap's buffers; "
            "use tiling=fit)"
        )
    return FlashTiling(br, quarter, bc, "paper: Br = min(ceil(M/4d), d), Bc = ceil(M/4d)")


def _candidates(
    w: Workload, capacity: int, buffers: int, reserve: Reserve, m: Machine
) -> tuple[set[tuple[int, int]], UserError | None]:
    """The (Br, Bc) pairs to rank (module docstring), and the last split-K refusal met."""
    d, total = w.head_dim, w.group * w.seq_len
    out: set[tuple[int, int]] = set()
    refused: UserError | None = None
    granule = m.row_granule(d)
    upper = total  # the largest Br with the current block count
    br = total
    while True:
        for rows in {br, min(-(-br // granule) * granule, upper)}:
            try:
                widest = reserve.widest(w, rows)
                bc = min(widest, fit_bc(capacity, reserve(w, rows), rows, d, buffers))
            except UserError as exc:  # a split-K the blocks of this height cannot take
                refused = exc
                continue
            if bc < 1:
                continue
            out.add((rows, bc))
            step = m.col_granule(rows)
            if bc > step:
                out.add((rows, bc // step * step))
        if br == 1:
            return out, refused
        # the next block count whose smallest Br is below this one
        upper = br - 1
        br = -(-total // -(-total // upper))


def _estimate(w: Workload, m: Machine, br: int, bc: int) -> tuple[float, int]:
    from tlm_models.dataflows.io_formulas import online_softmax_elements  # io_formulas uses us

    elements = sum(online_softmax_elements(w, br).values())
    nbytes = elements * w.elem_bytes
    compute = compute_seconds(m, w, br, bc)
    return nbytes / m.bandwidth + compute, nbytes


@lru_cache(maxsize=256)
def _fit(w: Workload, capacity: int, buffers: int, reserve: Reserve, m: Machine) -> FlashTiling:
    quarter = -(-capacity // (4 * w.head_dim))
    ranked = []
    candidates, refused = _candidates(w, capacity, buffers, reserve, m)
    for br, bc in candidates:
        seconds, nbytes = _estimate(w, m, br, bc)
        ranked.append(((seconds, nbytes, -br, -bc), br, bc))
    if not ranked and refused is not None:
        raise refused
    if not ranked:
        d, rows = w.head_dim, min(1, w.group * w.seq_len)
        raise UserError(
            f"FlashAttention-2 needs {need_elements(reserve(w, 1), rows, 1, d, buffers)} elements "
            f"on chip for Br = 1, Bc = 1, d = {d} and {buffers} K/V tile buffer(s), but "
            f"M = {capacity} elements"
        )
    (seconds, nbytes, _, _), br, bc = min(ranked)
    d = w.head_dim
    rows = min(quarter, d, w.group * w.seq_len)  # the paper's Br
    reason = (
        f"fit: least estimated time of {len(ranked)} (Br, Bc) that fit, {seconds * 1e6:.1f} us "
        f"({nbytes:,} B off-chip at {m.bandwidth / 1e9:g} GB/s plus tile compute, no overlap)"
    )
    try:
        paper_bc = min(quarter, w.kv_len, fit_bc(capacity, reserve(w, rows), rows, d, buffers))
    except UserError:
        paper_bc = 0
    if (br, bc) != (rows, paper_bc) and paper_bc >= 1:
        p_seconds, p_bytes = _estimate(w, m, rows, paper_bc)
        reason += (
            f"; the paper's Br = {rows}, Bc = {paper_bc}: {p_seconds * 1e6:.1f} us, {p_bytes:,} B"
        )
    return FlashTiling(br, quarter, bc, reason)


def fit_tiling(
    w: Workload,
    capacity: int,
    platform: PlatformInfo,
    buffers: int,
    reserve: Reserve = NO_RESERVE,
) -> FlashTiling:
    """The (Br, Bc) of least estimated time on ``platform`` (module docstring)."""
    return _fit(w, capacity, buffers, reserve, Machine.of(platform))
