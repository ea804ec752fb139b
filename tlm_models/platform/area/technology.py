"""A platform's `technology:` section: the process node and supply voltage its area, leakage
and energy figures are stated at (docs/models/area.md).

    technology:
      node: 22 nm
      voltage: 0.8 V

Both keys are required; `--set technology.node=16nm` overrides one like any parameter.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from tlm_models.platform.loader import Diagnostic, Node

TECHNOLOGY_KEY = "technology"
KEYS = ("node", "voltage")
_QUANTITY = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]+)\s*$")
_LENGTH = {"nm": 1.0, "um": 1000.0}
_VOLTAGE = {"V": 1.0, "mV": 1e-3}


@dataclass(frozen=True)
class Technology:
    """Process node (nm) and supply (V)."""

    node_nm: float
    voltage_v: float

    def to_dict(self) -> dict[str, float]:
        return {"node_nm": self.node_nm, "voltage_v": self.voltage_v}


def _quantity(node: Node, key: str, units: dict[str, float], example: str) -> float | str:
    """The value in the first unit of `units`, or what is wrong with it."""
    match = _QUANTITY.match(str(node.value)) if isinstance(node.value, str) else None
    if match is None or match[2] not in units:
        return f"expected a positive quantity with a unit ({', '.join(units)}), e.g. '{example}'"
    value = float(match[1]) * units[match[2]]
    return value if value > 0 else "expected a positive quantity"


def _unknown(name: str) -> str:
    close = difflib.get_close_matches(name, KEYS, n=1, cutoff=0.6)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return f"unknown key (expected: {', '.join(KEYS)}){hint}"


def parse_technology(node: Node) -> tuple[Technology | None, list[Diagnostic]]:
    """The `technology:` mapping, or the problems with it (each naming its key)."""
    if not isinstance(node.value, dict):
        message = (
            "expected a mapping {node: <nm>, voltage: <V>}, e.g. {node: 22 nm, voltage: 0.8 V}"
        )
        return None, [Diagnostic(node.loc, TECHNOLOGY_KEY, message)]
    entries = node.value
    problems = [
        Diagnostic(item.where, f"{TECHNOLOGY_KEY}.{name}", _unknown(name))
        for name, item in entries.items()
        if name not in KEYS
    ]
    values: dict[str, float] = {}
    for key, units, example in (("node", _LENGTH, "22 nm"), ("voltage", _VOLTAGE, "0.8 V")):
        item = entries.get(key)
        if item is None:
            problems.append(
                Diagnostic(node.loc, f"{TECHNOLOGY_KEY}.{key}", "missing (e.g. " + example + ")")
            )
            continue
        parsed = _quantity(item, key, units, example)
        if isinstance(parsed, str):
            problems.append(
                Diagnostic(item.loc, f"{TECHNOLOGY_KEY}.{key}", f"{parsed}, found '{item.value}'")
            )
        else:
            values[key] = parsed
    if problems:
        return None, problems
    return Technology(values["node"], values["voltage"]), []
