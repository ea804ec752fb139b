"""On-chip SRAM from CACTI 7.0 macros (`cacti_sram.json`).

A memory of `capacity` bytes with `banks` banks and `ports` ports of `port_width` bytes is
built from macros of CACTI's 64 B line: a port wider than a line is served by
`port_width / 64 B` macros side by side, and every bank is at least one macro, so it has
`max(banks, ceil(port_width / 64 B))` macros of `capacity / macros` bytes, each with `ports`
read-write ports. A macro's area and leakage interpolate CACTI's figures log-log in capacity
at the CACTI node nearest the platform's (beyond the largest macro: proportional to
capacity); area then scales to the platform's node (Stillmaker & Baas) and leakage with that
area and linearly with the supply (CACTI's supply at its node -> the platform's). A macro
smaller than CACTI's smallest (32 rows of 64 B) is a register file: one flip-flop per bit.
"""

from __future__ import annotations

import itertools
import math

from tlm_models.errors import UserError
from tlm_models.platform.area.logic import Estimate, cell
from tlm_models.platform.area.scaling import area_scale
from tlm_models.platform.area.sources import (
    ALADDIN,
    REGISTER_BIT,
    STILLMAKER,
    CactiMacro,
    cacti_table,
)
from tlm_models.platform.area.technology import Technology


def macro_count(capacity: int, banks: int, port_width: int) -> int:
    return max(banks, math.ceil(port_width / cacti_table().line_bytes))


def nearest_cacti_node(node_nm: float) -> float:
    return min(cacti_table().nodes, key=lambda n: abs(math.log(n / node_nm)))


def _interpolate(series: tuple[CactiMacro, ...], nbytes: float) -> tuple[float, float]:
    """(area mm^2, leakage W) of one macro of `nbytes` at the series' node."""
    exact = next((m for m in series if m.bytes == nbytes), None)
    if exact is not None:
        return exact.area_mm2, exact.leakage_w
    if nbytes >= series[-1].bytes:
        top = series[-1]
        k = nbytes / top.bytes
        return top.area_mm2 * k, top.leakage_w * k
    for low, high in itertools.pairwise(series):
        if low.bytes <= nbytes <= high.bytes:
            t = math.log(nbytes / low.bytes) / math.log(high.bytes / low.bytes)
            area = math.exp(math.log(low.area_mm2) + t * math.log(high.area_mm2 / low.area_mm2))
            leak = math.exp(math.log(low.leakage_w) + t * math.log(high.leakage_w / low.leakage_w))
            return area, leak
    raise AssertionError("below the smallest macro: a register file")


def sram(
    capacity: int, banks: int, ports: int, port_width: int, tech: Technology
) -> tuple[Estimate, str]:
    """The memory's area and leakage, and how they were found."""
    table = cacti_table()
    macros = macro_count(capacity, banks, port_width)
    per_macro = capacity / macros
    node = nearest_cacti_node(tech.node_nm)
    series = table.series(node, ports)
    if not series:
        have = sorted({m.ports for m in table.macros})
        raise UserError(
            f"ports = {ports}: the CACTI table has macros with "
            f"{', '.join(map(str, have))} read-write ports (tools/cacti_sram_table.py)"
        )
    if per_macro < series[0].bytes:
        bits = capacity * 8
        return cell(REGISTER_BIT, tech) * bits, (
            f"register file: {bits} flip-flops ({ALADDIN}); {per_macro:g} B macros are below "
            f"CACTI's smallest ({series[0].bytes} B)"
        )
    area, leak = _interpolate(series, per_macro)
    scale = area_scale(node, tech.node_nm)
    voltage = tech.voltage_v / table.vdd_v[node]
    one = Estimate(area * scale, leak * scale * voltage)
    return one * macros, (
        f"CACTI 7.0 at {node:g} nm: {macros} x {per_macro / 1024:g} KiB macros, {ports} RW "
        f"port(s); area x {scale:.4g} ({STILLMAKER}), leakage x {voltage:.4g} (supply)"
    )
