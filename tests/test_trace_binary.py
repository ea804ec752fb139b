"""Binary trace format: round trip, zero-copy chunks, atomic writes, and every header error."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from tests import trace_samples as ts
from tlm_models.errors import UserError
from tlm_models.trace.binary import (
    ALIGN,
    BinaryTrace,
    BinaryTraceWriter,
    read_binary,
    write_binary,
)


def _write(path, count=100, chunk=37):
    records = ts.records(count)
    write_binary(path, ts.header(), [records[i : i + chunk] for i in range(0, count, chunk)])
    return records


def test_round_trip_in_chunks_with_aligned_records(tmp_path):
    path = tmp_path / "t.bin"
    records = _write(path)
    header, data = read_binary(path)
    assert header.op_count == 100 and header.engines == ts.ENGINES
    assert header.tensors == ts.header().tensors and header.params == {"d": 64}
    assert np.array_equal(data, records)
    trace = BinaryTrace(path)
    assert trace.data_offset % ALIGN == 0
    chunks = list(trace.chunks(30))
    assert [len(c) for c in chunks] == [30, 30, 30, 10]
    assert all(isinstance(c.base, np.memmap) or isinstance(c, np.memmap) for c in chunks)
    assert np.array_equal(np.concatenate(chunks), records)


def test_empty_trace(tmp_path):
    path = tmp_path / "e.bin"
    write_binary(path, ts.header(), [])
    header, data = read_binary(path)
    assert header.op_count == 0 and len(data) == 0


def test_interrupted_write_leaves_no_file(tmp_path):
    path = tmp_path / "t.bin"
    with pytest.raises(RuntimeError), BinaryTraceWriter(path, ts.header()) as w:
        w.write(ts.records(10))
        raise RuntimeError("emitter failed")
    assert list(tmp_path.iterdir()) == []


def test_writer_rejects_foreign_dtype(tmp_path):
    with BinaryTraceWriter(tmp_path / "t.bin", ts.header()) as w, pytest.raises(TypeError):
        w.write(np.zeros(3, np.uint8))


def _corrupt(tmp_path, mutate):
    path = tmp_path / "t.bin"
    _write(path, 10)
    raw = bytearray(path.read_bytes())
    path.write_bytes(bytes(mutate(raw)))
    return path


def _header_len(raw):
    return struct.unpack_from("<I", raw, 12)[0]


def _with_header(raw, change):
    length = _header_len(raw)
    data = json.loads(bytes(raw[16 : 16 + length]))
    change(data)
    text = json.dumps(data, separators=(",", ":")).encode()
    assert len(text) <= length
    raw[16 : 16 + length] = text + b" " * (length - len(text))
    return raw


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda r: r[:10], "truncated trace: 10 bytes"),
        (lambda r: b"NOTATRC\0" + r[8:], "not an attn-tlm binary trace"),
        (lambda r: r[:8] + struct.pack("<I", 7) + r[12:], "version 7 is not supported"),
        (lambda r: r[:12] + struct.pack("<I", 1 << 30) + r[16:], "header claims"),
        (lambda r: r[:16] + b"x" + r[17:], "trace header is not valid JSON"),
        (lambda r: _with_header(r, lambda d: d.pop("engines")), "missing key(s) engines"),
        (lambda r: _with_header(r, lambda d: d.update(window=0)), "'window' is 0"),
        (lambda r: _with_header(r, lambda d: d.update(op_count=11)), "op_count is 11"),
        (lambda r: r[:-64], "op_count is 10 but the file holds 9 records (truncated"),
        (lambda r: r[:-5], "is cut off after 59 bytes"),
    ],
)
def test_errors_name_file_and_cause(tmp_path, mutate, message):
    path = _corrupt(tmp_path, mutate)
    with pytest.raises(UserError, match=r"t\.bin") as exc:
        read_binary(path)
    assert message in str(exc.value)


def test_cut_record_names_index_and_sizes(tmp_path):
    path = _corrupt(tmp_path, lambda r: r[:-5])
    with pytest.raises(UserError) as exc:
        read_binary(path)
    assert "record 9 is cut off" in str(exc.value) and f"file size {path.stat().st_size}" in str(
        exc.value
    )


def test_missing_file_is_user_error(tmp_path):
    with pytest.raises(UserError, match="cannot read the trace"):
        read_binary(tmp_path / "absent.bin")
