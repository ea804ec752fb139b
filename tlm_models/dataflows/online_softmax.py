"""The Q-outer, K/V-inner online-softmax loop shared by FlashAttention-2 and AttenIO.

Per Q block: load Q (overlapping the previous block's normalisation), scale it by 1/sqrt(d),
then for each K/V tile: load K_j and V_j into rotating buffers (each load waits for the last
reader of its buffer: write-after-read), run the dataflow's tile body, and finally O /= l and
store O. Only the tile body differs between the dataflows; it is recorded once per tile shape
as a template and tiled by address relocation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from tlm_models.dataflows.allocator import Buffer
from tlm_models.dataflows.builder import (
    OffsetFn,
    Prev,
    RepeatResult,
    Template,
    TraceBuilder,
    tile_runs,
)
from tlm_models.dataflows.partition import share_blocks
from tlm_models.dataflows.row_blocks import load_rows, normalise_and_store_o, scale_q
from tlm_models.dataflows.setup import DataflowSetup
from tlm_models.fast_forward import IterationControl
from tlm_models.trace.record import MATMUL_SCALE_ROWS, OpKind, src2


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
class TileShape:
    rows: int  # Q rows in the block
    cols: int  # K/V rows in the tile
    first: bool  # first tile of the block: initialises m, l and O


#: Records the compute of one tile into a template whose K/V loads have roles ldk/ldv; must
#: give roles "smm" (last reader of the K buffer) and "omm" (last reader of the V buffer).
TileBody = Callable[[Template, SoftmaxBuffers, TileShape, int, int], None]

_FIELDS = ("src0", "src1", "dst", "src_stride")


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
    ):
        """``k_reader``/``v_reader``: the body role whose operation last reads a K (V) buffer,
        which the load into that buffer ``len(bufs.k)`` tiles later waits for. Without
        ``q_overlap`` Q_{i+1} loads only after O_i is normalised."""
        self.setup = setup
        self.bufs = bufs
        self.br = br
        self.bc = bc
        self.body = body
        self.k_reader = k_reader
        self.v_reader = v_reader
        self.q_overlap = q_overlap
        #: Q row blocks of this tile's rows (all of them on one tile), the outer loop (the
        #: iterations fast-forward may skip).
        self.blocks = share_blocks(setup.share, br)
        self.iterations = IterationControl(len(self.blocks))
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
        self.body(tpl, bufs, shape, tpl.roles["ldk"], tpl.roles["ldv"])
        # Relocation: which fields name a rotating buffer, resolved per repetition.
        named = {bufs.m[0].addr: "mcur", bufs.m[1].addr: "mnext"}
        if nbuf > 1:
            named |= {bufs.k[0].addr: "k", bufs.v[0].addr: "v"}
        if len(bufs.v) != nbuf:
            raise ValueError("K and V rotate through the same number of buffers")
        recs = tpl.records()
        reloc: dict[str, list[tuple[int, str]]] = {f: [] for f in _FIELDS}
        for col in range(len(tpl)):
            for f in _FIELDS[:3]:
                kind = named.get(int(recs[f][col]))
                if kind is not None:
                    reloc[f].append((col, kind))
            # A scaled matmul's row scales (src2) live in the stride fields; an offset within
            # the on-chip region never carries into the high half, so the low half takes it.
            if recs["kind"][col] == OpKind.MATMUL and recs["code"][col] & MATMUL_SCALE_ROWS:
                addr = src2(recs["src_stride"][col], recs["dst_stride"][col])
                kind = named.get(addr)
                if kind is not None:
                    if (addr & 0xFFFF_FFFF) + abs(bufs.m[1].addr - bufs.m[0].addr) >= 1 << 32:
                        raise ValueError(f"row scales at {addr:#x} straddle a 4 GiB boundary")
                    reloc["src_stride"].append((col, kind))
        reloc["src0"] += [(tpl.roles["ldk"], "tile"), (tpl.roles["ldv"], "tile")]
        self._templates[shape] = (tpl, reloc)
        return tpl, reloc

    def _offsets(
        self,
        reloc: Mapping[str, list[tuple[int, str]]],
        length: int,
        j0: int,
        t0: int,
        head_off: int,
    ) -> OffsetFn:
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
                "tile": head_off + j * tile_bytes,
                "k": kv_par * kstep,
                "v": kv_par * vstep,
                "mcur": m_par * mstep,
                "mnext": -m_par * mstep,
            }
            return {f: {col: values[kind] for col, kind in reloc[f]} for f in _FIELDS}

        return offsets

    def chunks(self, chunk_ops: int) -> Iterator[np.ndarray]:
        s, bufs = self.setup, self.bufs
        w = s.workload
        n = w.seq_len
        b = TraceBuilder(s.header, chunk_ops)
        blocks = self.blocks
        segments = tile_runs(n, self.bc)
        tiles_per_block = sum(count for _, count, _, _ in segments)
        kv_prev: RepeatResult | None = None
        last_store: int | None = None
        qload = load_rows(
            b, s, "Q", bufs.q.addr, blocks[0][2], head=blocks[0][0], row0=blocks[0][1]
        )
        index = 0
        while index < len(blocks):
            head, row0, rows = blocks[index]
            self.iterations.mark(index, b.next_index)
            scale_q(b, s, bufs.q.addr, rows, deps=[qload])
            head_off = head * w.tensor_elements * s.elem_bytes
            # K/V buffer parity counts every tile of every block, skipped ones included.
            tiles_done = index * tiles_per_block
            for j0, count, cols, first in segments:
                tpl, reloc = self._template(b, TileShape(rows, cols, first))
                offsets = self._offsets(reloc, len(tpl), j0, tiles_done, head_off)
                kv_prev = yield from b.repeat(
                    tpl, count, offsets, first=kv_prev, ext={"o_free": last_store}
                )
                tiles_done += count
            last_smm = kv_prev.handle("smm") if kv_prev else None
            following = self.iterations.following(index)
            nxt = blocks[following] if following < len(blocks) else None
            if nxt is not None and self.q_overlap:
                # Q of the next block streams in while O_i is normalised: it only waits for the
                # last reader of the Q buffer.
                qload = load_rows(
                    b, s, "Q", bufs.q.addr, nxt[2], head=nxt[0], row0=nxt[1], deps=[last_smm]
                )
            last_store = normalise_and_store_o(
                b, s, bufs.o.addr, bufs.l.addr, rows, head=head, row0=row0
            )
            if nxt is not None and not self.q_overlap:
                qload = load_rows(
                    b, s, "Q", bufs.q.addr, nxt[2], head=nxt[0], row0=nxt[1], deps=[last_store - 1]
                )
            yield from b.ready()
            index = following
        yield from b.finish()
