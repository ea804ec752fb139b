"""What a dataflow emitter needs to know about a platform, as plain numbers.

Built from a validated platform config (``PlatformConfig.info()``); emitters never read YAML.
All sizes are bytes, bandwidths bytes/s, clocks Hz, addresses absolute bus addresses.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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

    def capacity_elements(self, elem_bytes: int) -> int:
        """On-chip capacity M in elements (the papers count M this way)."""
        return self.scratchpad.size // elem_bytes

    def engines_of_kind(self, kind: str) -> list[str]:
        return [name for name, k in self.engines.items() if k == kind]
