"""FLAT: row-granularity fusion — R complete score rows on chip, full K and V streamed per block.

Per block of R query rows: load Q (scaled by 1/sqrt(d)); stream K in tiles of Tk rows
(Tk = min(N, PE rows), double-buffered staging) computing S tiles and the running row max;
then stream V in tiles: P_c = exp(S_c - m), l += rowsum(P_c), O += P_c V_c; finally O /= l and
store O. Tk = min(Nk, PE rows, floor(M/8d)) keeps staging within a quarter of the SRAM;
R = floor((M - 2*Tk*d) / (2d + Nk + 3)) (Q, O, a full score row, row max, sum and tile max per
row, beside the staging). The R rows are stacked query rows of one K/V group
(``query_blocks.py``): every K/V tile serves all the group's heads in the block. With a mask
the K/V streams cover only the keys the block's rows see, and score tiles the mask crosses
are masked (-inf) before their row max.
When R < 1 a score row does not fit: rows go one at a time and every
S tile spills off-chip after its row max is taken (double-buffered 1 x Tk tile buffers),
then is read back for the exponent — 2N extra elements per row.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from tlm_models.dataflows.builder import (
    Ext,
    Prev,
    RepeatResult,
    Template,
    TraceBuilder,
    role_offsets,
)
from tlm_models.dataflows.query_blocks import (
    QueryBlock,
    TileRun,
    block_growth_shape,
    block_kind,
    block_shape,
    key_span_sum,
    load_block,
    masked_tile_runs,
    score_elements,
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
class FlatTiling:
    rows: int  # R: query rows per block
    stage: int  # Tk: K/V staging tile rows
    spill: bool  # some score tiles go off-chip
    #: Score columns of a row kept on chip (a multiple of Tk): every key without a spill; 0
    #: when every score tile spills (R = 1 when a row does not fit).
    keep: int = 0

    @property
    def keep_tiles(self) -> int:
        """Score tiles of a row that stay on chip; the later ones spill."""
        return self.keep // self.stage


def _kv_elements(w: Workload, rows: int) -> int:
    """K and V elements of blocks of ``rows`` stacked rows (``query_blocks``)."""
    shape = block_shape(w, rows)
    return (
        2
        * w.kv_head_count
        * -(-w.group // shape.heads)
        * key_span_sum(w, shape.positions)
        * (w.head_dim)
    )


def spill_candidates(w: Workload, capacity: int, tk: int) -> list[FlatTiling]:
    """Partial-spill plans of R rows that keep the first ``keep`` score columns of each row on
    chip and spill the rest: Q, O (R x d), 3 statistics (R), the kept columns and two
    double-buffered R x Tk spill tiles per row, beside the 2 Tk x d staging. One plan per
    block count p (R = ceil(rows / p), the fewest rows with p blocks, which keeps the most
    columns); a plan that keeps every column is no spill and is left out."""
    d, n, total = w.head_dim, w.kv_len, w.group * w.seq_len
    out = []
    br = total
    while True:
        room = capacity - 2 * tk * d - br * (2 * d + 3 + 2 * tk)
        if room >= 0:
            keep = min(n, room // (br * tk) * tk)
            if keep < n:
                out.append(FlatTiling(rows=br, stage=tk, spill=True, keep=keep))
        if br == 1:
            return out
        br = -(-total // -(-total // (br - 1)))


def spilled_scores(w: Workload, t: FlatTiling) -> int:
    """Score elements written off-chip (and read back) over all heads: per block row, the
    columns of its key range past the first ``keep`` (whole rows spill with keep = 0)."""
    if not t.spill:
        return 0
    if t.keep == 0:
        return w.head_count * score_elements(w, block_shape(w, t.rows).positions)
    assert w.mask == "none", "partial spills are planned for unmasked workloads only"
    return w.head_count * w.seq_len * max(0, w.kv_len - t.keep)


def flat_tiling(
    workload: Workload, capacity: int, pe_rows: int, spill: str = "never"
) -> FlatTiling:
    """R and Tk (module docstring). ``spill``: ``never`` keeps whole score rows on chip (R = 1
    and every tile spilling only when one row does not fit); ``auto`` also weighs plans that
    spill the later score tiles of more rows (``spill_candidates``, unmasked workloads) and
    takes the one moving the fewest bytes (ties: no spill, then more rows)."""
    w = workload
    d, n = w.head_dim, w.kv_len
    tk = max(1, min(n, pe_rows, capacity // (8 * d)))
    r = (capacity - 2 * tk * d) // (2 * d + n + 3)
    whole: FlatTiling | None = None
    if r >= 1:
        r = min(r, w.group * w.seq_len)  # the stacked query rows of a group
        # R is set with the smallest staging tile; the staging then grows into what the R rows
        # leave free (Q, O, S rows and three row statistics each). Traffic depends on R alone,
        # so this only cuts the number of transfers and matmuls (16x at N = 128K).
        free = capacity - r * (2 * d + n + 3)
        whole = FlatTiling(rows=r, stage=max(tk, min(n, free // (2 * d))), spill=False, keep=n)
    options = [] if whole is None else [whole]
    if spill == "auto" and w.mask == "none":
        options += spill_candidates(w, capacity, tk)
    if options:
        return min(
            options,
            key=lambda t: (_kv_elements(w, t.rows) + 2 * spilled_scores(w, t), t.spill, -t.rows),
        )
    need = 2 * tk * d + 2 * d + 3 + 2 * tk
    if need > capacity:
        raise UserError(
            f"FLAT needs M >= {need} elements even when spilling score rows "
            f"(d = {d}, staging {tk} rows), M = {capacity}"
        )
    return FlatTiling(rows=1, stage=tk, spill=True, keep=0)


def flat_plan(
    workload: Workload, platform: PlatformInfo, params: Mapping[str, object] | None = None
) -> FlatTiling:
    """The tiling ``params`` (``spill``) give on ``platform``."""
    variant = resolve("flat", params)
    capacity = platform.capacity_elements(workload.elem_bytes)
    return flat_tiling(workload, capacity, platform.pe_rows, variant["spill"])


def _split_runs(runs: list[TileRun], at: int) -> list[TileRun]:
    """``runs`` cut at tile ``at`` (the first spilled tile)."""
    out = []
    for run in runs:
        end = run.first_tile + run.count
        if run.first_tile < at < end:
            head = at - run.first_tile
            out.append(dataclasses.replace(run, count=head))
            out.append(dataclasses.replace(run, first_tile=at, count=end - at, first=False))
        else:
            out.append(run)
    return out


class _FlatEmitter:
    def __init__(self, setup: DataflowSetup, tiling: FlatTiling, serial: bool = False):
        self.s = setup
        self.tl = tiling
        # overlap=none: each staging load waits for the previous tile's last operation.
        self.ld_after = Prev("last", 1) if serial else Prev("reader", 2)
        w = setup.workload
        r, tk, d, n = tiling.rows, tiling.stage, w.head_dim, w.kv_len
        a = setup.scratch
        self.q = a.alloc("Q_rows", r, d)
        self.o = a.alloc("O_rows", r, d)
        # Row-resident S is stored tile after tile (each R x Tk tile contiguous).
        # spilling: the kept tiles, then two R x Tk spill tiles alternating
        s_cols = tiling.keep + 2 * tk if tiling.spill else n
        self.srow = a.alloc("S_rows", r, s_cols)
        self.m = a.alloc("rowmax", r)
        self.l = a.alloc("rowsum", r)
        self.t = a.alloc("tilestat", r)
        self.stage = (a.alloc("KV_stage.0", tk, d), a.alloc("KV_stage.1", tk, d))
        #: Blocks of stacked query rows, the outer loop (the iterations fast-forward may skip).
        self.blocks = share_query_blocks(setup, r)
        self.keys = [w.block_key_range(blk.row0, blk.rows) for blk in self.blocks]
        pairs = list(zip(self.blocks, self.keys, strict=True))
        kinds = [block_kind(w, b, k, tk) for b, k in pairs]
        shapes = [block_growth_shape(w, b, k, tk) for b, k in pairs] if w.mask != "none" else None
        self.iterations = IterationControl(len(self.blocks), kinds, shapes)

    def _tiles(self, index: int) -> int:
        """Staging tiles block ``index`` loads (K and V)."""
        lo, hi = self.keys[index]
        return 2 * -(-(hi - lo) // self.tl.stage)

    def chunks(self, chunk_ops: int) -> Iterator[np.ndarray]:
        s = self.s
        b = TraceBuilder(s.header, chunk_ops)
        ring: RepeatResult | None = None  # staging buffers rotate across K and V phases
        staged = 0
        last_smm: int | None = None
        last_store: int | None = None
        index = 0
        while index < len(self.blocks):
            blk, keys = self.blocks[index], self.keys[index]
            self.iterations.mark(index, b.next_index)
            rows = blk.height
            q = load_block(b, s, self.q.addr, blk, deps=[last_smm])
            scale_q(b, s, self.q.addr, rows, deps=[q])
            ring, staged = yield from self._phase(b, "K", blk, keys, ring, staged, None)
            last_smm = ring.handle("smm") if ring else None
            spilled = ring.handle("sts") if ring else None
            ring, staged = yield from self._phase(
                b, "V", blk, keys, ring, staged,
                {"o_free": last_store, "spilled": spilled},
            )  # fmt: skip
            d = s.workload.head_dim
            norm = b.vector(
                VectorOp.DIV,
                self.o.addr,
                self.o.addr,
                rows,
                d,
                src1=self.l.addr,
                bcast=Broadcast.ROW,
            )
            last_store = store_block(b, s, self.o.addr, blk, deps=[norm])
            yield from b.ready()
            following = self.iterations.following(index)
            # The staging parity counts the tiles of skipped blocks too.
            staged += sum(self._tiles(i) for i in range(index + 1, following))
            index = following
        yield from b.finish()

    def _phase(
        self,
        b: TraceBuilder,
        which: str,
        blk: QueryBlock,
        keys: tuple[int, int],
        ring: RepeatResult | None,
        staged: int,
        ext: dict[str, int | None] | None,
    ) -> Generator[np.ndarray, None, tuple[RepeatResult | None, int]]:
        s, w = self.s, self.s.workload
        kept = self.tl.keep_tiles
        eb, d, tk = s.elem_bytes, w.head_dim, self.tl.stage
        lo, rows = keys[0], blk.height
        st = self.stage[0].addr
        sstep = self.stage[1].addr - st
        tile_bytes = rows * tk * eb
        # The K stream masks the score tiles a mask crosses; the V stream reads them masked.
        runs = masked_tile_runs(w, blk, keys, tk, masked=which == "K")
        if self.tl.spill and kept:
            runs = _split_runs(runs, kept)
        for run in runs:
            spill = self.tl.spill and run.first_tile >= kept
            c0, count, cols, first = run.first_tile, run.count, run.width, run.first
            tpl = b.template()
            ro = tpl.roles
            stile = self.srow.addr
            ro["ld"] = load_rows(
                tpl, s, which, st, cols, head=blk.kv_head, row0=lo, deps=[self.ld_after]
            )
            on_tile: list[tuple[str, str]] = []
            if which == "K":
                # a spill tile is rewritten once its store two tiles back has read it
                ro["smm"] = ro["reader"] = tpl.matmul(
                    self.q.addr, st, stile, rows, cols, d, trans_b=True,
                    deps=[ro["ld"], Prev("sts", 2) if spill else None],
                )  # fmt: skip
                if run.mask is not None:
                    ro["msk"] = tpl.mask(
                        stile,
                        stile,
                        rows,
                        cols,
                        diagonal=run.mask.diagonal,
                        window=run.mask.window,
                        period=run.mask.period,
                    )
                    on_tile += [("msk", "src0"), ("msk", "dst")]
                stat = self.m.addr if first else self.t.addr
                ro["max"] = tpl.vector(VectorOp.ROWMAX, stat, stile, rows, cols)
                on_tile += [("smm", "dst"), ("max", "src0")]
                if not first:
                    tpl.vector(VectorOp.MAX, self.m.addr, self.m.addr, rows, 1, src1=self.t.addr)
                if spill:
                    ro["sts"] = tpl.store(
                        stile, s.base("S"), rows, cols * eb, tensor=s.tensor["S"],
                        deps=[ro["max"]],
                    )  # fmt: skip
                    on_tile.append(("sts", "src0"))
            else:
                deps_sub = [ro["ld"]]
                if spill:
                    # ... and reloaded once the O update two tiles back has read it
                    ro["lds"] = tpl.load(
                        s.base("S"),
                        stile,
                        rows,
                        cols * eb,
                        tensor=s.tensor["S"],
                        deps=[Ext("spilled"), Prev("reader", 2)],
                    )
                    deps_sub = [ro["lds"]]
                    on_tile.append(("lds", "dst"))
                ro["sub"] = tpl.vector(
                    VectorOp.SUB,
                    stile,
                    stile,
                    rows,
                    cols,
                    src1=self.m.addr,
                    bcast=Broadcast.ROW,
                    deps=deps_sub,
                )
                ro["exp"] = tpl.exp(stile, stile, rows, cols, deps=[ro["sub"]])
                stat = self.l.addr if first else self.t.addr
                ro["sum"] = tpl.vector(VectorOp.ROWSUM, stat, stile, rows, cols, deps=[ro["exp"]])
                if not first:
                    tpl.vector(VectorOp.ADD, self.l.addr, self.l.addr, rows, 1, src1=self.t.addr)
                ro["omm"] = ro["reader"] = tpl.matmul(
                    stile,
                    st,
                    self.o.addr,
                    rows,
                    d,
                    cols,
                    accumulate=not first,
                    deps=[ro["ld"], ro["exp"], Ext("o_free") if first else None],
                )
                on_tile += [
                    ("sub", "src0"),
                    ("sub", "dst"),
                    ("exp", "src0"),
                    ("exp", "dst"),
                    ("sum", "src0"),
                    ("omm", "src0"),
                ]
            ro["last"] = len(tpl) - 1
            mm = "smm" if which == "K" else "omm"

            def offsets(
                r: np.ndarray,
                tpl: Template = tpl,
                c0: int = c0,
                cols: int = cols,
                on_tile: list[tuple[str, str]] = on_tile,
                mm: str = mm,
                staged: int = staged,
                spill: bool = spill,
            ) -> dict[str, dict[int, np.ndarray | int]]:
                c = c0 + r
                par = ((staged + r) % 2) * sstep
                tile = (kept + c % 2) * tile_bytes if spill else c * tile_bytes
                spec: dict[tuple[str, str], np.ndarray | int] = {key: tile for key in on_tile}
                spec |= {("ld", "src0"): c * tk * d * eb, ("ld", "dst"): par, (mm, "src1"): par}
                if spill:
                    key = ("sts", "dst") if mm == "smm" else ("lds", "src0")
                    spec[key] = (c - kept) * tile_bytes  # spilled tiles one after another
                return role_offsets(tpl, spec)

            ring = yield from b.repeat(tpl, count, offsets, first=ring, ext=ext)
            staged += count
        return ring, staged


def trace_flat(
    workload: Workload, platform: PlatformInfo, params: Mapping[str, object]
) -> DataflowTrace:
    """FLAT trace on ``platform``; ``params``: ``overlap`` (none|double)."""
    variant = resolve("flat", params)
    tiling = flat_plan(workload, platform, params)
    spill: list[tuple[str, tuple[int, ...]]] | None = (
        [("S", (tiling.rows, workload.kv_len - tiling.keep))] if tiling.spill else None
    )
    setup = make_setup(
        "flat",
        workload,
        platform,
        {
            "rows": tiling.rows,
            "stage": tiling.stage,
            "spill": tiling.spill,
            "keep": tiling.keep,
            "variant": variant,
        },
        spill=spill,
    )
    em = _FlatEmitter(setup, tiling, serial=variant["overlap"] == "none")
    return DataflowTrace(setup, em, em.iterations)
