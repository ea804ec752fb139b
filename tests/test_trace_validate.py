"""Trace checks: a valid trace passes; each rule catches its defect and names the record."""

from __future__ import annotations

import numpy as np
import pytest

from tests import trace_samples as ts
from tlm_models.trace.record import OpKind
from tlm_models.trace.validate import TraceChecker, check_trace

STEP = ts.STEP  # record i % 6: 0 load Q, 1 load K, 2 matmul, 3 exp, 4 vector, 5 store


def check(records, platform=None, window=64, chunk=None):
    chunk = chunk or len(records)
    chunks = [records[i : i + chunk] for i in range(0, len(records), chunk)]
    return check_trace(ts.header(window=window), chunks, platform, max_problems=5)


def test_valid_trace_passes_with_and_without_platform():
    records = ts.records(600)
    assert check(records).ok
    report = check(records, ts.PLATFORM, chunk=128)
    assert report.ok and report.records == 600


def _broken(index, **fields):
    records = ts.records(200)
    for key, value in fields.items():
        if key.startswith("dep"):
            records["deps"][index, int(key[3:])] = value
        else:
            records[key][index] = value
    return records


def test_a_lazy_rescale_of_at_most_m_rows_passes():
    assert check(_broken(10, code=0x53, k=8)).ok
    assert check(_broken(10, code=0x53, k=0)).ok


@pytest.mark.parametrize(
    ("index", "fields", "rule", "words"),
    [
        (7, {"kind": 9}, "kind", "kind 9 is not one of 1..5"),
        (7, {"kind": 0}, "kind", "kind 0"),
        (8, {"engine": 4}, "engine", "engine index 4 but the header lists 4"),
        (6, {"tensor": 3}, "tensor", "load tensor index 3 but the header lists 3"),
        (2, {"dep0": 3}, "deps", "reaches before the first record (record 2"),
        (100, {"dep2": 65}, "window", "exceeds the window of 64"),
        (8, {"k": 0}, "zero_size", "zero-sized matmul: m=8 n=8 k=0"),
        (6, {"n": 0}, "zero_size", "zero-sized load"),
        (6, {"m": 1 << 20, "n": 1 << 12}, "size", "more than 2147483648 bytes"),
        (8, {"code": 0x08}, "code", "matmul has invalid code 0x08"),
        (10, {"code": 0x0A}, "code", "vector has invalid code 0x0a"),
        # a mask takes its fill as the scalar operand
        (10, {"code": 0x09}, "code", "vector has invalid code 0x09"),
        (6, {"code": 1}, "code", "load has invalid code"),
        # a lazy rescale (bit 6) is a row-broadcast mul of at most its m rows
        (10, {"code": 0x73}, "code", "vector has invalid code 0x73"),
        (10, {"code": 0x53, "k": 9}, "code", "vector has invalid code 0x53"),
    ],
)
def test_each_rule_names_the_record(index, fields, rule, words):
    report = check(_broken(index, **fields), chunk=16)
    assert not report.ok
    assert report.counts == {rule: 1}
    (problem,) = report.problems
    assert problem.index == index and problem.rule == rule
    assert words in problem.reason
    assert str(problem).startswith(f"record {index}: ")


@pytest.mark.parametrize(
    ("index", "fields", "words"),
    [
        (6, {"src0": (1 << 30) - 100}, "load src0 0x3fffff9c + 1024 bytes is not inside hbm"),
        (6, {"dst": 0x50}, "load dst 0x50 + 1024 bytes is not inside sram"),
        (6, {"dst_stride": 1 << 20}, "load dst"),  # rows fall off the end of the scratchpad
        (11, {"dst": ts.SRAM}, "store dst 0x100000000 + 1024 bytes is not inside hbm"),
        (8, {"src1": ts.SRAM + (512 << 10) - 8}, "matmul src1"),
        (9, {"dst": 0}, "exp dst 0x0 + 128 bytes"),
    ],
)
def test_addresses_against_platform(index, fields, words):
    records = _broken(index, **fields)
    assert check(records).ok  # structure alone is fine
    report = check(records, ts.PLATFORM)
    assert report.counts == {"address": 1}
    assert report.problems[0].index == index and words in report.problems[0].reason


def test_kv_buffer_counts_as_on_chip_but_extent_must_fit():
    records = ts.records(12)
    kv = ts.PLATFORM.kv_buffer
    records["dst"][6] = kv.base  # a 1024-byte tile into the 256-byte buffer
    assert check(records, ts.PLATFORM).counts == {"address": 1}
    records["m"][6] = 1  # one 128-byte row fits
    assert check(records, ts.PLATFORM).ok


def test_engine_kind_against_platform():
    records = ts.records(12)
    records["engine"][8] = 0  # matmul on dma0
    report = check(records, ts.PLATFORM)
    assert report.counts == {"engine_kind": 1}
    assert "matmul on engine 'dma0'" in report.problems[0].reason


def test_reports_first_problems_in_order_and_counts_all():
    records = ts.records(6000)
    records["kind"][100::200] = 0
    records["engine"][50::500] = 77
    report = check(records, chunk=1000)
    assert report.counts == {"kind": 30, "engine": 12}
    assert [p.index for p in report.problems] == [50, 100, 300, 500, 550]


def test_chunk_boundaries_do_not_change_the_result():
    records = ts.records(3000)
    records["deps"][[1, 40, 700]] = [[5, 0, 0, 0], [0, 0, 0, 41], [65, 0, 0, 0]]
    whole = check(records)
    for size in (1, 7, 64, 999):
        assert check(records, chunk=size).problems == whole.problems
    assert [p.rule for p in whole.problems] == ["deps", "deps", "window"]


def test_rejects_foreign_dtype():
    with pytest.raises(TypeError):
        TraceChecker(ts.header()).check(np.zeros(4, np.uint64))


def test_kinds_sample_layout():
    assert list(ts.records(6)["kind"]) == [
        OpKind.LOAD,
        OpKind.LOAD,
        OpKind.MATMUL,
        OpKind.EXP,
        OpKind.VECTOR,
        OpKind.STORE,
    ]
