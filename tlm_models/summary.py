"""The readable summary of one result JSON, shared by ``attn-tlm run`` and ``attn-tlm replay``."""

from __future__ import annotations

from typing import Any

from tlm_models.diagnosis import time_parts
from tlm_models.readable import format_bytes, format_ns
from tlm_models.tile_result import tile_lines


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100.0 * value:.2f} %"


def format_summary(r: dict[str, Any], title: str) -> str:
    """A result JSON (run or replay) as a readable report; every number carries its unit."""
    sim = r["sim_time_ns"]
    lines = [
        title,
        f"simulated time         {format_ns(sim)} ({sim:,.0f} ns)",
        f"off-chip bytes         read {format_bytes(r['offchip_bytes']['read'])}, written "
        f"{format_bytes(r['offchip_bytes']['write'])}, total "
        f"{format_bytes(r['offchip_bytes']['total'])} ({r['offchip_bytes']['total']:,} B)",
    ]
    for name, t in r["offchip_bytes_per_tensor"].items():
        lines.append(
            f"  {name:<20} read {format_bytes(t['read']):>11}   written "
            f"{format_bytes(t['write']):>11}"
        )
    pe, exp = r["pe"], r["exp"]
    lines += [
        f"PE array               busy {_percent(pe['busy_fraction'])}, MAC utilization "
        f"{_percent(pe['mac_utilization'])} ({pe['macs']:,} MAC)",
        f"Exp unit               busy {_percent(exp['busy_fraction'])}, lane utilization "
        f"{_percent(exp['lane_utilization'])} ({exp['exps']:,} exp)",
        *_time_lines(r),
        f"memory stall fraction  {_percent(r['memory_stall_fraction'])} of simulated time",
        f"overlap efficiency     {_percent(r['overlap_efficiency'])} of off-chip I/O time "
        "hidden under compute",
        f"exposed I/O            {format_ns(r['exposed_io_ns'])} "
        f"(I/O active {format_ns(r['io_active_ns'])}, compute active "
        f"{format_ns(r['compute_active_ns'])})",
        "stalls by engine and cause",
    ]
    for engine, causes in r["stalls"].items():
        shown = ", ".join(f"{cause} {format_ns(ns)}" for cause, ns in causes.items() if ns)
        lines.append(f"  {engine:<8} {shown or 'none'}")
    if r.get("tiles"):
        lines += tile_lines(r["tiles"])
    lines += _energy_lines(r.get("energy"))
    if r.get("area_mm2") is not None:
        lines.append(
            f"area                   {r['area_mm2']:,.4f} mm2 (attn-tlm area: by component)"
        )
    lines += _all_layers_lines(r.get("all_layers"))
    speed = r.get("ops_per_s")
    lines.append(
        f"replay                 {r['replay_wall_s']:.3f} s wall"
        + (f", {speed / 1e6:.2f} M ops/s" if speed else "")
    )
    diagnosis = r.get("diagnosis")
    if diagnosis:
        lines.append(f"bottleneck: {diagnosis['bottleneck']}")
        lines += [f"hint: {hint}" for hint in diagnosis["hints"]]
    return "\n".join(lines)


def _time_lines(r: dict[str, Any]) -> list[str]:
    """Where the PE array's and the Exp unit's time went (``pe.time``, ``exp.time``)."""
    lines = []
    for unit, name in (("pe", "PE array"), ("exp", "Exp unit")):
        parts = time_parts(r[unit], r["sim_time_ns"])
        if parts:
            shown = ", ".join(f"{words} {_percent(share)}" for words, share in parts)
            lines.append(f"  {name + ' time':<21}{shown}")
    return lines


def _all_layers_lines(totals: dict[str, float] | None) -> list[str]:
    """The model's L layers back to back (one simulated, figures x L), when L > 1."""
    if not totals or totals.get("layers", 1) == 1:
        return []
    energy = totals.get("energy_j")
    return [
        f"{'all ' + format(totals['layers'], '.0f') + ' layers':<23}"
        f"{format_ns(totals['sim_time_ns'])}, "
        f"{format_bytes(totals['offchip_bytes'])} off-chip"
        + ("" if energy is None else f", {energy * 1e3:,.3f} mJ")
        + " (one layer simulated, times L: layers run back to back)"
    ]


def _energy_lines(energy: dict[str, Any] | None) -> list[str]:
    """Energy total, power and EDP, then each component that spent energy (docs/energy.md)."""
    if not energy:
        return []
    # Without a table its actions are counted only; an entry with no actions (the accelerator
    # top's leakage, docs/models/area.md) counts nothing.
    counted = [
        n for n, c in energy["by_component"].items() if not c["table"] and c.get("actions") != {}
    ]
    if not any(c["table"] for c in energy["by_component"].values()) and not energy["static_j"]:
        # Zero joules would read as a measurement: the platform describes no energy at all.
        return [
            "energy                 not modelled: no component of the platform has an "
            "`energy:` table (docs/energy.md); actions are counted"
        ]
    power = energy["average_power_w"]
    static = (
        f"static {energy['static_j'] * 1e3:,.6f} mJ"
        if energy["static_j"]
        else "static not modelled (no `leak` entry, no `technology:`)"
    )
    lines = [
        f"energy                 {energy['total_j'] * 1e3:,.6f} mJ (dynamic "
        f"{energy['dynamic_j'] * 1e3:,.6f} mJ, {static}), "
        f"average power {'n/a' if power is None else f'{power:,.3f} W'}, "
        f"energy-delay {energy['edp_js'] * 1e6:,.6f} mJ·ms",
    ]
    for name, comp in energy["by_component"].items():
        if comp["table"] or comp["static_j"]:  # static: the area model's leakage
            lines.append(f"  {name:<20} {comp['total_j'] * 1e3:>16,.6f} mJ")
    if counted:
        lines.append(f"  counts only (no energy table): {', '.join(counted)}")
    return lines
