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
BROADCAST_SHIFT = 4

# Lower-case names as the text form, checks, statistics and timelines print them.
KIND_NAMES = {k.value: k.name.lower() for k in OpKind}
VECTOR_OP_NAMES = {v.value: v.name.lower() for v in VectorOp}
BROADCAST_NAMES = {b.value: b.name.lower() for b in Broadcast}


def vector_code(op: VectorOp, bcast: Broadcast = Broadcast.FULL) -> int:
    """The ``code`` byte of a vector record."""
    return int(op) | (int(bcast) << BROADCAST_SHIFT)


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
