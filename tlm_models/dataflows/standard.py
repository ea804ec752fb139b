"""Standard attention: S = QK^T written off-chip, softmax as a separate pass, O = PV reading P.

Work goes panel by panel of T stacked query rows (``query_blocks.py``: positions of the query
heads of one K/V group, so each K/V tile serves the whole group), so S and P need only a
T x Nk off-chip panel, reused:
1. S_panel = Q_panel K^T with T x T output tiles: Q panel resident, K tiles and S tiles
   double-buffered, each S tile stored as soon as it is computed;
2. softmax: rows of S read back Rs at a time (double-buffered), P rows written;
3. O_panel = P_panel V with P and V tiles double-buffered, O panel resident, then stored.
GEMM tile rule: T = floor((-3d + sqrt(9d^2 + 8M)) / 4), the largest T with
T*d + 2*T*d + 2*T*T <= M (resident panel + two input tiles + two output tiles); the PV GEMM
needs the same space. Softmax rows: Rs = floor(M / (2Nk + 2)) (two row buffers + max, sum), or
one single-buffered row when two rows do not fit (M < 2Nk + 2).
With a mask, a panel's K/V tiles and S/P columns cover only the keys its rows see, and score
tiles the mask crosses are masked (-inf) before they are stored.
Phases are joined by one dependency on the previous phase's last store (DMA engines are
in-order), which also frees the reused on-chip space.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from tlm_models.dataflows.allocator import OnChipAllocator
from tlm_models.dataflows.builder import (
    Ext,
    Prev,
    RepeatResult,
    Template,
    TraceBuilder,
    role_offsets,
    tile_runs,
)
from tlm_models.dataflows.query_blocks import (
    QueryBlock,
    block_growth_shape,
    block_kind,
    load_block,
    masked_tile_runs,
    share_query_blocks,
    store_block,
)
from tlm_models.dataflows.row_blocks import load_rows, scale_q
from tlm_models.dataflows.setup import DataflowSetup, DataflowTrace, make_setup
from tlm_models.dataflows.variants import resolve
from tlm_models.errors import UserError
from tlm_models.fast_forward.control import IterationControl
from tlm_models.platform.info import PlatformInfo
from tlm_models.trace.record import Broadcast, VectorOp
from tlm_models.workload.spec import Workload


@dataclass(frozen=True)
class StandardTiling:
    tile: int  # T: GEMM tile edge and panel height
    softmax_rows: int  # Rs: score rows per softmax step
    softmax_buffers: int  # 2 (double-buffered) or 1 when two score rows do not fit


def standard_tiling(workload: Workload, capacity: int) -> StandardTiling:
    d, n = workload.head_dim, workload.kv_len
    # A tile edge beyond both the stacked query rows and the keys would only waste space.
    most = max(n, workload.group * workload.seq_len)
    t = min(most, int((-3 * d + math.isqrt(9 * d * d + 8 * capacity)) // 4))
    while t > 0 and 3 * t * d + 2 * t * t > capacity:
        t -= 1
    nbuf = 2 if capacity >= 2 * n + 2 else 1
    rs = min(t, capacity // (nbuf * n + 2))
    if t < 1 or rs < 1:
        raise UserError(
            f"standard attention needs M >= {max(3 * d + 2, n + 2)} elements "
            f"(a 1 x 1 GEMM tile with d = {d} and one score row of Nk = {n}), M = {capacity}"
        )
    return StandardTiling(tile=t, softmax_rows=rs, softmax_buffers=nbuf)


class _StandardEmitter:
    def __init__(self, setup: DataflowSetup, tiling: StandardTiling, serial: bool = False):
        self.s = setup
        self.t = tiling
        # overlap=none: each tile's loads wait for the previous tile's last operation.
        self.back = 1 if serial else 2
        w = setup.workload
        t, d, n = tiling.tile, w.head_dim, w.kv_len
        #: element bytes, head dim, keys, GEMM tile edge: what every phase's addresses use
        self.dims = (w.elem_bytes, d, n, t)
        a = setup.scratch  # GEMM phases (QK^T and PV share the space)
        self.panel = a.alloc("QO_panel", t, d)
        self.tin = (a.alloc("KV_tile.0", t, d), a.alloc("KV_tile.1", t, d))
        self.tsp = (a.alloc("SP_tile.0", t, t), a.alloc("SP_tile.1", t, t))
        sm = OnChipAllocator(setup.platform.scratchpad, w.elem_bytes)  # softmax phase
        rs = tiling.softmax_rows
        self.rows = tuple(sm.alloc(f"S_rows.{i}", rs, n) for i in range(tiling.softmax_buffers))
        self.mx = sm.alloc("rowmax", rs)
        self.sm_ = sm.alloc("rowsum", rs)
        self.softmax_layout = sm.layout()
        #: Panels of stacked query rows, the outer loop (the iterations fast-forward may skip).
        self.blocks = share_query_blocks(setup, t)
        keys = [w.block_key_range(blk.row0, blk.rows) for blk in self.blocks]
        kinds = [block_kind(w, blk, k, t) for blk, k in zip(self.blocks, keys, strict=True)]
        shapes = [block_growth_shape(w, b, k, t) for b, k in zip(self.blocks, keys, strict=True)]
        self.iterations = IterationControl(
            len(self.blocks), kinds, shapes if w.mask != "none" else None
        )

    def chunks(self, chunk_ops: int) -> Iterator[np.ndarray]:
        b = TraceBuilder(self.s.header, chunk_ops)
        join: int | None = None
        for index in self.iterations.iterations():
            blk = self.blocks[index]
            self.iterations.mark(index, b.next_index)
            keys = self.s.workload.block_key_range(blk.row0, blk.rows)
            join = yield from self._scores(b, blk, keys, join)
            join = yield from self._softmax(b, blk.height, keys[1] - keys[0], join)
            join = yield from self._pv(b, blk, keys, join)
        yield from b.finish()

    def _scores(
        self, b: TraceBuilder, blk: QueryBlock, keys: tuple[int, int], join: int | None
    ) -> Generator[np.ndarray, None, int | None]:
        s, w, (eb, d, n, t) = self.s, self.s.workload, self.dims
        rows, lo = blk.height, keys[0]
        q = load_block(b, s, self.panel.addr, blk, deps=[join])
        scale_q(b, s, self.panel.addr, rows, deps=[q])
        prev: RepeatResult | None = None
        kstep, sstep = self.tin[1].addr - self.tin[0].addr, self.tsp[1].addr - self.tsp[0].addr
        for run in masked_tile_runs(w, blk, keys, t):
            c0, count, cols = run.first_tile, run.count, run.width
            tpl = b.template()
            tpl.roles["ldk"] = load_rows(
                tpl, s, "K", self.tin[0].addr, cols, head=blk.kv_head, row0=lo,
                deps=[Prev("sts" if self.back == 1 else "smm", self.back)],
            )  # fmt: skip
            tpl.roles["smm"] = last = tpl.matmul(
                self.panel.addr,
                self.tin[0].addr,
                self.tsp[0].addr,
                rows,
                cols,
                d,
                trans_b=True,
                deps=[tpl.roles["ldk"], Prev("sts", self.back)],
            )
            if run.mask is not None:  # scores the mask hides become -inf before they go out
                tpl.roles["msk"] = last = tpl.mask(
                    self.tsp[0].addr,
                    self.tsp[0].addr,
                    rows,
                    cols,
                    diagonal=run.mask.diagonal,
                    window=run.mask.window,
                    period=run.mask.period,
                )
            tpl.roles["sts"] = tpl.store(
                self.tsp[0].addr,
                s.base("S"),
                rows,
                cols * eb,
                tensor=s.tensor["S"],
                dst_stride=n * eb,
                deps=[last],
            )

            def offsets(
                r: np.ndarray, tpl: Template = tpl, c0: int = c0, masked: bool = bool(run.mask)
            ) -> dict[str, dict[int, np.ndarray | int]]:
                c = c0 + r
                par = c % 2
                return role_offsets(
                    tpl,
                    {
                        ("ldk", "src0"): c * t * d * eb,
                        ("ldk", "dst"): par * kstep,
                        ("smm", "src1"): par * kstep,
                        ("smm", "dst"): par * sstep,
                        ("sts", "src0"): par * sstep,
                        ("sts", "dst"): c * t * eb,
                    }
                    | (
                        {("msk", "src0"): par * sstep, ("msk", "dst"): par * sstep}
                        if masked
                        else {}
                    ),
                )

            prev = yield from b.repeat(tpl, count, offsets, first=prev)
        return prev.handle("sts") if prev else join

    def _softmax(
        self, b: TraceBuilder, rows: int, span: int, join: int | None
    ) -> Generator[np.ndarray, None, int | None]:
        """Softmax of ``rows`` score rows of ``span`` keys each (the S and P panels keep a
        pitch of Nk keys)."""
        s = self.s
        eb, n, rs = s.elem_bytes, s.workload.kv_len, self.t.softmax_rows
        pitch = n * eb if span < n else 0
        nbuf = len(self.rows)
        step = self.rows[-1].addr - self.rows[0].addr
        prev: RepeatResult | None = None
        for r0, count, nrows, _ in tile_runs(rows, rs):
            tpl = b.template()
            buf, mx, sm = self.rows[0].addr, self.mx.addr, self.sm_.addr
            tpl.roles["lds"] = tpl.load(
                s.base("S"),
                buf,
                nrows,
                span * eb,
                tensor=s.tensor["S"],
                src_stride=pitch,
                deps=[Ext("join"), Prev("stp", min(nbuf, self.back))],
            )
            roles = tpl.roles
            roles["max"] = tpl.vector(VectorOp.ROWMAX, mx, buf, nrows, span, deps=[roles["lds"]])
            roles["sub"] = tpl.vector(
                VectorOp.SUB, buf, buf, nrows, span, src1=mx, bcast=Broadcast.ROW
            )
            roles["exp"] = tpl.exp(buf, buf, nrows, span, deps=[roles["sub"]])
            roles["sum"] = tpl.vector(VectorOp.ROWSUM, sm, buf, nrows, span, deps=[roles["exp"]])
            roles["div"] = tpl.vector(
                VectorOp.DIV, buf, buf, nrows, span, src1=sm, bcast=Broadcast.ROW
            )
            roles["stp"] = tpl.store(
                buf,
                s.base("P"),
                nrows,
                span * eb,
                tensor=s.tensor["P"],
                dst_stride=pitch,
                deps=[roles["div"]],
            )
            # Which fields of which ops name the (rotating) row buffer.
            on_buf = [
                ("lds", "dst"),
                ("max", "src0"),
                ("sub", "src0"),
                ("sub", "dst"),
                ("exp", "src0"),
                ("exp", "dst"),
                ("sum", "src0"),
                ("div", "src0"),
                ("div", "dst"),
                ("stp", "src0"),
            ]

            def offsets(
                r: np.ndarray,
                tpl: Template = tpl,
                r0: int = r0,
                on_buf: list[tuple[str, str]] = on_buf,
            ) -> dict[str, dict[int, np.ndarray | int]]:
                i = r0 + r
                row = i * rs * n * eb
                spec: dict[tuple[str, str], np.ndarray | int] = {
                    key: (i % nbuf) * step for key in on_buf
                }
                spec |= {("lds", "src0"): row, ("stp", "dst"): row}
                return role_offsets(tpl, spec)

            prev = yield from b.repeat(tpl, count, offsets, first=prev, ext={"join": join})
        return prev.handle("stp") if prev else join

    def _pv(
        self, b: TraceBuilder, blk: QueryBlock, keys: tuple[int, int], join: int | None
    ) -> Generator[np.ndarray, None, int | None]:
        s, (eb, d, n, t) = self.s, self.dims
        rows, lo = blk.height, keys[0]
        prev: RepeatResult | None = None
        vstep, pstep = self.tin[1].addr - self.tin[0].addr, self.tsp[1].addr - self.tsp[0].addr
        for c0, count, cols, first in tile_runs(keys[1] - lo, t):
            tpl = b.template()
            tpl.roles["ldp"] = tpl.load(
                s.base("P"),
                self.tsp[0].addr,
                rows,
                cols * eb,
                tensor=s.tensor["P"],
                src_stride=n * eb,
                deps=[Ext("join"), Prev("omm", self.back)],
            )
            tpl.roles["ldv"] = load_rows(
                tpl, s, "V", self.tin[0].addr, cols, head=blk.kv_head, row0=lo,
                deps=[Prev("omm", self.back)],
            )  # fmt: skip
            tpl.roles["omm"] = tpl.matmul(
                self.tsp[0].addr,
                self.tin[0].addr,
                self.panel.addr,
                rows,
                d,
                cols,
                accumulate=not first,
                deps=[tpl.roles["ldp"], tpl.roles["ldv"]],
            )

            def offsets(
                r: np.ndarray, tpl: Template = tpl, c0: int = c0
            ) -> dict[str, dict[int, np.ndarray | int]]:
                c = c0 + r
                par = c % 2
                return role_offsets(
                    tpl,
                    {
                        ("ldp", "src0"): c * t * eb,
                        ("ldp", "dst"): par * pstep,
                        ("ldv", "src0"): c * t * d * eb,
                        ("ldv", "dst"): par * vstep,
                        ("omm", "src0"): par * pstep,
                        ("omm", "src1"): par * vstep,
                    },
                )

            prev = yield from b.repeat(tpl, count, offsets, first=prev, ext={"join": join})
        last = prev.handle("omm") if prev else join
        store = store_block(b, s, self.panel.addr, blk, deps=[last])
        yield from b.ready()
        return store


def trace_standard(
    workload: Workload, platform: PlatformInfo, params: Mapping[str, object]
) -> DataflowTrace:
    """Standard (unfused) attention trace on ``platform``;
    ``params``: ``overlap`` (none|double)."""
    variant = resolve("standard", params)
    tiling = standard_tiling(workload, platform.capacity_elements(workload.elem_bytes))
    t, n = tiling.tile, workload.kv_len
    setup = make_setup(
        "standard",
        workload,
        platform,
        {
            "tile": t,
            "softmax_rows": tiling.softmax_rows,
            "softmax_buffers": tiling.softmax_buffers,
            "variant": variant,
        },
        spill=[("S", (t, n)), ("P", (t, n))],
    )
    em = _StandardEmitter(setup, tiling, serial=variant["overlap"] == "none")
    layout = f"softmax phase (same space):\n{em.softmax_layout}"
    return DataflowTrace(setup, em, em.iterations, extra_layout=layout)
