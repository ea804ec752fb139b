"""Numeric reference executor: runs a trace on real numbers to prove a dataflow computes attention.

Memories are float32 arrays with one entry per element (``elem_bytes`` wide in address
arithmetic). Operations run in a dependency-respecting but adversarial order given by an
engine priority: the first engine runs as far ahead as its named dependencies allow, the last
as late as possible. With every engine once first and once last (:func:`adversarial_orders`),
a dependency missing from the trace lets some operation read stale data or clobber data
still needed, and the result is wrong. On-chip memory and output tensors start as NaN, so
reading data never written shows.

Forwarding: with a ``granularity`` of g elements, element-wise vector and exp records run as
granules of g elements (a streamed matmul as granules of its A rows) and the schedule
interleaves granules: a streamed record's granule c waits only for granule c of each
element-wise producer it names (the whole of any other producer). A stream that reads an
element its producer writes in a later granule then reads stale data, as the hardware would.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from tlm_models.platform.info import MemoryRegion, PlatformInfo
from tlm_models.trace.header import TraceHeader
from tlm_models.trace.record import (
    BROADCAST_SHIFT,
    MATMUL_ACCUMULATE,
    MATMUL_SCALE_ROWS,
    MATMUL_TRANS_B,
    STREAMED,
    VECTOR_LAZY_ROWS,
    Broadcast,
    OpKind,
    VectorOp,
    bits_float,
    mask_geometry,
    mask_visible,
    src2,
)
from tlm_models.workload.spec import Workload

_REDUCTIONS = (VectorOp.ROWMAX, VectorOp.ROWSUM)


class TraceExecutionError(Exception):
    """A record addresses memory outside every region, or is malformed."""


class _Region:
    def __init__(self, region: MemoryRegion, size: int, elem_bytes: int):
        self.base = region.base
        self.size = size
        self.data = np.full(size // elem_bytes, np.nan, dtype=np.float32)


class ReferenceExecutor:
    """Off-chip and on-chip memories of one platform, as float32 element arrays."""

    def __init__(self, header: TraceHeader, platform: PlatformInfo):
        self.header = header
        self.eb = header.elem_bytes
        end = max(
            (t.base + int(np.prod(t.shape)) * t.elem_bytes for t in header.tensors),
            default=platform.offchip.base,
        )
        self.regions = [
            _Region(platform.offchip, end - platform.offchip.base, self.eb),
            _Region(platform.scratchpad, platform.scratchpad.size, self.eb),
        ]
        if platform.kv_buffer is not None:
            self.regions.append(_Region(platform.kv_buffer, platform.kv_buffer.size, self.eb))
        #: (rows whose factor is not 1, rows the record charges) of each lazy rescale run
        self.lazy_counts: list[tuple[int, int]] = []

    # -- memory ---------------------------------------------------------------------------
    def _locate(self, addr: int, nbytes: int) -> tuple[np.ndarray, int]:
        for r in self.regions:
            if r.base <= addr and addr + nbytes <= r.base + r.size:
                offset = addr - r.base
                if offset % self.eb:
                    raise TraceExecutionError(f"address {addr:#x} not element-aligned")
                return r.data, offset // self.eb
        raise TraceExecutionError(f"{nbytes} B at {addr:#x} lie outside every memory region")

    def block(self, addr: int, rows: int, cols: int) -> np.ndarray:
        """A writable rows x cols view of contiguous elements at ``addr``."""
        data, start = self._locate(addr, rows * cols * self.eb)
        return data[start : start + rows * cols].reshape(rows, cols)

    def _strided(
        self, addr: int, rows: int, row_bytes: int, stride: int
    ) -> tuple[np.ndarray, np.ndarray]:
        pitch = stride or row_bytes
        data, start = self._locate(addr, (rows - 1) * pitch + row_bytes)
        if pitch % self.eb or row_bytes % self.eb:
            raise TraceExecutionError(
                f"transfer of {row_bytes} B rows, pitch {pitch} B not element-aligned"
            )
        idx = (
            start + np.arange(rows)[:, None] * (pitch // self.eb) + np.arange(row_bytes // self.eb)
        )
        return data, idx

    def tensor(self, name: str) -> np.ndarray:
        """A view of off-chip tensor ``name`` in its header shape."""
        info = self.header.tensors[self.header.tensor_index(name)]
        count = int(np.prod(info.shape))
        data, start = self._locate(info.base, count * self.eb)
        return data[start : start + count].reshape(info.shape)

    # -- operations -----------------------------------------------------------------------
    def execute(self, rec: np.void, granule: int = 0, granularity: int | None = None) -> None:
        """Run a record, or with ``granularity`` its ``granule``-th granule (see the module
        docstring; records that are not split have the one granule 0)."""
        kind = int(rec["kind"])
        m, n, k = int(rec["m"]), int(rec["n"]), int(rec["k"])
        src0, src1, dst = int(rec["src0"]), int(rec["src1"]), int(rec["dst"])
        code = int(rec["code"])
        if kind in (OpKind.LOAD, OpKind.STORE):
            sdata, sidx = self._strided(src0, m, n, int(rec["src_stride"]))
            ddata, didx = self._strided(dst, m, n, int(rec["dst_stride"]))
            ddata[didx] = sdata[sidx]
        elif kind == OpKind.MATMUL:
            rows = granule_span(rec, granule, granularity)
            a = self.block(src0, m, k)[rows[0] : rows[1]]
            b = self.block(src1, n, k).T if code & MATMUL_TRANS_B else self.block(src1, k, n)
            c = self.block(dst, m, n)[rows[0] : rows[1]]
            product = a @ b
            if code & MATMUL_SCALE_ROWS:
                alpha = self.block(src2(rec["src_stride"], rec["dst_stride"]), m, 1)
                c[...] = alpha[rows[0] : rows[1]] * c + product
            elif code & MATMUL_ACCUMULATE:
                c += product
            else:
                c[...] = product
        elif kind == OpKind.VECTOR:
            span = granule_span(rec, granule, granularity)
            if VectorOp(code & 0x0F) == VectorOp.MASK:
                self._mask(rec, span)
            elif code & VECTOR_LAZY_ROWS:
                self._lazy_rescale(m, n, k, src0, src1, dst)
            else:
                self._vector(code, m, n, k, src0, src1, dst, span)
        elif kind == OpKind.EXP:
            lo, hi = granule_span(rec, granule, granularity)
            out = self.block(dst, m, n).reshape(-1)
            out[lo:hi] = np.exp(self.block(src0, m, n).reshape(-1)[lo:hi])
        else:
            raise TraceExecutionError(f"unknown record kind {kind}")

    def _lazy_rescale(self, m: int, n: int, rows: int, src0: int, src1: int, dst: int) -> None:
        """dst = src0 * factor for the rows whose factor is not 1 (the rest stay as they are:
        exact, since x * 1 = x); the count of those rows against the ``rows`` the record
        charges goes to ``lazy_counts``."""
        factor = self.block(src1, m, 1).copy()
        rising = factor[:, 0] != 1
        a = self.block(src0, m, n)[rising] * factor[rising]
        self.block(dst, m, n)[rising] = a
        self.lazy_counts.append((int(rising.sum()), rows))

    def _mask(self, rec: np.void, span: tuple[int, int]) -> None:
        """dst = src0 where the mask keeps an element, else the fill (may be -inf: exp of it
        is 0 and a row max ignores it while the row has a finite element)."""
        m, n = int(rec["m"]), int(rec["n"])
        geometry = mask_geometry(int(rec["src_stride"]), int(rec["dst_stride"]), int(rec["src1"]))
        keep = mask_visible(m, n, *geometry).reshape(-1)[span[0] : span[1]]
        a = self.block(int(rec["src0"]), m, n).reshape(-1)[span[0] : span[1]].copy()
        out = self.block(int(rec["dst"]), m, n).reshape(-1)
        out[span[0] : span[1]] = np.where(keep, a, np.float32(bits_float(int(rec["k"]))))

    def _vector(
        self,
        code: int,
        m: int,
        n: int,
        k: int,
        src0: int,
        src1: int,
        dst: int,
        span: tuple[int, int],
    ) -> None:
        op = VectorOp(code & 0x0F)
        if op in _REDUCTIONS:
            a2 = self.block(src0, m, n).copy()
            reduce = np.max if op == VectorOp.ROWMAX else np.sum
            self.block(dst, m, 1)[...] = reduce(a2, axis=1, keepdims=True)
            return
        lo, hi = span
        flat = np.arange(lo, hi)
        a = self.block(src0, m, n).reshape(-1)[lo:hi].copy()
        bcast = Broadcast((code >> BROADCAST_SHIFT) & 0x3)
        s1: np.ndarray | np.float32
        if op == VectorOp.COPY:
            s1 = np.float32(0)
        elif bcast == Broadcast.FULL:
            s1 = self.block(src1, m, n).reshape(-1)[lo:hi].copy()
        elif bcast == Broadcast.ROW:
            s1 = self.block(src1, m, 1).reshape(-1)[flat // n].copy()
        elif bcast == Broadcast.COL:
            s1 = self.block(src1, 1, n).reshape(-1)[flat % n].copy()
        else:
            s1 = np.float32(bits_float(k))
        out = self.block(dst, m, n).reshape(-1)
        if op == VectorOp.COPY:
            out[lo:hi] = a
        elif op == VectorOp.ADD:
            out[lo:hi] = a + s1
        elif op == VectorOp.SUB:
            out[lo:hi] = a - s1
        elif op == VectorOp.MUL:
            out[lo:hi] = a * s1
        elif op == VectorOp.DIV:
            out[lo:hi] = a / s1
        elif op == VectorOp.MAX:
            out[lo:hi] = np.maximum(a, s1)
        else:  # FMA
            out[lo:hi] = a * s1 + out[lo:hi]

    def run(
        self,
        records: np.ndarray,
        priority: Sequence[str] | None = None,
        granularity: int | None = None,
    ) -> None:
        """Execute all records in the order :func:`schedule` gives for ``priority``, split into
        forwarding granules of ``granularity`` elements when given."""
        if granularity is None:
            for index in schedule(records, self.header.engines, priority):
                self.execute(records[index])
            return
        for index, granule in schedule_granules(
            records, self.header.engines, priority, granularity
        ):
            self.execute(records[index], granule, granularity)


def forwards(rec: np.void) -> bool:
    """Whether a record's result leaves in granules a stream may consume (element-wise vector
    ops and exps; the timing model forwards from the same ones)."""
    kind = int(rec["kind"])
    if kind == OpKind.EXP:
        return True
    code = int(rec["code"])
    if kind == OpKind.VECTOR and code & VECTOR_LAZY_ROWS:
        return False  # which rows it writes is known only once its factors are read
    return kind == OpKind.VECTOR and VectorOp(code & 0x0F) not in _REDUCTIONS


def _split(rec: np.void) -> bool:
    """Whether a record runs as granules: what forwards, and streamed matmuls (by A rows)."""
    streamed_matmul = int(rec["kind"]) == OpKind.MATMUL and int(rec["code"]) & STREAMED
    return forwards(rec) or bool(streamed_matmul)


def granule_count(rec: np.void, granularity: int | None) -> int:
    """Granules a record runs as (1 when it is not split)."""
    if granularity is None or not _split(rec):
        return 1
    m, n, k = int(rec["m"]), int(rec["n"]), int(rec["k"])
    if int(rec["kind"]) == OpKind.MATMUL:
        rows = max(1, granularity // max(1, k))
        return -(-m // rows)
    return max(1, -(-(m * n) // granularity))


def granule_span(rec: np.void, granule: int, granularity: int | None) -> tuple[int, int]:
    """Element range [lo, hi) (matmul: row range) of one granule of a record."""
    m, n, k = int(rec["m"]), int(rec["n"]), int(rec["k"])
    if int(rec["kind"]) == OpKind.MATMUL:
        if granularity is None or not _split(rec):
            return 0, m
        rows = max(1, granularity // max(1, k))
        return granule * rows, min(m, (granule + 1) * rows)
    if granularity is None or not _split(rec):
        return 0, m * n
    return granule * granularity, min(m * n, (granule + 1) * granularity)


def adversarial_orders(engines: Sequence[str]) -> list[list[str]]:
    """Engine priorities that make each engine once run ahead and once lag behind."""
    orders = []
    for e in engines:
        rest = [x for x in engines if x != e]
        orders.append([e, *rest])
        orders.append([*rest[::-1], e])
    return orders


def schedule(
    records: np.ndarray, engines: Sequence[str], priority: Sequence[str] | None = None
) -> list[int]:
    """An execution order that respects engine order and named dependencies only.

    Each step runs the next operation of the highest-priority engine whose dependencies are
    all done (engines missing from ``priority`` come last); no priority = trace order.
    """
    count = len(records)
    if priority is None:
        return list(range(count))
    queues: list[list[int]] = [[] for _ in engines]
    for index, engine in enumerate(records["engine"].tolist()):
        queues[engine].append(index)
    dists = records["deps"].astype(np.int64)
    deps = [[i - int(x) for x in row if x] for i, row in enumerate(dists)]
    ranked = [engines.index(e) for e in priority if e in engines]
    ranked += [e for e in range(len(engines)) if e not in ranked]
    done = np.zeros(count, dtype=bool)
    heads = [0] * len(engines)
    order: list[int] = []
    while len(order) < count:
        for e in ranked:
            if heads[e] < len(queues[e]):
                op = queues[e][heads[e]]
                if all(done[x] for x in deps[op]):
                    done[op] = True
                    heads[e] += 1
                    order.append(op)
                    break
        else:
            raise TraceExecutionError("no engine can proceed: a dependency points forward")
    return order


def schedule_granules(
    records: np.ndarray,
    engines: Sequence[str],
    priority: Sequence[str] | None,
    granularity: int,
) -> list[tuple[int, int]]:
    """Like :func:`schedule`, over (record, granule) pairs: each engine runs its records'
    granules in order; a streamed record's granule c waits for granule min(c, last) of each
    named producer that forwards, and for the whole of every other producer."""
    count = len(records)
    granules = [granule_count(records[i], granularity) for i in range(count)]
    queues: list[list[int]] = [[] for _ in engines]
    for index, engine in enumerate(records["engine"].tolist()):
        queues[engine].append(index)
    dists = records["deps"].astype(np.int64)
    deps = [[i - int(x) for x in row if x] for i, row in enumerate(dists)]
    streamed = [
        bool(int(records[i]["code"]) & STREAMED)
        and int(records[i]["kind"]) in (OpKind.VECTOR, OpKind.EXP, OpKind.MATMUL)
        for i in range(count)
    ]
    forwarding = [forwards(records[i]) for i in range(count)]
    order_names = list(priority) if priority is not None else []
    ranked = [engines.index(e) for e in order_names if e in engines]
    ranked += [e for e in range(len(engines)) if e not in ranked]
    done = [0] * count  # granules finished per record
    heads = [0] * len(engines)
    order: list[tuple[int, int]] = []
    total = sum(granules)

    def ready(op: int, granule: int) -> bool:
        for p in deps[op]:
            need = (
                min(granule, granules[p] - 1) + 1 if streamed[op] and forwarding[p] else granules[p]
            )
            if done[p] < need:
                return False
        return True

    while len(order) < total:
        for e in ranked:
            if heads[e] < len(queues[e]):
                op = queues[e][heads[e]]
                if ready(op, done[op]):
                    order.append((op, done[op]))
                    done[op] += 1
                    if done[op] == granules[op]:
                        heads[e] += 1
                    break
        else:
            raise TraceExecutionError("no engine can proceed: a dependency points forward")
    return order


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """softmax(Q K^T / sqrt(d)) V per head in float64, the ground truth."""
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    s = q64 @ np.swapaxes(k64, -1, -2) / np.sqrt(q.shape[-1])
    s -= s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    return (p / p.sum(axis=-1, keepdims=True)) @ v64  # type: ignore[no-any-return]


def workload_attention(
    workload: Workload, q: np.ndarray, k: np.ndarray, v: np.ndarray
) -> np.ndarray:
    """The ground truth of a workload in float64: per query head h, softmax over the keys its
    mask shows (``Workload.mask_matrix``) of Q_h K_kv^T / sqrt(d), times V_kv, kv the K/V head
    of h. ``q``: (query heads, Nq, d); ``k``, ``v``: (K/V heads, Nk, d)."""
    visible = workload.mask_matrix()
    out = np.empty(q.shape, dtype=np.float64)
    for h in range(q.shape[0]):
        kv = workload.kv_head_of(h)
        s = q[h].astype(np.float64) @ k[kv].astype(np.float64).T * workload.scale
        s = np.where(visible, s, -np.inf)
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        out[h] = (p / p.sum(axis=-1, keepdims=True)) @ v[kv].astype(np.float64)
    return out


def run_attention(
    header: TraceHeader,
    chunks: Iterable[np.ndarray],
    platform: PlatformInfo,
    inputs: Mapping[str, np.ndarray],
    priority: Sequence[str] | None = None,
    granularity: int | None = None,
) -> np.ndarray:
    """Load Q, K, V (shape heads x N x d), execute the trace, return the O tensor it wrote;
    ``granularity`` splits records into forwarding granules (module docstring)."""
    ex = ReferenceExecutor(header, platform)
    for name, value in inputs.items():
        ex.tensor(name)[...] = value
    parts = list(chunks)
    records = np.concatenate(parts) if parts else np.zeros(0, dtype=parts[0].dtype)
    ex.run(records, priority, granularity)
    return ex.tensor("O").copy()
