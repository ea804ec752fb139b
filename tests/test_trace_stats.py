"""Trace statistics: counts, bytes per tensor and direction, FLOPs, on-chip span."""

from __future__ import annotations

from tests import trace_samples as ts
from tlm_models.trace.stats import trace_stats


def stats(count, chunk):
    records = ts.records(count)
    return trace_stats(ts.header(), [records[i : i + chunk] for i in range(0, count, chunk)])


def test_counts_bytes_and_flops_of_the_synthetic_trace():
    steps = 50
    s = stats(steps * ts.STEP, 64)
    assert s.records == 300
    assert s.ops_by_kind == {"load": 100, "store": 50, "matmul": 50, "vector": 50, "exp": 50}
    assert s.ops_by_engine == {"dma0": 100, "dma1": 50, "pe": 100, "exp": 50}
    tile = 8 * 128  # bytes per load/store: m=8 rows of n=128 bytes
    assert s.bytes_read == {"Q": steps * tile, "K": steps * tile}
    assert s.bytes_written == {"O": steps * tile}
    # matmul 8x8x64 -> 2*8*8*64; exp and vector 8x8 elements each
    assert s.flops == {"matmul": steps * 2 * 8 * 8 * 64, "vector": steps * 64, "exp": steps * 64}
    assert s.total_flops == steps * (8192 + 128)
    assert (s.onchip_low, s.onchip_high) == (ts.SRAM, ts.SRAM + 4 * 1024)
    assert s.onchip_buffers == {ts.SRAM, ts.SRAM + 1024}


def test_chunking_does_not_change_stats():
    assert stats(600, 1).to_dict() == stats(600, 600).to_dict() == stats(600, 77).to_dict()


def test_unknown_tensor_and_engine_are_labelled():
    records = ts.records(6)
    records["tensor"][0] = 9
    records["engine"][1] = 200
    s = trace_stats(ts.header(), [records])
    assert s.bytes_read == {"#9": 1024, "K": 1024}
    assert s.ops_by_engine["#200"] == 1
    assert s.to_dict()["onchip_load_buffers"] == 2
