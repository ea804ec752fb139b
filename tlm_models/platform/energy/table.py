"""A component's `energy:` table from the platform YAML, unit-checked and exact.

    energy:
      read: 3.9 pJ/bit      # per byte (pJ/B, pJ/bit) where the action moves bytes
      activate: 1.2 nJ      # per action (pJ, pJ/access, pJ/op)
      leak: 120 mW          # static power over the simulated time

Values are held as exact fractions (joules per action, watts for `leak`), so an energy is
exactly the sum of count x entry and a changed entry moves it by exactly count x delta.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from tlm_models.platform.energy.actions import LEAK, action_names, actions_of
from tlm_models.platform.loader import Diagnostic, Node
from tlm_models.platform.registry import ParamValue
from tlm_models.units import UnitError, parse_energy, parse_power


@dataclass(frozen=True)
class EnergyEntry:
    """One entry (its action is its key in the table): joules per action (watts for `leak`),
    and the text it was written as."""

    value: Fraction
    text: str


@dataclass(frozen=True)
class EnergyTable:
    """A component's entries by action name; actions without an entry cost nothing."""

    entries: Mapping[str, EnergyEntry]

    def joules_per(self, action: str) -> Fraction | None:
        entry = self.entries.get(action)
        return entry.value if entry is not None and action != LEAK else None

    @property
    def leak_watts(self) -> Fraction:
        entry = self.entries.get(LEAK)
        return entry.value if entry is not None else Fraction(0)

    def to_dict(self) -> dict[str, str]:
        return {name: entry.text for name, entry in self.entries.items()}


def parse_entry(
    type_name: str, action: str, raw: object, params: Mapping[str, ParamValue]
) -> EnergyEntry:
    """One entry in SI units; UnitError says what is wrong with it."""
    if action == LEAK:
        return EnergyEntry(parse_power(raw), str(raw))
    spec = next((a for a in actions_of(type_name) if a.name == action), None)
    assert spec is not None
    joules, per = parse_energy(raw)
    if per == "byte":
        if spec.width is None:
            raise UnitError(
                f"'{action}' moves no bytes, so its energy is per action (e.g. '1.2 pJ'), "
                f"found '{raw}'"
            )
        joules *= spec.width(params)
    return EnergyEntry(joules, str(raw))


def parse_table(
    type_name: str, node: Node, params: Mapping[str, ParamValue], key: str
) -> tuple[EnergyTable | None, list[Diagnostic]]:
    """The `energy:` mapping of a component of `type_name` with its parameters `params`."""
    from tlm_models.errors import suggest

    names = action_names(type_name)
    if not isinstance(node.value, dict):
        message = "expected energies by action (a mapping such as {read: 3.9 pJ/bit})"
        return None, [Diagnostic(node.loc, key, message)]
    problems: list[Diagnostic] = []
    entries: dict[str, EnergyEntry] = {}
    for action, item in node.value.items():
        if action not in names:
            problems.append(
                Diagnostic(
                    item.where,
                    f"{key}.{action}",
                    f"a {type_name} has no action '{action}' (actions: {', '.join(names)})"
                    + suggest(action, names),
                )
            )
            continue
        try:
            entries[action] = parse_entry(type_name, action, item.value, params)
        except UnitError as exc:
            problems.append(Diagnostic(item.loc, f"{key}.{action}", str(exc)))
    return (None if problems else EnergyTable(entries)), problems
