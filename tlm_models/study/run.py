"""Simulates one study configuration: emit the dataflow's trace, replay it, compose the result.

``run_one`` is the sweep's job; it runs inside a worker process (one simulation per process):
the trace streams from the emitter straight into the replayer, never to disk.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tlm_models.dataflows import DEFAULT_CHUNK_OPS, emit
from tlm_models.dataflows.approx import approx_params
from tlm_models.dataflows.io_formulas import (
    TRAFFIC,
    approx_lower_bound,
    approx_traffic,
    attention_order_bound,
    mmm_lower_bound,
)
from tlm_models.dataflows.workload import Workload
from tlm_models.diagnosis import diagnose, peaks_of
from tlm_models.energy.model import energy_section
from tlm_models.fast_forward import FAST_FORWARD_CHUNK_OPS, settings_for
from tlm_models.growth_fast_forward import fast_forward_for
from tlm_models.platform.area.estimate import run_area
from tlm_models.platform.info import PlatformInfo
from tlm_models.platform.schema import PlatformConfig
from tlm_models.replay import TimelineWindow, replay_in_this_process
from tlm_models.resolved_run import ResolvedRun, resolve_run
from tlm_models.resource_use import resource_use
from tlm_models.result import compose_result
from tlm_models.stl_export import EXACT_REASON, write_stl_files
from tlm_models.study.approx_study import approx_error
from tlm_models.study.config import RunConfig
from tlm_models.study.variants import format_tokens
from tlm_models.timeline import write_chrome_json
from tlm_models.vcd import write_vcd


def bounds_bytes(
    workload: Workload,
    info: PlatformInfo,
    dataflow: str,
    params: Mapping[str, object] | None = None,
) -> dict[str, float]:
    """Closed-form off-chip bytes of the dataflow's tiling and the lower bounds, for reports.

    ``compulsory`` is the floor of every workload: Q and O once per query head, the K and V
    rows some query sees once per K/V head (``Workload.compulsory_elements``). The MMM and
    order-of-growth bounds are stated for dense self-attention (N x N scores) only.
    ``params`` are the dataflow's parameters (approx: degree, bound); approx runs also get
    their own lower bound, reading Q, K, V and writing O once (4Nd elements).
    """
    m = info.capacity_elements(workload.elem_bytes)
    n, d, eb, heads = workload.seq_len, workload.head_dim, workload.elem_bytes, workload.head_count
    bounds: dict[str, float] = {
        "compulsory": float(sum(workload.compulsory_elements().values()) * eb),
    }
    if workload.dense:
        bounds["mmm_lower_bound"] = mmm_lower_bound(n, d, m) * eb * heads
        bounds["attention_order_bound"] = attention_order_bound(n, d, m) * eb * heads
    if dataflow == "approx":
        bounds["closed_form"] = float(approx_traffic(workload, info, params).total_bytes)
        if workload.dense:
            bounds["approx_lower_bound"] = float(approx_lower_bound(n, d) * eb * heads)
    elif (formula := TRAFFIC.get(dataflow)) is not None:
        bounds["closed_form"] = float(formula(workload, info, params).total_bytes)
    return bounds


def describe_run(config: RunConfig) -> str:
    """``flash2, N = 8K, d = 64`` (and heads, the workload's mask, K/V heads, phase, batch when
    not the default, parameters, overrides): a run's name in timeline files and pictures."""
    parts = [config.dataflow, f"N = {format_tokens(config.seq_len)}", f"d = {config.head_dim}"]
    if config.heads != 1:
        parts.append(f"{config.heads} heads")
    parts += config.workload_parts()
    parts += [f"{k} = {v}" for k, v in config.extra]
    parts += list(config.overrides)
    return ", ".join(parts)


def all_layers(result: Mapping[str, Any], layers: int) -> dict[str, float]:
    """The model's ``layers`` identical attention layers run back to back, one after the other
    on the same chip: the simulated layer's time, off-chip bytes, MACs, exps and energy times
    ``layers`` (nothing overlaps between layers; the layers between them are not modelled)."""
    energy = result.get("energy") or {}
    totals = {
        "layers": float(layers),
        "sim_time_ns": float(result["sim_time_ns"]) * layers,
        "offchip_bytes": float(result["offchip_bytes"]["total"]) * layers,
        "macs": float(result["pe"]["macs"]) * layers,
        "exps": float(result["exp"]["exps"]) * layers,
    }
    if "total_j" in energy:
        totals["energy_j"] = float(energy["total_j"]) * layers
    return totals


def _pe_mapping(platform: PlatformConfig) -> str | None:
    """The mapping of the PE array behind the ``pe`` engine (defaults filled in)."""
    engine = platform.engines.get("pe")
    arrays = platform.components_of_type("pe_array")
    if engine is not None:
        component = platform.components[engine.component]
    elif arrays:
        component = arrays[0]
    else:
        return None
    mapping = component.params.get("mapping")
    return str(mapping) if mapping is not None else None


#: Trace-header parameters that restate the run's identity or derived figures; the result
#: stores them once (top level), not again under ``tiling``.
_NOT_TILING = (
    *("seq_len", "head_dim", "heads", "batch", "kv_heads", "kv_len", "mask", "window", "phase"),
    *("scale", "capacity_elements", "variant", "tile", "tiles"),
)


def run_one(
    config: RunConfig | ResolvedRun,
    timeline: str | None = None,
    window: TimelineWindow | None = None,
    vcd: str | None = None,
    export_stl: str | None = None,
    stl_clock_hz: float = 1e9,
) -> dict[str, Any]:
    """The result JSON of one configuration; writes a Perfetto timeline and/or a VCD of the
    same window, and the off-chip request stream as an STL trace, when asked. A ``RunConfig``
    (a sweep's job) is resolved here first; the caller has usually resolved it already
    (``tlm_models.resolved_run``)."""
    started = time.perf_counter()
    run = config if isinstance(config, ResolvedRun) else resolve_run(config)
    if run.platform.tiles is not None:
        from tlm_models.study.tile_run import run_tiled

        return run_tiled(
            run,
            Path(timeline) if timeline else None,
            window,
            Path(vcd) if vcd else None,
            Path(export_stl) if export_stl else None,
            stl_clock_hz,
        )
    config, platform, info, workload = run.config, run.platform, run.info, run.workload
    exact = config.exact or export_stl is not None
    # Fast-forward decides between chunks, so its chunks are small: the emitter stays only a
    # few iterations ahead of the replay and the skip starts soon after the loop repeats.
    chunk_ops = DEFAULT_CHUNK_OPS if exact else FAST_FORWARD_CHUNK_OPS
    emitted = emit(config.dataflow, workload, info, chunk_ops, params=run.params)
    fast_forward = (
        fast_forward_for(
            emitted.iterations,
            settings_for(platform, config.ff_error_bound, config.ff_max_fraction, config.ff_policy),
        )
        if emitted.iterations is not None and not exact
        else None
    )
    out = replay_in_this_process(
        platform,
        emitted.header,
        emitted.chunks,
        timeline=(window or TimelineWindow()) if timeline or vcd else None,
        log_requests=export_stl is not None,
        fast_forward=fast_forward,
    )
    if export_stl and out.memory_requests is not None:
        write_stl_files(Path(export_stl), out.memory_requests, platform, stl_clock_hz)
    if timeline and out.timeline is not None:
        out.timeline.metadata["run"] = describe_run(config)
        write_chrome_json(out.timeline, Path(timeline))
    if vcd and out.timeline is not None:
        write_vcd(out.timeline, Path(vcd))
    identity = run_identity(run, emitted.header.params)
    # Every dataflow switch in effect, given or default (variants.py; approx: its own).
    variant = emitted.header.params.get("variant")
    result = compose_result(out.replay, info, identity, out.wall_s)
    result["params"] = dict(variant) if isinstance(variant, dict) else dict(run.params)
    result["bounds"] = bounds_bytes(workload, info, config.dataflow, run.params)
    result = finish_result(
        result, run, out.platform, out.fast_forward, out.ops, started, out.wall_s
    )
    if export_stl and not config.exact and emitted.iterations is not None:
        result["fast_forward"] = {"enabled": False, "reason": EXACT_REASON}
    return result


def run_identity(run: ResolvedRun, header_params: Mapping[str, Any]) -> dict[str, Any]:
    """What a result says about the run it is of (top-level fields of the result JSON)."""
    config, platform = run.config, run.platform
    return {
        "dataflow": config.dataflow,
        "platform": config.platform,
        "platform_name": platform.name,
        "overrides": list(config.overrides),
        **config.workload_fields(),
        "layers": config.layers,
        "elem_bytes": run.elem_bytes,
        "capacity_elements": run.capacity_elements,
        "tiling": {k: v for k, v in header_params.items() if k not in _NOT_TILING},
    }


def finish_result(
    result: dict[str, Any],
    run: ResolvedRun,
    platform_stats: dict[str, Any],
    fast_forward: dict[str, Any] | None,
    ops: int,
    started: float,
    replay_wall_s: float,
    peaks: dict[str, float] | None = None,
) -> dict[str, Any]:
    """The sections every result carries beside the replay's figures: energy, fast-forward,
    peaks (``peaks``, else the platform's), diagnosis and the wall times."""
    config, platform, info = run.config, run.platform, run.info
    result["area_mm2"], leakage = run_area(platform)
    result["energy"] = energy_section(platform, platform_stats, result, leakage)
    if config.dataflow == "approx":
        p = approx_params(run.params)
        result["approx_error"] = approx_error(p.degree, p.bound, config.head_dim)
    result["fast_forward"] = (
        {**fast_forward, "simulated_ops": ops}
        if fast_forward
        else {
            "enabled": False,
            "reason": "--exact" if config.exact else "the dataflow marks no loop iterations",
        }
    )
    if config.model:
        result["model"] = config.model
    result["all_layers"] = all_layers(result, config.layers)
    result["peaks"] = peaks or peaks_of(info)
    result["resources"] = resource_use(platform, platform_stats, result, result["peaks"])
    result["diagnosis"] = diagnose(result, _pe_mapping(platform))
    result["wall_s"] = time.perf_counter() - started
    result["replay_wall_s"] = replay_wall_s
    return result
