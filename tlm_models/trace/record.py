"""The 64-byte trace record as a numpy dtype, mirroring ``include/tlm_models/trace_op.h``.

Python builds and reads records in bulk through this dtype; C++ reads the same memory by
pointer, so the field order and sizes here are part of the file format. The enums here and in
``trace_op.h`` / ``engine_kind.h`` are the two sides of one contract:
``tests/test_record_contract.py`` compares every value, name and field offset through cppyy.
"""

from __future__ import annotations

import enum

import numpy as np

RECORD_DTYPE = np.dtype(
    [
        ("kind", "u1"),
        ("engine", "u1"),
        ("tensor", "u1"),
        ("code", "u1"),
        ("deps", "<u4", (4,)),
        ("m", "<u4"),
        ("n", "<u4"),
        ("k", "<u4"),
        ("src0", "<u8"),
        ("src1", "<u8"),
        ("dst", "<u8"),
        ("src_stride", "<u4"),
        ("dst_stride", "<u4"),
    ]
)
assert RECORD_DTYPE.itemsize == 64

MAX_DEPS = 4
NO_TENSOR = 0xFF


class OpKind(enum.IntEnum):
    LOAD = 1
    STORE = 2
    MATMUL = 3
    VECTOR = 4
    EXP = 5


class EngineKind(enum.IntEnum):
    """The class of engine a trace engine is bound to (``engine_kind.h``): what it runs."""

    DMA = 0
    PE = 1
    EXP = 2


#: Operation kinds each engine class runs (``runs_on`` in ``engine_kind.h``).
ENGINE_OPS: dict[EngineKind, tuple[OpKind, ...]] = {
    EngineKind.DMA: (OpKind.LOAD, OpKind.STORE),
    EngineKind.PE: (OpKind.MATMUL, OpKind.VECTOR),
    EngineKind.EXP: (OpKind.EXP,),
}


class VectorOp(enum.IntEnum):
    COPY = 0
    ADD = 1
    SUB = 2
    MUL = 3
    DIV = 4
    MAX = 5
    FMA = 6
    ROWMAX = 7
    ROWSUM = 8
    #: dst = src0 where row i sees column j, else the fill (``k``): causal / sliding masks
    #: (:func:`mask_fields`, :func:`mask_visible`).
    MASK = 9


class Broadcast(enum.IntEnum):
    FULL = 0
    ROW = 1
    COL = 2
    SCALAR = 3


MATMUL_TRANS_B = 0x1
MATMUL_ACCUMULATE = 0x2
#: C = diag(alpha) C + A B; alpha (m elements) at the address :func:`src2` reads.
MATMUL_SCALE_ROWS = 0x4
MATMUL_FLAGS = MATMUL_TRANS_B | MATMUL_ACCUMULATE | MATMUL_SCALE_ROWS
#: vector, exp, matmul: the operation streams from its producers (forwarding).
STREAMED = 0x80
#: vector mul with row broadcast only: a rescale of O by the row factors, charging the ``k``
#: rows whose factor is not 1 (a lazy rescale) or all ``m`` rows (``rescale=separate``): the
#: engine reads and writes those rows. The engines' time breakdown counts it as rescaling.
VECTOR_LAZY_ROWS = 0x40
#: exp only (the same bit): the operation is part of the online-softmax correction (the exp of
#: m_old - m); a statistics tag that changes no timing (the engines' time breakdown).
RESCALE = 0x40
BROADCAST_SHIFT = 4

# Lower-case names as the text form, checks, statistics and timelines print them.
KIND_NAMES = {k.value: k.name.lower() for k in OpKind}
VECTOR_OP_NAMES = {v.value: v.name.lower() for v in VectorOp}
BROADCAST_NAMES = {b.value: b.name.lower() for b in Broadcast}


def vector_code(
    op: VectorOp, bcast: Broadcast = Broadcast.FULL, *, stream: bool = False, lazy: bool = False
) -> int:
    """The ``code`` byte of a vector record (``lazy``: a lazy rescale, ``VECTOR_LAZY_ROWS``)."""
    code = int(op) | (int(bcast) << BROADCAST_SHIFT)
    return code | (STREAMED if stream else 0) | (VECTOR_LAZY_ROWS if lazy else 0)


def matmul_code(*, trans_b: bool, accumulate: bool, scale_rows: bool, stream: bool) -> int:
    """The ``code`` byte of a matmul record."""
    code = (MATMUL_TRANS_B if trans_b else 0) | (MATMUL_ACCUMULATE if accumulate else 0)
    return code | (MATMUL_SCALE_ROWS if scale_rows else 0) | (STREAMED if stream else 0)


def exp_code(*, stream: bool, rescale: bool) -> int:
    """The ``code`` byte of an exp record."""
    return (STREAMED if stream else 0) | (RESCALE if rescale else 0)


def src2(src_stride: int, dst_stride: int) -> int:
    """A compute record's third source address (the row scales of a scaled matmul): the two
    stride fields, which only loads and stores use, as one 64-bit address."""
    return (int(dst_stride) << 32) | int(src_stride)


def split_src2(address: int) -> tuple[int, int]:
    """(src_stride, dst_stride) holding ``address``; inverse of :func:`src2`."""
    return address & 0xFFFF_FFFF, address >> 32


def float_bits(value: float) -> int:
    """A float32 scalar operand as the integer stored in the ``k`` field."""
    return int(np.array(value, dtype="<f4").view("<u4"))


def bits_float(bits: int) -> float:
    """Inverse of :func:`float_bits`."""
    return float(np.array(bits, dtype="<u4").view("<f4"))


def mask_fields(diagonal: int, window: int = 0, period: int = 0, phase: int = 0) -> dict[str, int]:
    """The record fields holding a mask's geometry (see :func:`mask_visible`): the diagonal
    as a two's-complement int32 in ``src_stride``, the window in ``dst_stride``, the row wrap
    (period low 32 bits, phase high 32 bits) in ``src1``, all unused by an element-wise op."""
    if not -(1 << 31) <= diagonal < 1 << 31:
        raise ValueError(f"mask diagonal {diagonal} does not fit a signed 32-bit field")
    if not 0 <= window < 1 << 32 or not 0 <= period < 1 << 32:
        raise ValueError(f"mask window {window} / period {period} outside 0..2**32-1")
    if not (0 <= phase < period or phase == period == 0):
        raise ValueError(f"mask phase {phase} must lie in 0..period-1 (period {period})")
    return {
        "src_stride": diagonal & 0xFFFF_FFFF,
        "dst_stride": window,
        "src1": (phase << 32) | period,
    }


def mask_geometry(src_stride: int, dst_stride: int, src1: int) -> tuple[int, int, int, int]:
    """(diagonal, window, period, phase) of a mask record; inverse of :func:`mask_fields`."""
    diagonal = src_stride - (1 << 32) if src_stride >= 1 << 31 else src_stride
    return diagonal, dst_stride, src1 & 0xFFFF_FFFF, src1 >> 32


def mask_visible(
    m: int, n: int, diagonal: int, window: int = 0, period: int = 0, phase: int = 0
) -> np.ndarray:
    """Boolean m x n: True where a mask record keeps S[i][j]. Row i sits t(i) query positions
    after row 0 (t = i, or ((phase + i) mod period) - phase when rows wrap every ``period``
    rows, e.g. stacked heads); it sees columns j <= diagonal + t(i) and, with a window W > 0,
    j > diagonal + t(i) - W."""
    rows = np.arange(m, dtype=np.int64)
    t = rows if period == 0 else (phase + rows) % period - phase
    last = (diagonal + t)[:, None]
    cols = np.arange(n, dtype=np.int64)[None, :]
    visible = cols <= last
    if window:
        visible &= cols > last - window
    return np.asarray(visible)
