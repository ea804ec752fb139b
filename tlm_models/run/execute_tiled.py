"""Simulates one configuration on a tiled platform: every tile's share of the work, emitted
for that tile (``dataflows/partition.py``) and replayed with the others in one simulation
(``replay/tiles.py``), composed into one result with a ``tiles`` section (``run/tile_result.py``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tlm_models.dataflows import DEFAULT_CHUNK_OPS, emit
from tlm_models.dataflows.block_deal import assignment
from tlm_models.dataflows.io_formulas import tiled_traffic
from tlm_models.dataflows.split_k import split_of, split_section
from tlm_models.fast_forward.control import FAST_FORWARD_CHUNK_OPS, settings_for
from tlm_models.fast_forward.tiles import TileFastForward, unbalanced_reason
from tlm_models.replay.replayer import TimelineWindow
from tlm_models.replay.stl_out import EXACT_REASON, write_stl_files
from tlm_models.replay.tiles import replay_tiles_in_this_process
from tlm_models.replay.timeline import write_chrome_json
from tlm_models.replay.vcd import write_vcd
from tlm_models.run.diagnosis import peaks_of
from tlm_models.run.execute import bounds_bytes, describe_run, finish_result, run_identity
from tlm_models.run.resolve import ResolvedRun
from tlm_models.run.tile_result import compose_tiles_result


def run_tiled(
    run: ResolvedRun,
    timeline: Path | None = None,
    window: TimelineWindow | None = None,
    vcd: Path | None = None,
    export_stl: Path | None = None,
    stl_clock_hz: float = 1e9,
) -> dict[str, Any]:
    """The result JSON of ``run`` on its tiled platform, its steady state fast-forwarded on
    every tile together where the tiles' loops are alike (``fast_forward/tiles.py``); with
    ``timeline`` a Perfetto file of ``window`` (one track group per tile) is written there,
    with ``vcd`` the same window's busy signals (a scope per tile), and with ``export_stl``
    every shared off-chip memory's requests as an STL trace (``replay/stl_out.py``; the run then
    replays exactly)."""
    started = time.perf_counter()
    platform, workload = run.platform, run.workload
    count = platform.tile_count
    infos = [platform.tile_info(i) for i in range(count)]
    exact = run.config.exact or export_stl is not None
    chunk_ops = DEFAULT_CHUNK_OPS if exact else FAST_FORWARD_CHUNK_OPS
    emitted = [
        emit(run.config.dataflow, workload, info, chunk_ops, params=run.params) for info in infos
    ]
    controls = [e.iterations for e in emitted]
    split = split_of(run.config.dataflow, workload, infos[0], run.params)
    exact_reason = (
        "--exact"
        if run.config.exact
        else EXACT_REASON
        if export_stl is not None
        else unbalanced_reason(controls)
    )
    if split is not None and not run.config.exact:
        exact_reason = "split-K runs exactly (a skipped slice's partial would never be combined)"
    fast_forward = (
        TileFastForward.of([c for c in controls if c is not None], settings_for(platform))
        if exact_reason is None
        else None
    )
    out = replay_tiles_in_this_process(
        platform,
        [(e.header, e.chunks) for e in emitted],
        fast_forward,
        (window or TimelineWindow()) if timeline is not None or vcd is not None else None,
        log_requests=export_stl is not None,
    )
    if timeline is not None and out.timeline is not None:
        out.timeline.metadata["run"] = describe_run(run.config)
        write_chrome_json(out.timeline, timeline)
    if vcd is not None and out.timeline is not None:
        write_vcd(out.timeline, vcd)
    if export_stl is not None and out.memory_requests is not None:
        write_stl_files(export_stl, out.memory_requests, platform, stl_clock_hz)
    identity = run_identity(run, emitted[0].header.params)
    result = compose_tiles_result(platform, out.tiles, infos, out.platform, identity, out.wall_s)
    result["tiles"]["assignment"] = assignment(workload, count, split)
    if split is not None:
        result["tiles"]["split"] = split_section(split)
    variant = emitted[0].header.params.get("variant")
    result["params"] = dict(variant) if isinstance(variant, dict) else dict(run.params)
    bounds = bounds_bytes(workload, run.info, run.config.dataflow, run.params)
    # Each tile's share in closed form (io_formulas.tiled_traffic: its rows or whole blocks,
    # its dataflow's blocks and, for Standard and FLAT, the score panels it spills).
    bounds["closed_form"] = float(
        sum(
            sum(tiled_traffic(run.config.dataflow, workload, info, run.params).values())
            for info in infos
        )
        * workload.elem_bytes
    )
    result["bounds"] = bounds
    tile = peaks_of(run.info)
    chip = {
        "macs_per_s": tile["macs_per_s"] * count,
        "exps_per_s": tile["exps_per_s"] * count,
        "offchip_bytes_per_s": tile["offchip_bytes_per_s"],  # every off-chip memory's
    }
    result = finish_result(
        result, run, out.platform, out.fast_forward, out.ops, started, out.wall_s, chip
    )
    if exact_reason is not None:
        result["fast_forward"] = {"enabled": False, "reason": exact_reason}
    return result
