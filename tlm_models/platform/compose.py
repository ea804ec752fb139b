"""``Platform``: a platform from a YAML file, from a dict of the same shape, or composed in Python.

All three go through the same validation as a platform file (``validate``), so a composed
platform gets the same messages — with the key path instead of a file line — and the same
derived figures. Composition mirrors the YAML sections: ``add`` (components), ``bind``
(bindings), ``map`` (address map), ``engine`` (engines).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from tlm_models.errors import UserError
from tlm_models.files.output_file import write_output
from tlm_models.platform.info import PlatformInfo
from tlm_models.platform.loader import Location, Node, PlatformError, load_tree
from tlm_models.platform.overrides import apply_overrides
from tlm_models.platform.schema import PlatformConfig
from tlm_models.platform.validate import MAX_COMPONENTS, validate

__all__ = ["Platform"]


def _node(value: object, loc: Location) -> Node:
    """A node tree of plain data (positions are the data's source; keys name the place)."""
    if isinstance(value, dict):
        return Node({str(k): _node(v, loc) for k, v in value.items()}, loc, loc)
    if isinstance(value, (list, tuple)):
        return Node([_node(v, loc) for v in value], loc)
    if value is None or isinstance(value, (str, int, float, bool)):
        return Node(value, loc)
    return Node(str(value), loc)  # e.g. a Path


def _plain(node: Node) -> Any:
    if isinstance(node.value, dict):
        return {k: _plain(v) for k, v in node.value.items()}
    if isinstance(node.value, list):
        return [_plain(v) for v in node.value]
    return node.value


class Platform:
    """A validated platform (validation runs when it is first used, then is cached).

    >>> p = Platform("tiny").add("hbm", "hbm", channels=2)
    >>> p.to_dict()["components"]["hbm"]
    {'type': 'hbm', 'channels': 2}
    """

    def __init__(self, name: str, description: str = "") -> None:
        self._data: dict[str, Any] = {
            "name": name,
            "description": description,
            "components": {},
            "bindings": [],
            "address_map": [],
            "engines": {},
        }
        self._source = f"<platform {name}>"
        self._path: str | None = None  # the file it was loaded from, while unchanged
        self._overrides: tuple[str, ...] = ()
        self._config: PlatformConfig | None = None

    # --- construction ---------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | os.PathLike[str], overrides: Iterable[str] = ()) -> Platform:
        """Reads and validates a platform file (relative paths: working directory, then the
        repository, like ``--platform``) with ``component.param=value`` overrides."""
        from tlm_models.platform.paths import resolve_platform

        found = resolve_platform(os.fspath(path))
        tree = load_tree(found)
        if tree.root is None:
            raise PlatformError(tree.diagnostics)
        overrides = tuple(overrides)
        root, problems = apply_overrides(tree.root, overrides)
        config = validate(root, os.fspath(found), [*tree.diagnostics, *problems])
        platform = cls.from_dict(_plain(root), source=os.fspath(path))
        platform._path, platform._overrides, platform._config = os.fspath(path), overrides, config
        return platform

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "") -> Platform:
        """A platform from data shaped like a platform file (``name``, ``components``, ...)."""
        if not isinstance(data, dict):
            raise UserError(f"a platform is a mapping of sections, found {type(data).__name__}")
        components = data.get("components")
        if isinstance(components, dict) and len(components) > MAX_COMPONENTS:
            # Refused before the copy and the conversion, which alone take minutes at 10^6.
            raise UserError(
                f"{len(components):,} components, more than the {MAX_COMPONENTS:,} a platform "
                "may have"
            )
        platform = cls(str(data.get("name", "")))
        platform._data = copy.deepcopy(data)
        platform._source = source or f"<platform {data.get('name', '')}>"
        return platform

    def with_overrides(self, *overrides: str) -> Platform:
        """A copy with ``component.param=value`` overrides applied (checked like ``--set``)."""
        root, problems = apply_overrides(_node(self._data, Location(self._source)), overrides)
        if problems:
            raise PlatformError(problems)
        config = validate(root, self._source)  # now: the error names the override
        changed = Platform.from_dict(_plain(root), self._source)
        changed._config = config
        if self._path is not None:
            changed._path, changed._overrides = self._path, (*self._overrides, *overrides)
        return changed

    # --- composition ----------------------------------------------------------------------

    def _changed(self) -> Platform:
        self._config, self._path, self._overrides = None, None, ()
        return self

    def add(self, name: str, type: str, *, role: str | None = None, **params: object) -> Platform:
        """Adds component ``name`` of YAML type ``type`` (parameters as in YAML: '512 KiB')."""
        entry: dict[str, object] = {"type": type}
        if role is not None:
            entry["role"] = role
        entry.update(params)
        self._data.setdefault("components", {})[name] = entry
        return self._changed()

    def bind(self, initiator: str, target: str) -> Platform:
        """Binds socket ``initiator`` (e.g. ``dma.mem_port``) to ``target`` (``noc.in[0]``)."""
        self._data.setdefault("bindings", []).append(f"{initiator} -> {target}")
        return self._changed()

    def map(self, target: str, base: int, size: str | int | None = None) -> Platform:
        """Maps memory ``target`` at bus address ``base`` (``size``: all of it by default)."""
        entry: dict[str, object] = {"base": base, "target": target}
        if size is not None:
            entry["size"] = size
        self._data.setdefault("address_map", []).append(entry)
        return self._changed()

    def engine(self, name: str, path: str) -> Platform:
        """Names a trace engine: ``engine("dma0", "dma.channel[0]")``, ``engine("pe", "pe")``."""
        self._data.setdefault("engines", {})[name] = path
        return self._changed()

    # --- use ------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return str(self._data.get("name", ""))

    @property
    def config(self) -> PlatformConfig:
        """The validated configuration; ``PlatformError`` lists every problem."""
        if self._config is None:
            self._config = validate(_node(self._data, Location(self._source)), self._source)
        return self._config

    @property
    def info(self) -> PlatformInfo:
        """What dataflow emitters need (regions, engines, element width)."""
        return self.config.info()

    @property
    def label(self) -> str:
        """How results name this platform: its file while unchanged, else its name."""
        return self._path if self._path is not None else self.name

    @property
    def overrides(self) -> tuple[str, ...]:
        """Overrides applied to the file named by ``label`` (empty for a composed one)."""
        return self._overrides

    def to_dict(self) -> dict[str, Any]:
        """The platform as data shaped like a platform file (overrides applied)."""
        return copy.deepcopy(self._data)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Writes the platform as a YAML file that ``Platform.load`` reads back."""
        self.config  # noqa: B018 -- never write a platform that does not validate
        out = Path(path)
        write_output(out, yaml.safe_dump(self._data, sort_keys=False), "platform")
        return out

    def __repr__(self) -> str:
        parts = ", ".join(self._data.get("components", {}))
        return f"Platform({self.name!r}: {parts})"
