"""Replays a DRAMSys STL memory trace (.stl / .rstl) against a platform's off-chip memory.

Only the off-chip memory component (the one behind the platform's off-chip address window, e.g.
``hbm``; on a platform with several, the one whose window holds the trace's first address) is
elaborated, from the platform's own configuration and overrides, and the C++
``StlPlayer`` (include/tlm_models/stl_player.h) is bound straight to its target socket: an STL
trace describes requests as they reach the memory controller, so DMA engines and interconnects
are not in the path. Addresses are bus addresses inside the off-chip window; the player sends
them relative to the window's base, as the platform's interconnect would.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import time
from pathlib import Path
from typing import Any

import numpy as np

from tlm_models.errors import UserError
from tlm_models.files.output_file import atomic_output
from tlm_models.platform import load_platform
from tlm_models.platform.schema import PlatformConfig
from tlm_models.replay.stl_out import offchip_regions
from tlm_models.runtime.session import NativeSession, ticks_per_second
from tlm_models.trace.io import open_trace

SCHEMA = "attn-tlm.stl-result/1"
#: The player's data buffer holds the longest request; longer ones are a broken trace.
MAX_REQUEST_BYTES = 64 << 20
_REQUEST_LINE = re.compile(rb"^[ \t]*\d")

#: SystemC objects of this process's simulation, kept alive until the worker exits.
_SIMULATION_OBJECTS: list[Any] = []


def memory_only(
    platform: PlatformConfig, first_address: int | None = None
) -> tuple[PlatformConfig, int, int]:
    """The platform reduced to one off-chip memory component, with that memory's window: the
    memory whose window holds ``first_address`` (a platform with several off-chip memories,
    whose ``run --export-stl`` wrote one trace per memory), else the platform's first."""
    region = platform.info().offchip
    for candidate in offchip_regions(platform):
        if first_address is not None and candidate.base <= first_address < (
            candidate.base + candidate.size
        ):
            region = candidate
    component = platform.components[region.name]
    reduced = PlatformConfig(
        name=platform.name,
        description=platform.description,
        components={region.name: component},
        source=platform.source,
    )
    return reduced, region.base, region.size


def with_queued_memory(reduced: PlatformConfig, outstanding: int, relative: bool) -> PlatformConfig:
    """The memory-only platform with its bank-level hbm switched to queued requests, so that
    ``outstanding`` requests in flight compete in its controllers' queues."""
    if outstanding < 1:
        raise UserError(f"--outstanding must be at least 1, not {outstanding}")
    if relative:
        raise UserError(
            "--outstanding needs absolute times (.stl): .rstl times follow the previous completion"
        )
    name, component = next(iter(reduced.components.items()))
    if component.type != "hbm" or component.params.get("fidelity") != "bank":
        raise UserError(
            f"--outstanding needs a bank-level hbm memory (--set {name}.fidelity=bank): "
            f"'{name}' answers every request at once, so a window changes nothing"
        )
    params = {**component.params, "request_mode": "queued"}
    return dataclasses.replace(
        reduced, components={name: dataclasses.replace(component, params=params)}
    )


def replay_stl_file(
    trace_path: str,
    platform_path: str,
    overrides: tuple[str, ...] = (),
    clock_hz: float = 1e9,
    with_latencies: bool = False,
    outstanding: int | None = None,
) -> dict[str, Any]:
    """Worker job: play the STL trace into the platform's off-chip memory; the result as a dict.

    ``with_latencies`` adds every request's latency (ns, trace order) under ``latencies_ns``.
    ``outstanding`` keeps that many requests in flight against a bank-level ``hbm`` memory,
    which then queues them (``request_mode: queued``) so that its scheduler can reorder them.
    The memory and the player run compiled (``native/session_api.cpp``): no JIT in the process.
    """
    started = time.perf_counter()
    platform = load_platform(platform_path, overrides)
    trace = open_trace(trace_path, stl_clock_hz=clock_hz)
    if not trace.is_memory_trace:
        raise UserError(f"{trace_path}: is an operation trace, not an STL memory trace")
    chunks = trace.chunks()
    first = next(chunks, None)
    first_address = int(first["address"][0]) if first is not None and len(first) else None
    reduced, base, size = memory_only(platform, first_address)
    relative = trace.format == "rstl"
    if outstanding is not None:
        reduced = with_queued_memory(reduced, outstanding, relative)
    session = NativeSession(reduced)
    _SIMULATION_OBJECTS.append(session)
    memory_name = next(iter(reduced.components))
    session.new_stl_player(memory_name, relative, MAX_REQUEST_BYTES, outstanding or 1)

    count = 0
    for chunk in itertools.chain([first] if first is not None else [], chunks):
        _check_chunk(chunk, count, trace_path, base, size, memory_name)
        session.stl_feed(
            chunk["time_ps"],
            np.ascontiguousarray(chunk["is_write"]).view(np.uint8),
            chunk["address"] - np.uint64(base),
            chunk["length"],
        )
        count += len(chunk)
    sim_started = time.perf_counter()
    session.stl_run()
    sim_wall = time.perf_counter() - sim_started
    error = session.stl_error()
    if error:
        raise UserError(_where(trace_path, error))
    result = _result(session.stl_stats(), session.platform_stats(), count)
    result.update(
        trace=trace_path,
        trace_format=trace.format,
        platform=platform_path,
        platform_name=platform.name,
        memory=memory_name,
        overrides=list(overrides),
        outstanding=outstanding,
        clock_hz=clock_hz,
        replay_wall_s=sim_wall,
        requests_per_s=count / sim_wall if sim_wall > 0 else None,
        wall_s=time.perf_counter() - started,
    )
    if with_latencies:
        ticks = session.stl_latencies(result["requests"])
        result["latencies_ns"] = (ticks / (ticks_per_second() / 1e9)).tolist()
    return result


def write_latencies(path: Path, latencies_ns: list[float]) -> None:
    """Every request's latency (issue to completion, ns) in trace order, as ``request,latency_ns``
    CSV lines: the per-request export a memory engineer compares across simulators."""
    lines = np.char.add(
        np.char.add(np.arange(len(latencies_ns)).astype(str), ","),
        np.char.mod("%.3f", np.asarray(latencies_ns, dtype=np.float64)),
    )
    with atomic_output(path, "latencies") as f:
        f.write("request,latency_ns\n")
        if len(lines):
            f.write("\n".join(lines.tolist()) + "\n")


def _check_chunk(
    chunk: np.ndarray, first: int, path: str, base: int, size: int, memory: str
) -> None:
    address = chunk["address"]
    length = chunk["length"].astype(np.uint64)
    offset = address - np.uint64(base)  # wraps below the base; caught by the first term
    outside = (
        (address < np.uint64(base))
        | (offset >= np.uint64(size))
        | (length > np.uint64(size) - offset)
    )
    too_long = length > np.uint64(MAX_REQUEST_BYTES)
    for mask, why in (
        (outside, f"lies outside the off-chip memory {memory} [{base:#x}, {base + size:#x})"),
        (too_long, f"is longer than the player's limit of {MAX_REQUEST_BYTES} B"),
    ):
        bad = np.flatnonzero(mask)
        if len(bad):
            i = int(bad[0])
            request = first + i
            raise UserError(
                f"{path}:{_line_of_request(path, request)}: request {request} "
                f"({int(length[i])} B at {int(address[i]):#x}) {why}"
            )


def _line_of_request(path: str, request: int) -> int:
    """The line number of the ``request``-th request line (error path only)."""
    seen = -1
    with open(path, "rb") as f:
        for number, line in enumerate(f, start=1):
            if _REQUEST_LINE.match(line):
                seen += 1
                if seen == request:
                    return number
    return 0


def _where(path: str, error: str) -> str:
    match = re.match(r"request (\d+): ", error)
    if match is None:
        return f"{path}: {error}"
    return f"{path}:{_line_of_request(path, int(match.group(1)))}: {error}"


def _result(player: dict[str, Any], stats: dict[str, Any], count: int) -> dict[str, Any]:
    """The result from the player's statistics tree (``StlPlayer::collect_stats``)."""
    values = {k: v["value"] for k, v in player["stats"].items()}
    histogram = next(c for c in player["children"] if c["name"] == "latency_histogram")
    buckets = {k: int(v["value"]) for k, v in histogram["stats"].items() if v["value"]}
    return {
        "schema": SCHEMA,
        "requests": int(values["requests"]),
        "reads": int(values["reads"]),
        "writes": int(values["writes"]),
        "bytes_read": int(values["bytes_read"]),
        "bytes_written": int(values["bytes_written"]),
        "sim_time_ns": float(values["last_completion"]),
        "first_issue_ns": float(values["first_issue"]),
        "last_completion_ns": float(values["last_completion"]),
        "achieved_bandwidth_Bps": float(values["achieved_bandwidth"]),
        "latency_ns": {
            "mean": float(values["latency_mean"]),
            "max": float(values["latency_max"]),
            "histogram": buckets,
        },
        "memory_stats": stats,
        "fed": count,
    }


def format_stl_summary(r: dict[str, Any]) -> str:
    """The STL replay result as a readable report; every number carries its unit."""
    lat = r["latency_ns"]
    lines = [
        f"{r['trace']}: STL memory trace ({r['trace_format']}), {r['requests']:,} requests "
        f"on {r['platform_name']}.{r['memory']}",
        f"simulated time         {r['sim_time_ns']:,.3f} ns "
        f"(first issue {r['first_issue_ns']:,.3f} ns)",
        f"reads                  {r['reads']:,} requests, {r['bytes_read']:,} B",
        f"writes                 {r['writes']:,} requests, {r['bytes_written']:,} B",
        f"achieved bandwidth     {r['achieved_bandwidth_Bps'] / 1e9:,.3f} GB/s",
        f"latency                mean {lat['mean']:,.3f} ns, max {lat['max']:,.3f} ns",
        "latency histogram      "
        + (
            ", ".join(
                f"{name.removeprefix('ge_')}+: {n:,} requests"
                for name, n in lat["histogram"].items()
            )
            or "no requests"
        ),
    ]
    speed = r.get("requests_per_s")
    lines.append(
        f"replay                 {r['replay_wall_s'] * 1e3:.1f} ms wall"
        + (f", {speed / 1e6:.2f} M requests/s" if speed else "")
    )
    return "\n".join(lines)
