"""Systolic PE timing against SCALE-Sim v3 (docs/models/pe_array.md, "Systolic mappings").

Every GEMM shape the four dataflows issue for one small workload runs on three arrays under
the three stationarities, through the replay (tests/data/platforms/exact.yaml, operand traffic
off, pipeline latency 0): each matmul must take SCALE-Sim's total cycles + 1 (SCALE-Sim
reports the index of the last cycle, counted from 0). SCALE-Sim's results are stored
(tests/scalesim_reference.py); a subset is re-run every time, and any shape missing from the
store (an emitter whose tiles changed) is run live.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dataflow_platforms import KIB, attenio_machine
from tests.scalesim_reference import DATAFLOWS, Key, load_cycles, run_scalesim
from tests.test_engine_fidelity import replay_timeline
from tlm_models.dataflows import EMITTERS, Workload, emit
from tlm_models.errors import UserError
from tlm_models.run.worker import run_in_worker
from tlm_models.trace.record import OpKind

S = 0x4000_0000  # SRAM base of exact.yaml
HEADER = "dataflow: systolic\nengines: dma0 dma1 pe exp\nwindow: 16\n"
#: Square, taller than wide, wider than tall: a swapped rows/cols mapping shows on the last two.
ARRAYS = ((4, 4), (8, 4), (4, 16))
#: d = 16 on a 4 KiB scratchpad: attention tiles whose k (d or a key block) is a few array
#: heights, the short folds where per-fold fill and drain matter (d = 64 on a 64 x 32 array).
WORKLOAD, CAPACITY = Workload(256, 16), 4 * KIB


def dataflow_shapes() -> list[tuple[int, int, int]]:
    """The distinct (m, n, k) of every matmul the four dataflows emit for the workload."""
    shapes: set[tuple[int, int, int]] = set()
    for name in EMITTERS:
        for chunk in emit(name, WORKLOAD, attenio_machine(CAPACITY)).chunks:
            mm = chunk[chunk["kind"] == OpKind.MATMUL]
            shapes.update(zip(mm["m"].tolist(), mm["n"].tolist(), mm["k"].tolist(), strict=True))
    return sorted(shapes)


def reference_keys() -> list[Key]:
    return [(r, c, mp, *s) for r, c in ARRAYS for mp in DATAFLOWS for s in dataflow_shapes()]


def _trace(shapes: list[tuple[int, int, int]]) -> str:
    """Independent matmuls, one after the other (each writes its own C; no interlock)."""
    lines = [
        f"{i} matmul pe m={m} n={n} k={k} src0={S:#x} src1={S + 0x800:#x}"
        f" dst={S + 0x1000 + 0x800 * i:#x}"
        for i, (m, n, k) in enumerate(shapes)
    ]
    return HEADER + "\n".join(lines) + "\n"


def _spans(
    tmp_path: Path, trace: str, overrides: tuple[str, ...]
) -> dict[int, tuple[float, float]]:
    path = tmp_path / "t.trace.txt"
    path.write_text(trace)
    settings = ("pe.sram_traffic=false", *overrides)
    spans: dict[int, tuple[float, float]] = run_in_worker(
        replay_timeline, str(path), settings, timeout=120
    )["spans"]
    return spans


def _array(rows: int, cols: int, mapping: str, latency: int = 0) -> tuple[str, ...]:
    return (
        f"pe.rows={rows}",
        f"pe.cols={cols}",
        f"pe.mapping={mapping}",
        f"pe.pipeline_latency={latency}",
    )


def test_pe_cycles_equal_scalesim_on_every_dataflow_gemm(tmp_path: Path) -> None:
    shapes = dataflow_shapes()
    assert len(shapes) >= 12
    assert 0x1000 + 0x800 * len(shapes) <= 0x10000  # every operand inside the 64 KiB SRAM
    assert max(max(m * n, m * k, k * n) for m, n, k in shapes) * 2 <= 0x800
    stored = load_cycles()
    missing = [key for key in reference_keys() if key not in stored]
    reference = {**stored, **run_scalesim(missing)}
    for rows, cols in ARRAYS:
        for mapping in DATAFLOWS:
            spans = _spans(tmp_path, _trace(shapes), _array(rows, cols, mapping))
            ours = [end - start for start, end in (spans[i] for i in range(len(shapes)))]
            theirs = [reference[(rows, cols, mapping, *s)] + 1 for s in shapes]
            assert ours == theirs, (rows, cols, mapping)


def test_scalesim_still_gives_the_stored_cycles() -> None:
    """Re-runs SCALE-Sim on two shapes per array and mapping (a different pair for each of
    the nine, so that together they cover 18 shapes' worth of configurations)."""
    stored = load_cycles()
    shapes = dataflow_shapes()
    subset: list[Key] = []
    for i, (rows, cols, mapping) in enumerate((r, c, mp) for r, c in ARRAYS for mp in DATAFLOWS):
        for j in (i, i + len(shapes) // 2):
            subset.append((rows, cols, mapping, *shapes[j % len(shapes)]))
    live = run_scalesim(subset)
    assert {key: stored.get(key) for key in subset} == live


# An output-stationary 4 x 4 array, pipeline latency 2, granules of 8; the Exp unit on one
# lane (latency 4), a slow producer for the streamed matmul.
PIPELINE = (
    *_array(4, 4, "output_stationary", latency=2),
    "pe.forward_granularity=8",
    "exp.forward_granularity=8",
    "exp.lanes=1",
    "exp.sram_traffic=false",
)
CHAIN = HEADER + (
    f"0 matmul pe m=8 n=4 k=6 src0={S:#x} src1={S + 0x100:#x} dst={S + 0x200:#x}\n"
    f"1 matmul pe m=4 n=4 k=3 src0={S:#x} src1={S + 0x100:#x} dst={S + 0x300:#x}\n"
    f"2 exp exp m=1 n=64 src0={S:#x} dst={S + 0x400:#x} deps=1\n"
    f"3 matmul pe m=4 n=4 k=16 flags=stream src0={S + 0x400:#x} src1={S + 0x100:#x}"
    f" dst={S + 0x500:#x} deps=2\n"
)


def test_folds_occupy_the_array_and_only_the_latency_overlaps(tmp_path: Path) -> None:
    spans = _spans(tmp_path, CHAIN, PIPELINE)
    # 8 x 4 x 6: 2 folds of 6 + (4 + 4 - 2) = 12 cycles: issue 24, + 2 latency -> [0, 26].
    # 4 x 4 x 3: enters when the array is free, 24: 1 fold of 3 + 6 -> issue ends 33, done 35.
    assert spans[0] == (0.0, 26.0)
    assert spans[1] == (24.0, 35.0)
    # exp 1 x 64 on one lane from 35: first granule (8 elements) out at 35 + 8 + 4 = 47, done
    # 35 + 64 + 4 = 103. The streamed matmul enters at 47: 1 fold of 16 + 6 = 22 cycles, but
    # after the exp's last granule (103) it still needs that granule's share of the 16 stream
    # cycles, ceil(16 * 8 / 64) = 2, and the fold's 6 of skew, fill and drain: issue ends
    # max(47 + 22, 103 + 8) = 111, done 113.
    assert spans[3] == (47.0, 113.0)


def test_fold_overlap_pays_fill_and_drain_once_per_operation(tmp_path: Path) -> None:
    spans = _spans(tmp_path, CHAIN, (*PIPELINE, "pe.fold_overlap=true"))
    # 8 x 4 x 6: issue 2 x 6 = 12, latency 6 + 2 -> [0, 20]; the next enters at 12: 3 + 8.
    assert spans[0] == (0.0, 20.0)
    assert spans[1] == (12.0, 23.0)
    # exp from 23: first granule out 35, done 91. The matmul enters at 35: issue 16, tail
    # ceil(16 * 8 / 64) = 2: issue ends max(35 + 16, 91 + 2) = 93, done 93 + 8 = 101.
    assert spans[3] == (35.0, 101.0)


def test_fold_overlap_on_a_broadcast_array_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"components\.pe: fold_overlap needs a systolic mapping"):
        _spans(tmp_path, CHAIN, ("pe.fold_overlap=true",))  # exact.yaml's array is broadcast
