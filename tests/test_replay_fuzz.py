"""Randomly damaged small traces through the replay job: the outcome is a result or a clean
UserError — never a crash, a SystemC fatal, an internal exception or a hang (worker timeout)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tlm_models.errors import UserError
from tlm_models.run.trace_job import replay_trace_file
from tlm_models.run.worker import run_in_worker
from tlm_models.trace.binary import write_binary
from tlm_models.trace.io import open_trace

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "traces" / "samples" / "double_buffered_loop.trace.txt"
PLATFORM = str(ROOT / "platforms" / "attenio.yaml")
SRAM = 0x1_0000_0000

# Values that sit on the edges the checks and models care about, plus ordinary ones.
_EDGES = [0, 1, 2, 3, 5, 6, 7, 16, 64, 255, 256, 4096, 0xFFFF, 0xFFFF_FFFF]
_ADDRESSES = [
    0,
    0x40,
    0xFFFF_FFC0,
    0x1_0000_0000,
    SRAM + 0x7FFC0,
    SRAM + 0x80000,
    0x1_0010_0000,
    0x1_0010_00F0,
    0xFFFF_FFFF_FFFF_FFC0,
]
_FIELDS = {
    "kind": st.integers(0, 255),
    "engine": st.integers(0, 255),
    "tensor": st.integers(0, 255),
    "code": st.integers(0, 255),
    "m": st.sampled_from(_EDGES),
    "n": st.sampled_from(_EDGES),
    "k": st.sampled_from(_EDGES),
    "src0": st.sampled_from(_ADDRESSES),
    "src1": st.sampled_from(_ADDRESSES),
    "dst": st.sampled_from(_ADDRESSES),
    "src_stride": st.sampled_from(_EDGES),
    "dst_stride": st.sampled_from(_EDGES),
}
_BASE = open_trace(SAMPLE)
_RECORDS = _BASE.records()

mutation = st.one_of(
    st.tuples(st.sampled_from(sorted(_FIELDS)), st.integers(0, len(_RECORDS) - 1)).flatmap(
        lambda fi: st.tuples(st.just(fi[0]), st.just(fi[1]), _FIELDS[fi[0]])
    ),
    st.tuples(
        st.just("deps"),
        st.integers(0, len(_RECORDS) - 1),
        st.integers(0, 3).flatmap(lambda slot: st.tuples(st.just(slot), st.integers(0, 40))),
    ),
)


@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(mutation, min_size=1, max_size=3))
def test_damaged_traces_give_results_or_user_errors(
    mutations: list[tuple[str, int, object]],
) -> None:
    records = _RECORDS.copy()
    for field, index, value in mutations:
        if field == "deps":
            assert isinstance(value, tuple)
            records[index]["deps"][value[0]] = value[1]
        else:
            records[index][field] = value
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.bin"
        write_binary(path, _BASE.header, [records])
        try:
            result = run_in_worker(replay_trace_file, str(path), PLATFORM, timeout=60)
        except UserError as exc:
            assert str(exc)  # a message, and nothing else got raised
            return
    assert result["ops"] == len(records)
    assert np.isfinite(result["sim_time_ns"]) and result["sim_time_ns"] >= 0


def test_the_unmutated_sample_replays() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sample.bin"
        write_binary(path, _BASE.header, [_RECORDS])
        result = run_in_worker(replay_trace_file, str(path), PLATFORM, timeout=60)
    assert result["ops"] == len(_RECORDS)
