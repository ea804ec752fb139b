"""Chunked, vectorised trace building shared by every dataflow emitter.

Operations name the operations they wait for by handle; the builder turns handles into the
record's back-distances, checks the window and yields fixed-size chunks. Loop bodies are
recorded once as a :class:`Template` and tiled with numpy address arithmetic by
:meth:`TraceBuilder.repeat`, so large traces cost no Python call per record.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from tlm_models.errors import UserError
from tlm_models.trace.header import TraceHeader
from tlm_models.trace.record import (
    MAX_DEPS,
    NO_TENSOR,
    RECORD_DTYPE,
    Broadcast,
    OpKind,
    VectorOp,
    exp_code,
    float_bits,
    mask_fields,
    matmul_code,
    split_src2,
    vector_code,
)

DEFAULT_CHUNK_OPS = 1 << 20


class CountBudgetExceeded(Exception):
    """Counting a trace took longer than its budget (the caller counts a smaller one)."""


@dataclass
class OpCount:
    """What a trace holds, counted without building it: operations, MACs and exps, the
    bytes its loads and stores move (m x n each), and the emitter's loops
    (``TraceBuilder.repeat`` calls: each costs the emitter Python work of its own, the largest
    part of a run's wall time when its loops are short; run/cost.py).
    Counting stops with ``CountBudgetExceeded`` past ``deadline`` (``time.process_time``: CPU
    time, so that on a loaded machine a count reaches as far as on an idle one and a
    prediction does not fall back to a smaller, less telling count)."""

    ops: int = 0
    macs: int = 0
    exps: int = 0
    loops: int = 0
    moved: int = 0
    deadline: float = math.inf

    def add(self, recs: np.ndarray, times: int = 1) -> None:
        self._check_deadline()
        self.loops += 1
        kind = recs["kind"]
        size = recs["m"].astype(np.int64) * recs["n"].astype(np.int64)
        self.ops += len(recs) * times
        self.macs += int((size * recs["k"].astype(np.int64))[kind == OpKind.MATMUL].sum()) * times
        self.exps += int(size[kind == OpKind.EXP].sum()) * times
        self.moved += int(size[(kind == OpKind.LOAD) | (kind == OpKind.STORE)].sum()) * times

    def add_one(self, rec: RecordTuple) -> None:
        if self.ops % 1024 == 0:
            self._check_deadline()
        self.ops += 1
        if rec[0] == OpKind.MATMUL:
            self.macs += rec[5] * rec[6] * rec[7]
        elif rec[0] == OpKind.EXP:
            self.exps += rec[5] * rec[6]
        elif rec[0] in (OpKind.LOAD, OpKind.STORE):
            self.moved += rec[5] * rec[6]

    def _check_deadline(self) -> None:
        if time.process_time() > self.deadline:
            raise CountBudgetExceeded(f"counting stopped after {self.ops:,} ops")


#: Set while ``counting_ops`` is active: builders created then count instead of building.
_counting: OpCount | None = None


@contextmanager
def counting_ops(budget_s: float = math.inf) -> Iterator[OpCount]:
    """Emitters run inside this yield no records; the builders add what they would have
    emitted to the returned count (the cost estimate before a run: loops cost O(1) each)."""
    global _counting
    previous, _counting = _counting, OpCount(deadline=time.process_time() + budget_s)
    try:
        yield _counting
    finally:
        _counting = previous


@dataclass(frozen=True)
class Prev:
    """Inside a template: the op playing ``role`` ``back`` repetitions earlier."""

    role: str
    back: int = 1


@dataclass(frozen=True)
class Ext:
    """Inside a template: an operation outside the loop, bound by name at ``repeat`` time."""

    name: str


DepRef = int | Prev | Ext | None
RecordTuple = tuple[
    int, int, int, int, tuple[int, int, int, int], int, int, int, int, int, int, int, int
]
#: Per-repetition address arithmetic: repetition numbers -> {field: {body op: int64 offsets}}.
OffsetFn = Callable[[np.ndarray], Mapping[str, Mapping[int, np.ndarray | int]]]


def tile_runs(total: int, tile: int) -> list[tuple[int, int, int, bool]]:
    """Runs (first tile, count, width, is first tile) of equally wide tiles covering ``total``."""
    tiles = -(-total // tile)
    last = total - (tiles - 1) * tile
    runs = [(0, 1, min(tile, total), True)]
    full = tiles - 1 if last == tile else tiles - 2
    if full > 0:
        runs.append((1, full, tile, False))
    if tiles > 1 and last != tile:
        runs.append((tiles - 1, 1, last, False))
    return runs


def role_offsets(
    tpl: Template, spec: Mapping[tuple[str, str], np.ndarray | int]
) -> dict[str, dict[int, np.ndarray | int]]:
    """``repeat`` offsets from {(role, field): per-repetition values}."""
    columns: dict[str, dict[int, np.ndarray | int]] = {}
    for (role, name), values in spec.items():
        columns.setdefault(name, {})[tpl.roles[role]] = values
    return columns


_FIELD_ORDER = (
    "kind", "engine", "tensor", "code", "deps", "m", "n", "k",
    "src0", "src1", "dst", "src_stride", "dst_stride",
)  # fmt: skip
assert RECORD_DTYPE.names == _FIELD_ORDER, "make_record follows the record layout"


def make_record(
    kind: OpKind,
    engine: int,
    *,
    tensor: int = NO_TENSOR,
    code: int = 0,
    m: int = 0,
    n: int = 0,
    k: int = 0,
    src0: int = 0,
    src1: int = 0,
    dst: int = 0,
    src_stride: int = 0,
    dst_stride: int = 0,
) -> RecordTuple:
    """One record by field name, without dependencies (the builder fills those in); the only
    place that knows the record's field order besides ``RECORD_DTYPE``."""
    return (
        kind,
        engine,
        tensor,
        code,
        (0, 0, 0, 0),
        m,
        n,
        k,
        src0,
        src1,
        dst,
        src_stride,
        dst_stride,
    )


class OpSink:
    """Typed constructors for the five record kinds; subclasses decide where records go."""

    def __init__(self, header: TraceHeader):
        self.header = header
        self._engine_index = {name: i for i, name in enumerate(header.engines)}
        self.load_engine = self._engine_index["dma0"]
        self.store_engine = self._engine_index.get("dma1", self.load_engine)
        self.pe_engine = self._engine_index["pe"]
        self.exp_engine = self._engine_index["exp"]

    def _add(self, rec: RecordTuple, deps: Iterable[DepRef]) -> int:
        raise NotImplementedError

    def load(
        self,
        src: int,
        dst: int,
        rows: int,
        row_bytes: int,
        *,
        tensor: int,
        src_stride: int = 0,
        dst_stride: int = 0,
        deps: Iterable[DepRef] = (),
        token: int = 0,
        posts: int = 0,
    ) -> int:
        """Off-chip ``src`` -> on-chip ``dst``: ``rows`` rows of ``row_bytes`` bytes; with a
        cross-tile ``token``, not before ``posts`` stores of it are done (``tile_sync.h``)."""
        if bool(token) != bool(posts) or not 0 <= posts <= 0xFF:
            raise ValueError(f"a load waits for 1..255 posts of a token, got {posts} of {token}")
        rec = make_record(
            OpKind.LOAD, self.load_engine, tensor=tensor, code=posts, m=rows, n=row_bytes,
            k=token, src0=src, dst=dst, src_stride=src_stride, dst_stride=dst_stride,
        )  # fmt: skip
        return self._add(rec, deps)

    def store(
        self,
        src: int,
        dst: int,
        rows: int,
        row_bytes: int,
        *,
        tensor: int,
        src_stride: int = 0,
        dst_stride: int = 0,
        deps: Iterable[DepRef] = (),
        token: int = 0,
    ) -> int:
        """On-chip ``src`` -> off-chip ``dst``; a cross-tile ``token`` is posted when it is
        done (loads of other tiles may wait for it, ``tile_sync.h``)."""
        rec = make_record(
            OpKind.STORE, self.store_engine, tensor=tensor, m=rows, n=row_bytes, k=token,
            src0=src, dst=dst, src_stride=src_stride, dst_stride=dst_stride,
        )  # fmt: skip
        return self._add(rec, deps)

    def matmul(
        self,
        a: int,
        b: int,
        c: int,
        m: int,
        n: int,
        k: int,
        *,
        trans_b: bool = False,
        accumulate: bool = False,
        scale_rows: int | None = None,
        stream: bool = False,
        deps: Iterable[DepRef] = (),
    ) -> int:
        """C[m x n] (+)= A[m x k] B[k x n] on the PE array (B stored n x k when trans_b);
        ``scale_rows`` = address of m row scales: C = diag(alpha) C + A B (fused rescale);
        ``stream``: start on the first rows of A its producer writes (forwarding)."""
        code = matmul_code(
            trans_b=trans_b, accumulate=accumulate, scale_rows=scale_rows is not None, stream=stream
        )
        low = high = 0
        if scale_rows is not None:
            low, high = split_src2(scale_rows)  # the third operand's address, in the strides
        rec = make_record(
            OpKind.MATMUL, self.pe_engine, code=code, m=m, n=n, k=k, src0=a, src1=b, dst=c,
            src_stride=low, dst_stride=high,
        )  # fmt: skip
        return self._add(rec, deps)

    def vector(
        self,
        op: VectorOp,
        dst: int,
        src0: int,
        m: int,
        n: int,
        *,
        src1: int = 0,
        bcast: Broadcast = Broadcast.FULL,
        scalar: float = 0.0,
        stream: bool = False,
        lazy_rows: int | None = None,
        deps: Iterable[DepRef] = (),
    ) -> int:
        """Element-wise or row-reduction op on an m x n block on the PE array; ``stream``:
        start on the first elements its producers write (forwarding); ``lazy_rows``: a lazy
        rescale (mul, row broadcast) charging that many rows (``record.VECTOR_LAZY_ROWS``)."""
        k = float_bits(scalar) if bcast == Broadcast.SCALAR else 0
        code = vector_code(op, bcast, stream=stream, lazy=lazy_rows is not None)
        if lazy_rows is not None:
            if op != VectorOp.MUL or bcast != Broadcast.ROW or not 0 <= lazy_rows <= m:
                raise ValueError(f"a lazy rescale is a row-broadcast mul of 0..{m} rows")
            k = lazy_rows
        rec = make_record(
            OpKind.VECTOR, self.pe_engine, code=code, m=m, n=n, k=k, src0=src0, src1=src1, dst=dst
        )
        return self._add(rec, deps)

    def mask(
        self,
        dst: int,
        src: int,
        m: int,
        n: int,
        *,
        diagonal: int,
        window: int = 0,
        period: int = 0,
        phase: int = 0,
        fill: float = -math.inf,
        stream: bool = False,
        deps: Iterable[DepRef] = (),
    ) -> int:
        """dst = src with ``fill`` where row i does not see column j of the m x n block: row i
        sees j <= diagonal + t(i) (and > diagonal + t(i) - window when window > 0), t(i) = i
        or, rows wrapping every ``period``, ((phase + i) mod period) - phase
        (``record.mask_visible``). An element-wise vector op on the PE array."""
        code = vector_code(VectorOp.MASK, Broadcast.SCALAR, stream=stream)
        geometry = mask_fields(diagonal, window, period, phase)
        rec = make_record(
            OpKind.VECTOR, self.pe_engine, code=code, m=m, n=n, k=float_bits(fill), src0=src,
            src1=geometry["src1"], dst=dst, src_stride=geometry["src_stride"],
            dst_stride=geometry["dst_stride"],
        )  # fmt: skip
        return self._add(rec, deps)

    def exp(
        self,
        dst: int,
        src: int,
        m: int,
        n: int,
        *,
        stream: bool = False,
        rescale: bool = False,
        deps: Iterable[DepRef] = (),
    ) -> int:
        """dst = exp(src) on an m x n block on the Exp unit; ``stream`` and ``rescale`` as for
        ``vector``."""
        code = exp_code(stream=stream, rescale=rescale)
        rec = make_record(OpKind.EXP, self.exp_engine, code=code, m=m, n=n, src0=src, dst=dst)
        return self._add(rec, deps)


def _named(deps: Iterable[DepRef]) -> list[DepRef]:
    """The dependencies an operation names (None entries name none), at most MAX_DEPS."""
    refs: list[DepRef] = [d for d in deps if d is not None]
    if len(refs) > MAX_DEPS:
        raise ValueError(f"an operation names {len(refs)} dependencies; at most {MAX_DEPS}")
    return refs


#: A record as one opaque 64-byte item.
_RAW_RECORD = np.dtype((np.void, RECORD_DTYPE.itemsize))


def join_records(parts: list[np.ndarray]) -> np.ndarray:
    """``np.concatenate(parts)`` of record arrays, joined as raw 64-byte items: numpy promotes
    a structured dtype field by field for every array it joins, which took 0.4 s over the
    20,000 pieces of a causal FlashAttention-2 run (the bytes are the same)."""
    return np.concatenate([p.view(_RAW_RECORD) for p in parts]).view(RECORD_DTYPE)


@dataclass
class LoopRefs:
    """A loop body's dependencies as ``repeat`` resolves them (``Template.loop_refs``)."""

    const_max: int  # the largest constant back-distance of the body's records
    ext: list[tuple[int, int, str]]  # (op, slot, name) of each Ext ref
    prev: list[tuple[int, int, Prev]]  # (op, slot, ref) of each Prev ref
    max_back: int  # the deepest Prev reach (at least 1)


class Template(OpSink):
    """A loop body recorded once; handles are local indices, deps may be Prev/Ext refs.

    ``roles`` names the ops that later repetitions or later loops refer to (``Prev``), so
    loop variants with different bodies can chain as long as they name the same roles.
    """

    def __init__(self, header: TraceHeader):
        super().__init__(header)
        self._records: list[RecordTuple] = []
        self.deps: list[list[DepRef]] = []
        self.roles: dict[str, int] = {}
        self._compiled: np.ndarray | None = None
        self._refs: LoopRefs | None = None
        self._refs_len = 0

    def _add(self, rec: RecordTuple, deps: Iterable[DepRef]) -> int:
        refs = _named(deps)
        local = len(self._records)
        for ref in refs:
            if isinstance(ref, int) and not 0 <= ref < local:
                raise ValueError(f"template op {local} depends on op {ref}, not earlier")
            if isinstance(ref, Prev) and ref.back < 1:
                raise ValueError(f"bad previous-repetition reference {ref}")
        self._records.append(rec)
        self.deps.append(refs)
        self._compiled = None
        return local

    def __len__(self) -> int:
        return len(self._records)

    @property
    def max_back(self) -> int:
        return self.loop_refs().max_back

    def loop_refs(self) -> LoopRefs:
        """What ``repeat`` needs of the body besides its records, worked out once per body: a
        causal FlashAttention-2 run repeats a handful of bodies over 11,520 loops."""
        if self._refs is None or self._refs_len != len(self._records):
            pairs = [
                (local, slot, ref)
                for local, refs in enumerate(self.deps)
                for slot, ref in enumerate(refs)
            ]
            self._refs = LoopRefs(
                const_max=int(self.records()["deps"].max(initial=0)),
                ext=[(local, slot, ref.name) for local, slot, ref in pairs if isinstance(ref, Ext)],
                prev=[(local, slot, ref) for local, slot, ref in pairs if isinstance(ref, Prev)],
                max_back=max([1] + [ref.back for _, _, ref in pairs if isinstance(ref, Prev)]),
            )
            self._refs_len = len(self._records)
        return self._refs

    def records(self) -> np.ndarray:
        """The body as records; deps hold the constant back-distances of local/Prev refs."""
        if self._compiled is not None and len(self._compiled) == len(self._records):
            return self._compiled
        recs = np.array(self._records, dtype=RECORD_DTYPE)
        length = len(self._records)
        for local, refs in enumerate(self.deps):
            for slot, ref in enumerate(refs):
                if isinstance(ref, int):
                    recs["deps"][local, slot] = local - ref
                elif isinstance(ref, Prev):
                    recs["deps"][local, slot] = local + ref.back * length - self.roles[ref.role]
        self._compiled = recs
        return recs


@dataclass
class RepeatResult:
    """Absolute handles of roles in the last repetitions of a ``repeat``."""

    handles: dict[tuple[str, int], int] = field(default_factory=dict)

    def handle(self, role: str, back: int = 1) -> int | None:
        return self.handles.get((role, -back))


class TraceBuilder(OpSink):
    """Collects records in trace order and yields them as chunks of ``chunk_ops`` records."""

    def __init__(self, header: TraceHeader, chunk_ops: int = DEFAULT_CHUNK_OPS):
        super().__init__(header)
        if chunk_ops < 1:
            raise UserError(f"chunk_ops must be positive, got {chunk_ops}")
        self.chunk_ops = chunk_ops
        self.window = header.window
        self.next_index = 0
        self._count = _counting
        self._staged: list[RecordTuple] = []
        self._pending: list[np.ndarray] = []
        self._pending_n = 0

    def template(self) -> Template:
        return Template(self.header)

    def _distance(self, handle: int, at: int) -> int:
        dist = at - handle
        if not 1 <= dist <= self.window:
            raise UserError(
                f"op {at} depends on op {handle}: back-distance {dist} outside 1..{self.window} "
                "(the trace window)"
            )
        return dist

    def _add(self, rec: RecordTuple, deps: Iterable[DepRef]) -> int:
        at = self.next_index
        dists = [0, 0, 0, 0]
        refs = _named(deps)
        for slot, ref in enumerate(refs):
            if not isinstance(ref, int):
                raise TypeError(f"top-level dependencies are op handles, got {ref!r}")
            dists[slot] = self._distance(ref, at)
        packed = (dists[0], dists[1], dists[2], dists[3])
        if self._count is not None:
            self._count.add_one(rec)
        else:
            self._staged.append((*rec[:4], packed, *rec[5:]))
        self.next_index += 1
        return at

    def _flush_staged(self) -> None:
        if self._staged:
            self._append(np.array(self._staged, dtype=RECORD_DTYPE))
            self._staged = []

    def _append(self, recs: np.ndarray) -> None:
        self._pending.append(recs)
        self._pending_n += len(recs)

    def ready(self) -> Iterator[np.ndarray]:
        """Yield every complete chunk collected so far."""
        self._flush_staged()
        if self._pending_n < self.chunk_ops:
            return
        joined = self._pending[0] if len(self._pending) == 1 else join_records(self._pending)
        full = len(joined) // self.chunk_ops * self.chunk_ops
        for start in range(0, full, self.chunk_ops):
            yield joined[start : start + self.chunk_ops]
        rest = joined[full:]
        self._pending = [rest] if len(rest) else []
        self._pending_n = len(rest)

    def finish(self) -> Iterator[np.ndarray]:
        """Yield the remaining chunks, the last one possibly short."""
        yield from self.ready()
        if self._pending_n:
            yield join_records(self._pending) if len(self._pending) > 1 else self._pending[0]
        self._pending = []
        self._pending_n = 0

    def repeat(
        self,
        tpl: Template,
        count: int,
        offsets: OffsetFn | None = None,
        first: RepeatResult | None = None,
        ext: Mapping[str, int | None] | None = None,
    ) -> Generator[np.ndarray, None, RepeatResult]:
        """Emit ``count`` repetitions of ``tpl``; yields complete chunks as they fill.

        ``offsets(reps)`` gives, per field and body op, int64 per-repetition values added to
        that field (modulo 2**64, so negative offsets work): address arithmetic computed one
        batch at a time so memory stays bounded. ``Prev`` refs reaching
        before repetition 0 resolve through ``first`` (the previous loop's result: a loop of
        another phase that does not play the role, or a repetition before the chain began,
        has no such op, and the dependency is dropped).
        ``Ext`` refs resolve through ``ext``; a name ``ext`` lacks is an error, a name mapped
        to None drops the dependency on purpose.
        """
        ext = ext or {}
        length = len(tpl)
        body = tpl.records()
        refs = tpl.loop_refs()
        if refs.const_max > self.window:
            raise UserError(
                f"loop body dependency distance {refs.const_max} exceeds window {self.window}"
            )
        ext_refs, prev_refs = refs.ext, refs.prev
        self._flush_staged()
        loop_start = self.next_index
        per_batch = max(1, self.chunk_ops // length)
        batches = range(0, count, per_batch)
        if self._count is not None:  # the handles below are all a count needs
            self._count.add(body, count)
            self.next_index += count * length
            batches = range(0)
        for r0 in batches:
            reps = min(per_batch, count - r0)
            start = self.next_index
            recs = np.tile(body, reps)
            grid = recs.reshape(reps, length)
            if offsets is not None:
                for name, cols in offsets(np.arange(r0, r0 + reps, dtype=np.int64)).items():
                    fld = grid[name]
                    for col, values in cols.items():
                        fld[:, col] += np.asarray(values, dtype=np.int64).astype(fld.dtype)
            deps = grid["deps"]
            row_index = start + np.arange(reps, dtype=np.int64) * length
            for local, slot, name in ext_refs:
                if name not in ext:
                    raise ValueError(
                        f"loop body op {local} depends on Ext({name!r}), which repeat() was not "
                        f"given (ext has: {', '.join(sorted(ext)) or 'nothing'}); pass "
                        f"{name}=None to drop it on purpose"
                    )
                target = ext[name]
                if target is None:
                    deps[:, local, slot] = 0
                    continue
                dist = row_index + local - target
                if dist.min() < 1 or dist.max() > self.window:
                    raise UserError(
                        f"loop dependency on {name!r} reaches back up to {int(dist.max())} ops, "
                        f"beyond the trace window {self.window}"
                    )
                deps[:, local, slot] = dist
            for local, slot, ref in prev_refs:
                for r in range(r0, min(r0 + reps, ref.back)):
                    before = r - ref.back  # a repetition of the previous loop (negative)
                    target = first.handles.get((ref.role, before)) if first else None
                    at = loop_start + r * length + local
                    deps[r - r0, local, slot] = 0 if target is None else self._distance(target, at)
            self.next_index += reps * length
            self._append(recs)
            yield from self.ready()
        result = RepeatResult()
        for back in range(1, refs.max_back + 1):
            for role, local in tpl.roles.items():
                if back <= count:
                    result.handles[(role, -back)] = loop_start + (count - back) * length + local
                elif first is not None and (role, count - back) in first.handles:
                    result.handles[(role, -back)] = first.handles[(role, count - back)]
        return result
