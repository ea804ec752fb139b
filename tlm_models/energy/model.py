"""Energy of a run: every component's action counts times its table's entries, plus static
power times the simulated time. Computed after the simulation from the statistics tree, never
on the hot path; exact (fractions of joules) until it is written out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

from tlm_models.energy.actions import LEAK, Stats, actions_of
from tlm_models.energy.figures import (
    ActionFigures,
    ComponentEnergyFigures,
    EnergyFigures,
    TensorEnergyFigures,
)
from tlm_models.platform.schema import ComponentConfig, PlatformConfig

PS_PER_S = 10**12


@dataclass(frozen=True)
class ActionEnergy:
    name: str
    count: int
    joules_per: Fraction | None  # None: the table has no entry (counted, not charged)

    @property
    def joules(self) -> Fraction:
        return self.count * self.joules_per if self.joules_per is not None else Fraction(0)


@dataclass(frozen=True)
class ComponentEnergy:
    name: str
    type: str
    actions: tuple[ActionEnergy, ...]
    static: Fraction  # J: leak power x simulated time
    has_table: bool

    @property
    def dynamic(self) -> Fraction:
        return sum((a.joules for a in self.actions), Fraction(0))

    @property
    def total(self) -> Fraction:
        return self.dynamic + self.static

    def count(self, action: str) -> int:
        return next(a.count for a in self.actions if a.name == action)


@dataclass(frozen=True)
class EnergyReport:
    """Energy by component and action; ``by_tensor`` attributes off-chip data energy."""

    components: tuple[ComponentEnergy, ...]
    sim_time_ps: int
    by_tensor: Mapping[str, tuple[Fraction, Fraction]]  # tensor -> (read J, write J)

    @property
    def dynamic(self) -> Fraction:
        return sum((c.dynamic for c in self.components), Fraction(0))

    @property
    def static(self) -> Fraction:
        return sum((c.static for c in self.components), Fraction(0))

    @property
    def total(self) -> Fraction:
        return self.dynamic + self.static

    def component(self, name: str) -> ComponentEnergy:
        return next(c for c in self.components if c.name == name)

    def figures(self) -> EnergyFigures:
        """The result's `energy` section: joules, watts, joule-seconds (docs/energy.md)."""
        seconds = Fraction(self.sim_time_ps, PS_PER_S)
        total = self.total
        return EnergyFigures(
            total_j=float(total),
            dynamic_j=float(self.dynamic),
            static_j=float(self.static),
            average_power_w=float(total / seconds) if seconds else None,
            edp_js=float(total * seconds),
            by_component={
                c.name: ComponentEnergyFigures(
                    type=c.type,
                    table=c.has_table,
                    total_j=float(c.total),
                    dynamic_j=float(c.dynamic),
                    static_j=float(c.static),
                    actions={
                        a.name: ActionFigures(
                            a.count, float(a.joules) if a.joules_per is not None else None
                        )
                        for a in c.actions
                    },
                )
                for c in self.components
            },
            by_tensor={
                name: TensorEnergyFigures(float(r), float(w), float(r + w))
                for name, (r, w) in self.by_tensor.items()
            },
        )


def _component_energy(
    comp: ComponentConfig, group: Stats, sim_time_ps: int, leakage: Fraction
) -> ComponentEnergy:
    """`leakage` (W, from the area model) is charged where the table has no `leak` entry."""
    table = comp.energy
    actions = tuple(
        ActionEnergy(spec.name, spec.count(group), table.joules_per(spec.name) if table else None)
        for spec in actions_of(comp.type)
    )
    leak = table.leak_watts if table is not None and LEAK in table.entries else leakage
    static = leak * Fraction(sim_time_ps, PS_PER_S)
    return ComponentEnergy(comp.name, comp.type, actions, static, table is not None)


def _per_byte(comp: ComponentConfig, action: str) -> Fraction:
    """Joules per byte of a transfer action (its per-action energy over its width)."""
    spec = next(a for a in actions_of(comp.type) if a.name == action)
    per_action = comp.energy.joules_per(action) if comp.energy else None
    if per_action is None or spec.width is None:
        return Fraction(0)
    return per_action / spec.width(comp.params)


def _by_tensor(
    config: PlatformConfig, tensor_bytes: Mapping[str, Mapping[str, int]]
) -> dict[str, tuple[Fraction, Fraction]]:
    """Each off-chip tensor's bytes at the off-chip memory's read/write energy per byte."""
    offchip = next(
        (c for c in config.components.values() if c.spec.memory == "offchip" and c.energy),
        None,
    )
    if offchip is None:
        return {}
    read, write = _per_byte(offchip, "read"), _per_byte(offchip, "write")
    return {
        name: (moved.get("read", 0) * read, moved.get("write", 0) * write)
        for name, moved in tensor_bytes.items()
    }


def compute_energy(
    config: PlatformConfig,
    platform_stats: Stats,
    sim_time_ps: int,
    tensor_bytes: Mapping[str, Mapping[str, int]] | None = None,
    leakage: Mapping[str, tuple[str, float]] | None = None,
) -> EnergyReport:
    """The energy of a run from the platform's statistics tree (one child per component).

    `leakage` (the area model's: name -> (type, W)) is the static power of components whose
    tables give no `leak`; a name that is no component of the platform (the accelerator top's
    registers) becomes an entry of static energy only.
    """
    groups = {g["name"]: g for g in platform_stats["children"]}
    leak = leakage or {}
    components = tuple(
        _component_energy(comp, groups[name], sim_time_ps, Fraction(leak.get(name, ("", 0.0))[1]))
        for name, comp in config.components.items()
        if name in groups
    )
    seconds = Fraction(sim_time_ps, PS_PER_S)
    static_only = tuple(
        ComponentEnergy(name, kind, (), Fraction(watts) * seconds, False)
        for name, (kind, watts) in leak.items()
        if name not in config.components
    )
    return EnergyReport(
        components + static_only, sim_time_ps, _by_tensor(config, tensor_bytes or {})
    )


def energy_section(
    config: PlatformConfig,
    platform_stats: Stats,
    result: Mapping[str, Any],
    leakage: Mapping[str, tuple[str, float]] | None = None,
) -> dict[str, Any]:
    """The `energy` section of a composed result (it supplies the time and tensor bytes)."""
    sim_time_ps = round(float(result["sim_time_ns"]) * 1000)
    report = compute_energy(
        config, platform_stats, sim_time_ps, result.get("offchip_bytes_per_tensor"), leakage
    )
    return asdict(report.figures())
