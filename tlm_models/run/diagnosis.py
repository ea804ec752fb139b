"""Why a run took the time it did: a verdict, the bottleneck in one sentence with the numbers
behind it, and hints when a platform or dataflow choice is the likely cause.

Everything here follows from the result JSON (docs/study.md, "Diagnosis after a run"):

- Each resource's **use** is the work it did against what it could have done in the simulated
  time (``resources``, from ``tlm_models.run.resource_use``): MACs, exponentials, off-chip bytes,
  the busiest SRAM port's and interconnect link's transfer time. Busy time is not use: an
  engine can be busy waiting out a latency or issuing operations that do little work.
- The **critical resource** is the one nearest its roof. At half its roof or more it bounds
  the run (verdict ``compute``, ``exp``, ``offchip_bandwidth``, ``sram_ports``, ``links``):
  the run can then get at most 2x faster before that resource is saturated.
- Below that no capacity limits the run, and the verdict names the largest share of time
  lost: **latency-bound transfers** when compute idles waiting on transfers that are in
  flight at least half the time (the memory-stall fraction); **operation overhead** when an
  engine is busy without doing its work (busy fraction minus MAC or lane utilization);
  otherwise **dependency-bound** (no engine busy: they wait on each other's results).
- The PE array's and Exp unit's time is broken down by what they did (``pe.time``,
  ``exp.time``: matmuls, element-wise, row reductions, rescaling, moves, pipeline drain, idle
  by cause), and the sentence names the largest parts.
- No hint proposes moving less data when the run already moves the compulsory minimum
  (``bounds.compulsory``: every input read once, every output written once).
"""

from __future__ import annotations

from typing import Any

from tlm_models.platform.info import PlatformInfo
from tlm_models.units import format_bytes, format_ns

__all__ = ["VERDICTS", "diagnose", "peaks_of", "roofline_point", "time_parts"]

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
#: The resources a run's use is measured against, as the sentence names them.
RESOURCE_WORDS = {
    "compute": "compute (the PE array's MACs)",
    "exp": "the Exp unit's lanes",
    "offchip": "off-chip bandwidth",
    "sram_ports": "an SRAM port",
    "links": "an interconnect link",
}
#: The verdicts ``diagnose`` gives (``diagnosis.verdict``).
VERDICTS = (
    "compute",
    "exp",
    "offchip_bandwidth",
    "sram_ports",
    "links",
    "latency_bound_transfers",
    "operation_overhead",
    "dependency_bound",
)
_VERDICT_OF = {"offchip": "offchip_bandwidth"}
#: What the PE array and Exp unit spend busy time on (``pe.time.busy``), as the sentence says.
WORK_WORDS = {
    "mac": "matmuls",
    "elementwise": "element-wise ops",
    "row": "row reductions",
    "rescale": "rescaling",
    "move": "moves",
    "exp": "exponentials",
    "drain": "pipeline drain",
}
#: A resource at this share of its roof or more bounds the run (at most 2x to gain elsewhere).
NEAR_ROOF = 0.5
#: Transfers in flight this share of the time or more are what idle compute waits for.
MOSTLY = 0.5
#: Below this share of simulated time a stall or a part of the time is not worth naming.
_NOTABLE = 0.05
_SHOWN = 0.005
#: A PE array busy this many times more than its MACs are used is fed badly shaped operations.
_SHAPE_GAP = 2.0
#: Off-chip bytes within this factor of the compulsory minimum are the minimum (rounding of
#: partial rows aside, a dataflow at the floor moves it exactly).
_AT_FLOOR = 1.01
#: DMA channels that spend this share of the in-flight time queued behind other traffic are
#: held up in the memory, not by their own window: with the bandwidth roof far away, its requests
#: concentrate on part of the memory (a few channels or banks).
_QUEUED = 0.25


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


def _uses(result: dict[str, Any]) -> dict[str, tuple[str, float]]:
    """Resource kind -> (component, use): the result's ``resources``, else what the result's
    own figures give (compute, Exp, off-chip bandwidth from ``peaks``)."""
    stored = result.get("resources")
    if stored:
        return {kind: (str(r["component"]), float(r["use"])) for kind, r in stored.items()}
    uses: dict[str, tuple[str, float]] = {}
    if result["pe"].get("mac_utilization") is not None:
        uses["compute"] = ("pe", float(result["pe"]["mac_utilization"]))
    if result["exp"].get("lane_utilization") is not None:
        uses["exp"] = ("exp", float(result["exp"]["lane_utilization"]))
    point = roofline_point(result)
    if point is not None:
        uses["offchip"] = ("off-chip memory", point["memory_roof_fraction"])
    return uses


def time_parts(unit: dict[str, Any], sim_ns: float) -> list[tuple[str, float]]:
    """An engine's time (``pe`` or ``exp`` section) as (words, share of simulated time),
    largest first: busy by kind of work and pipeline drain, then idle by cause."""
    breakdown = unit.get("time")
    if not breakdown or sim_ns <= 0:
        return []
    busy = [(WORK_WORDS.get(k, k), ns / sim_ns) for k, ns in breakdown["busy"].items()]
    idle = [(f"idle {STALL_WORDS.get(k, k)}", ns / sim_ns) for k, ns in breakdown["idle"].items()]
    idle.append(("idle with nothing left to do", breakdown["idle_no_work"] / sim_ns))
    return [
        p for p in sorted(busy, key=lambda p: -p[1]) + sorted(idle, key=lambda p: -p[1]) if p[1]
    ]


def _time_words(unit: dict[str, Any], sim_ns: float, limit: int = 4) -> str:
    """``matmuls 56.3 %, element-wise ops 20.1 %, ...``: the largest parts of the time."""
    parts = [p for p in time_parts(unit, sim_ns) if p[1] >= _SHOWN]
    parts = sorted(parts, key=lambda p: -p[1])[:limit]
    return ", ".join(f"{words} {_share(share)}" for words, share in parts)


def _dominant_stall(result: dict[str, Any], engine: str) -> tuple[str, float] | None:
    """(cause, share of simulated time) of the largest idle time of ``engine``."""
    sim = float(result["sim_time_ns"]) or 1.0
    causes = dict(dict(result.get("stalls") or {}).get(engine) or {})
    idle = [(cause, float(ns) / sim) for cause, ns in causes.items() if ns]
    return max(idle, key=lambda s: s[1]) if idle else None


def _verdict(result: dict[str, Any], uses: dict[str, tuple[str, float]]) -> str:
    nearest = max(uses, key=lambda k: uses[k][1]) if uses else None
    if nearest is not None and uses[nearest][1] >= NEAR_ROOF:
        return _VERDICT_OF.get(nearest, nearest)
    # Far from every roof: the largest share of the time lost to one of three reasons wins.
    sim = float(result["sim_time_ns"]) or 1.0
    compute_idle = float(result.get("memory_stall_fraction") or 0.0)
    io_busy = float(result.get("io_active_ns") or 0.0) / sim
    memory_wait = compute_idle if io_busy >= MOSTLY else 0.0
    overhead = max(_overhead(result, "pe"), _overhead(result, "exp"))
    waiting = 1.0 - max(_busy(result, "pe"), _busy(result, "exp")) - memory_wait
    if memory_wait >= max(overhead, waiting):
        return "latency_bound_transfers"
    return "operation_overhead" if overhead >= waiting else "dependency_bound"


def _busy(result: dict[str, Any], unit: str) -> float:
    return float(result[unit].get("busy_fraction") or 0.0)


def _useful(result: dict[str, Any], unit: str) -> float:
    key = "mac_utilization" if unit == "pe" else "lane_utilization"
    return float(result[unit].get(key) or 0.0)


def _overhead(result: dict[str, Any], unit: str) -> float:
    """The share of the time ``unit`` is busy without doing the work it exists for."""
    return max(_busy(result, unit) - _useful(result, unit), 0.0)


def _roofs(uses: dict[str, tuple[str, float]], skip: str | None = None) -> str:
    """``compute 56.3 %, off-chip bandwidth 1.3 %, ...``: every resource's use, largest first."""
    names = {"compute": "compute", "exp": "Exp", "offchip": "off-chip bandwidth"}
    names |= {"sram_ports": "SRAM port", "links": "link"}
    ordered = sorted((k for k in uses if k != skip), key=lambda k: -uses[k][1])
    return ", ".join(f"{names[k]} {_share(uses[k][1])}" for k in ordered)


def _sentence(result: dict[str, Any], verdict: str, uses: dict[str, tuple[str, float]]) -> str:
    sim = float(result["sim_time_ns"])
    engine = "exp" if verdict == "exp" else "pe"
    if verdict == "operation_overhead" and _overhead(result, "exp") > _overhead(result, "pe"):
        engine = "exp"
    if verdict in ("compute", "exp", "offchip_bandwidth", "sram_ports", "links"):
        kind = {"offchip_bandwidth": "offchip"}.get(verdict, verdict)
        component, use = uses[kind]
        where = "" if kind in ("compute", "exp") else f" ({component})"
        head = (
            f"{RESOURCE_WORDS[kind]}{where} is the critical resource: {_share(use)} of its "
            f"roof over {format_ns(sim)} (the others: {_roofs(uses, kind)})"
        )
        if kind in ("compute", "exp"):
            head += f"; {ENGINE_WORDS[engine]}'s time: {_time_words(result[engine], sim)}"
        return head
    if verdict == "latency_bound_transfers":
        io_busy = float(result.get("io_active_ns") or 0.0) / (sim or 1.0)
        stall = _dominant_stall(result, "pe")
        head = (
            f"Off-chip transfers are latency-bound: in flight {_share(io_busy)} of "
            f"{format_ns(sim)} yet moving {_share(uses.get('offchip', ('', 0.0))[1])} of the "
            f"off-chip bandwidth roof, and compute idles "
            f"{_share(result.get('memory_stall_fraction'))} of the time"
        )
        if stall is not None:
            head += f", mostly {STALL_WORDS.get(stall[0], stall[0])}"
        return head + f" (no resource within half its roof: {_roofs(uses)})"
    if verdict == "operation_overhead":
        work = "MACs" if engine == "pe" else "exponentials"
        return (
            f"Operation overhead: {ENGINE_WORDS[engine]} is busy {_share(_busy(result, engine))} "
            f"of {format_ns(sim)} yet does {_share(_useful(result, engine))} of the {work} it "
            f"could; its time: {_time_words(result[engine], sim)} (no resource within half its "
            f"roof: {_roofs(uses)})"
        )
    stall = _dominant_stall(result, engine)
    waits = f", mostly {STALL_WORDS.get(stall[0], stall[0])}" if stall is not None else ""
    return (
        f"Dependency-bound: no resource is within half its roof ({_roofs(uses)}) and no engine "
        f"is busy half of {format_ns(sim)}; the engines wait on each other's results{waits} "
        f"({ENGINE_WORDS[engine]}'s time: {_time_words(result[engine], sim)})"
    )


def diagnose(result: dict[str, Any], pe_mapping: str | None = None) -> dict[str, Any]:
    """``{"verdict": one of VERDICTS, "bottleneck": sentence, "hints": [sentences],
    "roofline": roofline_point}``."""
    uses = _uses(result)
    verdict = _verdict(result, uses)
    sentence = _sentence(result, verdict, uses) + "."
    return {
        "verdict": verdict,
        "bottleneck": sentence[0].upper() + sentence[1:],
        "hints": _hints(result, verdict, pe_mapping),
        "roofline": roofline_point(result),
    }


#: The systolic mappings of the PE array (docs/models/pe_array.md).
_SYSTOLIC = ("output_stationary", "weight_stationary", "input_stationary")


def _queued_share(result: dict[str, Any]) -> float:
    """The DMA channels' time queued behind other traffic (their ``bandwidth`` stalls,
    docs/replayer.md), summed over the channels, as a share of the in-flight time."""
    io_active = float(result.get("io_active_ns") or 0.0)
    stalls = dict(result.get("stalls") or {})
    queued = sum(float(c["bandwidth"]) for c in stalls.values() if c and "bandwidth" in c)
    return queued / io_active if io_active > 0 else 0.0


def _at_compulsory(result: dict[str, Any]) -> tuple[bool, float | None]:
    """Whether the run moves no more than the compulsory minimum, and that minimum."""
    floor = (result.get("bounds") or {}).get("compulsory")
    if not floor:
        return False, None
    return float(result["offchip_bytes"]["total"]) <= _AT_FLOOR * float(floor), float(floor)


def _hints(result: dict[str, Any], verdict: str, pe_mapping: str | None) -> list[str]:
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
    at_floor, floor = _at_compulsory(result)
    total = float(result["offchip_bytes"]["total"])
    stall = result.get("memory_stall_fraction")
    overlap = result.get("overlap_efficiency")
    memory_waits = (
        stall is not None and stall >= 0.5 and overlap is not None and overlap < 0.5
    ) or verdict == "offchip_bandwidth"
    queued = _queued_share(result)
    if verdict == "latency_bound_transfers" and queued >= _QUEUED:
        fewer = (
            ""
            if at_floor or not floor
            else f" or fewer bytes ({total / floor:.1f}x the compulsory {format_bytes(floor)})"
        )
        hints.append(
            f"The transfers spend {_share(queued)} of their in-flight time queued behind other "
            "traffic while the memory as a whole is far from its bandwidth roof: the requests "
            "concentrate on a few memory channels or banks (rows whose pitch is a multiple of "
            "the channel interleave x channels all start on one channel: docs/study.md, "
            "'Why Standard and FLAT as published reach only 20-25 % of the bandwidth roof'). "
            "More requests in flight would queue there too; addresses spread over the "
            f"channels (a padded row pitch, an address hash){fewer} would help."
        )
    elif verdict == "latency_bound_transfers":
        fewer = (
            ""
            if at_floor or not floor
            else f", and so would fewer bytes ({total / floor:.1f}x the compulsory "
            f"{format_bytes(floor)}: `attn-tlm bounds`)"
        )
        hints.append(
            "Transfers spend their time waiting out the memory's latency, not moving data: "
            "more requests in flight (`dma.max_outstanding`), larger bursts (`dma.max_burst`) "
            f"or loads issued earlier (deeper prefetch in the dataflow) would help{fewer}; "
            "more bandwidth would not."
        )
    elif memory_waits and at_floor and floor is not None:
        hints.append(
            f"The run moves {format_bytes(total)}, the compulsory minimum (every input read "
            "once, every output written once): no dataflow or SRAM size moves less, so only "
            "more off-chip bandwidth (or narrower elements) shortens it."
        )
    elif memory_waits:
        times = f", {total / floor:.1f}x the compulsory {format_bytes(floor)}" if floor else ""
        hints.append(
            f"Compute waits on memory {_share(stall)} of the time and only {_share(overlap)} of "
            f"the off-chip transfer time is hidden under compute; the dataflow moves "
            f"{format_bytes(total)}{times}. A larger `sram.capacity` (bigger tiles) or a "
            "dataflow with less traffic (`attn-tlm bounds`) would help."
        )
    if verdict == "operation_overhead" and pe_mapping not in _SYSTOLIC:
        hints.append(
            "Each operation pays the engine's pipeline latency and fill; with little work per "
            "operation (one query row per head in decode, one K/V row per step) that cost "
            "dominates: larger blocks per operation (more query rows, e.g. the heads that "
            "share a K/V head, in one matmul) raise the share of useful work."
        )
    return hints
