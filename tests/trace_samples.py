"""Valid synthetic traces and a matching platform for the trace tests, built in bulk."""

from __future__ import annotations

import numpy as np

from tlm_models.platform.info import MemoryRegion, PlatformInfo
from tlm_models.trace.header import TensorInfo, TraceHeader
from tlm_models.trace.record import (
    MATMUL_TRANS_B,
    NO_TENSOR,
    RECORD_DTYPE,
    Broadcast,
    OpKind,
    VectorOp,
    vector_code,
)

SRAM = 1 << 32
PLATFORM = PlatformInfo(
    name="test",
    offchip=MemoryRegion("hbm", 0, 1 << 30),
    scratchpad=MemoryRegion("sram", SRAM, 512 << 10),
    engines={"dma0": "dma", "dma1": "dma", "pe": "pe", "exp": "exp"},
    pe_rows=64,
    pe_cols=32,
    pe_clock_hz=1e9,
    exp_lanes=128,
    exp_clock_hz=1e9,
    offchip_bandwidth=128e9,
    kv_buffer=MemoryRegion("kvbuf", SRAM + (1 << 24), 256),
)
ENGINES = ["dma0", "dma1", "pe", "exp"]
# One step of six operations: load q, load k, s = q.k^T, e = exp(s), o = e * scalar, store o.
STEP = 6


def header(op_count: int = 0, window: int = 64) -> TraceHeader:
    return TraceHeader(
        dataflow="synthetic",
        engines=list(ENGINES),
        tensors=[
            TensorInfo("Q", 0, (1024, 64), 2),
            TensorInfo("K", 1 << 20, (1024, 64), 2),
            TensorInfo("O", 2 << 20, (1024, 64), 2),
        ],
        params={"d": 64},
        window=window,
        op_count=op_count,
    )


def records(count: int) -> np.ndarray:
    """``count`` valid records: six-op steps on 8x64 FP16 tiles, each op chained to the last."""
    r = np.zeros(count, RECORD_DTYPE)
    slot = np.arange(count) % STEP
    row = (np.arange(count) // STEP) % 128 * 8  # tile row within the 1024-row tensors
    tile = 8 * 64 * 2  # bytes of one 8x64 tile
    q, k, s, o = SRAM, SRAM + tile, SRAM + 2 * tile, SRAM + 3 * tile
    kinds = np.array(
        [OpKind.LOAD, OpKind.LOAD, OpKind.MATMUL, OpKind.EXP, OpKind.VECTOR, OpKind.STORE]
    )
    r["kind"] = kinds[slot]
    r["engine"] = np.array([0, 0, 2, 3, 2, 1])[slot]
    r["tensor"] = np.array([0, 1, NO_TENSOR, NO_TENSOR, NO_TENSOR, 2])[slot]
    r["code"] = np.array([0, 0, MATMUL_TRANS_B, 0, vector_code(VectorOp.MUL, Broadcast.SCALAR), 0])[
        slot
    ]
    r["m"] = 8
    r["n"] = np.array([128, 128, 8, 8, 8, 128])[slot]
    r["k"] = np.where(slot == 2, 64, np.where(slot == 4, 0x3F000000, 0))
    offchip_row = row.astype(np.int64) * 128
    r["src0"] = np.select(
        [slot == 0, slot == 1, slot == 2, slot == 3, slot == 4, slot == 5],
        [offchip_row, (1 << 20) + offchip_row, q, s, s, o],
    )
    r["src1"] = np.where(slot == 2, k, 0)
    r["dst"] = np.select(
        [slot == 0, slot == 1, slot == 2, slot == 3, slot == 4, slot == 5],
        [q, k, s, s, o, (2 << 20) + offchip_row],
    )
    # each op waits for the previous one; the matmul also for the first load
    r["deps"][1:, 0] = 1
    r["deps"][:, 1] = np.where(slot == 2, 2, 0)
    return r
