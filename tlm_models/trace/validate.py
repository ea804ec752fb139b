"""Structural checks of trace records, vectorised over chunks.

Each rule is a boolean mask over a chunk; only the first few offending records are turned
into messages, so checking costs a few numpy passes per chunk whatever the trace size. With a
``PlatformInfo`` the checker also verifies engine kinds and that every operand's full byte
extent lies in the memory the contract puts it in (docs/internals.md, "Address spaces").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

import numpy as np

from tlm_models.platform.info import MemoryRegion, PlatformInfo
from tlm_models.trace.header import TraceHeader
from tlm_models.trace.record import (
    BROADCAST_SHIFT,
    ENGINE_OPS,
    KIND_NAMES,
    MATMUL_FLAGS,
    MATMUL_SCALE_ROWS,
    NO_TENSOR,
    RECORD_DTYPE,
    RESCALE,
    STREAMED,
    VECTOR_LAZY_ROWS,
    Broadcast,
    OpKind,
    VectorOp,
)

_BLOCK_RECORDS = 1 << 14
# Plain ints: numpy compares them faster than IntEnum members.
_LOAD, _STORE, _MATMUL, _VECTOR, _EXP = (int(k) for k in OpKind)
_ROWMAX, _ROWSUM, _MASK = int(VectorOp.ROWMAX), int(VectorOp.ROWSUM), int(VectorOp.MASK)
_LAST_VECTOR_OP = max(int(v) for v in VectorOp)
_SCALAR, _ROW, _MUL = int(Broadcast.SCALAR), int(Broadcast.ROW), int(VectorOp.MUL)
# One operation moving or touching more than this is a bug, not a workload.
MAX_OP_BYTES = 1 << 31
ENGINE_KIND_OPS = {kind.name.lower(): ops for kind, ops in ENGINE_OPS.items()}
# Vector ops that read a second operand (copy, rowmax, rowsum and mask read only src0; a
# mask's src1 holds its row wrap).
_BINARY_VECTOR_OPS = [
    v.value
    for v in VectorOp
    if v not in (VectorOp.COPY, VectorOp.ROWMAX, VectorOp.ROWSUM, VectorOp.MASK)
]


@dataclass(frozen=True)
class Problem:
    index: int  # record index in the whole trace (0-based)
    rule: str
    reason: str

    def __str__(self) -> str:
        return f"record {self.index}: {self.reason}"


@dataclass
class CheckReport:
    records: int = 0
    problems: list[Problem] = field(default_factory=list)  # the first few, by record index
    counts: dict[str, int] = field(default_factory=dict)  # offending records per rule

    @property
    def ok(self) -> bool:
        return not self.counts

    @property
    def problem_count(self) -> int:
        return sum(self.counts.values())


# Message for one offending record, given the record and its index within the chunk.
Describe = Callable[[np.void, int], str]


class TraceChecker:
    """Checks consecutive chunks of one trace: :meth:`check` each chunk, then read ``report``."""

    def __init__(
        self, header: TraceHeader, platform: PlatformInfo | None = None, max_problems: int = 10
    ) -> None:
        self.header = header
        self.platform = platform
        self.max_problems = max_problems
        self.report = CheckReport()
        self._engine_ok = _engine_kind_table(header, platform) if platform else None

    def check(self, chunk: np.ndarray) -> None:
        if chunk.dtype != RECORD_DTYPE:
            raise TypeError(f"trace chunks must be RECORD_DTYPE arrays, got {chunk.dtype}")
        # Blocks that fit in cache: every rule is a pass over the same strided records.
        for first in range(0, len(chunk), _BLOCK_RECORDS):
            self._check_block(chunk[first : first + _BLOCK_RECORDS])

    def _check_block(self, chunk: np.ndarray) -> None:
        start = self.report.records
        for rule, mask, describe in self._rules(chunk, start):
            bad = np.flatnonzero(mask)
            if not len(bad):
                continue
            self.report.counts[rule] = self.report.counts.get(rule, 0) + len(bad)
            for i in bad[: self.max_problems].tolist():
                self.report.problems.append(Problem(start + i, rule, describe(chunk[i], i)))
        self.report.problems.sort(key=lambda p: p.index)
        del self.report.problems[self.max_problems :]
        self.report.records += len(chunk)

    def _rules(self, c: np.ndarray, start: int) -> Iterable[tuple[str, np.ndarray, Describe]]:
        h = self.header
        kind, code = c["kind"], c["code"]
        m, n, k = c["m"].astype(np.uint64), c["n"].astype(np.uint64), c["k"].astype(np.uint64)
        is_dma = (kind == _LOAD) | (kind == _STORE)
        is_matmul, is_vector = kind == _MATMUL, kind == _VECTOR
        valid_kind = (kind >= _LOAD) & (kind <= _EXP)

        yield (
            "kind",
            ~valid_kind,
            lambda r, i: f"kind {r['kind']} is not one of 1..5 (load store matmul vector exp)",
        )
        yield (
            "engine",
            c["engine"] >= len(h.engines),
            lambda r, i: (
                f"engine index {r['engine']} but the header lists {len(h.engines)} engines"
            ),
        )
        tensor = c["tensor"]
        yield (
            "tensor",
            is_dma & (tensor != NO_TENSOR) & (tensor >= len(h.tensors)),
            lambda r, i: (
                f"{_kind(r)} tensor index {r['tensor']} but the header lists "
                f"{len(h.tensors)} tensors (use {NO_TENSOR:#x} for none)"
            ),
        )
        yield from self._dep_rules(c, start)
        zero = valid_kind & ((m == 0) | (n == 0) | (is_matmul & (k == 0)))
        yield (
            "zero_size",
            zero,
            lambda r, i: (
                f"zero-sized {_kind(r)}: m={r['m']} n={r['n']}"
                + (f" k={r['k']}" if r["kind"] == _MATMUL else "")
            ),
        )
        # Compare element counts, not bytes, so the product cannot overflow 64 bits.
        limit = np.uint64(MAX_OP_BYTES // h.elem_bytes)
        mn = m * n
        huge = np.where(is_dma, mn > np.uint64(MAX_OP_BYTES), mn > limit)
        huge |= is_matmul & ((m * k > limit) | (k * n > limit))
        yield (
            "size",
            huge,
            lambda r, i: (
                f"{_kind(r)} of m={r['m']} n={r['n']} k={r['k']} touches more than "
                f"{MAX_OP_BYTES} bytes in one operand"
            ),
        )
        bad_code = (
            np.where(
                is_matmul,
                (code & ~np.uint8(MATMUL_FLAGS | STREAMED)) != 0,
                np.where(
                    is_vector,
                    ((code & 0x0F) > _LAST_VECTOR_OP)
                    # a lazy rescale is a row-broadcast mul of at most its m rows
                    | (
                        ((code & VECTOR_LAZY_ROWS) != 0)
                        & (
                            ((code & 0x0F) != _MUL)
                            | (((code >> BROADCAST_SHIFT) & 0x3) != _ROW)
                            | (k > m)
                        )
                    )
                    # a mask's fill value is its scalar operand (k)
                    | (((code & 0x0F) == _MASK) & ((code >> BROADCAST_SHIFT) & 0x3 != _SCALAR)),
                    np.where(
                        kind == _EXP,
                        (code & ~np.uint8(STREAMED | RESCALE)) != 0,
                        # a load's code: the posts of its cross-tile token (k) it waits for
                        np.where((kind == _LOAD) & (k != 0), code == 0, code != 0),
                    ),
                ),
            )
            & valid_kind
        )
        yield "code", bad_code, lambda r, i: f"{_kind(r)} has invalid code {r['code']:#04x}"
        if self.platform is not None:
            assert self._engine_ok is not None
            yield (
                "engine_kind",
                valid_kind & ~self._engine_ok[c["engine"], kind],
                lambda r, i: (
                    f"{_kind(r)} on engine {_engine(h, r['engine'])}, which the platform "
                    f"{self.platform.name if self.platform else ''} does not map to an engine "
                    "that executes it"
                ),
            )
            yield from _address_rules(c, h.elem_bytes, self.platform)

    def _dep_rules(self, c: np.ndarray, start: int) -> Iterable[tuple[str, np.ndarray, Describe]]:
        deps = c["deps"]
        index = np.arange(start, start + len(c), dtype=np.uint64)[:, None]
        nonzero = deps != 0
        before = nonzero & (deps > index)
        window = self.header.window
        beyond = nonzero & ~before & (deps > window)
        yield (
            "deps",
            before.any(axis=1),
            lambda r, i: (
                f"dependency back-distance {int(r['deps'].max())} reaches before the first record "
                f"(record {start + i} can reach back at most {start + i})"
            ),
        )
        yield (
            "window",
            beyond.any(axis=1),
            lambda r, i: (
                f"dependency back-distance {int(r['deps'].max())} exceeds the window of {window}"
            ),
        )

    def run(self, chunks: Iterable[np.ndarray]) -> CheckReport:
        for chunk in chunks:
            self.check(chunk)
        return self.report


def check_trace(
    header: TraceHeader,
    chunks: Iterable[np.ndarray],
    platform: PlatformInfo | None = None,
    max_problems: int = 10,
) -> CheckReport:
    """Check a whole trace chunk by chunk; the report lists the first ``max_problems``."""
    return TraceChecker(header, platform, max_problems).run(chunks)


def _kind(r: np.void) -> str:
    return KIND_NAMES.get(int(r["kind"]), f"kind {r['kind']}")


def _engine(h: TraceHeader, index: int) -> str:
    return repr(h.engines[index]) if index < len(h.engines) else str(index)


def _engine_kind_table(header: TraceHeader, platform: PlatformInfo) -> np.ndarray:
    """ok[engine index, op kind]: the platform maps that engine to a component running that kind."""
    ok = np.zeros((256, 256), dtype=bool)
    for i, name in enumerate(header.engines):
        for kind in ENGINE_KIND_OPS.get(platform.engines.get(name, ""), ()):
            ok[i, kind] = True
    return ok


def _inside(addr: np.ndarray, extent: np.ndarray, region: MemoryRegion) -> np.ndarray:
    """addr .. addr+extent lies within the region; wrap-around safe in uint64."""
    base, size = np.uint64(region.base), np.uint64(region.size)
    offset = addr - base  # wraps when addr < base; masked by the first term
    return (addr >= base) & (offset <= size) & (extent <= size - offset)


def operand_extents(c: np.ndarray, elem_bytes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bytes each operand of each record spans (src0, src1, dst; 0 = unused): the rules of
    ``operand_extents.h``, vectorised. A test compares the two record for record."""
    kind, code = c["kind"], c["code"]
    m, n, k = (c[f].astype(np.uint64) for f in ("m", "n", "k"))
    is_dma = (kind == _LOAD) | (kind == _STORE)
    is_matmul, is_vector, is_exp = kind == _MATMUL, kind == _VECTOR, kind == _EXP
    eb = np.uint64(elem_bytes)
    zero = np.uint64(0)
    empty = (m == 0) | (n == 0)

    def pitched(stride_field: str) -> np.ndarray:
        stride = c[stride_field].astype(np.uint64)
        rows_before_last = np.maximum(m, np.uint64(1)) - np.uint64(1)
        extent = rows_before_last * np.where(stride == 0, n, stride) + n
        return np.where(empty, zero, extent)

    mn = m * n * eb
    vop = code & 0x0F
    bcast = (code >> BROADCAST_SHIFT) & 0x3
    reduces = is_vector & ((vop == _ROWMAX) | (vop == _ROWSUM))
    vector_src1 = np.select(
        [bcast == Broadcast.FULL, bcast == Broadcast.ROW, bcast == Broadcast.COL],
        [mn, m * eb, n * eb],
        zero,
    )
    binary = is_vector & np.isin(vop, _BINARY_VECTOR_OPS)
    src0 = np.select(
        [is_dma, is_matmul, is_vector | is_exp], [pitched("src_stride"), m * k * eb, mn], zero
    )
    src1 = np.select([is_matmul, binary], [k * n * eb, vector_src1], zero)
    dst = np.select(
        [is_dma, reduces, is_matmul | is_vector | is_exp], [pitched("dst_stride"), m * eb, mn], zero
    )
    return src0.astype(np.uint64), src1.astype(np.uint64), dst.astype(np.uint64)


def _address_rules(
    c: np.ndarray, elem_bytes: int, p: PlatformInfo
) -> Iterable[tuple[str, np.ndarray, Describe]]:
    kind, code = c["kind"], c["code"]
    is_load, is_store = kind == _LOAD, kind == _STORE
    is_dma = is_load | is_store
    is_compute = (kind >= _MATMUL) & (kind <= _EXP)
    is_matmul, is_vector = kind == _MATMUL, kind == _VECTOR
    onchip = [p.scratchpad, *([p.kv_buffer] if p.kv_buffer else [])]

    def on_chip(addr: np.ndarray, extent: np.ndarray) -> np.ndarray:
        inside = _inside(addr, extent, onchip[0])
        for region in onchip[1:]:
            inside |= _inside(addr, extent, region)
        return inside

    src0_extent, src1_extent, dst_extent = operand_extents(c, elem_bytes)
    vop = code & 0x0F
    bcast = (code >> BROADCAST_SHIFT) & 0x3
    uses_src1 = is_matmul | (
        is_vector & np.isin(vop, _BINARY_VECTOR_OPS) & (bcast != Broadcast.SCALAR)
    )
    src0, src1, dst = c["src0"], c["src1"], c["dst"]
    offchip = p.offchip
    # A tile may read another tile's window (split-K partials): every window of the chip.
    windows = [offchip] + [replace(offchip, base=b) for b in p.tile_offchip if b != offchip.base]

    def off_chip(addr: np.ndarray, extent: np.ndarray) -> np.ndarray:
        inside = _inside(addr, extent, windows[0])
        for region in windows[1:]:
            inside |= _inside(addr, extent, region)
        return inside

    src0_ok = np.where(is_load, off_chip(src0, src0_extent), on_chip(src0, src0_extent))
    dst_ok = np.where(is_store, off_chip(dst, dst_extent), on_chip(dst, dst_extent))
    src1_ok = on_chip(src1, src1_extent)
    where_onchip = " or ".join(_span(r) for r in onchip)

    def describe(operand: str, extent: np.ndarray) -> Describe:
        def message(r: np.void, i: int) -> str:
            off = (operand == "src0" and r["kind"] == _LOAD) or (
                operand == "dst" and r["kind"] == _STORE
            )
            target = _span(offchip) if off else where_onchip
            return (
                f"{_kind(r)} {operand} {int(r[operand]):#x} + {int(extent[i])} bytes is not "
                f"inside {target}"
            )

        return message

    yield "address", (is_dma | is_compute) & ~src0_ok, describe("src0", src0_extent)
    yield "address", uses_src1 & ~src1_ok, describe("src1", src1_extent)
    yield "address", (is_dma | is_compute) & ~dst_ok, describe("dst", dst_extent)
    scaled = is_matmul & ((code & MATMUL_SCALE_ROWS) != 0)
    if scaled.any():
        c2 = c["src_stride"].astype(np.uint64) | (
            c["dst_stride"].astype(np.uint64) << np.uint64(32)
        )
        src2_extent = c["m"].astype(np.uint64) * np.uint64(elem_bytes)  # m row scales

        def describe_src2(r: np.void, i: int) -> str:
            return (
                f"{_kind(r)} src2 (row scales) {int(c2[i]):#x} + {int(src2_extent[i])} bytes "
                f"is not inside {where_onchip}"
            )

        yield "address", scaled & ~on_chip(c2, src2_extent), describe_src2


def _span(region: MemoryRegion) -> str:
    return f"{region.name} [{region.base:#x}, {region.base + region.size:#x})"
