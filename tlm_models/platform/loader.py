"""YAML platform files -> a tree of nodes that remember file:line:column, with includes expanded.

`yaml.compose` keeps the position of every key and value, so every later error can point at the
exact place in the file the user has to edit -- also inside an included file. A component may
be `include: other.yaml` (a path relative to the including file) plus parameters overriding the
included ones.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from tlm_models.errors import UserError
from tlm_models.platform.bounded_yaml import YamlLimitError, compose_bounded, read_limited

Scalar = str | int | float | bool | None


@dataclass(frozen=True)
class Location:
    """A position in a platform file (1-based line and column), or a command-line override."""

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}" if self.line else self.file


@dataclass(frozen=True)
class Node:
    """A YAML value and where it is; mapping values also know where their key is."""

    value: Scalar | list[Node] | dict[str, Node]
    loc: Location
    key_loc: Location | None = None

    @property
    def where(self) -> Location:
        """The best place to point at for this entry: its key, else its value."""
        return self.key_loc or self.loc


@dataclass(frozen=True)
class Diagnostic:
    """One problem in a platform: where, which key, and what was expected/found."""

    loc: Location
    key: str
    message: str

    def __str__(self) -> str:
        key = f"{self.key}: " if self.key else ""
        return f"{self.loc}: {key}{self.message}"


class PlatformError(UserError):
    """Every problem found in a platform file, reported together."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = list(diagnostics)
        count = len(self.diagnostics)
        head = f"{count} problem{'s' if count != 1 else ''} in platform"
        super().__init__("\n".join([head, *(f"  {d}" for d in self.diagnostics)]))


@dataclass
class LoadedTree:
    """The root node of a platform file and the problems found while reading it."""

    root: Node | None
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _loc(file: str, mark: yaml.Mark | None) -> Location:
    if mark is None:
        return Location(file)
    return Location(file, mark.line + 1, mark.column + 1)


class _Converter:
    """Turns composed YAML nodes into `Node`s, noting duplicate keys on the way."""

    def __init__(self, file: str, diagnostics: list[Diagnostic]) -> None:
        self.file = file
        self.diagnostics = diagnostics
        self._constructor = yaml.SafeLoader("")

    def convert(self, node: yaml.Node, path: str, key_loc: Location | None = None) -> Node:
        loc = _loc(self.file, node.start_mark)
        if isinstance(node, yaml.MappingNode):
            entries: dict[str, Node] = {}
            for key_node, value_node in node.value:
                kloc = _loc(self.file, key_node.start_mark)
                key = self._scalar(key_node) if isinstance(key_node, yaml.ScalarNode) else None
                if not isinstance(key, str):
                    self.diagnostics.append(
                        Diagnostic(kloc, path, f"expected a text key, found {key!r}")
                    )
                    continue
                child_path = f"{path}.{key}" if path else key
                if key in entries:
                    first = entries[key].where
                    self.diagnostics.append(
                        Diagnostic(
                            kloc,
                            child_path,
                            f"duplicate key '{key}' (first defined at line {first.line})",
                        )
                    )
                    continue
                entries[key] = self.convert(value_node, child_path, kloc)
            return Node(entries, loc, key_loc)
        if isinstance(node, yaml.SequenceNode):
            items = [self.convert(v, f"{path}[{i}]") for i, v in enumerate(node.value)]
            return Node(items, loc, key_loc)
        return Node(self._scalar(node), loc, key_loc)

    def _scalar(self, node: yaml.Node) -> Scalar:
        try:
            value = self._constructor.construct_object(node)
        except (yaml.YAMLError, ValueError):
            # An unknown or unsafe tag ('!x', '!!python/object', '='): the text, for the
            # validator to report as the value it is not.
            return str(node.value)
        if value is None or isinstance(value, (str, int, float, bool)):
            return value
        # Dates and other YAML oddities: keep the text so the validator can say what it found.
        return str(node.value)


def _compose(path: Path, display: str, diagnostics: list[Diagnostic]) -> Node | None:
    """Reads one YAML file within the limits of bounded_yaml; problems become diagnostics with
    their line."""
    try:
        text = read_limited(path)
        composed = compose_bounded(text)
    except OSError as exc:
        diagnostics.append(Diagnostic(Location(display), "", f"cannot read file: {exc.strerror}"))
        return None
    except UnicodeDecodeError:
        diagnostics.append(Diagnostic(Location(display), "", "file is not UTF-8 text"))
        return None
    except YamlLimitError as exc:
        diagnostics.append(Diagnostic(_loc(display, exc.mark), "", f"refused: {exc}"))
        return None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        diagnostics.append(Diagnostic(_loc(display, mark), "", f"YAML syntax error: {problem}"))
        return None
    except yaml.YAMLError as exc:
        diagnostics.append(Diagnostic(Location(display), "", f"YAML error: {exc}"))
        return None
    if composed is None:
        diagnostics.append(Diagnostic(Location(display, 1, 1), "", "the file is empty"))
        return None
    return _Converter(display, diagnostics).convert(composed, "")


def _expand_include(
    component: Node,
    key: str,
    including: tuple[Path, str],
    stack: tuple[Path, ...],
    diagnostics: list[Diagnostic],
) -> Node:
    """Merges `include: file.yaml` into a component: included entries first, local ones win.

    On failure the component keeps its `include` key, which tells the validator that the
    problem is already reported (so it does not add "missing type" and the like).
    """
    assert isinstance(component.value, dict)
    failed = component
    entries = dict(component.value)
    include = entries.pop("include")
    if not isinstance(include.value, str) or not include.value.strip():
        diagnostics.append(
            Diagnostic(
                include.loc,
                f"{key}.include",
                f"expected a file name such as 'hbm-spec.yaml', found {include.value!r}",
            )
        )
        return failed
    including_path, including_display = including
    # os.path.realpath, not Path.resolve: a symbolic-link loop stays a path (that then cannot
    # be read, a diagnostic) instead of raising RuntimeError.
    target = Path(os.path.realpath(including_path.parent / include.value))
    display = os.path.normpath(os.path.join(os.path.dirname(including_display), include.value))
    if target in stack:
        chain = " -> ".join(p.name for p in (*stack, target))
        diagnostics.append(Diagnostic(include.loc, f"{key}.include", f"include cycle: {chain}"))
        return failed
    if not target.exists():
        diagnostics.append(
            Diagnostic(
                include.loc,
                f"{key}.include",
                f"included file '{include.value}' not found (looked for {display}, relative to "
                f"{including_display})",
            )
        )
        return failed
    included = _compose(target, display, diagnostics)
    if included is None:
        return failed
    if not isinstance(included.value, dict):
        diagnostics.append(
            Diagnostic(included.loc, key, "an included file must be a mapping of one component")
        )
        return failed
    if "include" in included.value:
        included = _expand_include(included, key, (target, display), (*stack, target), diagnostics)
    assert isinstance(included.value, dict)
    merged = dict(included.value)
    merged.update(entries)
    return Node(merged, component.loc, component.key_loc)


def load_tree(path: str | os.PathLike[str]) -> LoadedTree:
    """Reads a platform file into a node tree, expanding component includes."""
    display = os.fspath(path)
    real = Path(os.path.realpath(path))  # a link loop is reported on reading, as above
    diagnostics: list[Diagnostic] = []
    root = _compose(real, display, diagnostics)
    if root is None:
        return LoadedTree(None, diagnostics)
    if isinstance(root.value, dict):
        root = _with_includes(root, "components", (real, display), diagnostics)
        tiles = root.value.get("tiles") if isinstance(root.value, dict) else None
        template = tiles.value.get("template") if tiles and isinstance(tiles.value, dict) else None
        if template is not None and isinstance(template.value, dict):
            template = _with_includes(
                template, "tiles.template.components", (real, display), diagnostics
            )
            assert isinstance(tiles, Node) and isinstance(tiles.value, dict)
            tiles = replace(tiles, value={**tiles.value, "template": template})
            assert isinstance(root.value, dict)
            root = replace(root, value={**root.value, "tiles": tiles})
    return LoadedTree(root, diagnostics)


def _with_includes(
    parent: Node, key: str, including: tuple[Path, str], diagnostics: list[Diagnostic]
) -> Node:
    """``parent`` with the includes of its ``components`` mapping expanded (``key`` names that
    mapping in messages)."""
    assert isinstance(parent.value, dict)
    components = parent.value.get("components")
    if components is None or not isinstance(components.value, dict):
        return parent
    expanded: dict[str, Node] = {}
    for name, node in components.value.items():
        if isinstance(node.value, dict) and "include" in node.value:
            node = _expand_include(node, f"{key}.{name}", including, (including[0],), diagnostics)
        expanded[name] = node
    return replace(
        parent, value={**parent.value, "components": replace(components, value=expanded)}
    )
