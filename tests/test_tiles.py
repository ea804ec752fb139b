"""Tiled platforms: the `tiles:` template, the partition of the work, and replaying every tile
in one simulation (docs/models/tiles.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.dataflow_helpers import emit_all, offchip_elements
from tests.tile_jobs import (
    LOAD_BYTES,
    dataflow_job,
    fed_in_chunks_job,
    mesh_job,
    replay_job,
    two_stack_job,
)
from tests.workload_reference import masked_attention, workload_inputs
from tlm_models.dataflows import Workload
from tlm_models.dataflows.io_formulas import TRAFFIC, tile_traffic
from tlm_models.dataflows.partition import QUERY_BLOCK_DATAFLOWS, tile_share
from tlm_models.errors import UserError
from tlm_models.platform.compose import Platform
from tlm_models.platform.loader import PlatformError
from tlm_models.replay.reference import run_attention
from tlm_models.replay.tiles import FEED_RECORDS, feed_slices, reaches_only_its_tile
from tlm_models.run.config import RunConfig
from tlm_models.run.resolve import resolve_run
from tlm_models.run.worker import run_in_worker
from tlm_models.trace.record import RECORD_DTYPE

ROOT = Path(__file__).resolve().parent.parent


def test_template_instantiated_per_tile() -> None:
    config = Platform.load(ROOT / "platforms/attenio-x4.yaml").config
    assert config.tile_count == 4
    assert {"tile0_pe", "tile3_pe", "tile3_sram", "tile3_dma", "noc", "hbm"} <= set(
        config.components
    )
    assert config.engines["tile2_dma1"].path == "tile2_dma.channel[1]"
    bound = {str(b) for b in config.bindings}
    assert "tile3_dma_noc.out[0] -> noc.in[3]" in bound
    assert "tile3_dma.mem_port -> tile3_dma_noc.in[0]" in bound
    info = config.tile_info(3)
    assert (info.tile, info.tiles) == (3, 4)
    assert info.scratchpad.name == "tile3_sram"
    assert info.scratchpad.base == 0x10_0000_0000 + 3 * (1 << 30)
    assert info.kv_buffer is not None and info.kv_buffer.base == 0x10_2000_0000 + 3 * (1 << 30)
    assert info.engines == {"dma0": "dma", "dma1": "dma", "pe": "pe", "exp": "exp"}
    assert info.capacity_elements() == 262_144


def test_two_stacks_are_dealt_to_tile_groups() -> None:
    config = Platform.load(ROOT / "platforms/attenio-x16.yaml").config
    stacks = [config.tile_info(i).offchip.name for i in range(16)]
    assert stacks == ["hbm0"] * 8 + ["hbm1"] * 8
    # Every tile reaches both stacks through the crossbar.
    routes = {(r.interconnect, r.target) for r in config.routes}
    assert {("tile0_dma_noc", "hbm1"), ("tile15_dma_noc", "hbm0")} <= routes


def test_each_stack_serves_its_tile_group() -> None:
    """The tiles' DMA paths pass addresses through to the crossbar, which decodes the stacks."""
    assert run_in_worker(two_stack_job) == {"hbm0": 8 * 4 * LOAD_BYTES, "hbm1": 8 * 4 * LOAD_BYTES}


def test_bad_tile_count_names_the_line(tmp_path: Path) -> None:
    text = (ROOT / "platforms/attenio-x4.yaml").read_text().replace("count: 4", "count: 0")
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(PlatformError) as err:
        Platform.load(path).config  # noqa: B018
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "count: 0" in t)
    assert f"bad.yaml:{line}:" in str(err.value)
    assert "tiles.count: expected a whole number of tiles from 1 to 64, found 0" in str(err.value)


def test_tile_count_override() -> None:
    config = Platform.load(ROOT / "platforms/attenio-x4.yaml", ["tiles.count=2"]).config
    assert config.tile_count == 2 and "tile2_pe" not in config.components


@pytest.mark.parametrize(("heads", "tiles"), [(96, 16), (8, 4), (5, 4), (3, 4), (1, 16), (2, 7)])
def test_every_query_row_on_exactly_one_tile(heads: int, tiles: int) -> None:
    n = 1000
    shares = [tile_share(heads, n, t, tiles) for t in range(tiles)]
    rows = [(r.head, i) for share in shares for r in share for i in range(r.row0, r.row1)]
    assert sorted(rows) == [(h, i) for h in range(heads) for i in range(n)]
    sizes = [sum(r.rows for r in share) for share in shares]
    if heads >= tiles:  # whole heads, at most one head more on some tiles
        assert all(r.row0 == 0 and r.row1 == n for share in shares for r in share)
        assert max(sizes) - min(sizes) <= n
    else:  # query rows split evenly
        assert max(sizes) - min(sizes) <= 1


def test_too_few_rows_for_the_tiles() -> None:
    with pytest.raises(UserError, match="cannot be spread over 16 tiles"):
        tile_share(1, 8, 0, 16)


@pytest.mark.parametrize("dataflow", QUERY_BLOCK_DATAFLOWS)
@pytest.mark.parametrize("heads", [8, 2, 3])
def test_bytes_per_tile_and_total_equal_closed_forms(dataflow: str, heads: int) -> None:
    config = Platform.load(ROOT / "platforms/attenio-x4.yaml").config
    # N = 512 keeps Standard's panel (T = 317) and FLAT's block (R = 394) below N, so the
    # ranges of split heads end in short blocks.
    w = Workload(seq_len=1024 if dataflow in ("attenio", "flash2") else 512, head_dim=64,
                 heads=heads)  # fmt: skip
    total: dict[str, int] = {}
    for t in range(4):
        info = config.tile_info(t)
        header, recs = emit_all(dataflow, w, info)
        share = tile_share(w.head_count, w.seq_len, t, 4)
        got = offchip_elements(header, recs)
        assert got == tile_traffic(dataflow, w, info, share)
        for name, count in got.items():
            total[name] = total.get(name, 0) + count
    if heads % 4 == 0:  # whole heads per tile: the one-chip closed form, exactly
        assert total == TRAFFIC[dataflow](w, config.info()).elements


@pytest.mark.parametrize("dataflow", QUERY_BLOCK_DATAFLOWS)
def test_tiles_together_compute_attention(dataflow: str) -> None:
    """3 heads on 4 tiles (every tile holds part of a head): each tile's trace, executed,
    writes its share's rows of O, and the shares together are softmax attention."""
    config = Platform.load(ROOT / "platforms/attenio-x4.yaml").config
    w = Workload(seq_len=512, head_dim=64, heads=3)
    inputs = workload_inputs(w)
    out = np.full((3, 512, 64), np.nan, dtype=np.float32)
    header = None
    for t in range(4):
        info = config.tile_info(t)
        header, recs = emit_all(dataflow, w, info)
        o = run_attention(header, [recs], info, inputs)
        for r in tile_share(3, 512, t, 4):
            out[r.head, r.row0 : r.row1] = o[r.head, r.row0 : r.row1]
    assert header is not None
    ref = masked_attention(header, inputs)
    assert float(np.abs(out - ref).max() / np.abs(ref).max()) < 1e-3


#: Memory far faster than four tiles need: 1024 GB/s HBM channels and a 16 KiB-wide crossbar
#: (every request holds the shared link one 1 ns cycle).
FAST_MEMORY = ("components.hbm.channel_bandwidth=1024 GB/s", "components.noc.width=16 KiB")


@pytest.mark.parametrize("dataflow", ["standard", "flat"])
def test_standard_and_flat_replay_a_head_per_tile(dataflow: str) -> None:
    """4 heads of N = 256 on attenio-x4, one head per tile. With memory far faster than needed,
    tile t takes exactly one tile's time alone plus t ns: the four tiles' first requests reach
    the shared link in the same cycle, are granted one per cycle and stay that far apart. At
    the stack's 128 GB/s, off-chip bytes per tile and in total equal the closed forms."""
    alone = run_in_worker(dataflow_job, dataflow, 1, 1, FAST_MEMORY)
    four = run_in_worker(dataflow_job, dataflow, 4, 4, FAST_MEMORY)
    assert four["times"] == [alone["time"] + t for t in range(4)]
    assert four["time"] == alone["time"] + 3
    shared = run_in_worker(dataflow_job, dataflow, 4, 4, ())
    config = Platform.load(ROOT / "platforms/attenio-x4.yaml").config
    w = Workload(seq_len=256, head_dim=64, heads=4)
    expected = [
        sum(tile_traffic(dataflow, w, config.tile_info(t), tile_share(4, 256, t, 4)).values())
        * w.elem_bytes
        for t in range(4)
    ]
    assert shared["tile_bytes"] == four["tile_bytes"] == expected
    assert shared["bytes"] == sum(expected) == TRAFFIC[dataflow](w, config.info()).total_bytes
    assert min(shared["times"]) >= alone["time"]  # sharing the stack only delays


def test_approx_needs_a_kv_group_per_tile() -> None:
    with pytest.raises(UserError, match=r"has 2 group\(s\), fewer than the 4 tiles"):
        resolve_run(RunConfig.of("approx", 1024, 64, 2, "platforms/attenio-x4.yaml"))


def test_compute_bound_time_scales_as_one_over_c() -> None:
    """HBM far faster than needed: 4 tiles with 16 matmuls each take exactly a quarter of one
    tile with 64 (every tile runs as it would alone)."""
    one = run_in_worker(replay_job, 1, "1000 GB/s", "compute", 64)
    four = run_in_worker(replay_job, 4, "1000 GB/s", "compute", 16)
    assert four["times"] == [one["times"][0] / 4] * 4


def test_shared_bottleneck_sets_the_throughput() -> None:
    """Loads only, through one 1 GB/s HBM channel: 4 tiles move 4 x 16 loads in exactly the
    time one tile moves 64; the HBM is busy bytes / bandwidth of it, no more, no less."""
    one = run_in_worker(replay_job, 1, "1 GB/s", "load", 64)
    four = run_in_worker(replay_job, 4, "1 GB/s", "load", 16)
    total = 64 * LOAD_BYTES
    assert four["hbm_bytes"] == one["hbm_bytes"] == total
    assert four["hbm_busy"] == one["hbm_busy"] == total / 1.0  # ns at 1 B/ns
    assert max(four["times"]) == one["times"][0]
    # Start-up and the last response's latency are the only time the HBM is not transferring,
    # the same with one tile and with four.
    assert max(four["times"]) - four["hbm_busy"] == one["times"][0] - one["hbm_busy"]


def test_shared_link_serves_tiles_in_time_order() -> None:
    """Loads only through one 1 GB/s channel, 4 tiles x 16 loads of 4 KiB: the tiles' loads
    reach the shared servers in order of start time, ties by tile index, so the channel
    serves the tiles' k-th loads before any (k+1)-th and the tiles end 4,096 ns apart (the
    last one at the one-tile time)."""
    four = run_in_worker(replay_job, 4, "1 GB/s", "load", 16)
    last = four["times"][3]
    assert four["times"] == [last - 4096.0 * (3 - t) for t in range(4)]


def test_only_engines_reaching_shared_components_take_the_gate() -> None:
    """On attenio-x4 a tile's DMA channels reach the shared crossbar and HBM (their order
    among the tiles' operations matters); its PE array and Exp unit reach only the tile's own
    SRAM and local interconnect, so they issue without the gate."""
    config = Platform.load(ROOT / "platforms/attenio-x4.yaml").config
    local = {
        name: reaches_only_its_tile(config, 2, engine.component)
        for name, engine in config.engines.items()
        if name.startswith("tile2_")
    }
    assert local == {"tile2_dma0": False, "tile2_dma1": False, "tile2_pe": True, "tile2_exp": True}


def test_result_does_not_depend_on_how_traces_are_fed() -> None:
    """FlashAttention-2, N = 2K, 16 heads on attenio-x16's 16 tiles (both stacks saturated):
    every tile's trace fed 7 records at a time (the kernel pauses for input thousands of times
    mid-quantum) and in one chunk give identical statistics, every tile's and every shared
    and per-tile component's, to the picosecond. Without the issue gate (issue_gate.h) the
    two differed in 576 statistics."""
    fine = run_in_worker(fed_in_chunks_job, "flash2", "platforms/attenio-x16.yaml", 2048, 16, 7)
    whole = run_in_worker(
        fed_in_chunks_job, "flash2", "platforms/attenio-x16.yaml", 2048, 16, 1 << 20
    )
    assert fine == whole
    assert fine["replay_tile15/sim_time"] == 332_928.0  # fitted tiles (1,083,253 with Br = 64)


def test_tiles_are_fed_in_slices_of_at_most_feed_records() -> None:
    """A chunk of 2.5 slices and one of 5 records reach the replayer as slices of at most
    FEED_RECORDS records, in order, every record once, without copies (the replayer copies)."""
    first = np.zeros(FEED_RECORDS * 5 // 2, RECORD_DTYPE)
    first["src0"] = np.arange(len(first))
    second = np.zeros(5, RECORD_DTYPE)
    second["src0"] = len(first) + np.arange(5)
    slices = list(feed_slices(iter([first, second])))
    assert [len(s) for s in slices] == [FEED_RECORDS, FEED_RECORDS, FEED_RECORDS // 2, 5]
    assert np.array_equal(np.concatenate(slices)["src0"], np.arange(len(first) + 5))
    assert all(s.base is not None for s in slices)


def test_cli_run_prints_per_tile_lines() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tlm_models.cli.main", "run", "--platform",
         "platforms/attenio-x4.yaml", "--dataflow", "flash2", "--seq-len", "1024",
         "--head-dim", "64", "--heads", "4"],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("tiles                  4: time = max over tiles") for line in lines)
    assert [line.split()[:2] for line in lines if line.startswith("  tile ")] == [
        ["tile", str(i)] for i in range(4)
    ]


@pytest.mark.parametrize("dataflow", ["standard", "flat"])
def test_tiled_result_states_its_closed_form(dataflow: str) -> None:
    """The result's closed form is the sum of the tiles' shares, score panels included (3 heads
    on 4 tiles: every tile holds part of a head)."""
    done = subprocess.run(
        [sys.executable, "-m", "tlm_models.cli.main", "run", "--platform",
         "platforms/attenio-x4.yaml", "--dataflow", dataflow, "--seq-len", "1024",
         "--head-dim", "64", "--heads", "3", "--json"],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    expected = {"standard": 29_097_984, "flat": 5_505_024}[dataflow]
    assert result["offchip_bytes"]["total"] == result["bounds"]["closed_form"] == expected


def test_mesh_xy_route_costs_a_hop_each_way_per_link() -> None:
    """2 x 2 mesh, HBM port at the west edge of row 0 (router 0): tile 3 at (1, 1) crosses
    two router links (west, then north) and pays 2 x 2 hops of 1 ns more than through the
    crossbar; tile 0 at router 0 crosses none. Byte-hops count the links crossed."""
    crossbar = run_in_worker(mesh_job, "crossbar", (3,))
    mesh = run_in_worker(mesh_job, "mesh", (3,))
    assert mesh["times"][3] == crossbar["times"][3] + 4.0
    assert (crossbar["byte_hops"], mesh["byte_hops"]) == (LOAD_BYTES, 3 * LOAD_BYTES)
    assert run_in_worker(mesh_job, "mesh", (0,))["times"][0] == crossbar["times"][3]
