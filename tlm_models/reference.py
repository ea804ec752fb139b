"""Numeric reference executor: runs a trace on real numbers to prove a dataflow computes attention.

Memories are float32 arrays with one entry per element (``elem_bytes`` wide in address
arithmetic). Operations run in a dependency-respecting but adversarial order given by an
engine priority: the first engine runs as far ahead as its named dependencies allow, the last
as late as possible. With every engine once first and once last (:func:`adversarial_orders`),
a dependency missing from the trace lets some operation read stale data or clobber data
still needed, and the result is wrong. On-chip memory and output tensors start as NaN, so
reading data never written shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from tlm_models.platform.info import MemoryRegion, PlatformInfo
from tlm_models.trace.header import TraceHeader
from tlm_models.trace.record import (
    BROADCAST_SHIFT,
    MATMUL_ACCUMULATE,
    MATMUL_TRANS_B,
    Broadcast,
    OpKind,
    VectorOp,
    bits_float,
)


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
    def execute(self, rec: np.void) -> None:
        kind = int(rec["kind"])
        m, n, k = int(rec["m"]), int(rec["n"]), int(rec["k"])
        src0, src1, dst = int(rec["src0"]), int(rec["src1"]), int(rec["dst"])
        if kind in (OpKind.LOAD, OpKind.STORE):
            sdata, sidx = self._strided(src0, m, n, int(rec["src_stride"]))
            ddata, didx = self._strided(dst, m, n, int(rec["dst_stride"]))
            ddata[didx] = sdata[sidx]
        elif kind == OpKind.MATMUL:
            code = int(rec["code"])
            a = self.block(src0, m, k)
            b = self.block(src1, n, k).T if code & MATMUL_TRANS_B else self.block(src1, k, n)
            c = self.block(dst, m, n)
            product = a @ b
            if code & MATMUL_ACCUMULATE:
                c += product
            else:
                c[...] = product
        elif kind == OpKind.VECTOR:
            self._vector(int(rec["code"]), m, n, k, src0, src1, dst)
        elif kind == OpKind.EXP:
            self.block(dst, m, n)[...] = np.exp(self.block(src0, m, n))
        else:
            raise TraceExecutionError(f"unknown record kind {kind}")

    def _vector(self, code: int, m: int, n: int, k: int, src0: int, src1: int, dst: int) -> None:
        op = VectorOp(code & 0x0F)
        a = self.block(src0, m, n).copy()
        if op in (VectorOp.ROWMAX, VectorOp.ROWSUM):
            reduce = np.max if op == VectorOp.ROWMAX else np.sum
            self.block(dst, m, 1)[...] = reduce(a, axis=1, keepdims=True)
            return
        bcast = Broadcast((code >> BROADCAST_SHIFT) & 0x3)
        s1: np.ndarray | np.float32
        if op == VectorOp.COPY:
            s1 = np.float32(0)
        elif bcast == Broadcast.FULL:
            s1 = self.block(src1, m, n).copy()
        elif bcast == Broadcast.ROW:
            s1 = self.block(src1, m, 1).copy()
        elif bcast == Broadcast.COL:
            s1 = self.block(src1, 1, n).copy()
        else:
            s1 = np.float32(bits_float(k))
        out = self.block(dst, m, n)
        if op == VectorOp.COPY:
            out[...] = a
        elif op == VectorOp.ADD:
            out[...] = a + s1
        elif op == VectorOp.SUB:
            out[...] = a - s1
        elif op == VectorOp.MUL:
            out[...] = a * s1
        elif op == VectorOp.DIV:
            out[...] = a / s1
        elif op == VectorOp.MAX:
            out[...] = np.maximum(a, s1)
        else:  # FMA
            out[...] = a * s1 + out

    def run(self, records: np.ndarray, priority: Sequence[str] | None = None) -> None:
        """Execute all records in the order :func:`schedule` gives for ``priority``."""
        for index in schedule(records, self.header.engines, priority):
            self.execute(records[index])


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


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """softmax(Q K^T / sqrt(d)) V per head in float64, the ground truth."""
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    s = q64 @ np.swapaxes(k64, -1, -2) / np.sqrt(q.shape[-1])
    s -= s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    return (p / p.sum(axis=-1, keepdims=True)) @ v64  # type: ignore[no-any-return]


def run_attention(
    header: TraceHeader,
    chunks: Iterable[np.ndarray],
    platform: PlatformInfo,
    inputs: Mapping[str, np.ndarray],
    priority: Sequence[str] | None = None,
) -> np.ndarray:
    """Load Q, K, V (shape heads x N x d), execute the trace, return the O tensor it wrote."""
    ex = ReferenceExecutor(header, platform)
    for name, value in inputs.items():
        ex.tensor(name)[...] = value
    parts = list(chunks)
    records = np.concatenate(parts) if parts else np.zeros(0, dtype=parts[0].dtype)
    ex.run(records, priority)
    return ex.tensor("O").copy()
