"""The `energy` section of the result JSON, declared once as dataclasses: `RunResult.energy`
holds an `EnergyFigures`, the shipped JSON Schema is generated from these classes, and
`EnergyReport.figures()` fills them (docs/energy.md)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ActionFigures:
    """One action of a component: how often it happened; its energy (J), null without an entry."""

    count: int
    energy_j: float | None


@dataclass(frozen=True)
class ComponentEnergyFigures:
    """A component's energy (J): dynamic (actions) plus static (leak x sim_time)."""

    type: str
    table: bool  # the component has an `energy:` table
    total_j: float
    dynamic_j: float
    static_j: float
    actions: dict[str, ActionFigures]


@dataclass(frozen=True)
class TensorEnergyFigures:
    """A tensor's off-chip bytes at the off-chip memory's read/write energy per byte (J)."""

    read_j: float
    write_j: float
    total_j: float


@dataclass(frozen=True)
class EnergyFigures:
    """Energy of the run (J), average power (W) and energy-delay product (J s)."""

    total_j: float
    dynamic_j: float
    static_j: float
    average_power_w: float | None
    edp_js: float
    by_component: dict[str, ComponentEnergyFigures]
    by_tensor: dict[str, TensorEnergyFigures]
