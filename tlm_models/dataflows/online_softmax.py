"""The Q-outer, K/V-inner online-softmax loop shared by FlashAttention-2 and AttenIO.

Per Q block: load Q (overlapping the previous block's normalisation), scale it by 1/sqrt(d),
then for each K/V tile the block needs (``query_blocks.py``: causal and sliding masks skip
the rest): load K_j and V_j into rotating buffers (each load waits for the last reader of its
buffer: write-after-read), run the dataflow's tile body (masking S first when the tile
crosses a mask edge), and finally O /= l and store O. A block stacks query rows of the heads
of one K/V head's group (``query_blocks.py``), so grouped-query attention reads each K/V tile
once for all of them. Only the tile body differs between the dataflows; it is recorded once
per tile shape as a template and tiled by address relocation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from tlm_models.dataflows.allocator import Buffer
from tlm_models.dataflows.builder import (
    DepRef,
    OffsetFn,
    Prev,
    RepeatResult,
    Template,
    TraceBuilder,
)
from tlm_models.dataflows.query_blocks import (
    BlockPlan,
    KeyRun,
    block_plan,
    load_block,
    share_query_blocks,
    store_block,
)
from tlm_models.dataflows.rescale_rows import RescaleCounts
from tlm_models.dataflows.row_blocks import load_rows, scale_q
from tlm_models.dataflows.setup import DataflowSetup
from tlm_models.dataflows.split_combine import CombineBuffers, SplitRecords
from tlm_models.dataflows.split_k import SplitPlan, slice_plan
from tlm_models.fast_forward.control import IterationControl
from tlm_models.trace.record import MATMUL_SCALE_ROWS, Broadcast, OpKind, VectorOp, src2
from tlm_models.workload.spec import Workload


@dataclass(frozen=True)
class SoftmaxBuffers:
    """On-chip buffers of the loop; ``m`` alternates between current and new row max."""

    q: Buffer
    o: Buffer
    s: Buffer
    m: tuple[Buffer, Buffer]
    l: Buffer  # noqa: E741 - the paper's name for the row sum
    k: tuple[Buffer, ...]  # K tile buffers, rotated per tile
    v: tuple[Buffer, ...]
    t: Buffer | None = None  # scratch row vector (row max / row sum of a tile)


@dataclass(frozen=True)
class TileMask:
    """A tile's mask geometry besides its diagonal (relocated per tile): see
    ``record.mask_visible``. ``diagonal``: the tile's own diagonal, for a body that records
    one template per tile (None: the template serves every tile of its run)."""

    window: int
    period: int
    phase: int
    fill: float
    diagonal: int | None = None


@dataclass(frozen=True)
class TileShape:
    rows: int  # Q rows in the block
    cols: int  # K/V rows in the tile
    first: bool  # first tile of the block: initialises m, l and O
    mask: TileMask | None = None  # S crosses a mask edge: mask it before the softmax


def mask_scores(tpl: Template, shape: TileShape, s: int) -> None:
    """Mask the rows x cols scores at ``s`` in place when the tile needs it (role "mask"; the
    loop relocates its diagonal per tile)."""
    if shape.mask is not None:
        mk = shape.mask
        tpl.roles["mask"] = tpl.mask(
            s, s, shape.rows, shape.cols, diagonal=0, window=mk.window, period=mk.period,
            phase=mk.phase, fill=mk.fill,
        )  # fmt: skip


def mask_fill(elem_bytes: int) -> float:
    """The masked score: the element type's lowest finite value (FP16 -65504, FP32 -3.4e38),
    not -inf, so a row that sees no key of its first tile keeps a finite running max and the
    next rescale exp(m_old - m) = 0 clears it (docs/models/pe_array.md, Mask)."""
    return float(np.finfo(np.float32).min) if elem_bytes >= 4 else -65504.0


def rescale_o(
    tpl: Template, bufs: SoftmaxBuffers, rows: int, *, lazy: bool, deps: list[DepRef]
) -> None:
    """O *= alpha (row broadcast) before O += P V: every row, or lazily the rows whose
    running max rose (role "rescale"; the loop sets its row count per tile). Both carry the
    rows they scale (``record.VECTOR_LAZY_ROWS``), which marks them as the rescale in the
    engines' time breakdown."""
    d = bufs.o.cols
    o, alpha = bufs.o.addr, bufs.m[0].addr
    op = tpl.vector(
        VectorOp.MUL, o, o, rows, d, src1=alpha, bcast=Broadcast.ROW,
        lazy_rows=0 if lazy else rows, deps=deps,
    )  # fmt: skip
    if lazy:
        tpl.roles["rescale"] = op


def lazy_counts(w: Workload, bc: int, variant: Mapping[str, str]) -> RescaleCounts | None:
    """The lazy rescale's rows per tile, when ``rescale=lazy``."""
    if variant["rescale"] != "lazy":
        return None
    return RescaleCounts(w, bc, variant["scores"])


#: Records the compute of one tile into a template whose K/V loads have roles ldk/ldv; must
#: give roles "smm" (last reader of the K buffer) and "omm" (last reader of the V buffer).
TileBody = Callable[[Template, SoftmaxBuffers, TileShape], None]

_FIELDS = ("src0", "src1", "dst", "src_stride")
_MASK_CODE = int(VectorOp.MASK)
_VECTOR_KIND = int(OpKind.VECTOR)
_MATMUL_KIND = int(OpKind.MATMUL)


class OnlineSoftmaxLoop:
    """Emits the whole trace of a Q-outer/K-V-inner online-softmax dataflow."""

    def __init__(
        self,
        setup: DataflowSetup,
        bufs: SoftmaxBuffers,
        br: int,
        bc: int,
        body: TileBody,
        *,
        k_reader: str = "smm",
        v_reader: str = "omm",
        q_overlap: bool = True,
        split: tuple[SplitPlan, CombineBuffers] | None = None,
        rescale_counts: RescaleCounts | None = None,
    ):
        """``k_reader``/``v_reader``: the body role whose operation last reads a K (V) buffer,
        which the load into that buffer ``len(bufs.k)`` tiles later waits for. Without
        ``q_overlap`` Q_{i+1} loads only after O_i is normalised. ``split``: split-K on tiles
        (``split_k.py``): the loop runs the tile's slices of blocks, each ending with its
        partial result stored, then the combines of the blocks this tile combines.
        ``rescale_counts``: the rows of the body's lazy rescale (role "rescale") per tile."""
        self.setup = setup
        self.bufs = bufs
        self.br = br
        self.bc = bc
        self.body = body
        self.k_reader = k_reader
        self.v_reader = v_reader
        self.q_overlap = q_overlap
        self.rescale_counts = rescale_counts
        w = setup.workload
        self.fill = mask_fill(w.elem_bytes)
        #: Blocks of stacked query rows, K/V head by K/V head: the outer loop (the iterations
        #: fast-forward may skip); a tile of a tiled platform's share only.
        plans: dict[tuple[int, int, int], BlockPlan] = {}
        self.plans: list[BlockPlan] = []
        self.split: SplitRecords | None = None
        #: split-K: the (block, slice) of each entry of ``blocks``
        self.pieces: list[tuple[int, int]] = []
        if split is None:
            self.blocks = share_query_blocks(setup, br)
        else:
            plan = split[0]
            self.split = SplitRecords(setup, plan, split[1], br)
            self.pieces = plan.pieces(setup.platform.tile)
            self.blocks = [plan.blocks[b] for b, _ in self.pieces]
        for i, blk in enumerate(self.blocks):
            key = (blk.row0, blk.rows, blk.heads)
            if key not in plans:
                plans[key] = block_plan(w, blk, bc)
            if self.split is not None:
                j0, j1 = self.split.plan.tile_range(*self.pieces[i])
                self.plans.append(slice_plan(plans[key], j0, j1, bc))
                continue
            self.plans.append(plans[key])
        #: K/V tiles before each block (the K/V buffers rotate per tile, skipped ones included)
        self.tiles_before = np.concatenate([[0], np.cumsum([p.tiles for p in self.plans])])
        signature = {id(p): p.signature(w) for p in self.plans}
        growth = {id(p): p.growth_shape(w) for p in self.plans}
        self.iterations = IterationControl(
            len(self.blocks),
            [signature[id(p)] for p in self.plans],
            [growth[id(p)] for p in self.plans] if w.mask != "none" else None,
        )
        self._templates: dict[TileShape, tuple[Template, dict[str, list[tuple[int, str]]]]] = {}

    def _template(
        self, b: TraceBuilder, shape: TileShape
    ) -> tuple[Template, dict[str, list[tuple[int, str]]]]:
        if shape in self._templates:
            return self._templates[shape]
        s, bufs = self.setup, self.bufs
        nbuf = len(bufs.k)
        tpl = b.template()
        tpl.roles["ldk"] = load_rows(
            tpl, s, "K", bufs.k[0].addr, shape.cols, deps=[Prev(self.k_reader, nbuf)]
        )
        tpl.roles["ldv"] = load_rows(
            tpl, s, "V", bufs.v[0].addr, shape.cols, deps=[Prev(self.v_reader, nbuf)]
        )
        self.body(tpl, bufs, shape)
        # Relocation: which fields name a rotating buffer, resolved per repetition.
        named = {bufs.m[0].addr: "mcur", bufs.m[1].addr: "mnext"}
        if nbuf > 1:
            named |= {bufs.k[0].addr: "k", bufs.v[0].addr: "v"}
        if len(bufs.v) != nbuf:
            raise ValueError("K and V rotate through the same number of buffers")
        recs = tpl.records()
        reloc: dict[str, list[tuple[int, str]]] = {f: [] for f in _FIELDS}
        # Column by column in numpy: a FuseMax tile template holds thousands of records.
        kinds, codes = recs["kind"], recs["code"]
        masks = (kinds == _VECTOR_KIND) & (codes & 0x0F == _MASK_CODE)
        reloc["src_stride"] += [(int(c), "diag") for c in np.flatnonzero(masks)]  # src1: wrap
        for f in _FIELDS[:3]:
            for addr, name in named.items():
                cols = np.flatnonzero((recs[f] == addr) & ~masks)
                reloc[f] += [(int(c), name) for c in cols]
        # A scaled matmul's row scales (src2) live in the stride fields; an offset within
        # the on-chip region never carries into the high half, so the low half takes it.
        scaled = (kinds == _MATMUL_KIND) & (codes & MATMUL_SCALE_ROWS != 0)
        for col in np.flatnonzero(scaled).tolist():
            addr = src2(recs["src_stride"][col], recs["dst_stride"][col])
            kind = named.get(addr)
            if kind is not None:
                if (addr & 0xFFFF_FFFF) + abs(bufs.m[1].addr - bufs.m[0].addr) >= 1 << 32:
                    raise ValueError(f"row scales at {addr:#x} straddle a 4 GiB boundary")
                reloc["src_stride"].append((col, kind))
        reloc["src0"] += [(tpl.roles["ldk"], "tile"), (tpl.roles["ldv"], "tile")]
        reloc["k"] = [(tpl.roles["rescale"], "lazy")] if "rescale" in tpl.roles else []
        self._templates[shape] = (tpl, reloc)
        return tpl, reloc

    def _offsets(
        self,
        reloc: Mapping[str, list[tuple[int, str]]],
        j0: int,
        t0: int,
        key_off: int,
        diag0: int,
        lazy: np.ndarray | None = None,
    ) -> OffsetFn:
        """Per repetition: the K/V rows from byte ``key_off`` on, tile ``j0 + rep`` of the block
        (m parity), buffer ``t0 + rep`` of the rotation, mask diagonal ``diag0 - rep * bc``,
        lazy rescale rows ``lazy[j0 + rep]``."""
        bufs = self.bufs
        nbuf = len(bufs.k)
        tile_bytes = self.bc * self.setup.workload.head_dim * self.setup.elem_bytes
        kstep = bufs.k[1].addr - bufs.k[0].addr if nbuf > 1 else 0
        vstep = bufs.v[1].addr - bufs.v[0].addr if nbuf > 1 else 0
        mstep = bufs.m[1].addr - bufs.m[0].addr

        def offsets(reps: np.ndarray) -> dict[str, dict[int, np.ndarray | int]]:
            j = j0 + reps
            kv_par = (t0 + reps) % nbuf
            m_par = j % 2
            values = {
                "tile": key_off + reps * tile_bytes,
                "diag": diag0 - reps * self.bc,
                "k": kv_par * kstep,
                "v": kv_par * vstep,
                "mcur": m_par * mstep,
                "mnext": -m_par * mstep,
            }
            fields: tuple[str, ...] = _FIELDS
            if lazy is not None and reloc["k"]:
                values["lazy"] = lazy[j]
                fields = (*_FIELDS, "k")
            return {f: {col: values[kind] for col, kind in reloc[f]} for f in fields}

        return offsets

    def chunks(self, chunk_ops: int) -> Iterator[np.ndarray]:
        s, bufs = self.setup, self.bufs
        w = s.workload
        row_bytes = w.head_dim * s.elem_bytes
        b = TraceBuilder(s.header, chunk_ops)
        blocks = self.blocks
        kv_prev: RepeatResult | None = None
        last_store: int | None = None
        qload = load_block(b, s, bufs.q.addr, blocks[0])
        index = 0
        while index < len(blocks):
            blk, plan = blocks[index], self.plans[index]
            self.iterations.mark(index, b.next_index)
            scale_q(b, s, bufs.q.addr, blk.height, deps=[qload])
            kv_off = s.base("K", blk.kv_head) - s.base("K", 0)
            tiles_done = int(self.tiles_before[index])
            lazy = None if self.rescale_counts is None else self.rescale_counts.counts(blk, plan)
            for run in plan.runs:
                mask = self._mask(plan, run)
                tpl, reloc = self._template(
                    b, TileShape(blk.height, run.width, run.index == 0, mask)
                )
                offsets = self._offsets(
                    reloc, run.index, tiles_done + run.index, kv_off + run.key0 * row_bytes,
                    plan.diagonal(w, run.key0), lazy,
                )  # fmt: skip
                kv_prev = yield from b.repeat(
                    tpl, run.count, offsets, first=kv_prev, ext={"o_free": last_store}
                )
            last_smm = kv_prev.handle("smm") if kv_prev else None
            following = self.iterations.following(index)
            nxt = blocks[following] if following < len(blocks) else None
            if nxt is not None and self.q_overlap:
                # Q of the next block streams in while O_i is normalised: it only waits for the
                # last reader of the Q buffer.
                qload = load_block(b, s, bufs.q.addr, nxt, deps=[last_smm])
            if self.split is not None:  # the slice's partial (O, m, l) goes out as it is
                m_last = bufs.m[1] if (plan.tiles - 1) % 2 == 0 else bufs.m[0]
                omm = kv_prev.handle("omm") if kv_prev else None
                last_store = self.split.store_partial(
                    b, *self.pieces[index], bufs.o.addr, m_last.addr, bufs.l.addr, omm
                )
                done = last_store
            else:
                done = b.vector(
                    VectorOp.DIV, bufs.o.addr, bufs.o.addr, blk.height, w.head_dim,
                    src1=bufs.l.addr, bcast=Broadcast.ROW,
                )  # fmt: skip
                last_store = store_block(b, s, bufs.o.addr, blk, deps=[done])
            if nxt is not None and not self.q_overlap:
                qload = load_block(b, s, bufs.q.addr, nxt, deps=[done])
            yield from b.ready()
            index = following
        if self.split is not None:
            combined = None
            for block in self.split.plan.combines(s.platform.tile):
                combined = self.split.combine(b, block, combined)
                yield from b.ready()
        yield from b.finish()

    def _mask(self, plan: BlockPlan, run: KeyRun) -> TileMask | None:
        if not run.masked:
            return None
        return TileMask(self.setup.workload.window, plan.period, 0, self.fill)
