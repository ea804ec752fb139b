"""FuseMax (Nayak et al., MICRO 2024): one pass over K and V per resident query block.

FuseMax computes attention as a cascade of Einsums with a deferred division: per K/V tile of
M0 keys, the scores QK (2-D array), their row max LM and the running max RM, the numerators
SLN = exp(QK - RM), their row sum SLD and the rescale PRM = exp(RM_old - RM) (1-D array),
RD = PRM RD + SLD and RNV = PRM RNV + SLN V (the product on the 2-D array); O = RNV / RD once
after the last tile. All query rows that fit stay on chip (Q and RNV, plus RM and RD), so K
and V are read once per resident block: T = Nd + 2Nd*ceil(N/R) + Nd, AttenIO's form with R
rows instead of a.

The resident block is worked in sub-blocks of P0 rows against tiles of M0 keys (the 2-D
array's rows and columns, 256 x 256 on FuseMax's machine). The 2-D array computes later
sub-blocks' scores and earlier ones' P V while the 1-D array (the platform's Exp unit) runs a
sub-block's softmax (``pipeline=skew``, four score buffers); ``pipeline=none`` runs them one
after the other.
Assumptions and their sources: docs/dataflows.md, "FuseMax".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

import numpy as np

from tlm_models.dataflows.builder import Ext, Template
from tlm_models.dataflows.online_softmax import (
    OnlineSoftmaxLoop,
    SoftmaxBuffers,
    TileMask,
    TileShape,
)
from tlm_models.dataflows.query_blocks import BlockPlan, KeyRun
from tlm_models.dataflows.setup import DataflowTrace, make_setup
from tlm_models.dataflows.variants import resolve
from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo
from tlm_models.trace.record import Broadcast, VectorOp
from tlm_models.workload.spec import Workload

#: Row vectors per resident query row: RM (m), RD (l), the tile's max (t), the rescale (a)
#: and the tile's row sum (u).
ROW_VECTORS = 5


@dataclass(frozen=True)
class FusemaxPlan:
    rows: int  # R: query rows resident on chip (a block of stacked rows)
    p0: int  # rows per sub-block (the 2-D array's rows)
    m0: int  # keys per K/V tile (the 2-D array's columns)
    fit: int  # the most rows that fit (R <= fit)
    pipeline: str  # skew | none
    rule: str  # divisor | fit

    @property
    def score_buffers(self) -> int:
        return score_buffers(self.pipeline)


def score_buffers(pipeline: str) -> int:
    """P0 x M0 score buffers in flight: skew computes sub-block p+2's scores before p-1's P V
    has read its (p-1 .. p+2: four); none, one."""
    return 4 if pipeline == "skew" else 1


def _fixed(workload: Workload, p0: int, m0: int, buffers: int) -> int:
    """Elements besides the resident rows: the score buffers and a K and a V tile."""
    return buffers * min(p0, workload.group * workload.seq_len) * m0 + 2 * m0 * workload.head_dim


def fusemax_fit(workload: Workload, capacity: int, p0: int, m0: int, buffers: int) -> int:
    """The most resident rows: R (2d + 5) + buffers P0 M0 (score buffers) + 2 M0 d (a K and a
    V tile) <= M; UserError when not even one row fits."""
    d = workload.head_dim
    fixed = _fixed(workload, p0, m0, buffers)
    fit = (capacity - fixed) // (2 * d + ROW_VECTORS)
    if fit < 1:
        raise UserError(
            f"FuseMax needs M >= {fixed + 2 * d + ROW_VECTORS} elements for d = {d}, P0 = {p0} "
            f"and M0 = {m0} ({buffers} P0 x M0 score buffer(s), a K and a V tile of M0 rows "
            f"and one query row), M = {capacity}; lower --param subblock or keys"
        )
    return fit


def fusemax_rows(workload: Workload, fit: int, p0: int, rule: str) -> int:
    """R: all of a K/V group's stacked rows when they fit; otherwise (``divisor``, the
    artifact's mappings) the largest multiple of P0 dividing Nq that fits, or (``fit``, or
    when no such multiple exists) the largest multiple of P0 that fits (``fit`` rows when
    fewer than P0 fit)."""
    total = workload.group * workload.seq_len
    if total <= fit:
        return total
    multiple = fit // p0 * p0
    if rule == "divisor":
        n = workload.seq_len
        for rows in range(multiple, 0, -p0):
            if n % rows == 0:
                return rows
    return multiple if multiple else fit


def fusemax_plan(
    workload: Workload, platform: PlatformInfo, params: Mapping[str, object] | None = None
) -> FusemaxPlan:
    """The resident rows, sub-block and tile this platform and ``params`` give."""
    variant = resolve("fusemax", params)
    capacity = platform.capacity_elements(workload.elem_bytes)
    p0 = platform.pe_rows if variant["subblock"] == "auto" else int(variant["subblock"])
    m0 = platform.pe_cols if variant["keys"] == "auto" else int(variant["keys"])
    m0 = min(m0, workload.kv_len)
    buffers = score_buffers(variant["pipeline"])
    p0, m0 = _shrink(workload, capacity, p0, m0, variant, buffers)
    fit = fusemax_fit(workload, capacity, p0, m0, buffers)
    rows = fusemax_rows(workload, fit, p0, variant["rows"])
    return FusemaxPlan(rows, p0, m0, fit, variant["pipeline"], variant["rows"])


def _shrink(
    workload: Workload,
    capacity: int,
    p0: int,
    m0: int,
    variant: Mapping[str, str],
    buffers: int,
) -> tuple[int, int]:
    """``auto`` P0 and M0 on a chip too small for the array-sized ones: halve the larger (of
    those left ``auto``) until the score and K/V buffers leave room for P0 resident rows."""
    d, total = workload.head_dim, workload.group * workload.seq_len

    def need(p: int, m: int) -> int:
        return _fixed(workload, p, m, buffers) + min(p, total) * (2 * d + ROW_VECTORS)

    auto_p, auto_m = variant["subblock"] == "auto", variant["keys"] == "auto"
    while need(p0, m0) > capacity:
        if auto_p and p0 > 1 and (p0 >= m0 or not auto_m or m0 == 1):
            p0 = -(-p0 // 2)
        elif auto_m and m0 > 1:
            m0 = -(-m0 // 2)
        else:
            break  # fusemax_fit names what does not fit
    return p0, m0


@dataclass(frozen=True)
class _RowVectors:
    """The per-row vectors beside SoftmaxBuffers' m and l: tile max, rescale, tile row sum."""

    t: int
    a: int
    u: int


def _tile_body(
    tpl: Template,
    bufs: SoftmaxBuffers,
    shape: TileShape,
    *,
    p0: int,
    rowvec: _RowVectors,
    scores: tuple[int, ...],
    skew: bool,
) -> None:
    """One K/V tile against every sub-block of the resident rows. Per sub-block p (rows
    r0 .. r0+h): S on the 2-D array (the scores QK), A on the 2-D array (mask, LM, RM, the
    shifted scores), B on the 1-D array (PRM, SLN), C on the 2-D array (SLD, RD and
    RNV = PRM RNV + SLN V). ``skew`` orders them S0 S1, then A(p) B(p) S(p+2) C(p-1) for
    p = 0, 1, ..., and C of the last: the 1-D array takes p's softmax as soon as it has
    finished p-1's, while the 2-D array runs p-1's P V and p+2's scores, whose systolic fill
    and drain is over before A(p+2) reads them. Score buffer p mod 4."""
    eb = bufs.q.elem_bytes
    d, c = bufs.q.cols, shape.cols
    ldk, ldv = tpl.roles["ldk"], tpl.roles["ldv"]
    subs = [(r0, min(p0, shape.rows - r0)) for r0 in range(0, shape.rows, p0)]
    if shape.mask is not None and shape.mask.diagonal is not None and not shape.first:
        # A sub-block whose rows see no key of this tile skips it: its RM, RD and RNV stay.
        # (Some row sees every tile of a block's key range; the fallback keeps the roles.)
        subs = [sub for sub in subs if _sees(shape.mask, *sub, c)] or subs[:1]
    #: per sub-block: its scores matmul, then its PRM and SLN exps (None before B)
    smm: dict[int, int] = {}
    exps: dict[int, tuple[int | None, int]] = {}

    def scores_of(i: int) -> None:
        r0, h = subs[i]
        q = bufs.q.addr + r0 * d * eb
        s = scores[i % len(scores)]
        smm[i] = tpl.matmul(q, bufs.k[0].addr, s, h, c, d, trans_b=True, deps=[ldk])
        tpl.roles["smm"] = smm[max(smm)]  # the last reader of K: the last sub-block's

    def softmax_of(i: int) -> None:
        r0, h = subs[i]
        s = scores[i % len(scores)]
        m, t, a = (x + r0 * eb for x in (bufs.m[0].addr, rowvec.t, rowvec.a))
        if shape.mask is not None:
            mk = shape.mask
            # Block row r0 + i sits t(r0 + i) = t_sub(i) + f positions after row 0, f the
            # phase of the sub-block's first row in the stacked heads' wrap.
            phase = r0 % mk.period if mk.period else 0
            tpl.roles["mask"] = tpl.mask(
                s, s, h, c, diagonal=phase if mk.period else r0, window=mk.window,
                period=mk.period, phase=phase, fill=mk.fill,
            )  # fmt: skip
        alpha: int | None = None
        if shape.first:
            tpl.vector(VectorOp.ROWMAX, m, s, h, c)
        else:
            tpl.vector(VectorOp.ROWMAX, t, s, h, c)
            tpl.vector(VectorOp.MAX, t, t, h, 1, src1=m)  # RM of this tile
            tpl.vector(VectorOp.SUB, a, m, h, 1, src1=t)  # RM_old - RM
            tpl.vector(VectorOp.COPY, m, t, h, 1)
        sub = tpl.vector(VectorOp.SUB, s, s, h, c, src1=m, bcast=Broadcast.ROW)
        if not shape.first:
            alpha = tpl.exp(a, a, h, 1, deps=[sub])  # PRM
        exps[i] = (alpha, tpl.exp(s, s, h, c, deps=[sub]))

    def update_of(i: int) -> None:
        r0, h = subs[i]
        s = scores[i % len(scores)]
        alpha, sln = exps.pop(i)
        o, l_ = bufs.o.addr + r0 * d * eb, bufs.l.addr + r0 * eb
        if shape.first:
            tpl.vector(VectorOp.ROWSUM, l_, s, h, c, deps=[sln])
            omm = tpl.matmul(s, bufs.v[0].addr, o, h, d, c, deps=[ldv, sln, Ext("o_free")])
        else:
            a, u = rowvec.a + r0 * eb, rowvec.u + r0 * eb
            tpl.vector(VectorOp.ROWSUM, u, s, h, c, deps=[sln])
            tpl.vector(VectorOp.MUL, l_, l_, h, 1, src1=a, deps=[alpha])
            tpl.vector(VectorOp.ADD, l_, l_, h, 1, src1=u)
            omm = tpl.matmul(s, bufs.v[0].addr, o, h, d, c, scale_rows=a, deps=[ldv, sln, alpha])
        tpl.roles["omm"] = omm

    if not skew:
        for i in range(len(subs)):
            scores_of(i)
            softmax_of(i)
            update_of(i)
        return
    for i in range(min(2, len(subs))):
        scores_of(i)
    for i in range(len(subs)):
        softmax_of(i)
        if i + 2 < len(subs):
            scores_of(i + 2)
        if i > 0:
            update_of(i - 1)
    update_of(len(subs) - 1)


def _sees(mask: TileMask, r0: int, h: int, cols: int) -> bool:
    """Whether any of block rows r0 .. r0+h-1 sees a column of the tile: row r sees
    j <= D + t(r) (and j > D + t(r) - W), t(r) = r, or r mod period for stacked heads
    (``record.mask_visible``)."""
    assert mask.diagonal is not None
    rows = np.arange(r0, r0 + h, dtype=np.int64)
    last = mask.diagonal + (rows % mask.period if mask.period else rows)
    seen = last >= 0
    if mask.window:
        seen &= last - mask.window + 1 <= cols - 1
    return bool(seen.any())


class _FusemaxLoop(OnlineSoftmaxLoop):
    """The shared loop with one template per masked tile (``single_masked_tiles``), so that
    each knows which of its sub-blocks see none of the tile's keys (a causal block's early
    rows against its late tiles) and skips them."""

    def single_masked_tiles(self) -> None:
        """Cut every block's masked runs into single tiles: the same tiles in the same order,
        so fast-forward's iteration signatures (taken from the uncut plans) still hold."""
        cut: dict[int, BlockPlan] = {}
        for i, plan in enumerate(self.plans):
            if id(plan) not in cut:
                cut[id(plan)] = _single_masked_tiles(plan, self.bc)
            self.plans[i] = cut[id(plan)]

    def _mask(self, plan: BlockPlan, run: KeyRun) -> TileMask | None:
        mask = super()._mask(plan, run)
        if mask is None:
            return None
        return dataclasses.replace(mask, diagonal=plan.diagonal(self.setup.workload, run.key0))


def _single_masked_tiles(plan: BlockPlan, bc: int) -> BlockPlan:
    """``plan`` with every masked run cut into runs of one tile."""
    runs: list[KeyRun] = []
    for run in plan.runs:
        if not run.masked or run.count == 1:
            runs.append(run)
            continue
        runs += [
            KeyRun(run.key0 + k * bc, 1, run.width, True, run.index + k) for k in range(run.count)
        ]
    return dataclasses.replace(plan, runs=tuple(runs))


def trace_fusemax(
    workload: Workload, platform: PlatformInfo, params: Mapping[str, object]
) -> DataflowTrace:
    """FuseMax trace on ``platform``. ``params``:
    ``rows`` (divisor|fit), ``pipeline`` (skew|none), ``subblock`` and ``keys`` (P0, M0)."""
    d = workload.head_dim
    plan = fusemax_plan(workload, platform, params)
    variant = resolve("fusemax", params)
    rows = min(plan.rows, workload.group * workload.seq_len)
    p0 = min(plan.p0, rows)
    setup = make_setup(
        "fusemax",
        workload,
        platform,
        {"rows": plan.rows, "p0": plan.p0, "m0": plan.m0, "variant": variant},
    )
    sp = setup.scratch
    m = sp.alloc("RM", rows)
    scores = tuple(sp.alloc(f"QK.{i}", p0, plan.m0) for i in range(plan.score_buffers))
    bufs = SoftmaxBuffers(
        q=sp.alloc("Q_i", rows, d),
        o=sp.alloc("RNV", rows, d),
        s=scores[0],
        # One running max updated in place: the loop's parity swap relocates nothing.
        m=(m, m),
        l=sp.alloc("RD", rows),
        k=(sp.alloc("K_j", plan.m0, d),),
        v=(sp.alloc("V_j", plan.m0, d),),
    )
    rowvec = _RowVectors(
        t=sp.alloc("LM", rows).addr, a=sp.alloc("PRM", rows).addr, u=sp.alloc("SLD", rows).addr
    )
    body = partial(
        _tile_body,
        p0=p0,
        rowvec=rowvec,
        scores=tuple(b.addr for b in scores),
        skew=plan.pipeline == "skew",
    )
    loop = _FusemaxLoop(setup, bufs, rows, plan.m0, body)
    loop.single_masked_tiles()
    return DataflowTrace(setup, loop, loop.iterations)
