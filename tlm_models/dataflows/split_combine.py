"""The records of split-K (``split_k.py``): a slice's partial result out, the block's combine.

Off-chip, partial (b, s) is one slot of the tensor ``Opart`` in the window of the tile that
computed it: O_s (h x d, unnormalised), then m_s and l_s (h each), h (d + 2) elements, so the
combine loads it in one transfer. On chip, a slice ends with O_i, its row max in one of the two
m buffers (the parity of its last tile) and l_i; O_i goes out as it is (the next slice's first
O write waits for that store, like the next block's after a normalised store), m and l are
first copied side by side into a staging buffer by the PE array (in trace order, so before the
next slice overwrites them) and go out in one store. Both stores post the partial's token.

The combine (on the block's combining tile) loads the S slots into S buffers, each load waiting
for its partial's two posts, then on the PE array and the Exp unit:

    m = max(m_0, m_1, ...)                      S - 1 vector max (h x 1)
    a_s = exp(m_s - m)                          S subtractions (h x 1), S exps (h)
    l_s *= a_s, O_s *= a_s                      S (h x 1) and S (h x d) multiplies
    l = sum l_s, O = sum O_s                    S - 1 additions of each
    O /= l, store O                             one division (h x d), the block's O rows

in place in the partial buffers (the sums gather in slot 0's).
"""

from __future__ import annotations

from dataclasses import dataclass

from tlm_models.dataflows.allocator import Buffer, OnChipAllocator
from tlm_models.dataflows.builder import TraceBuilder
from tlm_models.dataflows.query_blocks import store_block
from tlm_models.dataflows.setup import DataflowSetup
from tlm_models.dataflows.split_k import (
    POSTS_PER_PARTIAL,
    SplitPlan,
    partial_elements,
    tile_bases,
)
from tlm_models.trace.record import Broadcast, VectorOp


@dataclass(frozen=True)
class CombineBuffers:
    """On-chip buffers of split-K: the m/l staging pair and one buffer per partial."""

    stage: Buffer  # m_s then l_s of the slice going out (2 x h)
    parts: tuple[Buffer, ...]  # S partials, h (d + 2) each
    m: Buffer  # the combined row max (h)


def combine_elements(slices: int, rows: int, head_dim: int) -> int:
    """On-chip elements split-K adds to a tile: staging 2 h, S partials h (d + 2), m h."""
    return 2 * rows + slices * partial_elements(rows, head_dim) + rows


def alloc_combine(a: OnChipAllocator, slices: int, rows: int, head_dim: int) -> CombineBuffers:
    return CombineBuffers(
        stage=a.alloc("ml_stage", 2, rows),
        parts=tuple(a.alloc(f"part_{s}", rows, head_dim + 2) for s in range(slices)),
        m=a.alloc("m_comb", rows),
    )


class SplitRecords:
    """Emits one tile's partial stores and combines (``split_k.SplitPlan``)."""

    def __init__(self, setup: DataflowSetup, plan: SplitPlan, bufs: CombineBuffers, rows: int):
        self.setup = setup
        self.plan = plan
        self.bufs = bufs
        w, p = setup.workload, setup.platform
        self.slot_bytes = partial_elements(rows, w.head_dim) * setup.elem_bytes
        # Opart's place in a tile's window is the same in every window (same layout).
        offset = setup.base("Opart") - p.offchip.base
        self.windows = [base + offset for base in tile_bases(p.tile_offchip, p.tiles)]
        self._stage_free: int | None = None  # the last m/l store (staging write-after-read)

    def slot_address(self, block: int, s: int) -> int:
        """Off-chip address of partial (block, s), in the window of the tile computing it."""
        tile = self.plan.tile_of(block, s)
        return self.windows[tile] + self.plan.slot(block, s) * self.slot_bytes

    def store_partial(
        self, b: TraceBuilder, block: int, s: int, o: int, m: int, lsum: int, o_done: int | None
    ) -> int:
        """Stores O_s (from ``o``, ready at ``o_done``), m_s and l_s of slice ``s`` of block
        ``block``; returns the O store (the next slice's first O write waits for it)."""
        s_, w = self.setup, self.setup.workload
        h = self.plan.blocks[block].height
        eb, d = s_.elem_bytes, w.head_dim
        token = self.plan.token(block, s)
        dst = self.slot_address(block, s)
        tensor = s_.tensor["Opart"]
        o_store = b.store(o, dst, h, d * eb, tensor=tensor, deps=[o_done], token=token)
        stage = self.bufs.stage.addr
        cm = b.vector(VectorOp.COPY, stage, m, h, 1, deps=[self._stage_free])
        cl = b.vector(VectorOp.COPY, stage + h * eb, lsum, h, 1)
        self._stage_free = b.store(
            stage, dst + h * d * eb, 1, 2 * h * eb, tensor=tensor, deps=[cm, cl], token=token
        )
        return o_store

    def combine(self, b: TraceBuilder, block: int, after: int | None) -> int:
        """Block ``block``'s combine; ``after``: the previous combine's store (its buffers are
        free once it has gone out). Returns this combine's last store."""
        s_, w = self.setup, self.setup.workload
        blk = self.plan.blocks[block]
        h, d, eb = blk.height, w.head_dim, s_.elem_bytes
        tensor = s_.tensor["Opart"]
        parts = [p.addr for p in self.bufs.parts[: self.plan.slices]]
        loads = [
            b.load(
                self.slot_address(block, s), parts[s], 1, partial_elements(h, d) * eb,
                tensor=tensor, deps=[after], token=self.plan.token(block, s),
                posts=POSTS_PER_PARTIAL,
            )
            for s in range(self.plan.slices)
        ]  # fmt: skip
        m_of = [p + h * d * eb for p in parts]
        l_of = [p + (h * d + h) * eb for p in parts]
        mc = self.bufs.m.addr
        b.vector(VectorOp.MAX, mc, m_of[0], h, 1, src1=m_of[1], deps=[loads[0], loads[1]])
        for s in range(2, len(parts)):
            b.vector(VectorOp.MAX, mc, mc, h, 1, src1=m_of[s], deps=[loads[s]])
        for s, part in enumerate(parts):
            sub = b.vector(VectorOp.SUB, m_of[s], m_of[s], h, 1, src1=mc)
            a = b.exp(m_of[s], m_of[s], h, 1, rescale=True, deps=[sub])
            b.vector(VectorOp.MUL, l_of[s], l_of[s], h, 1, src1=m_of[s], deps=[a])
            b.vector(
                VectorOp.MUL, part, part, h, d, src1=m_of[s], bcast=Broadcast.ROW, lazy_rows=h,
                deps=[a],
            )  # fmt: skip
        for s in range(1, len(parts)):
            b.vector(VectorOp.ADD, l_of[0], l_of[0], h, 1, src1=l_of[s])
            b.vector(VectorOp.ADD, parts[0], parts[0], h, d, src1=parts[s])
        norm = b.vector(VectorOp.DIV, parts[0], parts[0], h, d, src1=l_of[0], bcast=Broadcast.ROW)
        return store_block(b, s_, parts[0], blk, deps=[norm])
