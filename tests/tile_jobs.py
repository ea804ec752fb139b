"""A small tiled platform, hand-written per-tile traces and the worker jobs that replay them
(worker jobs must be importable by name)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tlm_models.dataflows import Workload, emit
from tlm_models.dataflows.io_formulas import tiled_traffic
from tlm_models.fast_forward.control import FAST_FORWARD_CHUNK_OPS, flatten, settings_for
from tlm_models.fast_forward.tiles import TileFastForward, unbalanced_reason
from tlm_models.platform.compose import Platform
from tlm_models.platform.schema import PlatformConfig
from tlm_models.replay.tiles import replay_tiles_in_this_process
from tlm_models.trace.header import TensorInfo, TraceHeader
from tlm_models.trace.record import RECORD_DTYPE, OpKind

SRAM = 0x1_0000_0000
STRIDE = 1 << 20
#: Bytes of one load in the bottleneck trace.
LOAD_BYTES = 4096

#: FlashAttention-2 with the paper's tiles (Br = 64 rows at d = 64): tiled fast-forward cases
#: need many repeating blocks a tile (fitted tiles hold 1,024 rows: one or two blocks a tile).
PAPER_TILES = {"tiling": "paper"}


def tiled_platform(tiles: int, hbm_bandwidth: str) -> PlatformConfig:
    """``tiles`` tiles (one-channel DMA, 64x32 PE array without pipeline latency or SRAM
    traffic, so a matmul takes exactly its cycles) sharing a one-channel HBM of
    ``hbm_bandwidth`` through a 1 KiB-per-cycle crossbar."""
    return Platform.from_dict(_tiled_dict(tiles, hbm_bandwidth)).config


def _tiled_dict(tiles: int, hbm_bandwidth: str) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": f"tiled-{tiles}",
        "components": {
            "hbm": {"type": "hbm", "channels": 1, "channel_bandwidth": hbm_bandwidth,
                    "latency": "100 ns", "size": "1 GiB"},
            "noc": {"type": "interconnect", "width": "1 KiB", "hop_latency": "1 ns"},
        },
        "bindings": ["noc.out[0] -> hbm.target"],
        "address_map": [{"base": 0, "size": "1 GiB", "target": "hbm"}],
        "tiles": {
            "count": tiles,
            "address_stride": "1 MiB",
            "template": {
                "components": {
                    "sram": {"type": "sram", "role": "scratchpad", "capacity": "512 KiB",
                             "port_width": "1 KiB"},
                    "link": {"type": "interconnect", "width": "1 KiB", "hop_latency": "1 ns"},
                    "dma": {"type": "dma", "channels": 1, "max_burst": "4 KiB",
                            "max_outstanding": 8},
                    "pe": {"type": "pe_array", "pipeline_latency": 0, "sram_traffic": False},
                    "exp": {"type": "exp_unit", "sram_traffic": False},
                },
                "bindings": [
                    "dma.mem_port -> link.in[0]",
                    "link.out[0] -> noc.in[{tile}]",
                    "link.out[1] -> sram.target",
                    "pe.sram_port -> sram.target",
                    "exp.sram_port -> sram.target",
                ],
                "address_map": [{"base": SRAM, "target": "sram"}],
                "engines": {"dma0": "dma.channel[0]", "pe": "pe", "exp": "exp"},
            },
        },
    }  # fmt: skip
    return data


def header() -> TraceHeader:
    return TraceHeader(
        dataflow="hand-written",
        engines=["dma0", "pe", "exp"],
        tensors=[TensorInfo("K", 0, (1 << 16, 64), 2)],
        window=64,
    )


def compute_trace(tile: int, matmuls: int) -> np.ndarray:
    """matmul 0 needs nothing; matmul j >= 1 (64x32 outputs, k = 64: one fold of 64 + 94 =
    158 cycles) waits for load j of 1 KiB, which streams in during matmul j - 1:
    compute-bound."""
    base = SRAM + tile * STRIDE
    recs = np.zeros(2 * matmuls - 1, RECORD_DTYPE)
    for j in range(matmuls):
        if j:
            load = recs[2 * j - 1]
            load["kind"], load["engine"], load["tensor"] = OpKind.LOAD, 0, 0
            load["m"], load["n"] = 1, 1024
            load["src0"] = (tile * matmuls + j) * 1024
            load["dst"] = base + 0x1000 + (j % 2) * 1024
        mm = recs[max(0, 2 * j)]
        mm["kind"], mm["engine"] = OpKind.MATMUL, 1
        mm["m"], mm["n"], mm["k"] = 64, 32, 64
        mm["src0"], mm["src1"], mm["dst"] = base + 0x4000, base + 0x1000, base + 0x8000
        if j:
            mm["deps"][0] = 1
    return recs


def load_trace(tile: int, loads: int) -> np.ndarray:
    """``loads`` independent loads of LOAD_BYTES each: nothing but off-chip traffic."""
    recs = np.zeros(loads, RECORD_DTYPE)
    recs["kind"], recs["engine"], recs["tensor"] = OpKind.LOAD, 0, 0
    recs["m"], recs["n"] = 1, LOAD_BYTES
    recs["src0"] = (tile * loads + np.arange(loads)) * LOAD_BYTES
    recs["dst"] = SRAM + tile * STRIDE + (np.arange(loads) % 64) * LOAD_BYTES
    return recs


def replay_job(tiles: int, hbm_bandwidth: str, kind: str, per_tile: int) -> dict[str, Any]:
    """Replays ``kind`` ("compute" or "load") traces of ``per_tile`` units on every tile:
    each tile's sim time, HBM busy time (ns) and the crossbar link's busy time (ns)."""
    config = tiled_platform(tiles, hbm_bandwidth)
    make = compute_trace if kind == "compute" else load_trace
    out = replay_tiles_in_this_process(
        config, [(header(), [make(t, per_tile)]) for t in range(tiles)]
    )
    hbm = next(c for c in out.platform["children"] if c["name"] == "hbm")
    noc = next(c for c in out.platform["children"] if c["name"] == "noc")
    return {
        "times": [r["stats"]["sim_time"]["value"] for r in out.tiles],
        "hbm_busy": sum(
            ch["stats"]["busy_time"]["value"]
            for ch in hbm["children"]
            if ch["name"].startswith("channel")
        ),
        "hbm_bytes": hbm["stats"]["bytes_read"]["value"],
        "link_busy": next(o for o in noc["children"] if o["name"] == "out0")["stats"]["busy_time"][
            "value"
        ],
        "ops": out.ops,
    }


def two_stack_job() -> dict[str, float]:
    """Four loads on each tile of attenio-x16, tiles 8-15 from the second stack's window:
    bytes read by each stack (the tiles' DMA paths pass the address on to the crossbar)."""
    config = _x16()
    traces = []
    for tile in range(16):
        recs = load_trace(0, 4)
        recs["src0"] += config.tile_info(tile).offchip.base
        recs["dst"] = config.tile_info(tile).scratchpad.base + np.arange(4) * LOAD_BYTES
        traces.append((header(), [recs]))
    out = replay_tiles_in_this_process(config, traces)
    return {
        c["name"]: c["stats"]["bytes_read"]["value"]
        for c in out.platform["children"]
        if c["name"].startswith("hbm")
    }


def _x16() -> PlatformConfig:
    return Platform.load(
        Path(__file__).resolve().parent.parent / "platforms/attenio-x16.yaml"
    ).config


def mesh_job(topology: str, loaders: tuple[int, ...]) -> dict[str, Any]:
    """One 4 KiB load on each tile in ``loaders`` of a 4-tile platform whose shared
    interconnect is ``topology`` (mesh: 2 columns, so tiles 0 1 / 2 3 and the HBM port on the
    west edge of row 0): each tile's time and the shared interconnect's statistics."""
    data = Platform.from_dict(_tiled_dict(4, "1000 GB/s"))
    config = data.with_overrides(f"noc.topology={topology}", "noc.mesh_columns=2").config
    traces = [(header(), [load_trace(t, 1 if t in loaders else 0)]) for t in range(4)]
    out = replay_tiles_in_this_process(config, traces)
    noc = next(c for c in out.platform["children"] if c["name"] == "noc")
    return {
        "times": [r["stats"]["sim_time"]["value"] for r in out.tiles],
        "byte_hops": noc["stats"]["byte_hops"]["value"],
    }


def tiled_replay_stats(
    dataflow: str,
    seq_len: int,
    head_dim: int,
    heads: int,
    fast: bool,
    params: dict[str, str] | None = None,
    overrides: tuple[str, ...] = (),
    platform_file: str = "platforms/attenio-x4.yaml",
    **shape: Any,
) -> Any:
    """Every statistic of a replay on ``platform_file``'s tiles (each tile's replay as
    ``replay_tile<i>``, the platform's) as {"/"-joined path: value}, plus the fast_forward
    section, the operations simulated and the replay's wall time (s); ``params``: the
    dataflow's, ``overrides``: the platform's, ``shape``: further ``Workload`` fields."""
    config = Platform.load(Path(__file__).resolve().parent.parent / platform_file)
    platform = config.with_overrides(*overrides).config if overrides else config.config
    workload = Workload(seq_len=seq_len, head_dim=head_dim, heads=heads, **shape)
    if dataflow == "flash2" and params is None:
        params = PAPER_TILES  # the many repeating 64-row blocks these cases were written for
    emitted = [
        emit(dataflow, workload, platform.tile_info(t), FAST_FORWARD_CHUNK_OPS, params=params)
        for t in range(platform.tile_count)
    ]
    controls = [e.iterations for e in emitted]
    assert unbalanced_reason(controls) is None
    ff = (
        TileFastForward.of([c for c in controls if c is not None], settings_for(platform))
        if fast
        else None
    )
    out = replay_tiles_in_this_process(platform, [(e.header, e.chunks) for e in emitted], ff)
    values = flatten(out.platform, "platform")[0]
    for tile, tree in enumerate(out.tiles):
        values |= flatten(tree, f"replay_tile{tile}")[0]
    return {
        "stats": {"/".join(path): value for path, value in values.items()},
        "fast_forward": out.fast_forward,
        "simulated_ops": out.ops,
        "wall_s": out.wall_s,
        "closed_form_tiles": [
            sum(tiled_traffic(dataflow, workload, platform.tile_info(t), params).values())
            * workload.elem_bytes
            for t in range(platform.tile_count)
        ],
    }


def equal_tile_bytes(exact: dict[str, Any], fast: dict[str, Any], tiles: int) -> float:
    """The off-chip bytes of ``tiles`` tiles of two ``tiled_replay_stats`` results, checked
    equal tile by tile; their sum."""
    total = 0.0
    for tile in range(tiles):
        for key in ("offchip_read", "offchip_write"):
            path = f"replay_tile{tile}/{key}"
            assert fast["stats"][path] == exact["stats"][path], path
            total += fast["stats"][path]
    return total


def dataflow_job(
    dataflow: str, tiles: int, heads: int, overrides: tuple[str, ...]
) -> dict[str, Any]:
    """``dataflow`` at N = 256, d = 64 with ``heads`` heads on attenio-x4 with ``tiles`` tiles
    (``overrides`` applied after the count): time, each tile's time and off-chip bytes."""
    from tlm_models.run.config import RunConfig
    from tlm_models.run.execute_tiled import run_tiled
    from tlm_models.run.resolve import resolve_run

    config = RunConfig.of(
        dataflow, 256, 64, heads, "platforms/attenio-x4.yaml",
        overrides=(f"tiles.count={tiles}", *overrides),
    )  # fmt: skip
    result = run_tiled(resolve_run(config))
    per_tile = result["tiles"]["per_tile"]
    return {
        "time": result["sim_time_ns"],
        "times": [t["sim_time_ns"] for t in per_tile],
        "bytes": result["offchip_bytes"]["total"],
        "tile_bytes": [t["offchip_bytes"]["total"] for t in per_tile],
    }


def tiled_result_job(
    dataflow: str, seq_len: int, heads: int, exact: bool, mask: str = "none"
) -> dict[str, Any]:
    """A whole tiled run's result (attenio-x4, d = 64, ``mask`` "none" or "causal"): its time,
    bytes, closed form and fast_forward section."""
    from tlm_models.run.config import RunConfig
    from tlm_models.run.execute_tiled import run_tiled
    from tlm_models.run.resolve import resolve_run

    config = RunConfig.of(
        dataflow, seq_len, 64, heads, "platforms/attenio-x4.yaml", mask=mask, exact=exact,
        extra=tuple(PAPER_TILES.items()) if dataflow == "flash2" else (),
    )  # fmt: skip
    result = run_tiled(resolve_run(config))
    return {
        "time": result["sim_time_ns"],
        "bytes": result["offchip_bytes"]["total"],
        "closed_form": result["bounds"]["closed_form"],
        "fast_forward": result["fast_forward"],
    }


def fed_in_chunks_job(
    dataflow: str, platform: str, seq_len: int, heads: int, chunk_ops: int
) -> dict[str, Any]:
    """``dataflow`` (d = 64, ``heads`` heads) replayed on ``platform``'s tiles with every
    tile's trace fed in chunks of ``chunk_ops`` records: every statistic of every tile and
    of the platform as {"/"-joined path: value}."""
    config = Platform.load(Path(__file__).resolve().parent.parent / platform).config
    workload = Workload(seq_len=seq_len, head_dim=64, heads=heads)
    emitted = [
        emit(dataflow, workload, config.tile_info(t), chunk_ops) for t in range(config.tile_count)
    ]
    out = replay_tiles_in_this_process(config, [(e.header, e.chunks) for e in emitted])
    values = flatten(out.platform, "platform")[0]
    for tile, tree in enumerate(out.tiles):
        values |= flatten(tree, f"replay_tile{tile}")[0]
    return {"/".join(path): value for path, value in values.items()}


def workload_run_job(dataflow: str, workload: dict[str, Any]) -> dict[str, Any]:
    """``dataflow`` on attenio-x4's 4 tiles for the workload fields ``workload`` (RunConfig's
    names), exact: the result's time, bytes, closed form, imbalance and each tile's bytes."""
    from tlm_models.run.config import RunConfig
    from tlm_models.run.execute_tiled import run_tiled
    from tlm_models.run.resolve import resolve_run

    config = RunConfig.of(dataflow, platform="platforms/attenio-x4.yaml", exact=True, **workload)
    result = run_tiled(resolve_run(config))
    return {
        "bytes": result["offchip_bytes"]["total"],
        "closed_form": result["bounds"]["closed_form"],
        "tiles": result["tiles"],
    }


def timeline_job(path: str) -> dict[str, Any]:
    """FlashAttention-2, N = 1K, 4 heads on attenio-x4's 4 tiles with a Perfetto timeline of
    the first 20 µs written to ``path``: the result's tile times."""
    from tlm_models.replay.replayer import TimelineWindow
    from tlm_models.run.config import RunConfig
    from tlm_models.run.execute_tiled import run_tiled
    from tlm_models.run.resolve import resolve_run

    config = RunConfig.of("flash2", 1024, 64, 4, "platforms/attenio-x4.yaml", exact=True)
    result = run_tiled(resolve_run(config), Path(path), TimelineWindow(0.0, 20_000.0))
    return {"times": [t["sim_time_ns"] for t in result["tiles"]["per_tile"]]}
