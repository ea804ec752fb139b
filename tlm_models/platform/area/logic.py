"""Logic blocks as counts of published cells: area scaled from each cell's node to the
platform's, leakage as that area times the cell's measured leakage per area, scaled linearly
with the supply (P = V x I_off, the off current per area held at the characterized node's)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tlm_models.platform.area.scaling import area_scale
from tlm_models.platform.area.sources import LogicCell
from tlm_models.platform.area.technology import Technology

UM2_PER_MM2 = 1e6


@dataclass(frozen=True)
class Estimate:
    area_mm2: float
    leakage_w: float

    def __mul__(self, count: float) -> Estimate:
        return Estimate(self.area_mm2 * count, self.leakage_w * count)

    def __add__(self, other: Estimate) -> Estimate:
        return Estimate(self.area_mm2 + other.area_mm2, self.leakage_w + other.leakage_w)


ZERO = Estimate(0.0, 0.0)


def cell(c: LogicCell, tech: Technology) -> Estimate:
    """One cell at the platform's node and supply."""
    area_um2 = c.area_um2 * area_scale(c.node_nm, tech.node_nm)
    leakage = area_um2 * c.leak_w_per_um2 * tech.voltage_v / c.leak_voltage_v
    return Estimate(area_um2 / UM2_PER_MM2, leakage)


def block(cells: Iterable[tuple[LogicCell, float]], tech: Technology) -> Estimate:
    """A block of `count` x `cell` entries."""
    total = ZERO
    for c, count in cells:
        total = total + cell(c, tech) * count
    return total
