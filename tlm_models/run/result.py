"""The versioned result JSON of one run, composed from the replayer's and platform's statistics.

The keys are a stable contract (docs/study.md): scripts and the sweep's CSV depend on them.
"""

from __future__ import annotations

import math
from typing import Any

from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo

SCHEMA = "attn-tlm.result/1"
#: The longest simulated time SystemC can hold: 2^64 steps of the 1 ps resolution the models
#: run at (213.5 days). A fast-forwarded run extrapolates past it in floating point where an
#: exact run would stop (native/session_api.cpp), so both refuse a time beyond it.
SC_TIME_RANGE_NS = 2.0**64 / 1000.0


def stat(group: dict[str, Any], name: str) -> float:
    """The value of statistic ``name`` in a statistics-tree group (NaN when it is null)."""
    value = group["stats"][name]["value"]
    return math.nan if value is None else float(value)


def child(group: dict[str, Any], name: str) -> dict[str, Any] | None:
    for c in group["children"]:
        if c["name"] == name:
            found: dict[str, Any] = c
            return found
    return None


def check_time_range(sim_ns: float) -> None:
    """UserError when a run's simulated time is beyond what SystemC can hold (an extrapolated
    time: an exact run stops at the range, native/session_api.cpp)."""
    if sim_ns >= SC_TIME_RANGE_NS:
        raise UserError(
            f"simulated time reached {sim_ns * 1e-9 / 86400:.1f} days, beyond the "
            f"{SC_TIME_RANGE_NS * 1e-9 / 86400:.1f} days (2^64 ps) SystemC can hold at its 1 ps "
            "resolution; the platform's latencies or clocks make the run longer than that"
        )


def _none_if_nan(x: float) -> float | None:
    return None if math.isnan(x) else x


def _engines_of(replay: dict[str, Any], info: PlatformInfo, kind: str) -> list[dict[str, Any]]:
    engines = child(replay, "engines")
    if engines is None:
        return []
    return [e for e in engines["children"] if info.engines.get(e["name"]) == kind]


def time_breakdown(engines: list[dict[str, Any]], sim_ns: float) -> dict[str, Any] | None:
    """Where the busiest engine of a kind spent the simulated time (replay_metrics.h): busy
    issuing each kind of work, busy only draining its pipeline, idle by the cause that ended
    each gap, and ``idle_no_work`` after its last operation; the parts sum to ``sim_ns``."""
    timed = [
        (e, t, i)
        for e in engines
        if (t := child(e, "time")) is not None and (i := child(e, "idle")) is not None
    ]
    if not timed:
        return None
    _, busy_kinds, gaps = max(timed, key=lambda x: stat(x[0], "busy_time"))
    busy = {name: float(s["value"]) for name, s in busy_kinds["stats"].items()}
    idle = {name: float(s["value"]) for name, s in gaps["stats"].items()}
    rest = sim_ns - sum(busy.values()) - sum(idle.values())
    # The tail after the engine's last operation; rounding of the ns sums aside, never negative.
    return {"busy": busy, "idle": idle, "idle_no_work": max(rest, 0.0)}


def compose_result(
    replay: dict[str, Any], info: PlatformInfo, identity: dict[str, Any], wall_s: float
) -> dict[str, Any]:
    """The contract result: identity fields, times, bytes, utilizations, stalls, speed."""
    sim_ns = stat(replay, "sim_time")
    check_time_range(sim_ns)
    sim_s = sim_ns * 1e-9
    pe_engines = _engines_of(replay, info, "pe")
    exp_engines = _engines_of(replay, info, "exp")
    macs = sum(stat(e, "macs") for e in pe_engines)
    exps = sum(stat(e, "exps") for e in exp_engines)
    pe_busy = max((stat(e, "busy_fraction") for e in pe_engines), default=0.0)
    exp_busy = max((stat(e, "busy_fraction") for e in exp_engines), default=0.0)
    pe_peak = info.pe_rows * info.pe_cols * info.pe_clock_hz * sim_s
    exp_peak = info.exp_lanes * info.exp_clock_hz * sim_s
    read = stat(replay, "offchip_read")
    write = stat(replay, "offchip_write")
    stalls: dict[str, dict[str, float]] = {}
    engines = child(replay, "engines")
    for engine in engines["children"] if engines else []:
        causes = child(engine, "stalls")
        if causes is not None:
            stalls[engine["name"]] = {k: float(v["value"]) for k, v in causes["stats"].items()}
    tensors = child(replay, "tensors")
    per_tensor = {
        t["name"]: {"read": int(stat(t, "read")), "write": int(stat(t, "write"))}
        for t in (tensors["children"] if tensors else [])
    }
    ops = int(stat(replay, "ops"))
    return {
        "schema": SCHEMA,
        **identity,
        "sim_time_ns": sim_ns,
        "offchip_bytes": {"read": int(read), "write": int(write), "total": int(read + write)},
        "offchip_bytes_per_tensor": per_tensor,
        "pe": {
            "busy_fraction": pe_busy,
            "mac_utilization": macs / pe_peak if pe_peak > 0 else None,
            "macs": int(macs),
            "time": time_breakdown(pe_engines, sim_ns),
        },
        "exp": {
            "busy_fraction": exp_busy,
            "lane_utilization": exps / exp_peak if exp_peak > 0 else None,
            "exps": int(exps),
            "time": time_breakdown(exp_engines, sim_ns),
        },
        "memory_stall_fraction": _none_if_nan(stat(replay, "memory_stall_fraction")),
        "overlap_efficiency": _none_if_nan(stat(replay, "overlap_efficiency")),
        "exposed_io_ns": stat(replay, "exposed_io_time"),
        "io_active_ns": stat(replay, "io_active"),
        "compute_active_ns": stat(replay, "compute_active"),
        "stalls": stalls,
        "ops": ops,
        "wall_s": wall_s,
        "ops_per_s": ops / wall_s if wall_s > 0 else None,
    }
