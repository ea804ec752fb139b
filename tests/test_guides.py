"""The guides' worked examples, built and checked: docs/guide-dataflow.md's resident attention
(closed form, numeric proof in every engine order, replay on the reference platform)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from tests.dataflow_helpers import offchip_elements
from tlm_models.dataflows.reference_machine import attenio_machine
from tlm_models.errors import UserError
from tlm_models.replay.reference import adversarial_orders, attention, run_attention
from tlm_models.trace.record import OpKind
from tlm_models.workload.spec import Workload

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "dataflow" / "resident_attention.py"


@pytest.fixture(scope="module")
def resident() -> ModuleType:
    spec = importlib.util.spec_from_file_location("resident_attention", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["resident_attention"] = module
    spec.loader.exec_module(module)
    return module


def _records(trace: object) -> np.ndarray:
    return np.concatenate(list(trace.chunks))  # type: ignore[attr-defined]


def test_resident_moves_its_closed_form(resident: ModuleType) -> None:
    w, p = Workload(64, 16, heads=3), attenio_machine()
    trace = resident.emit_resident(w, p)
    moved = offchip_elements(trace.header, _records(trace))
    assert moved == {name: 3 * 64 * 16 for name in "QKVO"}
    assert sum(moved.values()) == resident.resident_traffic(w) == 4 * 64 * 16 * 3


def test_resident_computes_attention_in_every_engine_order(resident: ModuleType) -> None:
    w, p = Workload(64, 16, heads=2), attenio_machine()
    trace = resident.emit_resident(w, p)
    recs = _records(trace)
    rng = np.random.default_rng(7)
    inputs = {k: rng.standard_normal((2, 64, 16)).astype(np.float32) for k in "QKV"}
    exact = attention(inputs["Q"], inputs["K"], inputs["V"])
    for order in [None, *adversarial_orders(trace.header.engines)]:
        out = run_attention(trace.header, [recs], p, inputs, order)
        assert np.abs(out - exact).max() / np.abs(exact).max() < 1e-5, order
    # Without the store -> next head's O matmul dependency, some order clobbers O.
    broken = recs.copy()
    omm = np.flatnonzero(broken["kind"] == OpKind.MATMUL)[3]  # head 1's P V matmul
    deps = broken["deps"][omm]
    assert recs["kind"][omm - deps.max()] == OpKind.STORE  # its farthest dependency
    deps[np.argmax(deps)] = 0
    worst = 0.0
    with np.errstate(all="ignore"):
        for order in adversarial_orders(trace.header.engines):
            out = run_attention(trace.header, [broken], p, inputs, order)
            worst = max(worst, float(np.nan_to_num(np.abs(out - exact), nan=np.inf).max()))
    assert worst > 1e-2


def test_the_template_version_emits_the_same_records(resident: ModuleType) -> None:
    w, p = Workload(64, 16, heads=5), attenio_machine()
    by_op = _records(resident.emit_resident(w, p))
    by_template = _records(resident.emit_resident_repeated(w, p, chunk_ops=7))
    assert np.array_equal(by_op, by_template)


def test_a_plan_that_does_not_fit_is_refused(resident: ModuleType) -> None:
    with pytest.raises(UserError, match="needs 49408 elements on chip, M = 1024"):
        resident.emit_resident(Workload(128, 64), attenio_machine(sram_bytes=2048))


def test_resident_replays_on_the_reference_platform(resident: ModuleType, tmp_path: Path) -> None:
    from tlm_models import Platform, replay_trace
    from tlm_models.trace.io import write_trace

    platform = Platform.load("platforms/attenio.yaml")
    w = Workload(128, 64, heads=2)
    trace = resident.emit_resident(w, platform.info)
    write_trace(tmp_path / "resident.bin", trace.header, trace.chunks)
    result = replay_trace(tmp_path / "resident.bin", platform)
    assert result.offchip_bytes.total == resident.resident_traffic(w) * 2
    assert result.pe.macs == 2 * 2 * 128 * 128 * 64  # Q K^T and P V per head
