"""Polynomial (Alman-Song style) approximate attention: O = D^-1 U1 (U2^T [1 | V]).

exp is replaced by a degree-g polynomial (``polynomial.py``); U1, U2 (N x r monomial features
of the rows of Q and K, r = C(d+g, g)) are never stored: each row's features are generated on
the PE array from the d loaded values, one vector op per (degree, variable) prefix product.
H = U2^T [1 | V] (r x (1+c)) is accumulated row by row as rank-1 matmuls, its rows scaled by
the folded polynomial factors, then each Q row gives o = u1 H and O = o[1:] / o[0].

Tiling (``approx_tiling``): Case I (M >= (r+4)(d+1) + 2r): all of H on chip, every input row
read once and every output row written once, T = 4Nd per head. Otherwise the tiling with less
traffic of: "columns", H for c value columns at a time (K and Q re-read per column block,
T = 2Nd*ceil(d/c) + 2Nd); "features", H in feature blocks of w-variable group combinations
(``feature_groups.py``) with the partial [D | numerators] rows kept off chip between blocks,
T = 2NL + NdB + Nd + 2N(d+1)(B-1) (B blocks, L K/Q columns loaded per row over all blocks).

H is built once per K/V head and read by the query rows of all heads of its group. Masks use
the prefix form: keys enter H in order (a sliding window subtracts each key that leaves it)
and each query row reads H at its position, its features scaled by the folded factors since
H, read at every prefix, stays unscaled.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tlm_models.dataflows.allocator import Buffer
from tlm_models.dataflows.block_deal import group_range
from tlm_models.dataflows.builder import (
    DepRef,
    Ext,
    OffsetFn,
    Prev,
    RepeatResult,
    Template,
    TraceBuilder,
)
from tlm_models.dataflows.feature_groups import (
    FeatureBlock,
    FeatureGroupPlan,
    feature_blocks,
    feature_group_plan,
)
from tlm_models.dataflows.polynomial import (
    MAX_DEGREE,
    MonomialPlan,
    ScaleRun,
    exp_poly_coefficients,
    feature_count,
    monomial_factors,
    monomial_plan,
    scale_runs,
)
from tlm_models.dataflows.setup import DataflowSetup, DataflowTrace, make_setup
from tlm_models.errors import UserError
from tlm_models.fast_forward.control import IterationControl
from tlm_models.platform.info import PlatformInfo
from tlm_models.trace.record import Broadcast, VectorOp, float_bits
from tlm_models.workload.spec import Workload

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
    """How H = U2^T [1 | V] is split so that its on-chip part fits.

    ``case`` "I": all of H on chip. "columns": all r features, c value columns at a time.
    "features": feature blocks of the group combinations (``feature_groups``), every value
    column, partial numerators and denominators kept off chip between blocks.
    """

    features: int  # r
    case: str
    cols: int  # value columns of H on chip at once (c; d unless case "columns")
    blocks: int  # column blocks or feature blocks
    groups: FeatureGroupPlan | None = None  # case "features"

    def row_traffic(self, head_dim: int) -> dict[str, int]:
        """Off-chip elements per query/key row and head, per tensor (times N is exact)."""
        return self.key_row_traffic(head_dim) | self.query_row_traffic(head_dim)

    def key_row_traffic(self, head_dim: int) -> dict[str, int]:
        """Off-chip elements per K/V row a K/V head adds to (or removes from) H."""
        d = head_dim
        if self.groups is not None:
            return {"K": self.groups.loaded_cols, "V": d * self.blocks}
        return {"K": d * self.blocks, "V": d}

    def query_row_traffic(self, head_dim: int) -> dict[str, int]:
        """Off-chip elements per query row and query head."""
        d = head_dim
        if self.groups is not None:
            b = self.blocks
            return {"Q": self.groups.loaded_cols, "O": d, PARTIAL: 2 * (d + 1) * (b - 1)}
        return {"Q": d * self.blocks, "O": d}

    def tile(self) -> dict[str, int | str]:
        """The parameters that set the traffic (header params and ``bounds`` columns)."""
        out: dict[str, int | str] = {"case": self.case, "features": self.features}
        if self.groups is None:
            return {**out, "cols": self.cols, "blocks": self.blocks}
        g = self.groups
        return {
            **out,
            "w": g.width,
            "groups": g.groups,
            "blocks": self.blocks,
            "block_features": g.max_features,
        }


#: Off-chip rows of partial [denominator | numerators], N x (d+1), shared by the heads.
PARTIAL = "Opart"


def _column_tiling(d: int, r: int, capacity: int) -> ApproxTiling | None:
    """Largest c <= d with r(c+1) + 2r + 4(c+1) <= M, or None when not even c = 1 fits."""
    width = (capacity - 2 * r) // (r + 4)  # c + 1
    if width < 2:
        return None
    cols = min(d, width - 1)
    blocks = math.ceil(d / cols)
    return ApproxTiling(r, "I" if blocks == 1 else "columns", cols, blocks)


def _feature_tiling(d: int, degree: int, r: int, capacity: int) -> ApproxTiling | None:
    """The group width w < d whose feature blocks fit with the least traffic (ties: wider)."""
    best: ApproxTiling | None = None
    for w in range(1, d):
        plan = feature_group_plan(d, degree, w)
        if plan.capacity_needed() > capacity:
            continue
        cand = ApproxTiling(r, "features", d, plan.blocks, plan)
        if best is None or sum(cand.row_traffic(d).values()) <= sum(best.row_traffic(d).values()):
            best = cand
    return best


#: The most features r = C(d + g, g) a run may have. Every feature of every row is planned and
#: emitted, so the plan, the trace and its cost prediction grow with r: at d = 64, g = 3
#: (r = 47,905) predicting the cost of N = 1K takes 5.6 s and 52 MB, at g = 4 (r = 814,385)
#: 114 s and 208 MB, at g = 5 (r = 11 M) more than 120 s and 1.4 GB (measured on the 2-core
#: development machine). 2^17 keeps every run up to g = 3 at d = 64 (docs/dataflows.md).
MAX_FEATURES = 2**17


def largest_degree(head_dim: int) -> int:
    """The largest degree whose feature count stays within ``MAX_FEATURES`` at ``head_dim``."""
    degree = 1
    while degree < MAX_DEGREE and feature_count(head_dim, degree + 1) <= MAX_FEATURES:
        degree += 1
    return degree


def check_feature_count(head_dim: int, degree: int) -> int:
    """r for ``head_dim`` and ``degree``; a ``UserError`` naming r and the practical degrees
    when r exceeds ``MAX_FEATURES`` (checked before any plan is built)."""
    r = feature_count(head_dim, degree)
    if r > MAX_FEATURES:
        raise UserError(
            f"approx with d = {head_dim}, degree = {degree} has r = C({head_dim + degree}, "
            f"{degree}) = {r:,} features per row, more than the {MAX_FEATURES:,} a run can plan "
            f"and emit in reasonable time (d = 64, degree = 4: r = 814,385, 114 s only to "
            f"predict its cost); use degree <= {largest_degree(head_dim)} at d = {head_dim}"
        )
    return r


def approx_tiling(workload: Workload, capacity: int, degree: int) -> ApproxTiling:
    """Case I when H fits; else the column or feature tiling with less traffic (ties: columns).
    Masked (prefix form): H in column blocks only, with r more elements for the scaled query
    features and r for the folded factors."""
    d = workload.head_dim
    r = feature_count(d, degree)
    prefix = workload.mask != "none"
    columns = _column_tiling(d, r, capacity - (2 * r if prefix else 0))
    if columns is not None and columns.case == "I":
        return columns
    if prefix:
        if columns is None:
            raise UserError(
                f"approx with mask={workload.mask} (prefix form: each query row reads H as it "
                f"stands at its position) keeps H of r = {r} features by at least one value "
                f"column on chip and needs M >= {2 * (r + 4) + 4 * r} elements, M = {capacity} "
                "(feature blocks, the tiling for smaller M, are not implemented in the prefix "
                "form)"
            )
        return columns
    features = _feature_tiling(d, degree, r, capacity)
    options = [t for t in (columns, features) if t is not None]
    if not options:
        by_cols = 2 * (r + 4) + 2 * r
        by_vars = feature_group_plan(d, degree, 1).capacity_needed() if d > 1 else by_cols
        raise UserError(
            f"approx with d = {d}, g = {degree} has r = {r} features and needs M >= "
            f"{min(by_cols, by_vars)} elements (H in blocks of one value column: {by_cols}; "
            f"in feature blocks of one-variable groups: {by_vars}); M = {capacity}. "
            f"Case I needs M >= {(r + 4) * (d + 1) + 2 * r}"
        )
    return min(options, key=lambda t: sum(t.row_traffic(d).values()))


@dataclass(frozen=True)
class _Buffers:
    h: Buffer  # r x (c+1): column 0 = U2^T 1 (the normaliser D), then U2^T V
    u: tuple[Buffer, Buffer]  # feature rows: [1, x_0..x_{d-1}, degree 2.., degree g]
    vs: tuple[Buffer, Buffer]  # [1, v_col0 .. v_col0+c-1]
    o: tuple[Buffer, Buffer]  # [D_i, numerators]
    #: Prefix form only: the query features times the folded factors, and those factors.
    scaled: Buffer | None = None
    factors: Buffer | None = None


@dataclass(frozen=True)
class _Shape:
    keys: bool  # pass 1 (K/V rows build H) or pass 2 (Q rows read H)
    width: int  # value columns in this block
    first: bool  # pass 1's first row: overwrites H instead of accumulating
    init: bool  # the trace's first row: also writes the constant ones
    #: Prefix form: a K/V row leaving the window is subtracted from H (keys), or a query row
    #: scales its features by the folded factors, H being unscaled (queries).
    prefix: bool = False


_FIELDS = ("src0", "src1", "dst")


Pair = tuple[Buffer, Buffer]


def generate(tpl: Template, base: int, plan: MonomialPlan, load: int, eb: int) -> None:
    """Monomials of degree 2..g of the row at ``base`` (layout of ``plan``), one op a step."""
    for i, step in enumerate(plan.steps):
        tpl.vector(
            VectorOp.MUL,
            base + step.dst * eb,
            base + step.src * eb,
            1,
            step.length,
            src1=base + (1 + step.var) * eb,
            bcast=Broadcast.ROW,
            deps=[load] if i == 0 else (),
        )


def row_offsets(
    tpl: Template,
    pairs: Sequence[Pair],
    moves: Sequence[tuple[str, int, int, int]],
    row0: int,
    parity0: int,
) -> OffsetFn:
    """Offsets of a per-row loop: double-buffer parity and off-chip rows.

    On-chip operands inside ``pairs[i][0]`` move to ``pairs[i][1]`` on odd rows (counted from
    ``parity0``); each (field, op, base, pitch) in ``moves`` gets base + row * pitch.
    """
    recs = tpl.records()
    reloc: list[tuple[str, int, int]] = []
    for pair in pairs:
        lo, hi, step = pair[0].addr, pair[0].addr + pair[0].size, pair[1].addr - pair[0].addr
        for f in _FIELDS:
            for col in np.flatnonzero((recs[f] >= lo) & (recs[f] < hi)).tolist():
                reloc.append((f, col, step))

    def offsets(reps: np.ndarray) -> dict[str, dict[int, np.ndarray | int]]:
        rows = row0 + reps
        parity = (parity0 + reps) % 2
        out: dict[str, dict[int, np.ndarray | int]] = {f: {} for f in _FIELDS}
        for f, col, step in reloc:
            out[f][col] = parity * step
        for f, col, base, pitch in moves:
            out[f][col] = base + rows * pitch
        return out

    return offsets


def scale_h(
    b: TraceBuilder, h: int, runs: np.ndarray, width: int, eb: int
) -> Generator[np.ndarray, None, RepeatResult]:
    """Multiply H's row runs (start, length, float32 bits) by their folded factors."""
    tpl = b.template()
    tpl.vector(VectorOp.MUL, h, h, 0, width + 1, bcast=Broadcast.SCALAR, scalar=0.0)
    pitch = (width + 1) * eb

    def offsets(reps: np.ndarray) -> dict[str, dict[int, np.ndarray | int]]:
        addr = runs[reps, 0] * pitch
        return {
            "src0": {0: addr},
            "dst": {0: addr},
            "m": {0: runs[reps, 1]},
            "k": {0: runs[reps, 2]},
        }

    return (yield from b.repeat(tpl, len(runs), offsets))


def run_table(runs: Sequence[ScaleRun]) -> np.ndarray:
    """(start, length, float32 bits) rows of the H scaling runs."""
    return np.array(
        [(run.start, run.length, float_bits(run.factor)) for run in runs], dtype=np.int64
    )


#: Operations an iteration of the row loops holds at least (fast-forward marks iterations,
#: each a few hundred operations: rows of a small H are a handful of operations each).
ITERATION_OPS = 512


def rows_per_iteration(ops_per_row: int, align: int = 2) -> int:
    """Rows per iteration: a multiple of ``align`` (even: the u/vs/o buffers alternate by
    row, so a skip of whole iterations keeps every later row in its buffer; see
    ``row_alignment``) holding at least ``ITERATION_OPS`` operations."""
    return align * max(1, -(-ITERATION_OPS // (align * ops_per_row)))


def row_alignment(row_bytes: int, cycle_bytes: int) -> int:
    """Rows whose off-chip span is a whole number of the memory's interleave cycles (and
    even): each iteration then moves every row stream by whole cycles, so every channel sees
    the same bytes in every iteration. Without it a period of iterations can look exact over
    the few periods that confirm it while a channel's share drifts by a burst every few
    periods (32 B rows on 16 x 256 B channels: the exact rule took 5 iterations of 26 rows,
    4,160 B, and one channel's write bytes came out 18 % high)."""
    rows = cycle_bytes // math.gcd(cycle_bytes, row_bytes) if cycle_bytes > 0 else 1
    return rows if rows % 2 == 0 else 2 * rows


#: Iterations a period of whole interleave cycles spans at most when one iteration cannot be
#: whole cycles (``rows_per_cycle``): fast-forward confirms an exact period of 4 or more
#: iterations by 2 repetitions, so 2 x 16 + 1 iterations, and allows periods of up to 32.
CYCLE_ITERATIONS = 4


def rows_per_cycle(ops_per_row: int, align: int, cycle_rows: int) -> int:
    """Rows per iteration of a pass one of whose row streams moves by whole interleave cycles
    only every ``cycle_rows`` rows (a multiple of ``align``, the other streams'): the
    feature tiling's partial sums, rows of (d+1) elements, need 2,048 rows of 34 B or 258 B.
    Iterations of ``rows_per_iteration`` rows when those are whole cycles; else the smallest
    divisor of ``cycle_rows`` that is a multiple of ``align``, holds ``ITERATION_OPS``
    operations and makes ``cycle_rows`` at most ``CYCLE_ITERATIONS`` iterations: the pass then
    repeats exactly every ``cycle_rows`` rows, a period fast-forward can confirm, and every
    shorter one differs in some channel's bytes."""
    want = rows_per_iteration(ops_per_row, align)
    if want >= cycle_rows:
        return rows_per_iteration(ops_per_row, cycle_rows)
    for rows in range(want, cycle_rows, align):
        if cycle_rows % rows == 0 and rows * CYCLE_ITERATIONS >= cycle_rows:
            return rows
    return cycle_rows


def pass_kinds(name: str, iterations: int) -> list[str]:
    """The kinds of a pass's iterations: its first (``<name>0``), middle ones and last
    (``<name>_end``, which also holds what follows the pass's rows) differ."""
    if iterations <= 1:
        return [f"{name}0"] * iterations
    return [f"{name}0"] + [name] * (iterations - 2) + [f"{name}_end"]


class RowLoopKinds(Sequence[Hashable]):
    """The kind of each iteration (``IterationControl.kinds``), computed from its index: per
    K/V group and column block the same ``pattern`` (the dense form: the key pass, whose last
    iteration also scales H, then the query pass; the prefix form: the keys before position 0,
    then its position loops), paired with the block's width. Iterations of one kind differ
    only in addresses; a skip never crosses a change."""

    def __init__(self, groups: int, widths: Sequence[int], pattern: Sequence[str]) -> None:
        self.widths = list(widths)
        self.pattern = list(pattern)
        self.segment = len(self.pattern)  # iterations per (group, column block)
        self.total = groups * len(self.widths) * self.segment

    def __len__(self) -> int:
        return self.total

    def __eq__(self, other: object) -> bool:
        """Equal loops (tiles with as many groups): fast-forward skips them together."""
        if isinstance(other, RowLoopKinds):
            return (self.total, self.widths, self.pattern) == (
                other.total,
                other.widths,
                other.pattern,
            )
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __getitem__(self, index: int) -> Hashable:  # type: ignore[override]
        if not 0 <= index < self.total:
            raise IndexError(index)
        block, j = divmod(index, self.segment)
        return (self.pattern[j], self.widths[block % len(self.widths)])


class RowLoopShapes(Sequence[tuple[Hashable, tuple[int, ...]]]):
    """Iteration shapes (``IterationControl.shapes``): the kinds with no growth, so that the
    watcher skips the key rows and the query rows of every block, one regime after another
    (``fast_forward/growth.py``)."""

    def __init__(self, kinds: RowLoopKinds) -> None:
        self.kinds = kinds

    def __len__(self) -> int:
        return len(self.kinds)

    def __eq__(self, other: object) -> bool:
        """Equal loops' shapes are equal (tiles with as many groups skip together)."""
        if isinstance(other, RowLoopShapes):
            return self.kinds == other.kinds
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __getitem__(self, index: int) -> tuple[Hashable, tuple[int, ...]]:  # type: ignore[override]
        return (self.kinds[index], ())


class _MarkedLoops:
    """What both emitters share with fast-forward: the loop iterations they mark and skip
    (``iterations``), the next one, and the rows through the double buffers (their parity)."""

    iterations: IterationControl
    next_iteration: int
    rows_done: int
    b: TraceBuilder

    def _passes(self, count: int, per: int) -> Iterator[tuple[int, int]]:
        """(first row, rows) of each iteration of a pass over ``count`` rows, ``per`` rows an
        iteration, marked as it starts; the rows a skip passes over are never given."""
        done = 0
        while done < count:
            rows = min(per, count - done)
            self.iterations.mark(self.next_iteration, self.b.next_index)
            yield done, rows
            done += rows + self._advance(per)

    def _advance(self, per: int, rows_each: int = 1) -> int:
        """After an iteration: moves to the next one the control gives and returns the units
        (rows, or loop bodies of ``rows_each`` rows) a skip passed over. A skip passes whole
        iterations of an even number of rows: every later row keeps its buffers."""
        following = self.iterations.following(self.next_iteration)
        skipped = (following - self.next_iteration - 1) * per
        self.rows_done += skipped * rows_each
        self.next_iteration = following
        return skipped


class _ApproxEmitter(_MarkedLoops):
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
        self._positions_cache: dict[
            tuple[int, int, bool, bool, int],
            tuple[Template, list[tuple[str, int, tuple[str, int, int], bool]]],
        ] = {}
        #: Fast-forward's view of the row loops: iterations of whole rows (dense form: the
        #: key pass, then the query pass; prefix form: the keys before position 0) or of
        #: whole position loop bodies (prefix form), each moving every off-chip row stream by
        #: whole interleave cycles (``row_alignment``).
        self.next_iteration = 0
        self.b = TraceBuilder(setup.header)  # chunks() starts its own
        w = setup.workload
        d, t = w.head_dim, tiling
        widths = [min(t.cols, d - block * t.cols) for block in range(t.blocks)]
        self.cycle = int(setup.platform.extra.get("offchip_cycle_bytes", 0))
        # Units (rows or loop bodies) per iteration, by pass; from the widest block's bodies.
        self.per: dict[str, int] = {}
        pattern = self._pattern(widths[0])
        kinds = RowLoopKinds(len(tile_groups(setup)), widths, pattern)
        self.iterations = IterationControl(len(kinds), kinds, RowLoopShapes(kinds))

    def _pattern(self, width: int) -> list[str]:
        """One group's and column block's iteration kinds (sets ``self.per``)."""
        w = self.setup.workload
        row_bytes = w.head_dim * self.setup.elem_bytes
        align = row_alignment(row_bytes, self.cycle)
        key_ops = len(self._template(_Shape(True, width, False, False))[0])
        self.per["key"] = rows_per_iteration(key_ops, align)
        if w.mask == "none":
            query_ops = len(self._template(_Shape(False, width, False, False))[0])
            self.per["query"] = rows_per_iteration(query_ops, align)
            keys = -(-w.kv_len // self.per["key"])
            kinds = pass_kinds("key", keys)
            queries = -(-(w.group * w.seq_len) // self.per["query"])
            return kinds + ["query"] * (queries - 1) + ["query_end"]
        lo, hi = w.key_range(0)
        kinds = pass_kinds("key", -(-(hi - lo) // self.per["key"]))
        for name, count, drop in self._position_passes():
            span = self._span(True, drop)
            body = len(self._position_template(width, span, True, drop, 0)[0])
            # A body moves each row stream by span rows: whole cycles every `bodies` bodies.
            step = span * row_bytes
            bodies = self.cycle // math.gcd(self.cycle, step) if self.cycle else 1
            self.per[name] = bodies * max(1, -(-ITERATION_OPS // (bodies * body)))
            kinds += pass_kinds(name, max(1, -(-(count // span) // self.per[name])))
        return kinds

    def _position_passes(self) -> list[tuple[str, int, bool]]:
        """The prefix form's position loops after position 0: (name, positions, drop)."""
        w = self.setup.workload
        nq = w.seq_len
        dropping = nq if w.mask == "causal" else min(nq, max(1, w.window - w.key_offset))
        passes = [("add", dropping - 1, False), ("drop", nq - dropping, True)]
        return [(name, count, drop) for name, count, drop in passes if count > 0]

    def _span(self, add: bool, drop: bool) -> int:
        """Positions per loop body: an even number of rows, so the buffer parity repeats."""
        per_position = int(add) + int(drop) + self.setup.workload.group
        return 2 if per_position % 2 else 1

    def _template(self, shape: _Shape) -> tuple[Template, list[tuple[str, int, str]]]:
        """A one-row loop body (double-buffer parity by row, ``row_offsets``)."""
        if shape in self._templates:
            return self._templates[shape]
        tpl = Template(self.setup.header)
        kind = "key" if shape.keys else "query"
        if shape.prefix:
            kind = "drop" if shape.keys else "prefix_query"
        mm, st, offchip = self._section(
            tpl, kind, shape.width, 0, Prev("mm", 2), Prev("st", 2), shape.first, shape.init
        )
        tpl.roles["mm"] = mm
        if st is not None:
            tpl.roles["st"] = st
        self._templates[shape] = (tpl, offchip)
        return tpl, offchip

    def _section(
        self,
        tpl: Template,
        kind: str,
        c: int,
        parity: int,
        war_mm: DepRef,
        war_st: DepRef,
        first: bool = False,
        init: bool = False,
    ) -> tuple[int, int | None, list[tuple[str, int, str]]]:
        """One row's operations in buffers of ``parity``: a K/V row entering H ("key"; the
        block's ``first`` overwrites H, the trace's ``init`` also writes the constants) or
        leaving it ("drop"), or a query row reading H ("query"; "prefix_query" with H
        unscaled). Its loads wait for ``war_mm`` (the last reader of these buffers), a query's
        matmul for ``war_st`` (the last store of this o). Returns the matmul, the store and
        the off-chip fields (field, op, "row" or "col": whole rows or value columns)."""
        s, bufs = self.setup, self.bufs
        eb, d, r = s.elem_bytes, s.workload.head_dim, self.tiling.features
        u, vs, o, h = bufs.u[parity].addr, bufs.vs[parity].addr, bufs.o[parity].addr, bufs.h.addr
        offchip: list[tuple[str, int, str]] = []
        if kind in ("key", "drop"):
            ldk = tpl.load(
                s.base("K"),
                u + eb,
                1,
                d * eb,
                tensor=s.tensor["K"],
                deps=[war_mm, Ext("o_free") if first else None],
            )
            ldv = tpl.load(s.base("V"), vs + eb, 1, c * eb, tensor=s.tensor["V"], deps=[war_mm])
            offchip += [("src0", ldk, "row"), ("src0", ldv, "col")]
            if init:
                # The constant ones (u[0] and the [1 | v] slot) come from loaded data, once.
                one = u
                tpl.vector(
                    VectorOp.MUL, one, u + eb, 1, 1, bcast=Broadcast.SCALAR, scalar=0.0, deps=[ldk]
                )
                tpl.vector(VectorOp.ADD, one, one, 1, 1, bcast=Broadcast.SCALAR, scalar=1.0)
                for dst in (bufs.u[1 - parity].addr, bufs.vs[0].addr, bufs.vs[1].addr):
                    tpl.vector(VectorOp.COPY, dst, one, 1, 1)
            generate(tpl, u, self.plan, ldk, eb)
            if init and bufs.factors is not None:
                # A row of ones (from the generated features) the factor runs then scale.
                f = bufs.factors.addr
                tpl.vector(VectorOp.MUL, f, u, 1, r, bcast=Broadcast.SCALAR, scalar=0.0)
                tpl.vector(VectorOp.ADD, f, f, 1, r, bcast=Broadcast.SCALAR, scalar=1.0)
            feats = u
            if kind == "drop":  # leaving the window: H -= u2^T [1 | v]
                assert bufs.scaled is not None
                feats = bufs.scaled.addr
                tpl.vector(
                    VectorOp.MUL, feats, u, 1, r, bcast=Broadcast.SCALAR, scalar=-1.0, deps=[ldk]
                )
            mm = tpl.matmul(feats, vs, h, r, c + 1, 1, accumulate=not first, deps=[ldk, ldv])
            return mm, None, offchip
        ldq = tpl.load(s.base("Q"), u + eb, 1, d * eb, tensor=s.tensor["Q"], deps=[war_mm])
        offchip.append(("src0", ldq, "row"))
        generate(tpl, u, self.plan, ldq, eb)
        feats = u
        if kind == "prefix_query":  # H is unscaled: the query features carry the factors
            assert bufs.scaled is not None and bufs.factors is not None
            feats = bufs.scaled.addr
            tpl.vector(VectorOp.MUL, feats, u, 1, r, src1=bufs.factors.addr, deps=[ldq])
        mm = tpl.matmul(feats, h, o, 1, c + 1, r, deps=[ldq, war_st])
        div = tpl.vector(VectorOp.DIV, o + eb, o + eb, 1, c, src1=o, bcast=Broadcast.ROW)
        st = tpl.store(o + eb, s.base("O"), 1, c * eb, tensor=s.tensor["O"], deps=[div])
        offchip.append(("dst", st, "col"))
        return mm, st, offchip

    def _offsets(
        self,
        tpl: Template,
        offchip: list[tuple[str, int, str]],
        row0: int,
        parity0: int,
        head_bytes: int,
        col0: int,
    ) -> OffsetFn:
        """Per-row off-chip addresses (from ``head_bytes``, the head's first row) and the
        double-buffer parity of u, vs, o."""
        s, bufs = self.setup, self.bufs
        eb, d = s.elem_bytes, s.workload.head_dim
        moves = [
            (f, col, head_bytes + (col0 * eb if kind == "col" else 0), d * eb)
            for f, col, kind in offchip
        ]
        return row_offsets(tpl, (bufs.u, bufs.vs, bufs.o), moves, row0, parity0)

    def chunks(self, chunk_ops: int) -> Iterator[np.ndarray]:
        s, t = self.setup, self.tiling
        w = s.workload
        d = w.head_dim
        self.b = b = TraceBuilder(s.header, chunk_ops)
        self.last_store: int | None = None
        self.rows_done = 0  # rows through the u/vs/o buffers: their parity
        self.init = True
        # The last matmul that read u/vs of each parity, the last store that read o of each.
        self.mm_by_parity: list[int | None] = [None, None]
        self.st_by_parity: list[int | None] = [None, None]
        for kv in tile_groups(self.setup):
            for block in range(t.blocks):
                col0 = block * t.cols
                width = min(t.cols, d - col0)
                self.st_by_parity = [None, None]  # the first key row waits for every store
                if w.mask == "none":
                    yield from self._row_loop(kv, w.kv_len, width, col0, keys=True)
                    yield from self._row_loop(kv, w.group * w.seq_len, width, col0, keys=False)
                else:
                    yield from self._prefix(kv, width, col0)
        yield from b.finish()

    def _row_loop(
        self, kv: int, count: int, width: int, col0: int, keys: bool
    ) -> Generator[np.ndarray, None, None]:
        """The dense form's pass over ``count`` K/V rows (``keys``: they build H, which is then
        scaled) or stacked query rows (they read it), as iterations of whole rows that
        fast-forward marks and may skip (``self.iterations``)."""
        for done, rows in self._passes(count, self.per["key" if keys else "query"]):
            if keys:
                yield from self._keys(kv, done, rows, width, col0, fresh=done == 0)
                if done + rows == count:
                    yield from scale_h(
                        self.b, self.bufs.h.addr, self.runs, width, self.setup.elem_bytes
                    )
            else:
                yield from self._queries(kv, done, rows, width, col0)

    def _first(self, mm: dict[str, int], st: dict[str, int]) -> RepeatResult:
        """Handles a loop's first repetition reaches back to: role -> row parity (relative to
        the loop's first row) of the matmul (``mm``) or store (``st``) it names."""
        out = RepeatResult()
        for table, last in ((mm, self.mm_by_parity), (st, self.st_by_parity)):
            for role, rel in table.items():
                handle = last[(self.rows_done + rel) % 2]
                if handle is not None:
                    name, _, back = role.partition("@")
                    out.handles[(name, -int(back or 1))] = handle
        return out

    def _repeat(
        self, shape: _Shape, row0: int, count: int, head_bytes: int, col0: int
    ) -> Generator[np.ndarray, None, None]:
        tpl, offchip = self._template(shape)
        offsets = self._offsets(tpl, offchip, row0, self.rows_done, head_bytes, col0)
        # Prev("mm", 2) of rows 0 and 1: the rows two back; a query row also waits for the
        # store of the row two back (none before a pass's first rows: the block's first key
        # row waited for every store, and the pass starts with no store recorded).
        first = self._first({"mm@2": 0, "mm@1": 1}, {} if shape.keys else {"st@2": 0, "st@1": 1})
        result = yield from self.b.repeat(
            tpl, count, offsets, first=first, ext={"o_free": self.last_store}
        )
        for back in (1, 2):
            if back <= count:
                par = (self.rows_done + count - back) % 2
                self.mm_by_parity[par] = result.handle("mm", back)
                if not shape.keys:
                    self.st_by_parity[par] = result.handle("st", back)
        if not shape.keys:
            self.last_store = result.handle("st")
        self.rows_done += count

    def _keys(
        self,
        kv: int,
        row0: int,
        count: int,
        width: int,
        col0: int,
        fresh: bool = False,
    ) -> Generator[np.ndarray, None, None]:
        """Add K/V rows row0 .. row0+count-1 of K/V head ``kv`` to H; ``fresh``: the first of
        them overwrites H (the trace's first also makes the constants)."""
        s, w = self.setup, self.setup.workload
        head_bytes = kv * w.kv_len * w.head_dim * s.elem_bytes
        if fresh:
            shape = _Shape(True, width, True, self.init)
            yield from self._repeat(shape, row0, 1, head_bytes, col0)
            if self.init and self.bufs.factors is not None:
                yield from scale_h(self.b, self.bufs.factors.addr, self.runs, 0, s.elem_bytes)
            self.init = False
            row0, count = row0 + 1, count - 1
        if count > 0:
            yield from self._repeat(
                _Shape(True, width, False, False), row0, count, head_bytes, col0
            )

    def _query_bytes(self, kv: int) -> int:
        """Off-chip offset of the first query row of K/V head ``kv``'s group: the group's
        query heads are adjacent, Nq rows each, so its rows are g*Nq consecutive rows."""
        w = self.setup.workload
        first_head = kv // w.kv_heads * w.heads + kv % w.kv_heads * w.group
        return first_head * w.seq_len * w.head_dim * self.setup.elem_bytes

    def _queries(
        self, kv: int, row0: int, count: int, width: int, col0: int
    ) -> Generator[np.ndarray, None, None]:
        """Stacked query rows row0 .. row0+count-1 of K/V head ``kv``'s group read H."""
        shape = _Shape(False, width, False, False)
        yield from self._repeat(shape, row0, count, self._query_bytes(kv), col0)

    def _prefix(self, kv: int, width: int, col0: int) -> Generator[np.ndarray, None, None]:
        """Prefix form: keys enter H in order; right after key i + Nk - Nq enters (and, with a
        sliding window, key i + Nk - Nq - W leaves), query row i of every head of the group
        reads H. Position 0 follows the keys of its range (iterations of whole key rows, the
        last one holding position 0); positions 1.. are loops of position templates, first
        without, then with a key leaving the window (iterations of whole loop bodies)."""
        lo, hi = self.setup.workload.key_range(0)
        for done, rows in self._passes(hi - lo, self.per["key"]):
            yield from self._keys(kv, lo + done, rows, width, col0, fresh=done == 0)
            if done + rows == hi - lo:
                yield from self._positions(kv, 0, 1, width, col0, add=False, drop=False)
        start = 1
        for name, count, drop in self._position_passes():
            yield from self._position_pass(kv, start, count, width, col0, name, drop)
            start += count

    def _position_pass(
        self, kv: int, i0: int, count: int, width: int, col0: int, name: str, drop: bool
    ) -> Generator[np.ndarray, None, None]:
        """Positions i0 .. i0+count-1 as iterations of ``self.per[name]`` loop bodies; the
        last iteration also holds the odd position a two-position body leaves."""
        span = self._span(True, drop)
        reps, rest = divmod(count, span)
        per, rows_each = self.per[name], len(self._kinds(span, True, drop))
        done = 0
        while True:
            self.iterations.mark(self.next_iteration, self.b.next_index)
            n = min(per, reps - done)
            if n > 0:
                yield from self._position_loop(
                    kv, i0 + done * span, n, span, width, col0, True, drop
                )
            done += n
            if done == reps:
                if rest:
                    yield from self._position_loop(
                        kv, i0 + reps * span, 1, 1, width, col0, True, drop
                    )
                self._advance(per, rows_each)
                return
            done += self._advance(per, rows_each)

    def _positions(
        self, kv: int, i0: int, count: int, width: int, col0: int, add: bool, drop: bool
    ) -> Generator[np.ndarray, None, None]:
        """Positions i0 .. i0+count-1: each (optionally) subtracts the key leaving the window,
        adds its key, then every query head of the group reads H. Loop bodies hold an even
        number of rows, one or two positions, so the buffer parity repeats."""
        span = self._span(add, drop)
        reps, rest = divmod(count, span)
        if reps:
            yield from self._position_loop(kv, i0, reps, span, width, col0, add, drop)
        if rest:
            yield from self._position_loop(kv, i0 + reps * span, 1, 1, width, col0, add, drop)

    def _position_loop(
        self,
        kv: int,
        i0: int,
        reps: int,
        span: int,
        width: int,
        col0: int,
        add: bool,
        drop: bool,
    ) -> Generator[np.ndarray, None, None]:
        s, w = self.setup, self.setup.workload
        eb, d, nq = s.elem_bytes, w.head_dim, w.seq_len
        parity0 = self.rows_done % 2
        key = (width, span, add, drop, parity0)
        if key not in self._positions_cache:
            self._positions_cache[key] = self._position_template(width, span, add, drop, parity0)
        tpl, fields = self._positions_cache[key]
        key_bytes = kv * w.kv_len * d * eb
        query_bytes = self._query_bytes(kv)
        moves = []
        for f, col, (kind, pos, head), column in fields:
            i = i0 + pos
            if kind == "query":
                row = query_bytes + (head * nq + i) * d * eb
            else:
                leaving = w.window if kind == "drop" else 0
                row = key_bytes + (i + w.key_offset - leaving) * d * eb
            moves.append((f, col, row + (col0 * eb if column else 0), span * d * eb))
        kinds = self._kinds(span, add, drop)
        rows = len(kinds)
        # Rep 0 reaches back to the matmuls two rows before its first two rows and to the
        # last store of each o buffer (``_position_template`` names them).
        mm = {f"mm{(k - 2) % rows}@{-((k - 2) // rows)}": k for k in range(min(2, rows))}
        st = {f"st{k}": k for k, (kind, _, _) in enumerate(kinds) if kind == "query"}
        result = yield from self.b.repeat(
            tpl, reps, row_offsets(tpl, (), moves, 0, 0), first=self._first(mm, st)
        )
        for k, (kind, _, _) in enumerate(kinds):
            par = (parity0 + k) % 2
            self.mm_by_parity[par] = result.handle(f"mm{k}")
            if kind == "query":
                self.st_by_parity[par] = self.last_store = result.handle(f"st{k}")
        self.rows_done += reps * rows

    def _kinds(self, span: int, add: bool, drop: bool) -> list[tuple[str, int, int]]:
        """The rows of a position template: (kind, position in the body, query head)."""
        out: list[tuple[str, int, int]] = []
        for pos in range(span):
            out += [("drop", pos, 0)] if drop else []
            out += [("key", pos, 0)] if add else []
            out += [("query", pos, j) for j in range(self.setup.workload.group)]
        return out

    def _position_template(
        self, width: int, span: int, add: bool, drop: bool, parity0: int
    ) -> tuple[Template, list[tuple[str, int, tuple[str, int, int], bool]]]:
        """One loop body of ``span`` positions; row k uses the buffers of parity
        parity0 + k. Loads wait for the matmul two rows back, a query's matmul for the last
        store of its o buffer; roles mm<k>, st<k> name them for the next repetition."""
        tpl = self.b.template()
        kinds = self._kinds(span, add, drop)
        rows = len(kinds)
        queries = [k for k, (kind, _, _) in enumerate(kinds) if kind == "query"]
        fields: list[tuple[str, int, tuple[str, int, int], bool]] = []
        mms: list[int] = []
        stores: dict[int, int] = {}
        for k, row in enumerate(kinds):
            war_mm: DepRef = (
                mms[k - 2] if k >= 2 else Prev(f"mm{(k - 2) % rows}", -((k - 2) // rows))
            )
            war_st: DepRef = None
            if row[0] == "query":
                earlier = [x for x in queries if x < k and (k - x) % 2 == 0]
                last = max(x for x in queries if (k - x) % 2 == 0)
                war_st = stores[earlier[-1]] if earlier else Prev(f"st{last}", 1)
            kind = "prefix_query" if row[0] == "query" else row[0]
            mm, st, offchip = self._section(tpl, kind, width, (parity0 + k) % 2, war_mm, war_st)
            mms.append(mm)
            tpl.roles[f"mm{k}"] = mm
            if st is not None:
                stores[k] = st
                tpl.roles[f"st{k}"] = st
            fields += [(f, op, row, what == "col") for f, op, what in offchip]
        return tpl, fields


@dataclass(frozen=True)
class _FeatureBuffers:
    h: Buffer  # f_max x (d+1): the current block's rows of H
    row: Pair  # group areas, then the product row and two partial-product rows
    vs: Pair  # [1, v]
    o: Pair  # [D_i, numerators] of this block (plus the partial sums read back)
    part: Pair  # the partial sums of earlier blocks, loaded


class _FeatureEmitter(_MarkedLoops):
    """Case "features": per feature block, a K/V pass builds the block's rows of H, then a Q
    pass adds u1_block(q) H_block to the row's off-chip partial sums (the last block divides
    and writes O instead)."""

    def __init__(
        self, setup: DataflowSetup, bufs: _FeatureBuffers, tiling: ApproxTiling, coeffs: np.ndarray
    ):
        assert tiling.groups is not None
        self.setup = setup
        self.bufs = bufs
        self.tiling = tiling
        self.plan = tiling.groups
        w = setup.workload
        self.blocks = list(feature_blocks(w.head_dim, self.plan.degree, self.plan.width))
        self.runs = [
            run_table(scale_runs(monomial_factors(blk.monomials, coeffs, w.scale)))
            for blk in self.blocks
        ]
        self._templates: dict[tuple[object, ...], tuple[Template, list[tuple[str, int, bool]]]] = {}
        # Fast-forward's view: per feature block, the K/V pass then the Q pass as iterations of
        # whole rows (``_MarkedLoops``); (key rows, query rows) an iteration, by block.
        self.next_iteration = 0
        self.rows_done = 0
        self.b = TraceBuilder(setup.header)  # chunks() starts its own
        self.per = [self._rows_per_iteration(index) for index in range(len(self.blocks))]
        keys, queries = w.kv_len, w.group * w.seq_len
        pattern: list[str] = []
        for index, (per_key, per_query) in enumerate(self.per):
            pattern += pass_kinds(f"block{index}:key", -(-keys // per_key))
            pattern += pass_kinds(f"block{index}:query", -(-queries // per_query))
        kinds = RowLoopKinds(len(tile_groups(setup)), [w.head_dim], pattern)
        self.iterations = IterationControl(len(kinds), kinds, RowLoopShapes(kinds))

    def _rows_per_iteration(self, index: int) -> tuple[int, int]:
        """Key and query rows per iteration of block ``index``: whole interleave cycles of
        the K, V, Q and O rows (d elements) and, for the query rows, of the partial sums
        ((d+1) elements, ``rows_per_cycle``)."""
        s = self.setup
        cycle = int(s.platform.extra.get("offchip_cycle_bytes", 0))
        row = s.workload.head_dim * s.elem_bytes
        align = row_alignment(row, cycle)
        partial = row_alignment(row + s.elem_bytes, cycle)
        both = align * partial // math.gcd(align, partial)
        key_ops = len(self._kv_template(index, False, False)[0])
        query_ops = len(self._q_template(index)[0])
        return rows_per_iteration(key_ops, align), rows_per_cycle(query_ops, align, both)

    def _features(
        self, tpl: Template, blk: FeatureBlock, loads: list[int]
    ) -> tuple[int, list[int]]:
        """Generate the block's feature row; returns its address and loads no op waited for."""
        eb, p = self.setup.elem_bytes, self.plan
        row = self.bufs.row[0].addr
        areas = [row + j * p.area * eb for j in range(len(blk.groups))]
        unwaited = []
        for area, plan, load in zip(areas, blk.plans, loads, strict=True):
            generate(tpl, area, plan, load, eb)
            if not plan.steps:
                unwaited.append(load)
        if not blk.products:
            return areas[0] + blk.first * eb, unwaited
        prod = row + p.max_groups * p.area * eb
        partials = (prod + p.max_features * eb, prod + 2 * p.max_features * eb)
        for product in blk.products:
            (st, ln), *rest = product.sections
            cur, size = areas[0] + st * eb, ln
            for j, (st, ln) in enumerate(rest, start=1):
                dst = prod + product.dst * eb if j == len(rest) else partials[j % 2]
                tpl.matmul(cur, areas[j] + st * eb, dst, size, ln, 1)
                cur, size = dst, size * ln
        return prod, unwaited

    def _group_loads(
        self, tpl: Template, blk: FeatureBlock, name: str, deps: list[DepRef]
    ) -> list[int]:
        s, eb = self.setup, self.setup.elem_bytes
        row = self.bufs.row[0].addr
        return [
            tpl.load(
                s.base(name) + start * eb,
                row + (j * self.plan.area + 1) * eb,
                1,
                plan.head_dim * eb,
                tensor=s.tensor[name],
                deps=deps if j == 0 else [Prev("mm", 2)],
            )
            for j, (start, plan) in enumerate(zip(blk.starts, blk.plans, strict=True))
        ]

    def _kv_template(
        self, index: int, first: bool, init: bool
    ) -> tuple[Template, list[tuple[str, int, bool]]]:
        key: tuple[object, ...] = ("kv", index, first, init)
        if key in self._templates:
            return self._templates[key]
        s, bufs, blk = self.setup, self.bufs, self.blocks[index]
        eb, d = s.elem_bytes, s.workload.head_dim
        vs = bufs.vs[0].addr
        tpl = Template(self.setup.header)
        lks = self._group_loads(tpl, blk, "K", [Prev("mm", 2), Ext("o_free") if first else None])
        ldv = tpl.load(s.base("V"), vs + eb, 1, d * eb, tensor=s.tensor["V"], deps=[Prev("mm", 2)])
        offchip = [("src0", ld, False) for ld in (*lks, ldv)]
        if init:
            # The constants (feature 0 of both row buffers, [1 | v]) from loaded data, once.
            one = bufs.row[0].addr
            tpl.vector(
                VectorOp.MUL, one, one + eb, 1, 1, bcast=Broadcast.SCALAR, scalar=0.0, deps=[lks[0]]
            )
            tpl.vector(VectorOp.ADD, one, one, 1, 1, bcast=Broadcast.SCALAR, scalar=1.0)
            for dst in (bufs.row[1].addr, vs, bufs.vs[1].addr):
                tpl.vector(VectorOp.COPY, dst, one, 1, 1)
        u, unwaited = self._features(tpl, blk, lks)
        tpl.roles["mm"] = tpl.matmul(
            u, vs, bufs.h.addr, blk.size, d + 1, 1, accumulate=not first, deps=[ldv, *unwaited]
        )
        self._templates[key] = (tpl, offchip)
        return tpl, offchip

    def _q_template(self, index: int) -> tuple[Template, list[tuple[str, int, bool]]]:
        key: tuple[object, ...] = ("q", index)
        if key in self._templates:
            return self._templates[key]
        s, bufs, blk = self.setup, self.bufs, self.blocks[index]
        eb, d = s.elem_bytes, s.workload.head_dim
        o, part = bufs.o[0].addr, bufs.part[0].addr
        first, last = index == 0, index == len(self.blocks) - 1
        tpl = Template(self.setup.header)
        lqs = self._group_loads(tpl, blk, "Q", [Prev("mm", 2)])
        offchip = [("src0", ld, False) for ld in lqs]
        if not first:
            ldp = tpl.load(
                s.base(PARTIAL),
                part,
                1,
                (d + 1) * eb,
                tensor=s.tensor[PARTIAL],
                deps=[Prev("add", 2)],
            )
            offchip.append(("src0", ldp, True))
        u, unwaited = self._features(tpl, blk, lqs)
        tpl.roles["mm"] = last_pe = tpl.matmul(
            u, bufs.h.addr, o, 1, d + 1, blk.size, deps=[Prev("st", 2), *unwaited]
        )
        if not first:
            tpl.roles["add"] = last_pe = tpl.vector(
                VectorOp.ADD, o, o, 1, d + 1, src1=part, deps=[ldp]
            )
        if last:
            div = tpl.vector(VectorOp.DIV, o + eb, o + eb, 1, d, src1=o, bcast=Broadcast.ROW)
            st = tpl.store(o + eb, s.base("O"), 1, d * eb, tensor=s.tensor["O"], deps=[div])
        else:
            st = tpl.store(
                o, s.base(PARTIAL), 1, (d + 1) * eb, tensor=s.tensor[PARTIAL], deps=[last_pe]
            )
        tpl.roles["st"] = st
        offchip.append(("dst", st, not last))
        self._templates[key] = (tpl, offchip)
        return tpl, offchip

    def _offsets(
        self,
        tpl: Template,
        offchip: list[tuple[str, int, bool]],
        row0: int,
        parity0: int,
        head_bytes: int,
    ) -> OffsetFn:
        """Rows of Q, K, V, O (from ``head_bytes``, the head's first row) and of the shared
        partial sums; buffer parity."""
        s, bufs = self.setup, self.bufs
        eb, d = s.elem_bytes, s.workload.head_dim
        moves = [
            (f, col, 0, (d + 1) * eb) if partial else (f, col, head_bytes, d * eb)
            for f, col, partial in offchip
        ]
        pairs = (bufs.row, bufs.vs, bufs.o, bufs.part)
        return row_offsets(tpl, pairs, moves, row0, parity0)

    def chunks(self, chunk_ops: int) -> Iterator[np.ndarray]:
        w, d, eb = self.setup.workload, self.setup.workload.head_dim, self.setup.elem_bytes
        n, queries = w.kv_len, w.group * w.seq_len
        self.b = b = TraceBuilder(self.setup.header, chunk_ops)
        self.prev: RepeatResult | None = None
        last_store: int | None = None
        init = True
        for kv in tile_groups(self.setup):
            # K/V rows of head kv; the stacked query rows of its group (adjacent off chip).
            key_bytes = kv * n * d * eb
            first_head = kv // w.kv_heads * w.heads + kv % w.kv_heads * w.group
            query_bytes = first_head * w.seq_len * d * eb
            for index in range(len(self.blocks)):
                per_key, per_query = self.per[index]
                for row0, rows in self._passes(n, per_key):
                    loops = [(False, False, row0, rows)]
                    if row0 == 0:
                        loops = [(True, init, 0, 1), (False, False, 1, rows - 1)]
                        init = False
                    for first, with_init, start, count in loops:
                        if count > 0:
                            tpl, offchip = self._kv_template(index, first, with_init)
                            yield from self._loop(tpl, offchip, start, count, key_bytes, last_store)
                    if row0 + rows == n:
                        yield from scale_h(b, self.bufs.h.addr, self.runs[index], d, eb)
                for row0, rows in self._passes(queries, per_query):
                    tpl, offchip = self._q_template(index)
                    yield from self._loop(tpl, offchip, row0, rows, query_bytes)
                assert self.prev is not None
                last_store = self.prev.handle("st")
        yield from b.finish()

    def _loop(
        self,
        tpl: Template,
        offchip: list[tuple[str, int, bool]],
        row0: int,
        count: int,
        head_bytes: int,
        last_store: int | None = None,
    ) -> Generator[np.ndarray, None, None]:
        """Rows row0 .. row0+count-1 of a pass, chained to the loop before (``prev``)."""
        offsets = self._offsets(tpl, offchip, row0, self.rows_done, head_bytes)
        self.prev = yield from self.b.repeat(
            tpl, count, offsets, first=self.prev, ext={"o_free": last_store}
        )
        self.rows_done += count


def tile_groups(setup: DataflowSetup) -> range:
    """The K/V groups this trace computes: all, or a tiled platform's tile's whole groups
    (``block_deal.group_range``; ``partition.check_tiled`` asks for a group per tile)."""
    return group_range(setup.workload.kv_head_count, setup.platform.tile, setup.platform.tiles)


def trace_approx(
    workload: Workload, platform: PlatformInfo, params: Mapping[str, object]
) -> DataflowTrace:
    """Polynomial approximate attention trace (params: degree, bound)."""
    p = approx_params(params)
    d = workload.head_dim
    check_feature_count(workload.head_dim, p.degree)
    tiling = approx_tiling(workload, platform.capacity_elements(workload.elem_bytes), p.degree)
    coeffs = exp_poly_coefficients(p.degree, p.bound)
    features = tiling.groups is not None
    prefix = workload.mask != "none"
    setup = make_setup(
        "approx",
        workload,
        platform,
        {
            "degree": p.degree,
            "bound": p.bound,
            "coefficients": [float(c) for c in coeffs],
            **tiling.tile(),
        },
        spill=[(PARTIAL, (workload.group * workload.seq_len, d + 1))] if features else None,
    )
    sp = setup.scratch
    r, c = tiling.features, tiling.cols
    if tiling.groups is not None:
        f, row = tiling.groups.max_features, tiling.groups.row_elements
        fbufs = _FeatureBuffers(
            h=sp.alloc("H", f, d + 1),
            row=(sp.alloc("u.0", 1, row), sp.alloc("u.1", 1, row)),
            vs=(sp.alloc("v1.0", 1, d + 1), sp.alloc("v1.1", 1, d + 1)),
            o=(sp.alloc("o.0", 1, d + 1), sp.alloc("o.1", 1, d + 1)),
            part=(sp.alloc("part.0", 1, d + 1), sp.alloc("part.1", 1, d + 1)),
        )
        femitter = _FeatureEmitter(setup, fbufs, tiling, coeffs)
        return DataflowTrace(setup, femitter, femitter.iterations)
    plan = monomial_plan(d, p.degree)
    runs = run_table(plan.scale_runs(coeffs, workload.scale))
    bufs = _Buffers(
        h=sp.alloc("H", r, c + 1),
        u=(sp.alloc("u.0", 1, r), sp.alloc("u.1", 1, r)),
        vs=(sp.alloc("v1.0", 1, c + 1), sp.alloc("v1.1", 1, c + 1)),
        o=(sp.alloc("o.0", 1, c + 1), sp.alloc("o.1", 1, c + 1)),
        scaled=sp.alloc("u_scaled", 1, r) if prefix else None,
        factors=sp.alloc("factors", 1, r) if prefix else None,
    )
    emitter = _ApproxEmitter(setup, bufs, plan, runs, tiling)
    return DataflowTrace(setup, emitter, emitter.iterations)
