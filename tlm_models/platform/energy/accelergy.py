"""Accelergy interchange: action counts out, energy reference tables (ERT) in.

Export writes a run's counts as Accelergy's `action_counts` YAML (component path, action
name, count); action names already follow Accelergy's (energy/actions.py). Import reads an
ERT (`ERT: {tables: [{name, actions: [{name, energy}]}]}`, energies in pJ per action) and
turns every entry into a `--set component.energy.action=<e> pJ` override, so the user's
figures replace the platform's defaults through the same validated path as any override.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from tlm_models.errors import UserError
from tlm_models.platform.bounded_yaml import YamlLimitError, compose_bounded, read_limited
from tlm_models.platform.energy.actions import action_names
from tlm_models.platform.schema import PlatformConfig

ACCELERGY_VERSION = "0.4"
_INDEX = re.compile(r"\[[^\]]*\]")


def action_counts(result: Mapping[str, Any]) -> dict[str, Any]:
    """Accelergy `action_counts` of a result JSON (one entry per component with counts)."""
    energy = result.get("energy")
    if not isinstance(energy, Mapping) or "by_component" not in energy:
        raise UserError("the result has no 'energy' section (it predates energy accounting)")
    system = str(result.get("platform_name", "system"))
    local = [
        {
            "name": f"{system}.{name}",
            "action_counts": [
                {"name": action, "counts": int(entry["count"])}
                for action, entry in comp["actions"].items()
            ],
        }
        for name, comp in energy["by_component"].items()
        if comp["actions"]
    ]
    return {"action_counts": {"version": ACCELERGY_VERSION, "local": local}}


def action_counts_yaml(result: Mapping[str, Any]) -> str:
    return yaml.safe_dump(action_counts(result), sort_keys=False)


def _component_of(path: str) -> str:
    """`system.chip.sram[0..3]` -> `sram`: the last path element, without an index range."""
    return _INDEX.sub("", path).rsplit(".", 1)[-1]


def ert_overrides(path: str | os.PathLike[str], platform: PlatformConfig) -> list[str]:
    """`--set` overrides from an ERT file; every table must name a component of `platform`
    and every action one of its actions."""
    where = os.fspath(path)
    try:
        text = read_limited(Path(path))
        compose_bounded(text)  # refuses hostile YAML before it is loaded
        data = yaml.safe_load(text)
    except OSError as exc:
        raise UserError(f"{where}: cannot read the ERT: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UserError(f"{where}: the ERT is not UTF-8 text") from None
    except YamlLimitError as exc:
        raise UserError(f"{where}: {exc}") from None
    except yaml.YAMLError as exc:
        raise UserError(f"{where}: not YAML: {' '.join(str(exc).split())}") from None
    ert = data.get("ERT") if isinstance(data, dict) else None
    tables = ert.get("tables") if isinstance(ert, dict) else None
    if not isinstance(tables, list):
        raise UserError(f"{where}: expected 'ERT: {{tables: [...]}}' (an Accelergy ERT)")
    overrides: list[str] = []
    for i, table in enumerate(tables):
        at = f"{where}: ERT.tables[{i}]"
        if not isinstance(table, dict) or not isinstance(table.get("name"), str):
            raise UserError(f"{at}: expected a table with a 'name' and 'actions'")
        component = _component_of(table["name"])
        comp = platform.components.get(component)
        if comp is None:
            raise UserError(
                f"{at}: '{table['name']}' names no component of platform '{platform.name}' "
                f"(components: {', '.join(platform.components)})"
            )
        names = action_names(comp.type)
        for j, action in enumerate(table.get("actions") or []):
            name = action.get("name") if isinstance(action, dict) else None
            energy = action.get("energy") if isinstance(action, dict) else None
            if name not in names:
                raise UserError(
                    f"{at}.actions[{j}]: a {comp.type} has no action {name!r} "
                    f"(actions: {', '.join(names)})"
                )
            if isinstance(energy, bool) or not isinstance(energy, (int, float)):
                raise UserError(
                    f"{at}.actions[{j}]: energy must be a number of pJ, found {energy!r}"
                )
            if name == "leak":
                raise UserError(
                    f"{at}.actions[{j}]: an ERT's leak is energy per cycle; set static power "
                    f"with --set {component}.energy.leak=<mW> instead"
                )
            overrides.append(f"{component}.energy.{name}={energy!r} pJ")
    return overrides
