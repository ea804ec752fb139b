"""Masked, grouped-query and decode workloads on tiles: whole query blocks per tile
(dataflows/block_deal.py), bytes per tile and in total equal to the closed forms."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.dataflow_helpers import emit_all, offchip_elements
from tests.tile_jobs import workload_run_job
from tests.workload_reference import masked_attention, masked_polynomial, workload_inputs
from tlm_models.dataflows import Workload
from tlm_models.dataflows.block_deal import deal_blocks, zigzag_tile
from tlm_models.dataflows.io_formulas import (
    TRAFFIC,
    approx_traffic,
    query_block_height,
    tiled_block_count,
    tiled_traffic,
)
from tlm_models.dataflows.partition import QUERY_BLOCK_DATAFLOWS
from tlm_models.dataflows.query_blocks import block_shape, query_blocks, tile_query_blocks
from tlm_models.errors import UserError
from tlm_models.platform.compose import Platform
from tlm_models.replay.reference import run_attention
from tlm_models.run.config import RunConfig
from tlm_models.run.resolve import resolve_run
from tlm_models.run.worker import run_in_worker

ROOT = Path(__file__).resolve().parent.parent
X4 = Platform.load(ROOT / "platforms/attenio-x4.yaml").config

#: Causal (whole heads per tile), GQA with a sliding window (whole groups per tile), MQA
#: (one group: blocks dealt zig-zag) and GQA decode (one stacked block per group).
WORKLOADS: dict[str, dict[str, Any]] = {
    "causal": {"seq_len": 1024, "head_dim": 64, "heads": 8, "mask": "causal"},
    "gqa-sliding": {"seq_len": 1024, "head_dim": 64, "heads": 8, "kv_heads": 4,
                    "mask": "sliding", "window": 300},
    "mqa-causal": {"seq_len": 1024, "head_dim": 64, "heads": 4, "kv_heads": 1,
                   "mask": "causal"},
    "gqa-decode": {"seq_len": 1, "kv_len": 2048, "head_dim": 64, "heads": 32, "kv_heads": 4,
                   "phase": "decode", "mask": "causal"},
}  # fmt: skip


@pytest.mark.parametrize(
    ("dataflow", "name"),
    # AttenIO stacks MQA's 4 causal heads of N = 1024 into 3 blocks: refused on 4 tiles.
    [
        (d, n)
        for d in QUERY_BLOCK_DATAFLOWS
        for n in WORKLOADS
        if (d, n) != ("attenio", "mqa-causal")
    ],
)
def test_bytes_per_tile_and_total_equal_closed_forms(dataflow: str, name: str) -> None:
    """Every tile's trace moves exactly ``tiled_traffic`` (the sum over its whole blocks) and
    the tiles together exactly the one-tile closed form: dealing whole blocks adds no byte."""
    w = Workload(**WORKLOADS[name])
    assert tiled_block_count(dataflow, w, X4.info()) >= 4
    total: dict[str, int] = {}
    for t in range(4):
        info = X4.tile_info(t)
        header, recs = emit_all(dataflow, w, info)
        got = offchip_elements(header, recs)
        assert got == tiled_traffic(dataflow, w, info)
        for tensor, count in got.items():
            total[tensor] = total.get(tensor, 0) + count
    assert total == TRAFFIC[dataflow](w, X4.info()).elements


def test_decode_bytes_by_hand() -> None:
    """FlashAttention-2 decode, 32 query heads sharing 4 K/V heads of 2,048 keys, d = 64, on 4
    tiles: tile t holds K/V group t (its 8 query heads stacked in one block), so it reads
    8 query rows and 2,048 K and V rows once and writes 8 rows: (2 x 8 + 2 x 2,048) x 64."""
    w = Workload(**WORKLOADS["gqa-decode"])
    for t in range(4):
        blocks = tile_query_blocks(w, query_block_height("flash2", w, X4.info()), t, 4)
        assert [(b.kv_head, b.head0, b.heads) for b in blocks] == [(t, 8 * t, 8)]
        assert tiled_traffic("flash2", w, X4.tile_info(t)) == {
            "Q": 8 * 64, "K": 2048 * 64, "V": 2048 * 64, "O": 8 * 64,
        }  # fmt: skip


def test_every_block_on_exactly_one_tile() -> None:
    """Whole K/V groups per tile when there are at least as many groups as tiles, else the
    blocks zig-zag: 0 1 2 3 3 2 1 0 0 1 ..."""
    assert [zigzag_tile(i, 4) for i in range(10)] == [0, 1, 2, 3, 3, 2, 1, 0, 0, 1]
    for spec, tiles in (("gqa-sliding", 4), ("gqa-sliding", 3), ("mqa-causal", 4)):
        w = Workload(**WORKLOADS[spec])
        blocks = query_blocks(w, block_shape(w, 64))
        shares = [
            deal_blocks(blocks, [b.kv_head for b in blocks], w.kv_head_count, t, tiles)
            for t in range(tiles)
        ]
        assert Counter(b for s in shares for b in s) == Counter(blocks)
        if w.kv_head_count >= tiles:
            groups = [{b.kv_head for b in s} for s in shares]
            assert all(not (a & b) for i, a in enumerate(groups) for b in groups[i + 1 :])


def test_zigzag_balances_causal_work() -> None:
    """MQA, causal, N = 1024, 4 heads: FlashAttention-2's blocks (the paper's tiles, Br = 64
    rows) stack 16 positions of the 4 heads, 64 blocks whose key ranges grow by 16 keys a
    block. Zig-zag gives each tile blocks j and 7 - j of every 8, so the score elements (rows
    x key range) of the 4 tiles are exactly equal; contiguous quarters would give the last
    tile 6.6 times the first's."""
    w = Workload(**WORKLOADS["mqa-causal"])
    height = query_block_height("flash2", w, X4.info(), {"tiling": "paper"})
    work = []
    for t in range(4):
        blocks = tile_query_blocks(w, height, t, 4)
        assert {(b.heads, b.rows) for b in blocks} == {(4, 16)}
        work.append(sum(b.height * (b.row0 + b.rows) for b in blocks))  # causal: hi = last row
    assert work == [sum(64 * 16 * (j + 1) for j in range(64)) // 4] * 4
    quarters = [sum(64 * 16 * (j + 1) for j in range(16 * q, 16 * q + 16)) for q in range(4)]
    assert quarters[3] / quarters[0] == pytest.approx(6.65, abs=0.01)


@pytest.mark.parametrize(
    ("dataflow", "seq_len", "heads"), [("flash2", 256, 4), ("attenio", 1024, 8)]
)
def test_tiles_together_compute_masked_attention(dataflow: str, seq_len: int, heads: int) -> None:
    """MQA with a causal mask, its blocks dealt zig-zag over 4 tiles (AttenIO: 5 blocks of
    up to 1,984 stacked rows): each tile's trace, executed, writes its blocks' rows of O, and
    together they are masked attention. (Every dataflow takes its blocks from
    ``share_query_blocks``; the bytes test covers all four.)"""
    w = Workload(seq_len=seq_len, head_dim=64, heads=heads, kv_heads=1, mask="causal")
    inputs = workload_inputs(w)
    out = np.full((heads, seq_len, 64), np.nan, dtype=np.float32)
    height = query_block_height(dataflow, w, X4.info())
    header = None
    for t in range(4):
        info = X4.tile_info(t)
        header, recs = emit_all(dataflow, w, info)
        o = run_attention(header, [recs], info, inputs)
        for b in tile_query_blocks(w, height, t, 4):
            rows = slice(b.row0, b.row0 + b.rows)
            out[b.head0 : b.head0 + b.heads, rows] = o[b.head0 : b.head0 + b.heads, rows]
    assert header is not None
    ref = masked_attention(header, inputs)
    assert float(np.abs(out - ref).max() / np.abs(ref).max()) < 1e-3


def test_too_few_blocks_are_refused() -> None:
    """AttenIO stacks 2 causal heads of N = 1024 in 2 blocks (a = 1,984): not for 4 tiles."""
    config = RunConfig.of("attenio", 1024, 64, 2, "platforms/attenio-x4.yaml", mask="causal")
    with pytest.raises(UserError, match=r"in 2 query block\(s\), fewer than the 4 tiles"):
        resolve_run(config)


def test_causal_run_on_tiles_states_its_closed_form() -> None:
    """FlashAttention-2, causal, 8 heads of N = 1024 on attenio-x4's 4 tiles, replayed: the
    off-chip bytes equal the tiles' closed form and the one-tile closed form; every tile has
    two whole heads, so their work and off-chip bytes are equal. The stack is the bottleneck
    (97 % busy): tiles that tie at it yield to lower indices, so the last tile ends a few
    per cent after the first (measured 153.4 / 154.5 / 154.7 / 160.3 µs)."""
    result = run_in_worker(workload_run_job, "flash2", WORKLOADS["causal"])
    w = Workload(**WORKLOADS["causal"])
    one_tile = TRAFFIC["flash2"](w, X4.info()).total_bytes
    assert result["bytes"] == result["closed_form"] == one_tile
    per_tile = [t["offchip_bytes"]["total"] for t in result["tiles"]["per_tile"]]
    assert per_tile == [one_tile // 4] * 4
    times = [t["sim_time_ns"] for t in result["tiles"]["per_tile"]]
    assert result["tiles"]["imbalance"] == max(times) / (sum(times) / 4) < 1.05


@pytest.mark.parametrize(
    ("name", "fields", "params"),
    [
        ("case I, GQA, causal", {"seq_len": 512, "heads": 8, "kv_heads": 4, "mask": "causal"}, {}),
        ("columns (d = 128)", {"seq_len": 512, "head_dim": 128, "heads": 4}, {}),
        ("features (degree 6)", {"seq_len": 16, "head_dim": 16, "heads": 6}, {"degree": "6"}),
    ],
)
def test_approx_bytes_per_tile_are_its_groups_share(
    name: str, fields: dict[str, Any], params: dict[str, str]
) -> None:
    """approx takes whole K/V groups per tile (6 heads on 4 tiles: 1, 2, 1, 2): every tile's
    trace moves g_t / G of each tensor of the one-tile closed form, the tiles together all."""
    w = Workload(**{"head_dim": 64, **fields})
    total: dict[str, int] = {}
    for t in range(4):
        info = X4.tile_info(t)
        header, recs = emit_all("approx", w, info, params=params)
        got = offchip_elements(header, recs)
        assert got == tiled_traffic("approx", w, info, params), name
        for tensor, count in got.items():
            total[tensor] = total.get(tensor, 0) + count
    assert total == approx_traffic(w, X4.info(), params).elements


def test_approx_tiles_together_compute_polynomial_attention() -> None:
    """GQA (8 query heads, 4 K/V heads), causal, on 4 tiles: tile t builds H of K/V group t
    and writes its 2 query heads' rows; together they are the one-tile polynomial attention."""
    w = Workload(seq_len=128, head_dim=64, heads=8, kv_heads=4, mask="causal")
    inputs = workload_inputs(w)
    out = np.full((8, 128, 64), np.nan, dtype=np.float32)
    header = None
    for t in range(4):
        info = X4.tile_info(t)
        header, recs = emit_all("approx", w, info)
        o = run_attention(header, [recs], info, inputs)
        out[2 * t : 2 * t + 2] = o[2 * t : 2 * t + 2]
    assert header is not None
    ref = masked_polynomial(header, inputs)
    assert float(np.abs(out - ref).max() / np.abs(ref).max()) < 1e-3


def test_approx_run_on_tiles_states_its_closed_form() -> None:
    """approx, GQA 8 / 4 heads, causal, N = 512 on attenio-x4's 4 tiles, replayed: off-chip
    bytes = the tiles' closed form = the one-tile closed form; a K/V group per tile."""
    fields = {"seq_len": 512, "head_dim": 64, "heads": 8, "kv_heads": 4, "mask": "causal"}
    result = run_in_worker(workload_run_job, "approx", fields)
    one_tile = approx_traffic(Workload(**fields), X4.info()).total_bytes
    assert result["bytes"] == result["closed_form"] == one_tile
    assert result["tiles"]["assignment"] == "whole K/V groups per tile (4 groups on 4 tiles)"
    assert result["tiles"]["work_imbalance"] == 1.0
