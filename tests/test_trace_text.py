"""Text trace form: hand-written files parse as intended, round trips, errors name file:line."""

from __future__ import annotations

import io

import numpy as np
import pytest

from tests import trace_samples as ts
from tlm_models.errors import UserError
from tlm_models.trace.record import (
    MATMUL_ACCUMULATE,
    MATMUL_TRANS_B,
    NO_TENSOR,
    RECORD_DTYPE,
    Broadcast,
    OpKind,
    VectorOp,
    bits_float,
    vector_code,
)
from tlm_models.trace.text import dump_text, parse_text, read_text, write_text

HEADER = """\
# a comment
dataflow: demo   # trailing comment
engines: dma0 pe exp
window: 8
params: {"note": "# not a comment"}
tensor: Q offchip base=0x0 shape=2x64
"""


def parse(body: str):
    return parse_text((HEADER + body).splitlines(), "t.txt")


def test_hand_written_operations():
    header, r = parse(
        """
0 load dma0 tensor=Q m=2 n=128 src0=0x0 dst=0x100000000 dst_stride=256
matmul pe m=2 n=2 k=64 src0=0x100000000 src1=0x100000000 dst=0x100001000 flags=trans_b,acc deps=0
2 vector pe op=mul bcast=scalar scalar=0.5 m=2 n=2 src0=0x100001000 dst=0x100001000 deps=1
exp exp m=2 n=2 src0=0x100001000 dst=0x100001000 deps=0,2   # waits for ops 0 and 2
"""
    )
    assert header.dataflow == "demo" and header.window == 8 and header.op_count == 4
    assert header.params == {"note": "# not a comment"}
    assert list(r["kind"]) == [OpKind.LOAD, OpKind.MATMUL, OpKind.VECTOR, OpKind.EXP]
    assert list(r["engine"]) == [0, 1, 1, 2]
    assert list(r["tensor"]) == [0, NO_TENSOR, NO_TENSOR, NO_TENSOR]
    assert r["code"][1] == MATMUL_TRANS_B | MATMUL_ACCUMULATE
    assert r["code"][2] == vector_code(VectorOp.MUL, Broadcast.SCALAR)
    assert bits_float(int(r["k"][2])) == 0.5
    assert r["dst_stride"][0] == 256 and r["dst"][0] == 0x1_0000_0000
    # absolute ids become back-distances
    assert r["deps"].tolist() == [[0, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0], [3, 1, 0, 0]]


def test_round_trip_binary_records_through_text(tmp_path):
    records = ts.records(60)
    header = ts.header(op_count=60)
    write_text(tmp_path / "t.trace.txt", header, [records[:25], records[25:]])
    back_header, back = read_text(tmp_path / "t.trace.txt")
    assert np.array_equal(back, records)
    assert back_header == header


def test_round_trip_keeps_odd_fields_and_codes():
    r = np.zeros(3, RECORD_DTYPE)
    r[0] = (1, 0, 7, 0x40, (0, 0, 0, 0), 1, 2, 9, 1, 2, 3, 0, 0)  # unknown tensor, raw code, k
    r[1] = (9, 200, NO_TENSOR, 0, (1, 0, 0, 0), 0, 0, 0, 0, 0, 0, 0, 0)  # bad kind and engine
    nan_bits = 0x7FC00001  # a NaN payload that float formatting cannot keep
    r[2] = (
        4,
        1,
        NO_TENSOR,
        vector_code(VectorOp.ADD, Broadcast.SCALAR),
        (0, 0, 0, 0),
        1,
        1,
        nan_bits,
        0,
        0,
        0,
        0,
        0,
    )
    header = parse("")[0]
    out = io.StringIO()
    dump_text(out, header, [r])
    _, back = parse_text(out.getvalue().splitlines())
    assert np.array_equal(back, r)


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        ("0 load dma9 m=1 n=1", 7, "unknown engine 'dma9'"),
        ("0 fetch dma0", 7, "unknown operation kind 'fetch'"),
        ("1 load dma0 m=1 n=1", 7, "operation id 1 out of sequence, expected 0"),
        ("load dma0 m=1 n=1 deps=0", 7, "deps: 0 is not an earlier operation id"),
        ("load dma0 m=1\nload dma0 m=1 deps=1", 8, "(self-dependency)"),
        ("load dma0 m=x", 7, "m: 'x' is not an integer"),
        ("load dma0 m=4294967296", 7, "out of range"),
        ("load dma0 bogus=1", 7, "unknown field 'bogus'"),
        ("load dma0 m=1 m=2", 7, "field 'm' given twice"),
        ("load dma0 tensor=Z", 7, "unknown tensor 'Z'"),
        ("load dma0 flags=acc", 7, "load takes no flags="),
        ("vector pe m=1", 7, "vector needs op="),
        ("vector pe op=mul scalar=2", 7, "scalar= needs bcast=scalar"),
        ("matmul pe flags=fast", 7, "unknown flag 'fast'"),
        ("matmul pe op=add", 7, "matmul takes flags="),
        ("matmul pe code=1 flags=acc", 7, "either code= or flags="),
        ("load dma0 deps=" + ",".join("0" * 5), 7, "at most 4"),
        ("load dma0 m=1\nwindow: 4", 8, "after the first operation"),
        ("load dma0 n", 7, "expected key=value"),
    ],
)
def test_errors_name_file_line_and_field(body, line, message):
    with pytest.raises(UserError) as exc:
        parse(body)
    assert f"t.txt:{line}:" in str(exc.value)
    assert message in str(exc.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("engines: a\n", "no 'dataflow:' header line"),
        ("dataflow: x\nengines: a a\n", "duplicate names"),
        ("dataflow: x\nengines: a\ncolour: red\n", "t.txt:3: unknown header key 'colour'"),
        ("dataflow: x\nengines: a\nwindow: 0\n", "'window' is 0"),
        ("dataflow: x\nengines: a\nparams: {\n", "t.txt:3: the params object is not valid JSON"),
        ("dataflow: x\nengines: a\nformat: other 1\n", "t.txt:3: format is 'other 1'"),
        ("dataflow: x\nengines: a\ntensor: Q offchip base=0\n", "t.txt:3: tensor 'Q' needs"),
        ("dataflow: x\nengines: a\ntensor: Q nowhere base=0 shape=1\n", "'space' is 'nowhere'"),
    ],
)
def test_header_errors(text, message):
    with pytest.raises(UserError, match=r"t\.txt") as exc:
        parse_text(text.splitlines(), "t.txt")
    assert message in str(exc.value)


def test_read_text_reports_bad_encoding(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"dataflow: \xff\n")
    with pytest.raises(UserError, match=r"bad\.txt: the text trace is not UTF-8"):
        read_text(path)
