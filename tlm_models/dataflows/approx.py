"""Polynomial (Alman-Song style) approximate attention: O = D^-1 U1 (U2^T [1 | V]).

exp is replaced by a degree-g polynomial (``polynomial.py``); U1, U2 (N x r monomial features
of the rows of Q and K, r = C(d+g, g)) are never stored: each row's features are generated on
the PE array from the d loaded values, one vector op per (degree, variable) prefix product.
H = U2^T [1 | V] (r x (1+c)) is accumulated row by row as rank-1 matmuls, its rows scaled by
the folded polynomial factors, then each Q row gives o = u1 H and O = o[1:] / o[0].

Tiling: H is kept on chip for c of the d value columns at a time, c the largest width with
r(c+1) + 2r + 4(c+1) <= M. Case I (c = d, needs M >= (r+4)(d+1) + 2r): every input row is
read once and every output row written once, T = 4Nd per head. Otherwise H is tiled by
columns: K and Q are re-read for each of ceil(d/c) column blocks, V and O are not,
T = 2Nd*ceil(d/c) + 2Nd per head.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from tlm_models.dataflows.allocator import Buffer
from tlm_models.dataflows.builder import (
    DEFAULT_CHUNK_OPS,
    Ext,
    OffsetFn,
    Prev,
    RepeatResult,
    Template,
    TraceBuilder,
)
from tlm_models.dataflows.polynomial import (
    MonomialPlan,
    exp_poly_coefficients,
    feature_count,
    monomial_plan,
)
from tlm_models.dataflows.setup import DataflowSetup, EmittedTrace, make_setup
from tlm_models.dataflows.workload import Workload
from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo
from tlm_models.trace.record import Broadcast, VectorOp, float_bits

DEFAULT_DEGREE = 2
#: Scores s q.k with |s q.k| <= 1 are the bounded-entries regime the approximation targets;
#: the interpolation error on [-1, 1] is about 0.04 at g = 2 and 3e-4 at g = 4.
DEFAULT_BOUND = 1.0
PARAMS = ("degree", "bound")


@dataclass(frozen=True)
class ApproxParams:
    degree: int = DEFAULT_DEGREE
    bound: float = DEFAULT_BOUND


def approx_params(params: Mapping[str, object] | None) -> ApproxParams:
    """Validated parameters from ``{"degree": "2", "bound": "1.0"}`` (strings or numbers)."""
    params = dict(params or {})
    unknown = sorted(set(params) - set(PARAMS))
    if unknown:
        raise UserError(
            f"approx takes parameters {', '.join(PARAMS)}; unknown: {', '.join(unknown)}"
        )
    try:
        degree = int(str(params.get("degree", DEFAULT_DEGREE)))
    except ValueError:
        raise UserError(f"approx degree must be an integer, got {params['degree']!r}") from None
    try:
        bound = float(str(params.get("bound", DEFAULT_BOUND)))
    except ValueError:
        raise UserError(f"approx bound must be a number, got {params['bound']!r}") from None
    exp_poly_coefficients(degree, bound)  # validates both
    return ApproxParams(degree, bound)


@dataclass(frozen=True)
class ApproxTiling:
    features: int  # r
    cols: int  # value columns of H on chip at once (c)
    blocks: int  # ceil(d / c)

    @property
    def case(self) -> str:
        """'I' when all of H fits on chip, 'II' when H is tiled by columns."""
        return "I" if self.blocks == 1 else "II"


def approx_tiling(workload: Workload, capacity: int, degree: int) -> ApproxTiling:
    """Largest c <= d with r(c+1) + 2r + 4(c+1) <= M; UserError when not even c = 1 fits."""
    d = workload.head_dim
    r = feature_count(d, degree)
    width = (capacity - 2 * r) // (r + 4)  # c + 1
    if width < 2:
        raise UserError(
            f"approx with d = {d}, g = {degree} has r = {r} features and needs M >= "
            f"{2 * (r + 4) + 2 * r} elements (H of r x 2, two feature rows, row slots); "
            f"M = {capacity}. Case I needs M >= {(r + 4) * (d + 1) + 2 * r}"
        )
    cols = min(d, width - 1)
    return ApproxTiling(r, cols, math.ceil(d / cols))


@dataclass(frozen=True)
class _Buffers:
    h: Buffer  # r x (c+1): column 0 = U2^T 1 (the normaliser D), then U2^T V
    u: tuple[Buffer, Buffer]  # feature rows: [1, x_0..x_{d-1}, degree 2.., degree g]
    vs: tuple[Buffer, Buffer]  # [1, v_col0 .. v_col0+c-1]
    o: tuple[Buffer, Buffer]  # [D_i, numerators]


@dataclass(frozen=True)
class _Shape:
    keys: bool  # pass 1 (K/V rows build H) or pass 2 (Q rows read H)
    width: int  # value columns in this block
    first: bool  # pass 1's first row: overwrites H instead of accumulating
    init: bool  # the trace's first row: also writes the constant ones


_FIELDS = ("src0", "src1", "dst")


class _ApproxEmitter:
    def __init__(
        self,
        setup: DataflowSetup,
        bufs: _Buffers,
        plan: MonomialPlan,
        runs: np.ndarray,
        tiling: ApproxTiling,
    ):
        self.setup = setup
        self.bufs = bufs
        self.plan = plan
        self.runs = runs  # (start, length, float32 bits) per H scaling op
        self.tiling = tiling
        self._templates: dict[_Shape, tuple[Template, list[tuple[str, int, str]]]] = {}

    def _generate(self, tpl: Template, load: int) -> None:
        """Monomials of degree 2..g of the row in u[0], one vector op per prefix product."""
        u, eb = self.bufs.u[0].addr, self.setup.elem_bytes
        for i, step in enumerate(self.plan.steps):
            tpl.vector(
                VectorOp.MUL,
                u + step.dst * eb,
                u + step.src * eb,
                1,
                step.length,
                src1=u + (1 + step.var) * eb,
                bcast=Broadcast.ROW,
                deps=[load] if i == 0 else (),
            )

    def _template(
        self, b: TraceBuilder, shape: _Shape
    ) -> tuple[Template, list[tuple[str, int, str]]]:
        if shape in self._templates:
            return self._templates[shape]
        s, bufs = self.setup, self.bufs
        eb, d, r, c = s.elem_bytes, s.workload.head_dim, self.tiling.features, shape.width
        u, vs, o, h = bufs.u[0].addr, bufs.vs[0].addr, bufs.o[0].addr, bufs.h.addr
        tpl = b.template()
        offchip: list[tuple[str, int, str]] = []
        if shape.keys:
            ldk = tpl.load(
                s.base("K"),
                u + eb,
                1,
                d * eb,
                tensor=s.tensor["K"],
                deps=[Prev("mm", 2), Ext("o_free") if shape.first else None],
            )
            ldv = tpl.load(
                s.base("V"), vs + eb, 1, c * eb, tensor=s.tensor["V"], deps=[Prev("mm", 2)]
            )
            offchip += [("src0", ldk, "row"), ("src0", ldv, "col")]
            if shape.init:
                # The constant ones (u[0] and the [1 | v] slot) come from loaded data, once.
                one = u
                tpl.vector(
                    VectorOp.MUL, one, u + eb, 1, 1, bcast=Broadcast.SCALAR, scalar=0.0, deps=[ldk]
                )
                tpl.vector(VectorOp.ADD, one, one, 1, 1, bcast=Broadcast.SCALAR, scalar=1.0)
                for dst in (bufs.u[1].addr, vs, bufs.vs[1].addr):
                    tpl.vector(VectorOp.COPY, dst, one, 1, 1)
            self._generate(tpl, ldk)
            tpl.roles["mm"] = tpl.matmul(
                u, vs, h, r, c + 1, 1, accumulate=not shape.first, deps=[ldk, ldv]
            )
        else:
            ldq = tpl.load(
                s.base("Q"), u + eb, 1, d * eb, tensor=s.tensor["Q"], deps=[Prev("mm", 2)]
            )
            offchip.append(("src0", ldq, "row"))
            self._generate(tpl, ldq)
            tpl.roles["mm"] = tpl.matmul(u, h, o, 1, c + 1, r, deps=[ldq, Prev("st", 2)])
            div = tpl.vector(VectorOp.DIV, o + eb, o + eb, 1, c, src1=o, bcast=Broadcast.ROW)
            tpl.roles["st"] = tpl.store(
                o + eb, s.base("O"), 1, c * eb, tensor=s.tensor["O"], deps=[div]
            )
            offchip.append(("dst", tpl.roles["st"], "col"))
        self._templates[shape] = (tpl, offchip)
        return tpl, offchip

    def _offsets(
        self,
        tpl: Template,
        offchip: list[tuple[str, int, str]],
        row0: int,
        parity0: int,
        head: int,
        col0: int,
    ) -> OffsetFn:
        """Per-row off-chip addresses and the double-buffer parity of u, vs, o."""
        s, bufs = self.setup, self.bufs
        eb, d, n = s.elem_bytes, s.workload.head_dim, s.workload.seq_len
        recs = tpl.records()
        reloc: dict[str, list[tuple[int, int]]] = {f: [] for f in _FIELDS}
        for pair in (bufs.u, bufs.vs, bufs.o):
            lo, hi, step = pair[0].addr, pair[0].addr + pair[0].size, pair[1].addr - pair[0].addr
            for f in _FIELDS:
                for col in np.flatnonzero((recs[f] >= lo) & (recs[f] < hi)).tolist():
                    reloc[f].append((col, step))
        head_off = head * n * d * eb

        def offsets(reps: np.ndarray) -> dict[str, dict[int, np.ndarray | int]]:
            rows = row0 + reps
            parity = (parity0 + reps) % 2
            row_addr = head_off + rows * d * eb
            out: dict[str, dict[int, np.ndarray | int]] = {f: {} for f in _FIELDS}
            for f, cols in reloc.items():
                for col, step in cols:
                    out[f][col] = parity * step
            for f, col, kind in offchip:
                out[f][col] = row_addr + (col0 * eb if kind == "col" else 0)
            return out

        return offsets

    def _scale_h(self, b: TraceBuilder, width: int) -> Iterator[np.ndarray]:
        """Multiply H's row runs by their folded polynomial factors (vectorised, no ops per row)."""
        eb = self.setup.elem_bytes
        tpl = b.template()
        h = self.bufs.h.addr
        tpl.vector(VectorOp.MUL, h, h, 0, width + 1, bcast=Broadcast.SCALAR, scalar=0.0)
        runs = self.runs
        pitch = (width + 1) * eb

        def offsets(reps: np.ndarray) -> dict[str, dict[int, np.ndarray | int]]:
            addr = runs[reps, 0] * pitch
            return {
                "src0": {0: addr},
                "dst": {0: addr},
                "m": {0: runs[reps, 1]},
                "k": {0: runs[reps, 2]},
            }

        yield from b.repeat(tpl, len(runs), offsets)

    def chunks(self, chunk_ops: int) -> Iterator[np.ndarray]:
        s, t = self.setup, self.tiling
        w = s.workload
        n, d = w.seq_len, w.head_dim
        b = TraceBuilder(s.header, chunk_ops)
        prev: RepeatResult | None = None
        last_store: int | None = None
        rows_done = 0
        init = True
        for head in range(w.head_count):
            for block in range(t.blocks):
                col0 = block * t.cols
                width = min(t.cols, d - col0)
                loops = [(_Shape(True, width, True, init), 0, 1)]
                if n > 1:
                    loops.append((_Shape(True, width, False, False), 1, n - 1))
                init = False
                for shape, row0, count in loops:
                    tpl, offchip = self._template(b, shape)
                    offsets = self._offsets(tpl, offchip, row0, rows_done, head, col0)
                    prev = yield from b.repeat(
                        tpl, count, offsets, first=prev, ext={"o_free": last_store}
                    )
                    rows_done += count
                yield from self._scale_h(b, width)
                tpl, offchip = self._template(b, _Shape(False, width, False, False))
                offsets = self._offsets(tpl, offchip, 0, rows_done, head, col0)
                prev = yield from b.repeat(tpl, n, offsets, first=prev)
                rows_done += n
                last_store = prev.handle("st")
        yield from b.finish()


def emit_approx(
    workload: Workload,
    platform: PlatformInfo,
    chunk_ops: int = DEFAULT_CHUNK_OPS,
    params: Mapping[str, object] | None = None,
) -> EmittedTrace:
    """Polynomial approximate attention trace (params: degree, bound); chunks of ``chunk_ops``."""
    p = approx_params(params)
    d = workload.head_dim
    tiling = approx_tiling(workload, platform.capacity_elements(workload.elem_bytes), p.degree)
    coeffs = exp_poly_coefficients(p.degree, p.bound)
    setup = make_setup(
        "approx",
        workload,
        platform,
        {
            "degree": p.degree,
            "bound": p.bound,
            "coefficients": [float(c) for c in coeffs],
            "features": tiling.features,
            "cols": tiling.cols,
            "blocks": tiling.blocks,
            "case": tiling.case,
        },
    )
    plan = monomial_plan(d, p.degree)
    runs = np.array(
        [
            (run.start, run.length, float_bits(run.factor))
            for run in plan.scale_runs(coeffs, workload.scale)
        ],
        dtype=np.int64,
    )
    sp = setup.scratch
    r, c = tiling.features, tiling.cols
    bufs = _Buffers(
        h=sp.alloc("H", r, c + 1),
        u=(sp.alloc("u.0", 1, r), sp.alloc("u.1", 1, r)),
        vs=(sp.alloc("v1.0", 1, c + 1), sp.alloc("v1.1", 1, c + 1)),
        o=(sp.alloc("o.0", 1, c + 1), sp.alloc("o.1", 1, c + 1)),
    )
    emitter = _ApproxEmitter(setup, bufs, plan, runs, tiling)
    return EmittedTrace(setup.header, emitter.chunks(chunk_ops), setup.layout())
