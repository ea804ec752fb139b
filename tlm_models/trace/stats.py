"""What a trace does, summed in chunks: operation counts, off-chip bytes per tensor, FLOPs.

Assumes a trace that passes ``trace check``: products of sizes are taken in 64-bit integers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tlm_models.trace.header import TraceHeader
from tlm_models.trace.record import KIND_NAMES, NO_TENSOR, RECORD_DTYPE, OpKind

# Distinct on-chip buffers are remembered up to this many, then only counted as "at least".
MAX_TRACKED_BUFFERS = 1 << 16


@dataclass
class TraceStats:
    records: int = 0
    ops_by_kind: dict[str, int] = field(default_factory=dict)
    ops_by_engine: dict[str, int] = field(default_factory=dict)
    bytes_read: dict[str, int] = field(default_factory=dict)  # off-chip, by loads, per tensor
    bytes_written: dict[str, int] = field(default_factory=dict)  # off-chip, by stores
    flops: dict[str, int] = field(default_factory=dict)  # matmul 2mnk, vector mn, exp mn
    onchip_low: int | None = None  # lowest on-chip address a load fills or a store drains
    onchip_high: int | None = None  # one past the highest such byte
    onchip_buffers: set[int] = field(default_factory=set)  # distinct load destinations
    onchip_buffers_capped: bool = False

    @property
    def total_flops(self) -> int:
        return sum(self.flops.values())

    def to_dict(self) -> dict[str, Any]:
        """Plain data with units in the key names, for ``--json``."""
        return {
            "records": self.records,
            "ops_by_kind": dict(self.ops_by_kind),
            "ops_by_engine": dict(self.ops_by_engine),
            "offchip_bytes_read": dict(self.bytes_read),
            "offchip_bytes_written": dict(self.bytes_written),
            "flops": dict(self.flops),
            "total_flops": self.total_flops,
            "onchip_span_addresses": (
                [self.onchip_low, self.onchip_high] if self.onchip_low is not None else None
            ),
            "onchip_load_buffers": len(self.onchip_buffers),
            "onchip_load_buffers_capped": self.onchip_buffers_capped,
        }


class StatsCollector:
    """Accumulates :class:`TraceStats` over consecutive chunks."""

    def __init__(self, header: TraceHeader) -> None:
        self.header = header
        self.stats = TraceStats()
        self._kinds = np.zeros(256, np.int64)
        self._engines = np.zeros(256, np.int64)

    def add(self, chunk: np.ndarray) -> None:
        if chunk.dtype != RECORD_DTYPE:
            raise TypeError(f"trace chunks must be RECORD_DTYPE arrays, got {chunk.dtype}")
        s = self.stats
        s.records += len(chunk)
        kind = chunk["kind"]
        self._kinds += np.bincount(kind, minlength=256)
        self._engines += np.bincount(chunk["engine"], minlength=256)
        m, n, k = (chunk[f].astype(np.uint64) for f in ("m", "n", "k"))
        mn = m * n
        for op, direction in ((OpKind.LOAD, s.bytes_read), (OpKind.STORE, s.bytes_written)):
            is_op = kind == op
            tensor = chunk["tensor"][is_op]
            moved = mn[is_op]
            for t in np.flatnonzero(np.bincount(tensor, minlength=256)).tolist():
                name = self._tensor_name(t)
                direction[name] = direction.get(name, 0) + int(moved[tensor == t].sum())
        # a row reduction also counts one op per input element
        for name, amount in (
            ("matmul", 2 * (mn * k)[kind == OpKind.MATMUL]),
            ("vector", mn[kind == OpKind.VECTOR]),
            ("exp", mn[kind == OpKind.EXP]),
        ):
            if len(amount):
                s.flops[name] = s.flops.get(name, 0) + int(amount.sum(dtype=np.uint64))
        self._onchip(chunk, kind, mn)

    def _onchip(self, chunk: np.ndarray, kind: np.ndarray, mn: np.ndarray) -> None:
        s = self.stats
        loads, stores = kind == OpKind.LOAD, kind == OpKind.STORE
        addr = np.concatenate((chunk["dst"][loads], chunk["src0"][stores]))
        if not len(addr):
            return
        stride = np.concatenate((chunk["dst_stride"][loads], chunk["src_stride"][stores]))
        m = np.concatenate((chunk["m"][loads], chunk["m"][stores])).astype(np.uint64)
        n = np.concatenate((chunk["n"][loads], chunk["n"][stores])).astype(np.uint64)
        pitch = np.where(stride == 0, n, stride.astype(np.uint64))
        end = addr + (np.maximum(m, np.uint64(1)) - np.uint64(1)) * pitch + n
        low, high = int(addr.min()), int(end.max())
        s.onchip_low = low if s.onchip_low is None else min(s.onchip_low, low)
        s.onchip_high = high if s.onchip_high is None else max(s.onchip_high, high)
        if not s.onchip_buffers_capped:
            s.onchip_buffers.update(np.unique(chunk["dst"][loads]).tolist())
            if len(s.onchip_buffers) > MAX_TRACKED_BUFFERS:
                s.onchip_buffers_capped = True

    def _tensor_name(self, index: int) -> str:
        if index == NO_TENSOR:
            return "(none)"
        if index < len(self.header.tensors):
            return self.header.tensors[index].name
        return f"#{index}"

    def finish(self) -> TraceStats:
        s = self.stats
        s.ops_by_kind = {
            KIND_NAMES.get(i, f"kind {i}"): int(c) for i, c in enumerate(self._kinds) if c
        }
        engines = self.header.engines
        s.ops_by_engine = {
            engines[i] if i < len(engines) else f"#{i}": int(c)
            for i, c in enumerate(self._engines)
            if c
        }
        return s


def trace_stats(header: TraceHeader, chunks: Iterable[np.ndarray]) -> TraceStats:
    """Statistics of a whole trace, one chunk at a time."""
    collector = StatsCollector(header)
    for chunk in chunks:
        collector.add(chunk)
    return collector.finish()
