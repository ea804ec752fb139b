"""What `platform_area` returns: each component's area and leakage with its source, at the
platform's node, supply and clock."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class ComponentArea:
    """One component: its type (`kind`), area (mm^2), leakage (W) and how they were found."""

    name: str
    kind: str
    area_mm2: float
    leakage_w: float
    source: str


@dataclass(frozen=True)
class AreaReport:
    """Every component of a platform at one node (nm), supply (V) and clock (Hz, the fastest
    component clock)."""

    node_nm: float
    voltage_v: float
    clock_hz: float
    components: tuple[ComponentArea, ...]

    @property
    def total_mm2(self) -> float:
        return sum(c.area_mm2 for c in self.components)

    @property
    def leakage_w(self) -> float:
        return sum(c.leakage_w for c in self.components)

    def component(self, name: str) -> ComponentArea:
        return next(c for c in self.components if c.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "node_nm": self.node_nm,
            "voltage_v": self.voltage_v,
            "clock_hz": self.clock_hz,
            "total_mm2": self.total_mm2,
            "leakage_w": self.leakage_w,
            "components": [asdict(c) for c in self.components],
        }

    def lines(self) -> list[str]:
        """A text table: one row per component, then the totals."""
        name_w = max([len("component"), *(len(c.name) for c in self.components)])
        kind_w = max([len("type"), *(len(c.kind) for c in self.components)])
        total = self.total_mm2 or 1.0
        head = (
            f"{'component':<{name_w}}  {'type':<{kind_w}}  {'area mm2':>10}  {'share':>6}  "
            f"{'leakage mW':>10}  source"
        )
        rows = [
            f"{c.name:<{name_w}}  {c.kind:<{kind_w}}  {c.area_mm2:>10.4f}  "
            f"{100 * c.area_mm2 / total:>5.1f}%  {1e3 * c.leakage_w:>10.3f}  {c.source}"
            for c in self.components
        ]
        foot = (
            f"{'total':<{name_w}}  {'':<{kind_w}}  {self.total_mm2:>10.4f}  {'100.0%':>6}  "
            f"{1e3 * self.leakage_w:>10.3f}"
        )
        return [
            f"{self.node_nm:g} nm, {self.voltage_v:g} V, clock {self.clock_hz / 1e9:g} GHz",
            head,
            *rows,
            foot,
        ]
