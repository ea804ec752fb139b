"""The trace record, op/vector/broadcast enums and engine kinds are one contract on two sides:
tlm_models/trace/record.py and trace_op.h / engine_kind.h. Every value, name and field offset
is compared through cppyy, so a change on one side alone fails here."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

import numpy as np

from tlm_models.run.worker import run_in_worker
from tlm_models.trace import record as rec
from tlm_models.trace.record import ENGINE_OPS, RECORD_DTYPE, EngineKind, OpKind
from tlm_models.trace.validate import operand_extents

_ENUMS: tuple[type[IntEnum], ...] = (OpKind, rec.VectorOp, rec.Broadcast, EngineKind)


def _cpp_side() -> dict[str, Any]:
    """Everything the C++ headers declare about records, as plain data."""
    import cppyy

    from tlm_models.runtime import kernel

    tm = kernel.load_models().tlm_models
    enums = {
        e.__name__: {
            n: int(getattr(getattr(tm, e.__name__), n))
            for n in vars(getattr(tm, e.__name__))
            if not n.startswith("_")
        }
        for e in _ENUMS
    }
    fields = ", ".join(f"offsetof(tlm_models::TraceOp, {name})" for name in RECORD_DTYPE.names)
    cppyy.cppdef(
        "#include <cstddef>\n#include <vector>\n"
        "std::vector<std::size_t> attn_tlm_record_offsets() { return {sizeof(tlm_models::TraceOp), "
        f"{fields}}}; }}\n"
    )
    offsets = [int(x) for x in cppyy.gbl.attn_tlm_record_offsets()]
    op_names = {i: tm.op_kind_name(i) for i in range(256) if tm.op_kind_name(i)}
    engines = {
        int(k): tm.engine_kind_name(getattr(tm.EngineKind, n))
        for n, k in enums["EngineKind"].items()
    }
    runs_on = {
        (int(k), op): bool(tm.runs_on(op, getattr(tm.EngineKind, n)))
        for n, k in enums["EngineKind"].items()
        for op in range(256)
    }
    constants = {
        "trans_b": ord(tm.kMatmulTransB),
        "accumulate": ord(tm.kMatmulAccumulate),
        "lazy_rows": ord(tm.kVectorLazyRows),
        "broadcast_shift": int(tm.kBroadcastShift),
        "max_deps": int(tm.kMaxDeps),
        "no_tensor": ord(tm.kNoTensor),
    }
    return {
        "enums": enums,
        "offsets": offsets,
        "op_names": op_names,
        "engines": engines,
        "runs_on": runs_on,
        "constants": constants,
    }


def test_python_and_cpp_declare_the_same_record_contract() -> None:
    cpp = run_in_worker(_cpp_side)
    for e in _ENUMS:
        assert cpp["enums"][e.__name__] == {m.name.lower(): int(m) for m in e}, e.__name__
    assert cpp["op_names"] == {int(k): k.name.lower() for k in OpKind}
    assert cpp["engines"] == {int(k): k.name.lower() for k in EngineKind}
    assert cpp["runs_on"] == {
        (int(engine), op): op in ENGINE_OPS[engine] for engine in EngineKind for op in range(256)
    }
    assert cpp["offsets"] == [RECORD_DTYPE.itemsize] + [
        RECORD_DTYPE.fields[name][1] for name in RECORD_DTYPE.names
    ]
    assert cpp["constants"] == {
        "trans_b": rec.MATMUL_TRANS_B,
        "accumulate": rec.MATMUL_ACCUMULATE,
        "lazy_rows": rec.VECTOR_LAZY_ROWS,
        "broadcast_shift": rec.BROADCAST_SHIFT,
        "max_deps": rec.MAX_DEPS,
        "no_tensor": rec.NO_TENSOR,
    }


def _cpp_extents(records: np.ndarray, elem_bytes: int) -> np.ndarray:
    """``operand_extents`` (operand_extents.h) of every record, as an n x 3 uint64 array."""
    import cppyy

    from tlm_models.runtime import kernel

    kernel.load_models()
    cppyy.cppdef(
        "#include <cstddef>\n#include <cstdint>\n"
        "void attn_tlm_extents(const tlm_models::TraceOp* ops, std::size_t n, "
        "std::uint64_t e, std::uint64_t* out) {\n"
        "  for (std::size_t i = 0; i < n; ++i) {\n"
        "    const tlm_models::OperandExtents x = tlm_models::operand_extents(ops[i], e);\n"
        "    out[3 * i] = x.src0; out[3 * i + 1] = x.src1; out[3 * i + 2] = x.dst;\n  }\n}\n"
    )
    out = np.zeros((len(records), 3), dtype=np.uint64)
    ops = cppyy.bind_object(records.ctypes.data, "tlm_models::TraceOp")
    cppyy.gbl.attn_tlm_extents(ops, len(records), elem_bytes, out)
    return out


def test_python_and_cpp_operand_extents_agree_record_for_record() -> None:
    rng = np.random.default_rng(3)
    count = 4000
    recs = np.zeros(count, dtype=RECORD_DTYPE)
    recs["kind"] = rng.integers(1, 6, count)
    codes = rng.integers(0, 9, count) | (rng.integers(0, 4, count) << rec.BROADCAST_SHIFT)
    recs["code"] = np.where(recs["kind"] == OpKind.VECTOR, codes, rng.integers(0, 4, count))
    for name in ("m", "n", "k"):
        recs[name] = rng.choice([0, 1, 3, 64, 4096, 65535], count)
    for name in ("src_stride", "dst_stride"):
        recs[name] = rng.choice([0, 7, 8192], count)
    for eb in (2, 4):
        python = np.stack(operand_extents(recs, eb), axis=1)
        assert np.array_equal(run_in_worker(_cpp_extents, recs, eb), python)
    # The rules by example: a row-broadcast vector add reads m elements of src1.
    add_row = recs[:1].copy()
    add_row[["kind", "code", "m", "n"]] = (OpKind.VECTOR, rec.vector_code(
        rec.VectorOp.ADD, rec.Broadcast.ROW), 4, 8)  # fmt: skip
    assert [int(x[0]) for x in operand_extents(add_row, 2)] == [64, 8, 64]
