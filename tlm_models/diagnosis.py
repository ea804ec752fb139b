"""Why a run took the time it did: the bottleneck in one sentence, and hints when a platform
choice is the likely cause.

Everything here is computed from the result JSON's metrics and the platform's peak figures
(``peaks_of``): the critical resource is the one busy for the largest share of simulated time
(PE array, Exp unit, or off-chip I/O); the dominant stall is the largest idle-with-work-queued
time of any engine by cause (docs/replayer.md); roofline distances compare the achieved MAC
rate with the array's peak and the achieved off-chip byte rate with the memory's peak.
"""

from __future__ import annotations

from typing import Any

from tlm_models.platform.info import PlatformInfo
from tlm_models.readable import format_ns

__all__ = ["diagnose", "peaks_of"]

#: What each stall cause means, as the diagnosis sentence says it.
STALL_WORDS = {
    "load_data": "waiting for off-chip loads",
    "store_done": "waiting for stores to finish",
    "buffer_free": "waiting for a buffer to be freed by compute",
    "pe_result": "waiting for PE-array results",
    "exp_result": "waiting for Exp-unit results",
    "lookahead": "waiting for the scheduler's read-ahead",
    "dma_credits": "out of DMA credits",
    "bandwidth": "queued behind other off-chip traffic",
}
ENGINE_WORDS = {"pe": "the PE array", "exp": "the Exp unit", "io": "off-chip I/O"}
#: Below this share of simulated time a stall is not worth naming.
_NOTABLE = 0.05
#: A PE array busy this many times more than its MACs are used is fed badly shaped operations.
_SHAPE_GAP = 2.0


def peaks_of(info: PlatformInfo) -> dict[str, float]:
    """The platform's peak rates, stored in the result for diagnosis and roofline plots."""
    return {
        "macs_per_s": info.pe_rows * info.pe_cols * info.pe_clock_hz,
        "exps_per_s": info.exp_lanes * info.exp_clock_hz,
        "offchip_bytes_per_s": info.offchip_bandwidth,
    }


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{100.0 * value:.1f} %"


def roofline_point(result: dict[str, Any]) -> dict[str, float] | None:
    """Arithmetic intensity (MAC per off-chip byte), achieved MAC/s, the attainable MAC/s
    min(peak, intensity x bandwidth), and the fractions of the compute and memory roofs."""
    peaks = result.get("peaks")
    sim_s = float(result.get("sim_time_ns") or 0.0) * 1e-9
    nbytes = float(result["offchip_bytes"]["total"])
    macs = float(result["pe"]["macs"])
    if not peaks or sim_s <= 0 or nbytes <= 0:
        return None
    intensity = macs / nbytes
    achieved = macs / sim_s
    attainable = min(peaks["macs_per_s"], intensity * peaks["offchip_bytes_per_s"])
    return {
        "intensity_macs_per_byte": intensity,
        "achieved_macs_per_s": achieved,
        "attainable_macs_per_s": attainable,
        "compute_roof_fraction": achieved / peaks["macs_per_s"],
        "memory_roof_fraction": nbytes / sim_s / peaks["offchip_bytes_per_s"],
    }


def _critical(result: dict[str, Any]) -> tuple[str, float]:
    sim = float(result["sim_time_ns"]) or 1.0
    busy = {
        "pe": float(result["pe"]["busy_fraction"] or 0.0),
        "exp": float(result["exp"]["busy_fraction"] or 0.0),
        "io": float(result.get("io_active_ns") or 0.0) / sim,
    }
    engine = max(busy, key=lambda name: busy[name])
    return engine, busy[engine]


def _dominant_stall(result: dict[str, Any], critical: str) -> tuple[str, str, float] | None:
    """(engine, cause, share of simulated time) of the largest idle time of the compute engine
    that matters: the critical one, or the PE array when off-chip I/O is critical (what
    compute waits for). A DMA channel's own waiting is its normal state and not named."""
    engine = critical if critical in ("pe", "exp") else "pe"
    sim = float(result["sim_time_ns"]) or 1.0
    causes = dict(dict(result.get("stalls") or {}).get(engine) or {})
    idle = [(engine, cause, float(ns) / sim) for cause, ns in causes.items() if ns]
    return max(idle, key=lambda s: s[2]) if idle else None


def diagnose(result: dict[str, Any], pe_mapping: str | None = None) -> dict[str, Any]:
    """``{"bottleneck": sentence, "hints": [sentences], "roofline": roofline_point}``."""
    engine, busy = _critical(result)
    pe = result["pe"]
    parts = [f"{ENGINE_WORDS[engine]} is the critical resource (busy {_share(busy)} of "]
    parts[0] += f"{format_ns(float(result['sim_time_ns']))})"
    if engine == "pe":
        parts[0] += f", with {_share(pe['mac_utilization'])} of its MACs in use"
    stall = _dominant_stall(result, engine)
    if stall is not None and stall[2] >= _NOTABLE:
        name, cause, share = stall
        parts.append(
            f"{ENGINE_WORDS[name]} idles mostly {STALL_WORDS.get(cause, cause)} "
            f"({_share(share)} of the time)"
        )
    else:
        parts.append(
            f"{ENGINE_WORDS[stall[0] if stall else 'pe']} stalls less than 5 % of the time"
        )
    point = roofline_point(result)
    if point is not None:
        parts.append(
            f"it reaches {_share(point['compute_roof_fraction'])} of the compute roof and "
            f"{_share(point['memory_roof_fraction'])} of the off-chip bandwidth roof"
        )
    sentence = "; ".join(parts) + "."
    return {"bottleneck": sentence[0].upper() + sentence[1:], "hints": _hints(result, pe_mapping),
            "roofline": point}  # fmt: skip


#: The systolic mappings of the PE array (docs/models/pe_array.md).
_SYSTOLIC = ("output_stationary", "weight_stationary", "input_stationary")


def _hints(result: dict[str, Any], pe_mapping: str | None) -> list[str]:
    hints: list[str] = []
    pe = result["pe"]
    busy = float(pe["busy_fraction"] or 0.0)
    used = float(pe["mac_utilization"] or 0.0)
    if pe_mapping in _SYSTOLIC and busy >= 0.3 and busy > _SHAPE_GAP * used:
        hints.append(
            f"The PE array is busy {_share(busy)} of the time but uses {_share(used)} of its "
            f"MACs, and its mapping is {pe_mapping}, a systolic array (output_stationary is the "
            "default when `pe.mapping` is not set): matrix-vector products (such as AttenIO's, "
            "one K or V row at a time) occupy one row or column of such an array, and without "
            "`pe.fold_overlap` every fold pays its skew, fill and drain. Try "
            "`--set pe.mapping=broadcast` or `--set pe.fold_overlap=true` "
            "(docs/models/pe_array.md)."
        )
    stall = result.get("memory_stall_fraction")
    overlap = result.get("overlap_efficiency")
    if stall is not None and stall >= 0.5 and overlap is not None and overlap < 0.5:
        hints.append(
            f"Compute waits on memory {_share(stall)} of the time and only {_share(overlap)} of "
            "the off-chip transfer time is hidden under compute: the dataflow moves more data "
            "than the bandwidth serves in time. A larger `sram.capacity` (bigger tiles) or a "
            "dataflow with less traffic (`attn-tlm bounds`) would help."
        )
    return hints
