"""FuseMax: the resident-row rules, off-chip bytes equal to AttenIO's when every row fits, and
the 2-D/1-D array pipeline measured on FuseMax's own machine."""

from __future__ import annotations

import numpy as np
import pytest

from tests.dataflow_helpers import emit_all, offchip_elements, worst_error
from tests.dataflow_platforms import KIB, attenio_machine
from tlm_models import Workload, simulate
from tlm_models.dataflows.fusemax import fusemax_plan
from tlm_models.dataflows.io_formulas import TRAFFIC
from tlm_models.platform import load_platform
from tlm_models.platform.info import PlatformInfo
from tlm_models.replay.reference import workload_attention
from tlm_models.trace.header import TraceHeader
from tlm_models.trace.record import OpKind

FUSEMAX = "platforms/fusemax.yaml"
ATTENIO = "platforms/attenio.yaml"


def _info(path: str) -> PlatformInfo:
    return load_platform(path).info()


def test_fusemax_machine_is_the_artifacts_cloud_configuration() -> None:
    p = _info(FUSEMAX)
    assert (p.pe_rows, p.pe_cols, p.pe_clock_hz) == (256, 256, 940e6)
    # 256 PEs at 4 cycles per score: 64 scores per cycle
    assert (p.exp_lanes, p.exp_clock_hz) == (64, 940e6)
    assert p.capacity_elements(2) == 16 * 2**20 // 2


@pytest.mark.parametrize(("n", "d"), [(8192, 64), (4096, 128), (2048, 64)])
def test_all_rows_resident_moves_attenios_bytes(n: int, d: int) -> None:
    # Every query row fits on FuseMax's 16 MiB: Q, K, V read once, O written once, 4Nd, which
    # is AttenIO's T = Nd + 2Nd ceil(N/a) + Nd with a >= N on the same machine.
    w, p = Workload(n, d), _info(FUSEMAX)
    header, recs = emit_all("fusemax", w, p, chunk_ops=1 << 16)
    assert header.params["rows"] == n
    expected = {"Q": n * d, "K": n * d, "V": n * d, "O": n * d}
    assert offchip_elements(header, recs) == expected
    assert TRAFFIC["fusemax"](w, p).elements == expected == TRAFFIC["attenio"](w, p).elements


def test_resident_rows_when_not_all_fit() -> None:
    # d = 128, N = 32K on 16 MiB: M = 8,388,608 elements; four 256 x 256 score buffers (the
    # skewed pipeline) and a K and a V tile of 256 rows leave 8,060,928 elements, 261 a row
    # (Q, O and 5 row vectors).
    w, p = Workload(32768, 128), _info(FUSEMAX)
    fit = (8388608 - 4 * 256 * 256 - 2 * 256 * 128) // 261
    assert fit == 30884
    divisor = fusemax_plan(w, p)
    assert (divisor.rows, divisor.p0, divisor.m0, divisor.fit) == (16384, 256, 256, fit)
    assert fusemax_plan(w, p, {"rows": "fit"}).rows == 30720  # 120 x 256
    # one sub-block at a time needs one score buffer: 3 x 256 x 256 more elements for rows
    assert fusemax_plan(w, p, {"pipeline": "none"}).fit == (8388608 - 65536 - 65536) // 261
    n, d = 32768, 128
    assert TRAFFIC["fusemax"](w, p).total_elements == 2 * n * d + 2 * n * d * 2


def test_paper_machine_sub_blocks_follow_its_array() -> None:
    # attenio.yaml: 64 x 32 array, M = 262,144: P0 = 64, M0 = 32;
    # (M - 4*64*32 - 2*32*64) / 133 = 1878 rows fit, and the largest multiple of 64 dividing
    # 8192 below that is 1024 (fit: 29 x 64 = 1856).
    w, p = Workload(8192, 64), _info(ATTENIO)
    plan = fusemax_plan(w, p)
    assert (plan.p0, plan.m0, plan.fit, plan.rows) == (64, 32, 1878, 1024)
    assert fusemax_plan(w, p, {"rows": "fit"}).rows == 1856
    traffic = TRAFFIC["fusemax"](w, p).total_elements
    assert traffic == 2 * 8192 * 64 + 2 * 8192 * 64 * 8


def test_skewed_arrays_overlap_the_2d_array_with_the_softmax() -> None:
    # N = 1K, d = 64 on FuseMax's machine: 4 sub-blocks of 256 rows against 4 tiles of 256
    # keys. The 1-D array's work is N^2 scores and 12 x 256 rescales at 64 a cycle: 16,432
    # cycles = 17,481 ns at 940 MHz. Skewed, the 2-D array works beside it except where the
    # chain crosses a K/V tile: the last P V's issue (256 cycles), the next tile's first
    # QK^T with its systolic fill and drain (64 + 512) and its softmax head (~40), ~880
    # cycles at each of 3 crossings; before the first exp the first QK^T and head (~600
    # cycles), after the last the last P V (768) and O /= l: ~4,000 cycles = 4.3 us, plus
    # the Q load and the O store (128 KiB each at 429 GB/s and 100 ns: 0.4 us each).
    w = Workload(1024, 64)
    bound = (1024 * 1024 + 12 * 256) / 64 / 0.94
    skew = simulate("fusemax", w, FUSEMAX).sim_time_ns
    serial = simulate("fusemax", w, FUSEMAX, pipeline="none").sim_time_ns
    assert bound < skew < bound + 5500
    # One sub-block at a time adds each of the 16 sub-block x tile steps' QK^T, its fill and
    # drain, and its P V to the chain: 16 x (64 + 512 + 256) cycles at least.
    assert serial > bound + 16 * (64 + 512 + 256) / 0.94


@pytest.mark.parametrize(
    "w",
    [
        Workload(40, 8, mask="causal"),
        Workload(40, 8, mask="sliding", window=9),
        Workload(20, 8, heads=4, kv_heads=2, mask="causal"),
    ],
    ids=["causal", "sliding", "gqa-causal"],
)
def test_sub_blocks_skip_exactly_the_tiles_they_do_not_see(w: Workload) -> None:
    # P0 = 4 rows against M0 = 5 keys: sub-blocks end on rows 3, 7, 11, 15, ... and tiles
    # start on keys 0, 5, 10, 15, ...: row 15 sees key 15 alone of its tile, the boundary a
    # sub-block must not be skipped at. All rows are resident (fit 41 >= 40 rows). MACs are
    # 2 h c d per (sub-block, tile) that some row of the sub-block sees (every sub-block on
    # the block's first tile), counted from the mask matrix, independently of the emitter.
    p = attenio_machine(2 * KIB)
    params = {"subblock": "4", "keys": "5"}
    header, recs = emit_all("fusemax", w, p, params=params)
    assert header.params["rows"] == w.group * w.seq_len

    def truth(_h: TraceHeader, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return workload_attention(w, inputs["Q"], inputs["K"], inputs["V"])

    rng = np.random.default_rng(3)
    inputs = {
        "Q": rng.standard_normal((w.head_count, w.seq_len, w.head_dim)).astype(np.float32),
        "K": rng.standard_normal((w.kv_head_count, w.kv_len, w.head_dim)).astype(np.float32),
        "V": rng.standard_normal((w.kv_head_count, w.kv_len, w.head_dim)).astype(np.float32),
    }
    assert worst_error(header, recs, p, inputs, truth) < 1e-3
    visible = w.mask_matrix()  # Nq x Nk: row i sees key j
    lo, hi = w.block_key_range(0, w.seq_len)
    rows = np.tile(np.arange(w.seq_len), w.group)  # stacked heads' positions, head by head
    expected = 0
    for j, key0 in enumerate(range(lo, hi, 5)):
        cols = min(5, hi - key0)
        for r0 in range(0, len(rows), 4):
            seen = visible[rows[r0 : r0 + 4], key0 : key0 + cols].any()
            if j == 0 or seen:
                expected += 2 * len(rows[r0 : r0 + 4]) * cols * w.head_dim
    mm = recs[recs["kind"] == OpKind.MATMUL]
    macs = int((mm["m"].astype(np.int64) * mm["n"] * mm["k"]).sum())
    assert macs == expected * w.kv_head_count
