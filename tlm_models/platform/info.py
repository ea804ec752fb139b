"""What a dataflow emitter needs to know about a platform, as plain numbers.

Built from a validated platform config (``PlatformConfig.info()``); emitters never read YAML.
All sizes are bytes, bandwidths bytes/s, clocks Hz, addresses absolute bus addresses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Bytes per element when nothing says otherwise: FP16, the width of the paper's machine and the
#: default of the PE array's and Exp unit's ``elem_bytes``. The one declaration of that default:
#: a workload, a trace header and a platform's figures take it from here.
DEFAULT_ELEM_BYTES = 2


@dataclass(frozen=True)
class MemoryRegion:
    name: str  # component name, e.g. "hbm", "sram", "kvbuf"
    base: int
    size: int


@dataclass(frozen=True)
class PlatformInfo:
    name: str
    offchip: MemoryRegion  # where emitters lay out Q, K, V, O, S/P
    scratchpad: MemoryRegion  # the on-chip SRAM: its size is the capacity M (in bytes)
    engines: dict[str, str]  # trace engine name -> kind ("dma", "pe", "exp")
    pe_rows: int
    pe_cols: int
    pe_clock_hz: float
    exp_lanes: int
    exp_clock_hz: float
    offchip_bandwidth: float  # peak, bytes/s
    kv_buffer: MemoryRegion | None = None
    extra: dict[str, float] = field(default_factory=dict)
    #: Bytes per element of the PE array and Exp unit (they must agree): the one element width
    #: that tiling, off-chip bytes and the engines' operand traffic all use.
    elem_bytes: int = DEFAULT_ELEM_BYTES
    #: Which compute tile of how many this is (tiled platforms, ``platform/tiles.py``): the
    #: emitter produces tile ``tile``'s share of the work (``dataflows/partition.py``).
    tile: int = 0
    tiles: int = 1
    #: The off-chip window base of every tile (tile order): a tile reading what another stored
    #: (split-K partials, ``dataflows/split_k.py``) addresses it in that tile's window.
    tile_offchip: tuple[int, ...] = ()

    def capacity_elements(self, elem_bytes: int | None = None) -> int:
        """On-chip capacity M in elements (the papers count M this way), at the platform's
        element width unless another is named."""
        return self.scratchpad.size // (self.elem_bytes if elem_bytes is None else elem_bytes)

    def engines_of_kind(self, kind: str) -> list[str]:
        return [name for name, k in self.engines.items() if k == kind]
