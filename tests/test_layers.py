"""The package's folders form a stack (docs/internals.md): no import runs from a folder to one
above it, and no import cycle spans two folders. Read from the source (imports inside
functions count; those under ``if TYPE_CHECKING:`` do not, since they never run)."""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tlm_models"

#: Bottom to top; a folder may import the ones before it. ``<face>`` is ``tlm_models/__init__``.
LAYERS = (
    "errors",
    "units",
    "terminal",
    "files",
    "platform",
    "trace",
    "workload",
    "fast_forward",
    "dataflows",
    "runtime",
    "replay",
    "run",
    "systemc",
    "study",
    "explore",
    "api",
    "cli",
    "<face>",
)

#: The only loose modules allowed beside the folders (the package face, errors and units).
LOOSE = {"api", "errors", "units"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    name = ".".join(parts)
    return name.removesuffix(".__init__")


def _runtime_imports(path: Path, name: str) -> set[str]:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        test = getattr(node, "test", None)
        if isinstance(node, ast.If) and getattr(test, "id", getattr(test, "attr", "")) == (
            "TYPE_CHECKING"
        ):
            node.body = []
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("tlm_models"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            if module.startswith("tlm_models"):
                found.add(module)
                found.update(f"{module}.{a.name}" for a in node.names)
    return found


@functools.cache
def _graph() -> tuple[set[str], dict[str, set[str]]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges = {
        name: {m for m in _runtime_imports(path, name) if m in modules}
        for name, path in modules.items()
    }
    return set(modules), edges


def _folder(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "<face>"


def test_every_module_lives_in_a_folder_of_the_stack() -> None:
    modules, _ = _graph()
    folders = {_folder(m) for m in modules}
    assert folders <= set(LAYERS), sorted(folders - set(LAYERS))
    loose = {
        m.split(".")[1]
        for m in modules
        if m.count(".") == 1 and not any(o.startswith(m + ".") for o in modules)
    }
    assert loose <= LOOSE, sorted(loose - LOOSE)


def test_no_import_runs_upwards() -> None:
    _, edges = _graph()
    upward = sorted(
        f"{a} -> {b}"
        for a, targets in edges.items()
        for b in targets
        if LAYERS.index(_folder(b)) > LAYERS.index(_folder(a))
    )
    assert upward == []


def test_no_import_cycle_spans_two_folders() -> None:
    _, edges = _graph()
    between: dict[str, set[str]] = defaultdict(set)
    for a, targets in edges.items():
        for b in targets:
            if _folder(a) != _folder(b):
                between[_folder(a)].add(_folder(b))

    def reachable(start: str) -> set[str]:
        seen: set[str] = set()
        stack = [start]
        while stack:
            for nxt in between.get(stack.pop(), set()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    cycles = sorted(f"{a} <-> {b}" for a in between for b in between[a] if a in reachable(b))
    assert cycles == []
