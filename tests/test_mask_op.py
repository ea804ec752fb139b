"""The mask vector op (VectorOp.MASK): its geometry fields, what the numeric executor computes
(-inf and finite fills, wrapping rows), the text form and the validator's rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.dataflow_platforms import KIB, attenio_machine
from tlm_models.dataflows.builder import TraceBuilder
from tlm_models.replay.reference import ReferenceExecutor
from tlm_models.trace.header import TensorInfo, TraceHeader
from tlm_models.trace.record import mask_fields, mask_geometry, mask_visible
from tlm_models.trace.text import dump_text, parse_text
from tlm_models.trace.validate import check_trace
from tlm_models.workload.spec import Workload

HEADER = TraceHeader("unit", ["dma0", "dma1", "pe", "exp"], tensors=[TensorInfo("X", 0, (6, 8), 2)])


@pytest.mark.parametrize(
    ("diagonal", "window", "period", "phase"),
    [(0, 0, 0, 0), (-3, 0, 0, 0), (5, 3, 0, 0), (2, 0, 3, 1), (-(1 << 31), 7, 9, 8)],
)
def test_geometry_fields_round_trip(diagonal: int, window: int, period: int, phase: int) -> None:
    f = mask_fields(diagonal, window, period, phase)
    assert mask_geometry(f["src_stride"], f["dst_stride"], f["src1"]) == (
        diagonal,
        window,
        period,
        phase,
    )


def test_bad_geometry_is_refused() -> None:
    with pytest.raises(ValueError, match=r"phase 3 must lie in 0\.\.period-1"):
        mask_fields(0, period=3, phase=3)
    with pytest.raises(ValueError, match="signed 32-bit"):
        mask_fields(1 << 31)


def test_visible_matches_the_workload_mask_for_every_block() -> None:
    # A block of rows r0.. and keys c0.. of a workload: diagonal = r0 + (Nk - Nq) - c0.
    for w in (
        Workload(6, 4, kv_len=9, mask="causal"),
        Workload(6, 4, kv_len=9, mask="sliding", window=3),
        Workload(7, 4, mask="sliding", window=7),
    ):
        full = w.mask_matrix()
        for r0, rows, c0, cols in [(0, 6, 0, 9), (2, 3, 4, 5), (5, 1, 0, 3), (1, 4, 6, 3)]:
            rows, cols = min(rows, w.seq_len - r0), min(cols, w.kv_len - c0)
            got = mask_visible(rows, cols, r0 + w.key_offset - c0, w.window)
            np.testing.assert_array_equal(got, full[r0 : r0 + rows, c0 : c0 + cols])


def test_wrapping_rows_repeat_the_positions() -> None:
    # Heads stacked in a block: rows 0..4 of one head of 3 positions, starting at position 1:
    # positions 1, 2, 0, 1, 2 -> offsets from row 0: 0, 1, -1, 0, 1.
    got = mask_visible(5, 4, diagonal=1, period=3, phase=1)
    expected = np.array([[j <= 1 + t for j in range(4)] for t in (0, 1, -1, 0, 1)])
    np.testing.assert_array_equal(got, expected)


def _masked(fill: float, granularity: int | None) -> np.ndarray:
    p = attenio_machine(1 * KIB)
    b = TraceBuilder(HEADER)
    sp = p.scratchpad.base
    load = b.load(0, sp, 6, 16, tensor=0)
    b.mask(sp + 128, sp, 6, 8, diagonal=2, window=3, period=4, phase=2, fill=fill, deps=[load])
    recs = np.concatenate(list(b.finish()))
    ex = ReferenceExecutor(HEADER, p)
    ex.tensor("X")[...] = np.arange(48, dtype=np.float32).reshape(6, 8)
    ex.run(recs, granularity=granularity)
    return ex.block(sp + 128, 6, 8).copy()


@pytest.mark.parametrize("granularity", [None, 5])
@pytest.mark.parametrize("fill", [-math.inf, -65504.0, 0.0])
def test_executor_keeps_visible_elements_and_fills_the_rest(
    fill: float, granularity: int | None
) -> None:
    keep = mask_visible(6, 8, 2, 3, 4, 2)
    x = np.arange(48, dtype=np.float32).reshape(6, 8)
    np.testing.assert_array_equal(_masked(fill, granularity), np.where(keep, x, fill))


def test_minus_infinity_vanishes_under_exp_and_row_max() -> None:
    out = _masked(-math.inf, None)
    assert np.all(np.exp(out)[~mask_visible(6, 8, 2, 3, 4, 2)] == 0)
    assert np.all(np.isfinite(out.max(axis=1)))


def test_text_form_round_trips_and_validates() -> None:
    b = TraceBuilder(HEADER)
    sp = attenio_machine(1 * KIB).scratchpad.base
    b.mask(sp, sp, 4, 8, diagonal=-2, window=5, period=3, phase=1, fill=-math.inf)
    recs = np.concatenate(list(b.finish()))
    lines: list[str] = []

    class Sink:
        def write(self, text: str) -> None:
            lines.append(text)

    dump_text(Sink(), HEADER, [recs])  # type: ignore[arg-type]
    text = "".join(lines)
    assert "op=mask bcast=scalar scalar=-inf" in text
    _, back = parse_text(text.splitlines())
    assert back.tobytes() == recs.tobytes()
    assert check_trace(HEADER, [recs], attenio_machine(1 * KIB)).ok


def test_a_mask_without_its_scalar_fill_is_a_bad_code() -> None:
    b = TraceBuilder(HEADER)
    sp = attenio_machine(1 * KIB).scratchpad.base
    b.mask(sp, sp, 4, 8, diagonal=0)
    recs = np.concatenate(list(b.finish()))
    recs["code"] &= 0x0F  # broadcast full: k would not be a fill
    report = check_trace(HEADER, [recs])
    assert report.counts == {"code": 1}
    assert "vector has invalid code 0x09" in str(report.problems[0])
