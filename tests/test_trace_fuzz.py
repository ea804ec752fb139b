"""Random bytes and mutated valid traces: readers and checker give results or UserErrors only."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import trace_samples as ts
from tlm_models.errors import UserError
from tlm_models.trace.binary import write_binary
from tlm_models.trace.io import open_trace
from tlm_models.trace.record import RECORD_DTYPE
from tlm_models.trace.stats import trace_stats
from tlm_models.trace.text import dump_text
from tlm_models.trace.validate import check_trace

FUZZ = settings(
    max_examples=200,
    deadline=1000,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _consume(path: Path) -> None:
    """Open, check (with platform) and summarise; any outcome but a UserError must be clean."""
    try:
        trace = open_trace(path)
        chunks = list(trace.chunks(7))
        if not trace.is_memory_trace:
            report = check_trace(trace.header, chunks, ts.PLATFORM)
            assert report.records == sum(len(c) for c in chunks)
            trace_stats(trace.header, chunks)
    except UserError as exc:
        assert str(exc)


def _valid_binary() -> bytes:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "v.bin"
        write_binary(path, ts.header(), [ts.records(12)])
        return path.read_bytes()


def _valid_text() -> str:
    out = io.StringIO()
    dump_text(out, ts.header(), [ts.records(12)])
    return out.getvalue()


VALID_BINARY = _valid_binary()
VALID_TEXT = _valid_text()
SUFFIXES = st.sampled_from([".bin", ".trace.txt", ".stl", ".rstl"])


@FUZZ
@given(data=st.binary(max_size=400), suffix=SUFFIXES)
def test_random_bytes(tmp_path_factory, data, suffix):
    path = tmp_path_factory.mktemp("fuzz") / f"t{suffix}"
    path.write_bytes(data)
    _consume(path)


@FUZZ
@given(
    edits=st.lists(
        st.tuples(st.integers(0, len(VALID_BINARY) - 1), st.integers(0, 255)), max_size=8
    ),
    cut=st.integers(0, len(VALID_BINARY)),
)
def test_mutated_binary(tmp_path_factory, edits, cut):
    raw = bytearray(VALID_BINARY)
    for offset, value in edits:
        raw[offset] = value
    path = tmp_path_factory.mktemp("fuzz") / "t.bin"
    path.write_bytes(bytes(raw[: max(cut, len(raw) - 200)]))
    _consume(path)


@FUZZ
@given(
    lines=st.lists(st.tuples(st.integers(0, 40), st.text(max_size=12)), max_size=6),
)
def test_mutated_text(tmp_path_factory, lines):
    text = VALID_TEXT.splitlines()
    for index, junk in lines:
        index %= len(text)
        text[index] = text[index][: len(text[index]) // 2] + junk
    path = tmp_path_factory.mktemp("fuzz") / "t.trace.txt"
    path.write_text("\n".join(text), encoding="utf-8", errors="surrogatepass")
    _consume(path)


@FUZZ
@given(records=st.binary(min_size=64 * 5, max_size=64 * 5))
def test_checker_and_stats_on_arbitrary_records(records):
    chunk = np.frombuffer(records, dtype=RECORD_DTYPE)
    report = check_trace(ts.header(), [chunk[:2], chunk[2:]], ts.PLATFORM, max_problems=3)
    assert report.records == 5 and len(report.problems) <= 3
    trace_stats(ts.header(), [chunk])
