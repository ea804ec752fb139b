"""Hand-written traces whose every replayed number is derived by hand from docs/models/*.md.

Platform tests/data/platforms/exact.yaml: HBM 2 channels x 1 B/ns, latency 100 ns, interleave
256 B; links (interconnects) 64 B per 1 ns cycle with 1 ns hops; SRAM 2 ports x 64 B per 1 ns
cycle, latency 1 ns; DMA setup 10 ns, bursts of 256 B; PE 4 x 4 broadcast, pipeline 8 cycles.
SRAM at 0x4000_0000. The arithmetic is in the comments; times in ns.

One 256 B load from an idle machine (the building block used below), issued at start s:
  burst issue       I = s + 10                               (setup_latency)
  read via dma_noc: grant I, link busy 256/64 = 4 cycles; HBM sees it at I + 1 (hop)
  HBM channel:      busy [I+1, I+1+256], ready = I+257+100 = I+357
  noc response:     max(I+357, I+1+4) + 1 = I+358 = R
  write via noc:    grant R, SRAM sees R+1, port busy 4 cycles, ready R+1+4+1 = R+6
  noc response:     max(R+6, R+1+4) + 1 = R+7 = W
  done = W = s + 10 + 358 + 7 = s + 375; engine_free = I = s + 10
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tlm_models.run.trace_job import replay_trace_file
from tlm_models.run.worker import run_in_worker

PLATFORM = str(Path(__file__).parent / "data" / "platforms" / "exact.yaml")
SRAM = 0x4000_0000
HEADER = """dataflow: exact
engines: dma0 dma1 pe
window: 16
tensor: K offchip base=0x0 shape=64x128
"""


def _replay(tmp_path: Path, body: str, overrides: tuple[str, ...] = ()) -> dict[str, Any]:
    trace = tmp_path / "t.trace.txt"
    trace.write_text(HEADER + body)
    return run_in_worker(replay_trace_file, str(trace), PLATFORM, overrides, timeout=120)


def test_load_then_dependent_matmul(tmp_path: Path) -> None:
    # load: done 375 (module docstring), engine_free 10. Its write took SRAM port 0 [369, 373].
    # matmul 4x4x8 starts at 375 (its dependency's done):
    #   cycles = ceil(4*4 / 16) * 8 + 8 = 16  -> compute_end 391
    #   SRAM traffic through compute_noc, all requested at 375 (64 B = 1 link cycle, 1 port cycle):
    #     read A (4x8x2 = 64 B): grant 375, SRAM 376 on port 1 (free first), ready 378, resp 379
    #     read B (8x4x2 = 64 B): grant 376, SRAM 377 on port 0, ready 379, resp 380
    #     write C (4x4x2 = 32 B): grant 377, SRAM 378 on port 1, ready 380, resp 381
    #   done = max(391, 381) = 391
    r = _replay(
        tmp_path,
        f"0 load dma0 tensor=K m=1 n=256 src0=0x0 dst={SRAM:#x}\n"
        f"1 matmul pe m=4 n=4 k=8 src0={SRAM:#x} src1={SRAM + 0x40:#x} dst={SRAM + 0x100:#x}"
        " deps=0\n",
    )
    assert r["sim_time_ns"] == 391.0
    assert r["io_active_ns"] == 375.0
    assert r["compute_active_ns"] == 16.0  # [375, 391]
    assert r["overlap_efficiency"] == 0.0  # the intervals touch at 375 only
    assert r["exposed_io_ns"] == 375.0
    assert r["memory_stall_fraction"] == pytest.approx(375 / 391, abs=1e-12)
    assert r["stalls"]["pe"]["load_data"] == 375.0  # idle from the first start (0) to 375
    assert sum(r["stalls"]["dma0"].values()) == 0.0
    assert r["offchip_bytes_per_tensor"]["K"] == {"read": 256, "write": 0}
    assert r["pe"]["macs"] == 128
    # busy 16 of 391 ns; peak 16 MAC/cycle x 391 cycles
    assert r["pe"]["busy_fraction"] == pytest.approx(16 / 391, abs=1e-12)
    assert r["pe"]["mac_utilization"] == pytest.approx(128 / (16 * 391), abs=1e-12)


@pytest.mark.parametrize(
    ("second_src", "expected_done"),
    [
        # 0x200 = 512: (512 / 256) % 2 = channel 0, shared with the first load.
        #   first load as in the docstring: HBM ch0 busy [11, 267], done 375; its write held the
        #   SRAM link [368, 372] and port 0 [369, 373].
        #   second (dma1, also starts at 0, I = 10): link to HBM granted at 14 (after the first's
        #   4 cycles), HBM sees 15 but ch0 is busy until 267: busy [267, 523], ready 623,
        #   response 624; write granted 624, SRAM 625 on port 1, ready 630, response 631.
        (0x200, 631.0),
        # 0x100: channel 1, idle: HBM [15, 271], ready 371, response 372; write granted 372
        # (link free at 372), SRAM 373 on port 1, ready 378, response max(378, 377) + 1 = 379.
        (0x100, 379.0),
    ],
    ids=["same_channel", "other_channel"],
)
def test_two_independent_loads(tmp_path: Path, second_src: int, expected_done: float) -> None:
    r = _replay(
        tmp_path,
        f"0 load dma0 tensor=K m=1 n=256 src0=0x0 dst={SRAM:#x}\n"
        f"1 load dma1 tensor=K m=1 n=256 src0={second_src:#x} dst={SRAM + 0x100:#x}\n",
    )
    assert r["sim_time_ns"] == expected_done
    assert r["io_active_ns"] == expected_done  # [0, 375] within [0, expected_done]
    assert r["overlap_efficiency"] == 0.0  # no compute to hide the I/O under
    assert r["memory_stall_fraction"] == 1.0
    assert r["exposed_io_ns"] == expected_done
    assert r["offchip_bytes"] == {"read": 512, "write": 0, "total": 512}
    # One burst per descriptor: T0 = setup + RT_min = done - start, so no bandwidth wait is
    # reported even though the shared channel delayed the second load by 252 ns.
    assert r["stalls"]["dma1"]["bandwidth"] == 0.0


def _double_buffered(tiles: int) -> str:
    """Tile j -> buffer j % 2; matmul j reads it; load j+2 waits for matmul j (WAR)."""
    lines = []
    index = 0
    load_of: dict[int, int] = {}
    matmul_of: dict[int, int] = {}

    def load(j: int, deps: str) -> None:
        nonlocal index
        buf = SRAM + 0x100 * (j % 2)
        lines.append(f"{index} load dma0 tensor=K m=1 n=256 src0={0x100 * j:#x} dst={buf:#x}{deps}")
        load_of[j] = index
        index += 1

    load(0, "")
    load(1, "")
    for j in range(tiles):
        buf = SRAM + 0x100 * (j % 2)
        lines.append(
            f"{index} matmul pe m=16 n=16 k=62 src0={SRAM + 0x1000:#x} src1={buf:#x} "
            f"dst={SRAM + 0x4000 + 0x200 * j:#x} deps={load_of[j]}"
        )
        matmul_of[j] = index
        index += 1
        if j + 2 < tiles:
            load(j + 2, f" deps={matmul_of[j]}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("tiles", [2, 4, 7])
def test_double_buffered_loop_overlap(tmp_path: Path, tiles: int) -> None:
    # pe.sram_traffic=false: a matmul takes exactly ceil(16*16 / 16) * 62 + 8 = 1000 ns, of
    # which 16 * 62 = 992 ns are issue: the array takes the next matmul at start + 992. The
    # matmuls read A (0x1000..) and their K buffer and write disjoint blocks at 0x4000 + 0x200 j,
    # so none waits for another's result.
    # Loads alternate HBM channels (tile j at 0x100*j) and always find their channel idle, so
    # each takes 375 ns (docstring).
    #   L0: [0, 375], engine_free 10.  L1: starts at 10 (channel free), [10, 385]: its read is
    #       granted at 20, HBM ch1 [21, 277], resp 378; write granted 378, SRAM port 1, done 385.
    #   M0: [375, 1375] (needs L0), free at 1367.  M_j: [375 + 992 j, 1375 + 992 j], each
    #       starting when the array takes it (PE-bound; L_j is done long before, see below).
    #   L_j, j >= 2: waits for M_{j-2} (buffer reuse): [1375 + 992 (j-2), +375], done at
    #       992 j - 234 < 375 + 992 j, the start of M_j, and entirely under M_{j-1}.
    # io_active = 385 + 375 (T-2); hidden = 10 (L1 under M0) + 375 (T-2)
    #   overlap = (10 + 375 (T-2)) / (385 + 375 (T-2)); exposed = 375
    # sim_time = 1375 + 992 (T-1); compute_active = |[375, 1375 + 992 (T-1)]| = 1000 + 992 (T-1)
    #   (successive matmuls overlap by 8 ns); stall fraction = 375 / sim_time
    # dma0 idle: L_j (j >= 2) from engine_free(L_{j-1}) to M_{j-2} done, charged to buffer_free:
    #   L2: from engine_free(L1) = 20 to 1375 = 1355;
    #   L_j (j >= 3): from engine_free(L_{j-1}) = start(L_{j-1}) + 10 = 1375 + 992 (j-3) + 10
    #   to 1375 + 992 (j-2): 982 each.
    # dma_credits: L1 was ready at 0 but the channel took it at L0's engine_free = 10.
    r = _replay(tmp_path, _double_buffered(tiles), ("pe.sram_traffic=false",))
    t = tiles
    assert r["sim_time_ns"] == 1375.0 + 992.0 * (t - 1)
    assert r["compute_active_ns"] == 1000.0 + 992.0 * (t - 1)
    assert r["io_active_ns"] == 385.0 + 375.0 * (t - 2)
    assert r["exposed_io_ns"] == 375.0
    assert r["overlap_efficiency"] == pytest.approx(
        (10 + 375 * (t - 2)) / (385 + 375 * (t - 2)), abs=1e-12
    )
    assert r["memory_stall_fraction"] == pytest.approx(375 / (1375 + 992 * (t - 1)), abs=1e-12)
    assert r["stalls"]["pe"]["load_data"] == 375.0
    expected_buffer_free = (1355.0 if t > 2 else 0.0) + 982.0 * max(0, t - 3)
    assert r["stalls"]["dma0"]["buffer_free"] == expected_buffer_free
    assert r["stalls"]["dma0"]["dma_credits"] == 10.0
    assert r["offchip_bytes_per_tensor"]["K"]["read"] == 256 * t


def test_mask_times_like_an_element_wise_op(tmp_path: Path) -> None:
    # pe.sram_traffic=false. A 64 B load, as in the docstring with 64 B: issue I = 10, HBM busy
    # [11, 75], ready 175, noc response 176; SRAM write at 177, one port cycle, ready 179, noc
    # response 180 = done. mask 4 x 8 (a diagonal block, fill -inf) waits for it:
    # ceil(32 / 16) = 2 issue cycles + 8 latency -> [180, 190], the array free at 182. The copy
    # reads the mask's result: the interlock holds it until 190, then 2 + 8 -> done 200.
    r = _replay(
        tmp_path,
        f"0 load dma0 tensor=K m=1 n=64 src0=0x0 dst={SRAM:#x}\n"
        f"1 vector pe op=mask bcast=scalar scalar=-inf m=4 n=8 src0={SRAM:#x} dst={SRAM:#x}"
        " src_stride=4 deps=0\n"
        f"2 vector pe op=copy m=4 n=8 src0={SRAM:#x} dst={SRAM + 0x100:#x}\n",
        ("pe.sram_traffic=false",),
    )
    assert r["sim_time_ns"] == 200.0
    assert r["compute_active_ns"] == 20.0  # [180, 200]
    assert r["io_active_ns"] == 180.0
