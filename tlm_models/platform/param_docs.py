"""Parameter tables of the docs, generated from the one declaration in the registry.

Each docs/models page holds its table between ``<!-- params: TYPE -->`` and
``<!-- /params -->``; docs/internals.md holds every type's between ``<!-- params: all -->`` and
the same end marker. ``python -m tlm_models.platform.param_docs`` rewrites them; a test fails
when a page differs from what the registry generates.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tlm_models.platform.registry import ComponentType, ParamSpec, component_type, component_types

__all__ = ["BUILTIN_TYPES", "doc_pages", "param_table", "render_page", "rewrite_docs"]

#: The component types the project ships (user-registered ones are documented by their users).
BUILTIN_TYPES = (
    "hbm",
    "sram",
    "interconnect",
    "dma",
    "pe_array",
    "exp_unit",
    "traffic_generator",
)

_BLOCK = re.compile(r"(<!-- params: (\w+) -->\n)(.*?)(<!-- /params -->)", re.DOTALL)
_DOCS = Path(__file__).resolve().parent.parent.parent / "docs"


def _default(p: ParamSpec) -> str:
    if isinstance(p.default, bool):
        return str(p.default).lower()
    if p.kind in ("choice", "text"):
        return f"`{p.default}`" if p.default else '`""`'
    return str(p.default)


def _row(p: ParamSpec, type_name: str = "") -> str:
    first = f"{type_name} | " if type_name else ""
    cells = [f"`{p.name}`", p.kind, f"`{p.cpp_type}`", p.display_unit or "—", _default(p)]
    return f"| {first}" + " | ".join(cells) + f" | {p.description} |"


def param_table(spec: ComponentType) -> str:
    """The markdown parameter table of one component type."""
    lines = [
        "| name | kind | C++ type | unit | default | meaning |",
        "|---|---|---|---|---|---|",
        *(_row(p) for p in spec.params),
    ]
    return "\n".join(lines) + "\n"


def _all_table() -> str:
    lines = [
        "| type | name | kind | C++ type | unit | default | meaning |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in BUILTIN_TYPES:
        spec = component_types()[name]
        lines += [_row(p, name) for p in spec.params]
    return "\n".join(lines) + "\n"


def render_page(text: str) -> str:
    """``text`` with every parameter block replaced by the registry's table."""

    def table(match: re.Match[str]) -> str:
        name = match.group(2)
        spec = component_type(name)
        if name != "all" and spec is None:
            raise KeyError(f"docs name component type '{name}', which is not registered")
        body = _all_table() if spec is None else param_table(spec)
        return f"{match.group(1)}{body}{match.group(4)}"

    return _BLOCK.sub(table, text)


def doc_pages() -> list[Path]:
    """The pages holding generated parameter tables."""
    return [*sorted((_DOCS / "models").glob("*.md")), _DOCS / "internals.md"]


def rewrite_docs() -> list[Path]:
    """Regenerates every docs page's parameter tables; returns the pages that changed."""
    changed = []
    for page in doc_pages():
        old = page.read_text()
        new = render_page(old)
        if new != old:
            page.write_text(new)
            changed.append(page)
    return changed


if __name__ == "__main__":
    for path in rewrite_docs():
        print(f"rewrote {path}", file=sys.stderr)
