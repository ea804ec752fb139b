"""Tiled platforms: a ``tiles:`` section declares one compute tile and instantiates it C times.

::

    tiles:
      count: 4                    # C tiles, 1 .. MAX_TILES
      address_stride: 16 MiB      # tile i's address-map windows move up by i x stride
      template:                   # components, bindings, address_map, engines of one tile
        components: {sram: ..., dma: ..., pe: ..., exp: ..., dma_noc: ...}
        bindings:
          - dma_noc.out[0] -> noc.in[{tile}]   # {tile} = the tile's index
        address_map:
          - {base: 0x1_0000_0000, target: sram}
        engines: {dma0: dma.channel[0], pe: pe, exp: exp}

Expansion happens on the YAML tree before validation, so every later check (and every error
message, which points into the template) sees an ordinary flat platform: tile i's component
``pe`` becomes ``tile{i}_pe``, its engine ``dma0`` becomes ``tile{i}_dma0``. A name in the
template that is not a template component (``noc``, ``hbm``) names the shared component of the
same name. Component names are identifiers, so the tile index joins with ``_`` (a ``.`` would
be read as the socket separator of a binding).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tlm_models.platform.loader import Diagnostic, Node
from tlm_models.units import UnitError, parse_address, parse_size

#: Keys of the ``tiles:`` section and of its template.
TILE_KEYS = ("count", "address_stride", "template")
TEMPLATE_KEYS = ("components", "bindings", "address_map", "engines")
#: Tiles one platform may declare (one replayer thread each; 64 keeps elaboration quick).
MAX_TILES = 64
#: The placeholder a template binding or address writes for the tile's index.
TILE_INDEX = "{tile}"

#: Reports one problem at a node: (node, key path, message).
ErrorFn = Callable[[Node, str, str], None]

_COMPONENT_IN_REF = re.compile(r"\b([A-Za-z_]\w*)(?=\s*\.)")


def tile_prefix(index: int) -> str:
    """``tile3_``: what tile 3's component and engine names start with."""
    return f"tile{index}_"


@dataclass(frozen=True)
class TileLayout:
    """How many tiles a platform has; tile i's names start with ``tile_prefix(i)``."""

    count: int
    engines: tuple[str, ...]  # the template's engine names (tile-local: dma0, pe, ...)
    components: tuple[str, ...]  # the template's component names (tile-local)


def expand_tiles(root: Node, problems: list[Diagnostic]) -> tuple[Node, TileLayout | None]:
    """The tree with ``tiles:`` replaced by C prefixed copies of its template (appended to the
    top-level sections), and the layout; problems go to ``problems``."""
    if not isinstance(root.value, dict) or "tiles" not in root.value:
        return root, None
    top = dict(root.value)
    section = top.pop("tiles")

    def error(node: Node, key: str, message: str) -> None:
        problems.append(Diagnostic(node.where, key, message))

    if not isinstance(section.value, dict):
        error(section, "tiles", "expected a mapping with count, address_stride and template")
        return Node(top, root.loc, root.key_loc), None
    entries = section.value
    for key, node in entries.items():
        if key not in TILE_KEYS:
            error(node, f"tiles.{key}", f"unknown key '{key}' (expected: {', '.join(TILE_KEYS)})")
    count = _count(entries.get("count"), section, error)
    stride = _stride(entries.get("address_stride"), error)
    template = entries.get("template")
    if template is None or not isinstance(template.value, dict):
        error(
            template or section,
            "tiles.template",
            "expected a mapping of one tile's components, bindings, address_map and engines",
        )
        return Node(top, root.loc, root.key_loc), None
    parts = template.value
    for key, node in parts.items():
        if key not in TEMPLATE_KEYS:
            error(
                node,
                f"tiles.template.{key}",
                f"unknown key '{key}' (expected: {', '.join(TEMPLATE_KEYS)})",
            )
    local = _names(parts.get("components"))
    engines = _names(parts.get("engines"))
    if count is None:
        return Node(top, root.loc, root.key_loc), None
    for key in TEMPLATE_KEYS:
        part = parts.get(key)
        if part is None:
            continue
        copies = [_instance(key, part, i, local, stride) for i in range(count)]
        top[key] = _joined(top.get(key), copies, part)
    return Node(top, root.loc, root.key_loc), TileLayout(count, engines, local)


def _names(node: Node | None) -> tuple[str, ...]:
    return tuple(node.value) if node is not None and isinstance(node.value, dict) else ()


def _count(node: Node | None, section: Node, error: ErrorFn) -> int | None:
    value = None if node is None else node.value
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TILES:
        error(
            node or section,
            "tiles.count",
            f"expected a whole number of tiles from 1 to {MAX_TILES}, found {value!r}",
        )
        return None
    return value


def _stride(node: Node | None, error: ErrorFn) -> int:
    if node is None:
        return 0
    try:
        return parse_size(node.value)
    except UnitError as exc:
        error(node, "tiles.address_stride", f"expected a size such as '16 MiB': {exc}")
        return 0


def _rename(text: str, index: int, local: tuple[str, ...]) -> str:
    """A binding or engine path of the template for tile ``index``: template components get
    the tile's prefix, ``{tile}`` its index."""
    prefix = tile_prefix(index)
    renamed = _COMPONENT_IN_REF.sub(
        lambda m: prefix + m.group(1) if m.group(1) in local else m.group(1), text
    )
    return renamed.replace(TILE_INDEX, str(index))


def _instance(key: str, part: Node, index: int, local: tuple[str, ...], stride: int) -> Node:
    """Tile ``index``'s copy of one template section."""
    prefix = tile_prefix(index)
    value = part.value
    if key == "components" and isinstance(value, dict):
        return Node({prefix + n: c for n, c in value.items()}, part.loc, part.key_loc)
    if key == "engines" and isinstance(value, dict):
        out: dict[str, Node] = {}
        for name, path in value.items():
            text = path.value if isinstance(path.value, str) else None
            target = text if text is None else _rename(text + ".", index, local)[:-1]
            out[prefix + name] = Node(
                target if target is not None else path.value, path.loc, path.key_loc
            )
        return Node(out, part.loc, part.key_loc)
    if key == "bindings" and isinstance(value, list):
        items = [
            Node(_rename(b.value, index, local), b.loc, b.key_loc)
            if isinstance(b.value, str)
            else b
            for b in value
        ]
        return Node(items, part.loc, part.key_loc)
    if key == "address_map" and isinstance(value, list):
        return Node([_window(w, index, local, stride) for w in value], part.loc, part.key_loc)
    return part


def _window(entry: Node, index: int, local: tuple[str, ...], stride: int) -> Node:
    """An address-map entry of tile ``index``: its target and ``via`` renamed, its base moved
    up by index x stride (a base that does not parse is left for the validator to report)."""
    if not isinstance(entry.value, dict):
        return entry
    fields = dict(entry.value)
    prefix = tile_prefix(index)
    target = fields.get("target")
    if target is not None and isinstance(target.value, str) and target.value in local:
        fields["target"] = Node(prefix + target.value, target.loc, target.key_loc)
    via = fields.get("via")
    if via is not None and isinstance(via.value, list):
        fields["via"] = Node(
            [
                Node(prefix + v.value, v.loc, v.key_loc)
                if isinstance(v.value, str) and v.value in local
                else v
                for v in via.value
            ],
            via.loc,
            via.key_loc,
        )
    base = fields.get("base")
    if base is not None and stride:
        try:
            moved = parse_address(base.value) + index * stride
            fields["base"] = Node(moved, base.loc, base.key_loc)
        except UnitError:
            pass
    return Node(fields, entry.loc, entry.key_loc)


def _joined(shared: Node | None, copies: list[Node], template: Node) -> Node:
    """The shared section followed by every tile's copy (a mapping or a list, like the
    template's); a shared section of another shape is kept for the validator to report."""
    where = shared or template
    if shared is not None and type(shared.value) is not type(template.value):
        return shared
    if isinstance(template.value, dict):
        merged: dict[str, Node] = {}
        for part in ([shared] if shared else []) + copies:
            merged.update(part.value if isinstance(part.value, dict) else {})
        return Node(merged, where.loc, where.key_loc)
    items: list[Node] = []
    for part in ([shared] if shared else []) + copies:
        items.extend(part.value if isinstance(part.value, list) else [])
    return Node(items, where.loc, where.key_loc)


__all__ = ["MAX_TILES", "TileLayout", "expand_tiles", "tile_prefix"]
