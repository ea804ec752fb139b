"""Worker jobs of the split-K tests (one simulation per process; jobs importable by name)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.tile_jobs import SRAM, STRIDE, header, tiled_platform
from tlm_models.replay.tiles import replay_tiles_in_this_process
from tlm_models.trace.record import RECORD_DTYPE, OpKind

#: Bytes of each partial store and combine load in the hand-written traces.
PART_BYTES = 1024


def producer_trace(tile: int, matmuls: int, token: int) -> np.ndarray:
    """``matmuls`` chained matmuls (64 x 32 outputs, k = 64: one fold of 64 + 94 = 158 cycles
    each), then a store of their result posting ``token`` (0: none): a slice computing its
    partial."""
    base = SRAM + tile * STRIDE
    recs = np.zeros(matmuls + 1, RECORD_DTYPE)
    for j in range(matmuls):
        mm = recs[j]
        mm["kind"], mm["engine"] = OpKind.MATMUL, 1
        mm["m"], mm["n"], mm["k"] = 64, 32, 64
        mm["src0"], mm["src1"], mm["dst"] = base + 0x4000, base + 0x1000, base + 0x8000
        mm["deps"][0] = 1 if j else 0
    store = recs[matmuls]
    store["kind"], store["engine"], store["tensor"] = OpKind.STORE, 0, 0
    store["m"], store["n"], store["k"] = 1, PART_BYTES, token
    store["src0"], store["dst"] = base + 0x8000, tile * PART_BYTES
    store["deps"][0] = 1
    return recs


def combiner_trace(tile: int, token: int, posts: int) -> np.ndarray:
    """One load of PART_BYTES waiting for ``posts`` posts of ``token`` (0: no wait)."""
    recs = np.zeros(1, RECORD_DTYPE)
    recs["kind"], recs["engine"], recs["tensor"] = OpKind.LOAD, 0, 0
    recs["m"], recs["n"], recs["k"], recs["code"] = 1, PART_BYTES, token, posts
    recs["src0"], recs["dst"] = 0, SRAM + tile * STRIDE
    return recs


def wait_job(matmuls: tuple[int, ...], token: int, posts: int) -> dict[str, Any]:
    """Tiles 0 .. P-1 each run ``matmuls[i]`` matmuls and store (posting ``token``); tile P
    loads, waiting for ``posts`` posts: each tile's first start and last completion (ns).
    HBM far faster than needed (1000 GB/s): only the wait orders the load."""
    count = len(matmuls) + 1
    config = tiled_platform(count, "1000 GB/s")
    traces = [(header(), [producer_trace(t, n, token)]) for t, n in enumerate(matmuls)]
    traces.append((header(), [combiner_trace(count - 1, token, posts)]))
    out = replay_tiles_in_this_process(config, traces)
    return {
        key: [r["stats"][key]["value"] for r in out.tiles] for key in ("first_start", "last_done")
    }


def x16_run_job(workload: dict[str, Any]) -> dict[str, Any]:
    """FlashAttention-2 on attenio-x16 (16 tiles, two stacks) for the workload fields
    ``workload``: bytes, closed form, the tiles' split section and the fast_forward section."""
    from tlm_models.run.config import RunConfig
    from tlm_models.run.execute_tiled import run_tiled
    from tlm_models.run.resolve import resolve_run

    config = RunConfig.of("flash2", platform="platforms/attenio-x16.yaml", **workload)
    result = run_tiled(resolve_run(config))
    return {
        "bytes": result["offchip_bytes"]["total"],
        "closed_form": result["bounds"]["closed_form"],
        "split": result["tiles"]["split"],
        "fast_forward": result["fast_forward"],
    }
