"""Numeric proof: every dataflow's trace computes softmax(QK^T/sqrt(d))V, in any legal order,
and broken traces (a dependency removed, an address wrong) give wrong results."""

from __future__ import annotations

import numpy as np
import pytest

from tests.dataflow_helpers import emit_all, relative_error, worst_error
from tests.dataflow_platforms import KIB, attenio_machine
from tlm_models.dataflows import EMITTERS, Workload
from tlm_models.dataflows.builder import TraceBuilder
from tlm_models.platform.info import PlatformInfo
from tlm_models.replay.reference import (
    ReferenceExecutor,
    TraceExecutionError,
    attention,
    schedule,
)
from tlm_models.trace.header import TensorInfo, TraceHeader
from tlm_models.trace.record import Broadcast, OpKind, VectorOp

TOL = 1e-3


def _inputs(heads: int, n: int, d: int, seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {k: rng.standard_normal((heads, n, d)).astype(np.float32) for k in "QKV"}


def _softmax(_header: TraceHeader, inputs: dict[str, np.ndarray]) -> np.ndarray:
    return attention(inputs["Q"], inputs["K"], inputs["V"])


def _error(
    header: TraceHeader,
    recs: np.ndarray,
    p: PlatformInfo,
    inputs: dict[str, np.ndarray],
    priority: list[str] | None,
) -> float:
    return relative_error(header, recs, p, inputs, priority, _softmax)


def _worst(
    header: TraceHeader, recs: np.ndarray, p: PlatformInfo, inputs: dict[str, np.ndarray]
) -> float:
    return worst_error(header, recs, p, inputs, _softmax)


SMALL = [(64, 16, 2 * KIB, 2), (128, 32, 8 * KIB, 1), (96, 64, 16 * KIB, 1)]


@pytest.mark.parametrize("name", sorted(EMITTERS))
@pytest.mark.parametrize(("n", "d", "sram", "heads"), SMALL)
def test_dataflow_computes_attention_in_every_adversarial_order(
    name: str, n: int, d: int, sram: int, heads: int
) -> None:
    w, p = Workload(n, d, heads=heads), attenio_machine(sram)
    header, recs = emit_all(name, w, p)
    assert _worst(header, recs, p, _inputs(heads, n, d)) < TOL


@pytest.mark.parametrize("name", sorted(EMITTERS))
@pytest.mark.parametrize(("n", "d", "sram"), [(512, 16, 8 * KIB), (300, 64, 32 * KIB)])
def test_dataflow_computes_attention_at_larger_sizes(name: str, n: int, d: int, sram: int) -> None:
    w, p = Workload(n, d), attenio_machine(sram)
    header, recs = emit_all(name, w, p)
    inputs = _inputs(1, n, d)
    for order in (None, ["pe", "exp", "dma1", "dma0"]):
        assert _error(header, recs, p, inputs, order) < TOL


@pytest.mark.parametrize(
    ("name", "params", "granularity"),
    [
        ("attenio", {"rescale": "fused"}, 8),
        ("attenio", {"rescale": "separate", "stage": "3"}, 8),
        ("attenio", {"rescale": "fused", "stage": "1"}, None),
        ("flash2", {"tiling": "paper", "overlap": "none"}, None),
        ("flash2", {"tiling": "paper", "overlap": "split"}, None),
        ("standard", {"overlap": "none"}, None),
        ("flat", {"overlap": "none"}, None),
        ("fusemax", {"pipeline": "none"}, None),
        ("fusemax", {"rows": "fit", "subblock": "13", "keys": "24"}, None),
    ],
)
def test_variants_compute_attention_in_every_adversarial_order(
    name: str, params: dict[str, str], granularity: int | None
) -> None:
    # granularity: the forwarded granules of AttenIO's streamed softmax stages interleave
    w, p = Workload(96, 16, heads=2), attenio_machine(8 * KIB)
    header, recs = emit_all(name, w, p, params=params)
    inputs = _inputs(2, 96, 16)
    assert worst_error(header, recs, p, inputs, _softmax, granularity) < TOL


def test_flat_spilling_rows_computes_attention() -> None:
    w, p = Workload(200, 4), attenio_machine(512)
    header, recs = emit_all("flat", w, p)
    assert header.params["spill"] is True
    inputs = _inputs(1, 200, 4)
    for order in (None, ["pe", "exp", "dma1", "dma0"], ["dma0", "dma1", "exp", "pe"]):
        assert _error(header, recs, p, inputs, order) < TOL


@pytest.mark.parametrize("name", sorted(EMITTERS))
def test_single_dma_without_kv_buffer_computes_attention(name: str) -> None:
    w, p = Workload(100, 16), attenio_machine(2 * KIB, kv_bytes=None, two_dmas=False)
    header, recs = emit_all(name, w, p)
    assert _worst(header, recs, p, _inputs(1, 100, 16)) < TOL


def _implied(recs: np.ndarray, i: int, slot: int) -> bool:
    """Whether record i's dependency in ``slot`` also follows from its other dependencies and
    engine order (deleting it then changes nothing)."""
    target = i - int(recs["deps"][i, slot])
    engines = recs["engine"]
    seen = {i}
    stack = [i]
    while stack:
        op = stack.pop()
        preds = [
            op - int(x)
            for k, x in enumerate(recs["deps"][op].tolist())
            if x and not (op == i and k == slot)
        ]
        same = np.flatnonzero(engines[target:op] == engines[op])
        if len(same):
            preds.append(target + int(same[-1]))
        for pred in preds:
            if pred == target:
                return True
            if pred > target and pred not in seen:
                seen.add(pred)
                stack.append(pred)
    return False


def _necessary_deps(recs: np.ndarray, kind: OpKind, on: OpKind) -> list[tuple[int, int]]:
    """(record, slot) of ``kind`` records' dependencies on ``on`` records that nothing else
    implies, from the middle of the trace on."""
    found = []
    for i in range(len(recs) // 3, len(recs)):
        if recs["kind"][i] != kind:
            continue
        for slot, dist in enumerate(recs["deps"][i].tolist()):
            if dist and recs["kind"][i - dist] == on and not _implied(recs, i, slot):
                found.append((i, slot))
    return found


@pytest.mark.parametrize("name", sorted(EMITTERS))
@pytest.mark.parametrize(
    ("kind", "on"),
    [(OpKind.MATMUL, OpKind.LOAD), (OpKind.LOAD, OpKind.MATMUL), (OpKind.EXP, OpKind.VECTOR)],
)
def test_removed_dependency_is_caught(name: str, kind: OpKind, on: OpKind) -> None:
    if name == "attenio" and kind == OpKind.MATMUL and on == OpKind.LOAD:
        kind = OpKind.VECTOR  # K/V rows reach the matmuls through moves into the KV buffer
    w, p = Workload(96, 16), attenio_machine(4 * KIB)
    header, recs = emit_all(name, w, p)
    inputs = _inputs(1, 96, 16)
    assert _worst(header, recs, p, inputs) < TOL
    candidates = _necessary_deps(recs, kind, on)
    assert candidates, "the dataflow has such dependencies"
    for i, slot in candidates[:: max(1, len(candidates) // 2)][:2]:
        broken = recs.copy()
        broken["deps"][i, slot] = 0
        assert _worst(header, broken, p, inputs) > TOL, (i, slot)


@pytest.mark.parametrize("name", sorted(EMITTERS))
def test_wrong_address_is_caught(name: str) -> None:
    w, p = Workload(128, 16), attenio_machine(4 * KIB)
    header, recs = emit_all(name, w, p)
    broken = recs.copy()
    k_loads = np.flatnonzero(
        (recs["kind"] == OpKind.LOAD) & (recs["tensor"] == header.tensor_index("K"))
    )
    broken["src0"][k_loads[len(k_loads) // 2]] += 16 * 2  # one K row too far
    assert _error(header, broken, p, _inputs(1, 128, 16), None) > TOL


def test_vector_ops_and_broadcasts() -> None:
    p = attenio_machine(1 * KIB)
    header = TraceHeader(
        "unit", ["dma0", "dma1", "pe", "exp"], tensors=[TensorInfo("X", 0, (2, 3), 2)]
    )
    b = TraceBuilder(header)
    sp = p.scratchpad.base
    x, row, col, out = sp, sp + 64, sp + 128, sp + 192
    b.load(0, x, 2, 6, tensor=0)
    b.load(0, row, 2, 2, tensor=0, src_stride=6)  # column 0 of X: one value per row
    b.load(0, col, 1, 6, tensor=0)  # row 0 of X
    cases = [
        (VectorOp.ADD, Broadcast.ROW, row),
        (VectorOp.SUB, Broadcast.COL, col),
        (VectorOp.MUL, Broadcast.FULL, x),
        (VectorOp.DIV, Broadcast.SCALAR, 0),
        (VectorOp.MAX, Broadcast.SCALAR, 0),
        (VectorOp.COPY, Broadcast.FULL, 0),
    ]
    for op, bc, src1 in cases:
        b.vector(op, out, x, 2, 3, src1=src1, bcast=bc, scalar=2.0)
        b.store(out, 0, 2, 6, tensor=0)
    b.vector(VectorOp.COPY, out, x, 2, 3)
    b.vector(VectorOp.FMA, out, x, 2, 3, src1=x)  # out = x*x + x
    b.vector(VectorOp.ROWMAX, row, out, 2, 3)
    b.vector(VectorOp.ROWSUM, row + 4, out, 2, 3)
    b.exp(out, out, 2, 3)
    recs = np.concatenate(list(b.finish()))
    ex = ReferenceExecutor(header, p)
    xv = np.array([[1, -2, 3], [4, 5, -6]], dtype=np.float32)
    expected = [xv + xv[:, :1], xv - xv[:1, :], xv * xv, xv / 2, np.maximum(xv, 2), xv]
    i = 0
    for rec in recs:
        if rec["kind"] == OpKind.STORE:
            np.testing.assert_allclose(ex.block(out, 2, 3), expected[i])
            i += 1
            continue
        ex.tensor("X")[...] = xv
        ex.execute(rec)
    fma = xv * xv + xv
    np.testing.assert_allclose(ex.block(row, 2, 1)[:, 0], fma.max(axis=1))
    np.testing.assert_allclose(ex.block(row + 4, 2, 1)[:, 0], fma.sum(axis=1))
    np.testing.assert_allclose(ex.block(out, 2, 3), np.exp(fma), rtol=1e-6)


def test_out_of_region_and_schedule_rules() -> None:
    p = attenio_machine(1 * KIB)
    header = TraceHeader("unit", ["dma0", "pe", "exp"], tensors=[TensorInfo("X", 0, (4,), 2)])
    b = TraceBuilder(header)
    load = b.load(0, p.scratchpad.base, 1, 8, tensor=0)
    b.exp(p.scratchpad.base, p.scratchpad.base, 1, 4, deps=[load])
    b.load(0, p.scratchpad.base + p.scratchpad.size, 1, 8, tensor=0)
    recs = np.concatenate(list(b.finish()))
    # The exp may not start before its load, even when the Exp unit is favoured.
    order = schedule(recs, header.engines, ["exp", "pe", "dma0"])
    assert order.index(1) > order.index(0)
    with pytest.raises(TraceExecutionError, match="outside"):
        ReferenceExecutor(header, p).run(recs)


@pytest.mark.parametrize(
    ("n", "d", "sram", "keep"),
    [(256, 16, 4 * KIB, 0), (200, 16, 1 * KIB, 4), (96, 16, 512, 8)],
    ids=["whole-rows-of-22", "keep-one-tile", "keep-four-tiles"],
)
def test_flat_partial_spill_computes_attention_in_every_adversarial_order(
    n: int, d: int, sram: int, keep: int
) -> None:
    """spill=auto: R rows, each keeping its first ``keep`` scores on chip and spilling the
    rest through two alternating spill tiles: right in every engine order."""
    w, p = Workload(n, d), attenio_machine(sram)
    header, recs = emit_all("flat", w, p, params={"spill": "auto"})
    assert header.params["spill"] is True and header.params["keep"] == keep
    assert header.params["rows"] > 1
    assert _worst(header, recs, p, _inputs(1, n, d)) < TOL
