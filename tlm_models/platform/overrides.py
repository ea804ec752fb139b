"""`--set key.path=value` overrides: parsed, applied to the node tree, then validated as usual.

An override replaces (or adds) one value before validation, so a bad override is reported
exactly like a bad line in the file, with the override itself as the location. Paths are
`component.parameter` (`sram.capacity=256KiB`, `hbm.channels=8`), `components.<path>`, or a
top-level scalar (`name=...`, `description=...`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import yaml

from tlm_models.bounded_input import printable
from tlm_models.errors import shorten
from tlm_models.platform.bounded_yaml import YamlLimitError, compose_bounded
from tlm_models.platform.loader import Diagnostic, Location, Node, Scalar
from tlm_models.platform.validate import suggest

_TOP_LEVEL_SCALARS = ("name", "description")
#: A component's energy table, which `--set comp.energy.action=value` creates when missing.
ENERGY_KEY = "energy"
#: The top-level `technology:` section (area/technology.py), created by `--set technology.x=v`.
TECHNOLOGY_KEY = "technology"


@dataclass(frozen=True)
class Override:
    """One `path=value`; `value` is read as a YAML scalar (`8` is a number, `256KiB` text)."""

    path: tuple[str, ...]
    value: Scalar
    text: str

    @property
    def loc(self) -> Location:
        return Location(f"--set {_shown(self.text)}")


def parse_override(text: str) -> Override | Diagnostic:
    """Parses `key.path=value`; a malformed one comes back as a diagnostic."""
    loc = Location(f"--set {_shown(text)}")
    key, sep, raw = text.partition("=")
    parts = tuple(p.strip() for p in key.strip().split("."))
    if not sep or not all(parts) or not raw.strip():
        return Diagnostic(loc, "", "expected 'component.parameter=value', e.g. 'hbm.channels=8'")
    return Override(parts, _scalar(raw), text)


def _shown(text: str) -> str:
    """The override as an error shows it: whole unless it is absurdly long."""
    return text if len(text) <= 80 and printable(text) == text else shorten(text, 80)


def _scalar(raw: str) -> Scalar:
    """A YAML scalar read within the limits of bounded_yaml; anything else (a list, a mapping,
    aliases, invalid YAML) is kept as its text for the validator to report."""
    try:
        node = compose_bounded(raw)
        if isinstance(node, yaml.ScalarNode):
            value = yaml.SafeLoader("").construct_object(node)
            if value is None or isinstance(value, (str, int, float, bool)):
                return value
    except (yaml.YAMLError, YamlLimitError, ValueError):
        pass
    return raw.strip()


def _set(node: Node, path: tuple[str, ...], override: Override, done: str) -> Node | Diagnostic:
    """A copy of `node` with the value at `path` replaced (or added)."""
    if not isinstance(node.value, dict):
        return Diagnostic(override.loc, done, f"'{done}' is not a mapping; cannot set '{path[0]}'")
    head, rest = path[0], path[1:]
    key = f"{done}.{head}" if done else head
    if not rest:
        child = Node(override.value, override.loc, override.loc)
    elif head in (ENERGY_KEY, TECHNOLOGY_KEY) and head not in node.value:
        # A component without an energy table gets one (docs/energy.md), a platform without
        # a technology section one (docs/models/area.md).
        result = _set(Node({}, override.loc, override.loc), rest, override, key)
        if isinstance(result, Diagnostic):
            return result
        child = result
    elif head not in node.value:
        # Parameters may be added (a default overridden); a missing component may not.
        hint = suggest(head, node.value)
        return Diagnostic(override.loc, key, f"no '{head}' to override{hint}")
    else:
        result = _set(node.value[head], rest, override, key)
        if isinstance(result, Diagnostic):
            return result
        child = result
    return replace(node, value={**node.value, head: child})


def apply_overrides(root: Node, texts: Iterable[str]) -> tuple[Node, list[Diagnostic]]:
    """Applies every override in order; returns the new tree and the overrides that failed."""
    problems: list[Diagnostic] = []
    for text in texts:
        parsed = parse_override(text)
        if isinstance(parsed, Diagnostic):
            problems.append(parsed)
            continue
        path = parsed.path
        # tiles.count, tiles.template.components..., technology.node
        tiled = path[0] in ("tiles", TECHNOLOGY_KEY) and len(path) > 1
        if (
            path[0] != "components"
            and not tiled
            and not (len(path) == 1 and path[0] in _TOP_LEVEL_SCALARS)
        ):
            if len(path) == 1:
                problems.append(
                    Diagnostic(
                        parsed.loc,
                        path[0],
                        "expected 'component.parameter' or one of "
                        f"{', '.join(_TOP_LEVEL_SCALARS)}" + suggest(path[0], _TOP_LEVEL_SCALARS),
                    )
                )
                continue
            path = ("components", *path)
        result = _set(root, path, parsed, "")
        if isinstance(result, Diagnostic):
            problems.append(result)
        else:
            root = result
    return root, problems
