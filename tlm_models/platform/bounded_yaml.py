"""YAML read with limits: a hostile file ends in a one-line error, never a hang or a traceback.

PyYAML composes aliases by reference and its composer recurses once per nesting level, so a
few nested anchors expand into billions of nodes ("billion laughs"), an anchor that refers to
itself builds a cyclic tree, and deep nesting exhausts the Python stack. Before composing, the
event stream (which PyYAML produces iteratively) is checked: the file size, the nesting depth,
the number of nodes after alias expansion, and that no alias refers to an enclosing anchor.
Scalars are limited in length too, so no number conversion can run away.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tlm_models.files.bounded_input import InputRefused, read_capped

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_NODES",
    "MAX_SCALAR_CHARS",
    "YamlLimitError",
    "compose_bounded",
    "read_limited",
]

#: libyaml's parser and composer when PyYAML has them (30x faster than the pure-Python ones,
#: the same events, nodes and marks).
LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: Platform and study files are a few KiB; 1 MiB is far above any real one.
MAX_FILE_BYTES = 1 << 20
#: Platforms nest about 4 levels (components -> component -> parameter -> list item).
MAX_DEPTH = 32
#: Nodes after expanding every alias: 100,000 keeps conversion and validation well under 1 s.
MAX_NODES = 100_000
#: The longest scalar: enough for any description, far below a number that takes long to read.
MAX_SCALAR_CHARS = 4096


@dataclass
class YamlLimitError(Exception):
    """A limit exceeded; ``mark`` is where (None for the file as a whole)."""

    message: str
    mark: Any = None  # a yaml Mark (pure-Python or libyaml), or None

    def __str__(self) -> str:
        return self.message


def _check_events(text: str) -> None:
    depth = 0
    nodes = 0
    # (anchor, node count at its start) of every open collection; sizes of closed anchors.
    open_collections: list[tuple[str | None, int]] = []
    anchor_nodes: dict[str, int] = {}
    for event in yaml.parse(text, Loader=LOADER):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            nodes += 1
            if depth > MAX_DEPTH:
                raise YamlLimitError(f"nesting deeper than {MAX_DEPTH} levels", event.start_mark)
            open_collections.append((event.anchor, nodes))
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            anchor, first = open_collections.pop()
            if anchor is not None:
                anchor_nodes[anchor] = nodes - first + 1
        elif isinstance(event, yaml.ScalarEvent):
            nodes += 1
            if len(event.value) > MAX_SCALAR_CHARS:
                raise YamlLimitError(
                    f"a value of {len(event.value)} characters (at most {MAX_SCALAR_CHARS})",
                    event.start_mark,
                )
            if event.anchor is not None:
                anchor_nodes[event.anchor] = 1
        elif isinstance(event, yaml.AliasEvent):
            if any(anchor == event.anchor for anchor, _ in open_collections):
                raise YamlLimitError(
                    f"alias *{event.anchor} refers to an anchor that contains it (a cycle)",
                    event.start_mark,
                )
            nodes += anchor_nodes.get(event.anchor or "", 1)
        if nodes > MAX_NODES:
            raise YamlLimitError(
                f"more than {MAX_NODES} values once aliases are expanded", event.start_mark
            )


def read_limited(path: Path) -> str:
    """The UTF-8 text of a regular file of at most MAX_FILE_BYTES, read through the bounded
    reader (a device, pipe or directory is refused without blocking: reading /dev/zero or a
    FIFO would never end); raises YamlLimitError, OSError or UnicodeDecodeError."""
    try:
        return read_capped(path, MAX_FILE_BYTES).decode("utf-8")
    except InputRefused as exc:
        raise YamlLimitError(str(exc)) from None


def compose_bounded(text: str) -> yaml.Node | None:
    """``yaml.compose`` of ``text`` within the limits above; raises YamlLimitError beyond them
    and yaml.YAMLError for invalid YAML."""
    size = len(text.encode("utf-8"))
    if size > MAX_FILE_BYTES:
        raise YamlLimitError(f"{size} bytes is larger than the {MAX_FILE_BYTES} B a file may have")
    _check_events(text)
    return yaml.compose(text, Loader=LOADER)
