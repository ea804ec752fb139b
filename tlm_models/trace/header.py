"""The trace header: what a trace is about (dataflow, tensors, engines), ahead of its records."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tlm_models.platform.info import DEFAULT_ELEM_BYTES

FORMAT_NAME = "attn-tlm-trace"
FORMAT_VERSION = 1
DEFAULT_WINDOW = 1 << 16
MAX_WINDOW = 1 << 20


@dataclass(frozen=True)
class TensorInfo:
    """A named tensor in the platform's address space, for per-tensor byte accounting."""

    name: str
    base: int  # absolute bus address of element [0, 0, ...]
    shape: tuple[int, ...]
    elem_bytes: int
    space: str = "offchip"  # "offchip" or "onchip"


@dataclass
class TraceHeader:
    """Everything a reader needs before the first record.

    ``engines`` lists engine names (e.g. ``dma0``, ``pe``, ``exp``); a record's ``engine`` field
    indexes this list and the platform maps each name to a component. ``window`` bounds how far
    back (in records) a dependency may reach, which bounds replay memory.
    """

    dataflow: str
    engines: list[str]
    tensors: list[TensorInfo] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    elem_bytes: int = DEFAULT_ELEM_BYTES
    window: int = DEFAULT_WINDOW
    op_count: int = 0  # 0 = unknown (streamed); writers fill it in when they can

    def engine_index(self, name: str) -> int:
        return self.engines.index(name)

    def tensor_index(self, name: str) -> int:
        for i, t in enumerate(self.tensors):
            if t.name == name:
                return i
        raise KeyError(name)
