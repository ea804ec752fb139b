"""The result of a tiled run: each tile's figures and the chip's (docs/models/tiles.md).

Every tile's replay is composed like a one-tile run (``result.compose_result``); the chip's
figures follow from them and from the shared components' statistics:

- time T = max over tiles of the tile's sim time (all tiles start at 0);
- imbalance = T / mean tile time (1 = perfectly balanced); work imbalance = the most MACs
  of a tile / the mean (the split alone, without contention);
- off-chip bytes, MACs and exps: sums over tiles;
- PE (Exp) busy fraction = sum_i busy_i t_i / (C T); MAC utilization = MACs / (C x MACs per
  cycle x cycles of T);
- stalls, exposed I/O, io-active and compute-active time: the mean over tiles (ns per tile),
  so that shares of T read as for one tile; ``memory_stall_fraction`` =
  1 - sum_i compute_active_i / (C T);
- utilization of an off-chip memory = sum of its channels' busy time / (channels x T); of a
  link (an interconnect output) = its busy time / T.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tlm_models.platform.info import PlatformInfo
from tlm_models.platform.schema import PlatformConfig
from tlm_models.platform.tiles import tile_prefix
from tlm_models.run.resource_use import link_utilization, memory_utilization
from tlm_models.run.result import child, compose_result
from tlm_models.units import format_bytes, format_ns


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _mean_stalls(tiles: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for tile in tiles:
        for engine, causes in tile["stalls"].items():
            into = out.setdefault(engine, {})
            for cause, ns in causes.items():
                into[cause] = into.get(cause, 0.0) + ns / len(tiles)
    return out


def _mean_time(tiles: Sequence[dict[str, Any]], unit: str, time_ns: float) -> dict[str, Any] | None:
    """The mean tile's time breakdown of ``unit`` (pe, exp) over the chip's time: ns per
    tile, as the stalls; the tail after a tile's last operation, or after it finished before
    the slowest tile, is ``idle_no_work``."""
    parts = [t[unit].get("time") for t in tiles]
    if not parts or any(p is None for p in parts):
        return None
    out: dict[str, Any] = {"busy": {}, "idle": {}}
    for part in parts:
        for group in ("busy", "idle"):
            for name, ns in part[group].items():
                out[group][name] = out[group].get(name, 0.0) + ns / len(parts)
    spent = sum(out["busy"].values()) + sum(out["idle"].values())
    out["idle_no_work"] = max(time_ns - spent, 0.0)
    return out


def _tile_line(
    index: int,
    result: dict[str, Any],
    config: PlatformConfig,
    links: dict[str, float],
    time_ns: float,
) -> dict[str, Any]:
    """One tile's figures; its link is the first output of its DMA path into the crossbar."""
    stalls: dict[str, float] = {}
    for causes in result["stalls"].values():
        for cause, ns in causes.items():
            stalls[cause] = stalls.get(cause, 0.0) + ns
    tile_links = {
        name: share * time_ns / result["sim_time_ns"] if result["sim_time_ns"] > 0 else 0.0
        for name, share in links.items()
        if name.startswith(tile_prefix(index))
    }
    return {
        "tile": index,
        "sim_time_ns": result["sim_time_ns"],
        "offchip_bytes": result["offchip_bytes"],
        "pe_busy_fraction": result["pe"]["busy_fraction"],
        "exp_busy_fraction": result["exp"]["busy_fraction"],
        "memory_stall_fraction": result["memory_stall_fraction"],
        "stalls_ns": stalls,
        "link_utilization": tile_links,
        "ops": result["ops"],
    }


def _local_engines(replay: dict[str, Any], prefix: str) -> dict[str, Any]:
    """The replay tree with its engines under the template's names (``tile3_pe`` -> ``pe``),
    the names a one-tile result and the tile's ``PlatformInfo`` use."""
    engines = child(replay, "engines")
    if engines is None:
        return replay
    renamed = {
        **engines,
        "children": [{**e, "name": e["name"].removeprefix(prefix)} for e in engines["children"]],
    }
    return {
        **replay,
        "children": [renamed if c is engines else c for c in replay["children"]],
    }


def compose_tiles_result(
    config: PlatformConfig,
    replays: Sequence[dict[str, Any]],
    infos: Sequence[PlatformInfo],
    platform: dict[str, Any],
    identity: dict[str, Any],
    wall_s: float,
) -> dict[str, Any]:
    """The result contract's fields for the whole chip plus a ``tiles`` section."""
    per_tile = [
        compose_result(_local_engines(r, tile_prefix(i)), info, identity, wall_s)
        for i, (r, info) in enumerate(zip(replays, infos, strict=True))
    ]
    count = len(per_tile)
    times = [r["sim_time_ns"] for r in per_tile]
    time_ns = max(times)
    total = dict(per_tile[0])
    total["sim_time_ns"] = time_ns
    read = sum(r["offchip_bytes"]["read"] for r in per_tile)
    write = sum(r["offchip_bytes"]["write"] for r in per_tile)
    total["offchip_bytes"] = {"read": read, "write": write, "total": read + write}
    tensors: dict[str, dict[str, int]] = {}
    for r in per_tile:
        for name, moved in r["offchip_bytes_per_tensor"].items():
            into = tensors.setdefault(name, {"read": 0, "write": 0})
            into["read"] += moved["read"]
            into["write"] += moved["write"]
    total["offchip_bytes_per_tensor"] = tensors
    span = count * time_ns
    info = infos[0]
    cycles = time_ns * 1e-9
    for unit, count_key, peak in (
        ("pe", "macs", info.pe_rows * info.pe_cols * info.pe_clock_hz * cycles),
        ("exp", "exps", info.exp_lanes * info.exp_clock_hz * cycles),
    ):
        done = sum(r[unit][count_key] for r in per_tile)
        busy = sum(r[unit]["busy_fraction"] * r["sim_time_ns"] for r in per_tile)
        util_key = "mac_utilization" if unit == "pe" else "lane_utilization"
        total[unit] = {
            "busy_fraction": busy / span if span > 0 else 0.0,
            util_key: done / (count * peak) if peak > 0 else None,
            count_key: done,
            "time": _mean_time(per_tile, unit, time_ns),
        }
    compute = sum(r["compute_active_ns"] for r in per_tile)
    io = sum(r["io_active_ns"] for r in per_tile)
    exposed = sum(r["exposed_io_ns"] for r in per_tile)
    total["memory_stall_fraction"] = 1.0 - compute / span if span > 0 else None
    total["overlap_efficiency"] = 1.0 - exposed / io if io > 0 else None
    total["exposed_io_ns"] = exposed / count
    total["io_active_ns"] = io / count
    total["compute_active_ns"] = compute / count
    total["stalls"] = _mean_stalls(per_tile)
    ops = sum(r["ops"] for r in per_tile)
    total["ops"] = ops
    total["ops_per_s"] = ops / wall_s if wall_s > 0 else None
    links = link_utilization(config, platform, time_ns)
    stalls_total: dict[str, float] = {}
    lines = [_tile_line(i, r, config, links, time_ns) for i, r in enumerate(per_tile)]
    for line in lines:
        for cause, ns in line["stalls_ns"].items():
            stalls_total[cause] = stalls_total.get(cause, 0.0) + ns
    macs = [r["pe"]["macs"] for r in per_tile]
    total["tiles"] = {
        "count": count,
        "time_ns": time_ns,
        "imbalance": time_ns / _mean(times) if _mean(times) > 0 else 1.0,
        # The split of the work itself, apart from contention: most MACs of a tile / mean.
        "work_imbalance": max(macs) / _mean(macs) if _mean(macs) > 0 else 1.0,
        "memory_utilization": memory_utilization(config, platform, time_ns),
        "link_utilization": links,
        "stalls_ns": stalls_total,
        "per_tile": lines,
    }
    return total


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100.0 * value:.1f} %"


def tile_lines(section: dict[str, Any]) -> list[str]:
    """The ``tiles`` section as report lines: the chip's figures, then one line per tile."""
    memories = ", ".join(f"{n} {_percent(u)}" for n, u in section["memory_utilization"].items())
    shared = {n: u for n, u in section["link_utilization"].items() if not n.startswith("tile")}
    links = ", ".join(f"{n} {_percent(u)}" for n, u in shared.items())
    stalls = ", ".join(
        f"{cause} {format_ns(ns)}" for cause, ns in section["stalls_ns"].items() if ns
    )
    lines = [
        f"tiles                  {section['count']}: time = max over tiles "
        f"{format_ns(section['time_ns'])}, imbalance (max / mean) {section['imbalance']:.4f}, "
        f"work (MACs) {section.get('work_imbalance', 1.0):.4f}",
        f"  split                {section.get('assignment', 'n/a')}",
        f"  off-chip utilization {memories or 'n/a'}",
        f"  shared links         {links or 'n/a'}",
        f"  stalls, all tiles    {stalls or 'none'} (engine idle time with work queued)",
        "  (PE/Exp figures above: all tiles over the chip's time; stalls: mean per tile)",
    ]
    for t in section["per_tile"]:
        tile, time, moved, busy, stall, link = tile_cells(t)
        lines.append(
            f"  tile {tile:<3} {time:>10}  off-chip {moved:>10}  PE busy {busy:>7}  "
            f"memory stall {stall:>7}  busiest own link {link}"
        )
    return lines


def tile_cells(line: dict[str, Any]) -> tuple[str, str, str, str, str, str]:
    """One tile's figures formatted: index, time, off-chip bytes, PE busy, memory stall and
    its busiest own link (the CLI's tile lines and the report's per-tile tables)."""
    link = max(line["link_utilization"].values(), default=0.0)
    return (
        str(line["tile"]),
        format_ns(line["sim_time_ns"]),
        format_bytes(line["offchip_bytes"]["total"]),
        _percent(line["pe_busy_fraction"]),
        _percent(line["memory_stall_fraction"]),
        _percent(link),
    )
