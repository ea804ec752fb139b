"""How much of each resource's capacity a run used: work done against what the resource could
have done in the simulated time (not the time it was occupied).

- compute: MACs / (MACs per cycle x cycles), the PE arrays' MAC utilization;
- exp: exponentials / (lanes x cycles);
- offchip: off-chip bytes / (peak off-chip bandwidth x time);
- sram_ports: the busiest port of any on-chip memory, its transfer time / time (a port's busy
  time is bytes / port width x its clock period: the work it did, docs/models/sram.md);
- links: the busiest interconnect output link, its transfer time / time (docs/models/
  interconnect.md); off-chip memories' channels are not links (``offchip`` covers them).

Each kind keeps its busiest component: the one nearest its roof is what limits the run.
"""

from __future__ import annotations

from typing import Any

from tlm_models.platform.schema import PlatformConfig
from tlm_models.run.result import child, stat

__all__ = ["link_utilization", "memory_utilization", "port_utilization", "resource_use"]


def memory_utilization(
    config: PlatformConfig, platform: dict[str, Any], time_ns: float
) -> dict[str, float]:
    """Busy share of every off-chip memory's channels over ``time_ns``."""
    out: dict[str, float] = {}
    for comp in config.components.values():
        group = child(platform, comp.name)
        if comp.spec.memory != "offchip" or group is None or time_ns <= 0:
            continue
        channels = [c for c in group["children"] if c["name"].startswith("channel")]
        busy = sum(stat(c, "busy_time") for c in channels)
        out[comp.name] = busy / (len(channels) * time_ns) if channels else 0.0
    return out


def _outputs(
    config: PlatformConfig, platform: dict[str, Any], time_ns: float, which: str, prefix: str
) -> dict[str, float]:
    """Busy share of the ``prefix<i>`` children (ports, links) of every component ``which``
    selects, over ``time_ns``."""
    out: dict[str, float] = {}
    for comp in config.components.values():
        group = child(platform, comp.name)
        selected = comp.spec.routes if which == "interconnect" else comp.type == which
        if not selected or group is None or time_ns <= 0:
            continue
        for part in group["children"]:
            if part["name"].startswith(prefix) and "busy_time" in part["stats"]:
                out[f"{comp.name}.{part['name']}"] = stat(part, "busy_time") / time_ns
    return out


def link_utilization(
    config: PlatformConfig, platform: dict[str, Any], time_ns: float
) -> dict[str, float]:
    """Busy share of every interconnect output link over ``time_ns`` (``noc.out0``...)."""
    return _outputs(config, platform, time_ns, "interconnect", "out")


def port_utilization(
    config: PlatformConfig, platform: dict[str, Any], time_ns: float
) -> dict[str, float]:
    """Busy share of every on-chip memory port over ``time_ns`` (``sram.port0``...)."""
    return _outputs(config, platform, time_ns, "sram", "port")


def _busiest(shares: dict[str, float]) -> dict[str, Any] | None:
    if not shares:
        return None
    name = max(shares, key=lambda n: shares[n])
    return {"component": name, "use": shares[name]}


def resource_use(
    config: PlatformConfig,
    platform: dict[str, Any],
    result: dict[str, Any],
    peaks: dict[str, float],
) -> dict[str, dict[str, Any]]:
    """``{kind: {"component": name, "use": fraction}}`` for compute, exp, offchip, sram_ports
    and links (a kind the platform lacks is left out). ``peaks`` are the chip's peak rates
    (``diagnosis.peaks_of``, times the tiles of a tiled chip)."""
    time_ns = float(result["sim_time_ns"])
    seconds = time_ns * 1e-9
    out: dict[str, dict[str, Any]] = {}
    if result["pe"]["mac_utilization"] is not None:
        out["compute"] = {"component": "pe", "use": float(result["pe"]["mac_utilization"])}
    if result["exp"]["lane_utilization"] is not None:
        out["exp"] = {"component": "exp", "use": float(result["exp"]["lane_utilization"])}
    if peaks.get("offchip_bytes_per_s") and seconds > 0:
        memories = [c.name for c in config.components.values() if c.spec.memory == "offchip"]
        out["offchip"] = {
            "component": ", ".join(memories) or "off-chip memory",
            "use": float(result["offchip_bytes"]["total"])
            / (peaks["offchip_bytes_per_s"] * seconds),
        }
    for kind, shares in (
        ("sram_ports", port_utilization(config, platform, time_ns)),
        ("links", link_utilization(config, platform, time_ns)),
    ):
        busiest = _busiest(shares)
        if busiest is not None:
            out[kind] = busiest
    return out
