"""The trace record, op/vector/broadcast enums and engine kinds are one contract on two sides:
tlm_models/trace/record.py and trace_op.h / engine_kind.h. Every value, name and field offset
is compared through cppyy, so a change on one side alone fails here."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from tlm_models.trace import record as rec
from tlm_models.trace.record import ENGINE_OPS, RECORD_DTYPE, EngineKind, OpKind
from tlm_models.worker import run_in_worker

_ENUMS: tuple[type[IntEnum], ...] = (OpKind, rec.VectorOp, rec.Broadcast, EngineKind)


def _cpp_side() -> dict[str, Any]:
    """Everything the C++ headers declare about records, as plain data."""
    import cppyy

    from tlm_models import kernel

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
        "broadcast_shift": rec.BROADCAST_SHIFT,
        "max_deps": rec.MAX_DEPS,
        "no_tensor": rec.NO_TENSOR,
    }
