"""Builder, allocator and workload: handles to back-distances, window, chunks, tiling by repeat."""

from __future__ import annotations

import numpy as np
import pytest

from tlm_models.dataflows.allocator import OnChipAllocator
from tlm_models.dataflows.builder import Ext, Prev, TraceBuilder, role_offsets, tile_runs
from tlm_models.errors import UserError
from tlm_models.platform.info import MemoryRegion
from tlm_models.trace.header import TraceHeader
from tlm_models.trace.record import OpKind, VectorOp
from tlm_models.workload.spec import Workload, parse_count


def _header(window: int = 1 << 16) -> TraceHeader:
    return TraceHeader("t", ["dma0", "dma1", "pe", "exp"], window=window)


def test_scalar_ops_get_back_distances_and_chunks() -> None:
    b = TraceBuilder(_header(), chunk_ops=3)
    first = b.load(0, 0x100, 1, 8, tensor=0)
    second = b.matmul(0x100, 0x100, 0x200, 2, 2, 2, deps=[first])
    b.exp(0x200, 0x200, 2, 2, deps=[second, first])
    b.store(0x200, 0x40, 2, 4, tensor=1)
    chunks = list(b.finish())
    assert [len(c) for c in chunks] == [3, 1]
    recs = np.concatenate(chunks)
    assert recs["deps"][1].tolist() == [1, 0, 0, 0]
    assert recs["deps"][2].tolist() == [1, 2, 0, 0]
    assert recs["engine"].tolist() == [0, 2, 3, 1]


def test_dependency_beyond_window_is_rejected() -> None:
    b = TraceBuilder(_header(window=2))
    h = b.load(0, 0x100, 1, 8, tensor=0)
    b.exp(0, 0, 1, 1)
    b.exp(0, 0, 1, 1)
    with pytest.raises(UserError, match="window"):
        b.exp(0, 0, 1, 1, deps=[h])


def test_more_than_four_deps_rejected() -> None:
    b = TraceBuilder(_header())
    hs = [b.exp(0, 0, 1, 1) for _ in range(5)]
    with pytest.raises(ValueError, match="at most 4"):
        b.exp(0, 0, 1, 1, deps=hs)


def test_repeat_tiles_addresses_and_resolves_prev_and_ext() -> None:
    b = TraceBuilder(_header(), chunk_ops=5)
    outside = b.exp(0, 0, 1, 1)
    tpl = b.template()
    tpl.roles["ld"] = tpl.load(0x1000, 0x100, 1, 16, tensor=0, deps=[Prev("mm", 2)])
    tpl.roles["mm"] = tpl.matmul(0x100, 0x100, 0x200, 1, 1, 1, deps=[tpl.roles["ld"], Ext("x")])

    def offsets(r: np.ndarray) -> dict[str, dict[int, np.ndarray | int]]:
        return role_offsets(tpl, {("ld", "src0"): r * 16, ("ld", "dst"): -(r % 2) * 8})

    gen = b.repeat(tpl, 4, offsets, ext={"x": outside})
    chunks: list[np.ndarray] = []
    try:
        while True:
            chunks.append(next(gen))
    except StopIteration as stop:
        result = stop.value
    chunks += list(b.finish())
    recs = np.concatenate(chunks)
    loads = recs[recs["kind"] == OpKind.LOAD]
    assert loads["src0"].tolist() == [0x1000, 0x1010, 0x1020, 0x1030]
    assert loads["dst"].tolist() == [0x100, 0xF8, 0x100, 0xF8]
    # Loads of repetitions 0 and 1 have no earlier matmul two back; later ones wait for it.
    assert recs["deps"][1:9:2, 0].tolist() == [0, 0, 3, 3]
    assert recs["deps"][2:9:2, 1].tolist() == [2, 4, 6, 8]  # Ext: distance grows
    assert result.handle("mm") == 8 and result.handle("mm", 2) == 6


def test_tile_runs_cover_exactly() -> None:
    assert tile_runs(10, 4) == [(0, 1, 4, True), (1, 1, 4, False), (2, 1, 2, False)]
    assert tile_runs(8, 4) == [(0, 1, 4, True), (1, 1, 4, False)]
    assert tile_runs(3, 4) == [(0, 1, 3, True)]


def test_allocator_packs_aligns_and_reports() -> None:
    a = OnChipAllocator(MemoryRegion("sram", 0x1000, 256), 2, alignment=32)
    x = a.alloc("x", 3, 3)
    y = a.alloc("y", 4, 4)
    assert x.addr == 0x1000 and y.addr == 0x1020
    assert "x" in a.layout() and "used 64 B of 256 B" in a.layout()
    with pytest.raises(UserError, match=r"'z' \(10 x 10 x 2 B = 200 B\) does not fit in sram"):
        a.alloc("z", 10, 10)
    with pytest.raises(UserError, match="twice"):
        a.alloc("x", 1)


def test_workload_and_counts() -> None:
    assert parse_count("8K") == 8192 and parse_count("128k") == 131072
    assert parse_count("1000") == 1000
    with pytest.raises(UserError):
        parse_count("eight")
    with pytest.raises(UserError, match="head_dim"):
        Workload(64, 0)
    assert Workload(64, 16).scale == 0.25
    assert int(VectorOp.MAX) == 5  # the builder relies on the shared enum values


def test_an_ext_dependency_repeat_was_not_given_is_an_error() -> None:
    b = TraceBuilder(_header())
    tpl = b.template()
    tpl.exp(0x200, 0x200, 1, 1, deps=[Ext("o_free")])
    with pytest.raises(ValueError, match=r"Ext\('o_free'\), which repeat\(\) was not given"):
        list(b.repeat(tpl, 2, ext={"o_fre": 0}))
    dropped = b.repeat(tpl, 2, ext={"o_free": None})  # dropped on purpose
    assert all(int(c["deps"].max()) == 0 for c in [*dropped, *b.finish()])


def test_records_are_built_by_field_name() -> None:
    b = TraceBuilder(_header())
    b.vector(VectorOp.ROWMAX, dst=0x300, src0=0x200, m=4, n=8)
    b.load(0x40, 0x100, 2, 16, tensor=3, src_stride=64)
    rec = np.concatenate(list(b.finish()))
    assert rec["kind"].tolist() == [OpKind.VECTOR, OpKind.LOAD]
    assert (rec["m"][0], rec["n"][0], rec["src0"][0], rec["dst"][0]) == (4, 8, 0x200, 0x300)
    assert (rec["tensor"][1], rec["src0"][1], rec["dst"][1]) == (3, 0x40, 0x100)
    assert (rec["src_stride"][1], rec["dst_stride"][1], rec["tensor"][0]) == (64, 0, 0xFF)
