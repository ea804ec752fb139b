"""Peak figures derived from a platform's parameters: the roofline a measurement is judged by.

PE FLOP/s = 2 * rows * cols * clock (a MAC is two FLOPs), Exp exp/s = lanes * clock, off-chip
bandwidth = channels * channel_bandwidth, machine balance = PE FLOP/s / off-chip bytes/s, and
on-chip capacity in elements at the PE array's element width. Several components of one type add.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tlm_models.platform.schema import ComponentConfig, PlatformConfig


@dataclass(frozen=True)
class DerivedFigures:
    pe_flops: float  # FLOP/s, all PE arrays
    exp_per_s: float  # exponentials per second, all Exp units
    offchip_bandwidth: float  # bytes/s, all off-chip memories
    machine_balance: float | None  # FLOP per off-chip byte; None without off-chip bandwidth
    onchip_bytes: int  # the scratchpad's capacity
    onchip_elements: int | None  # scratchpad capacity in PE elements; None without a PE array

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _num(comp: ComponentConfig, param: str) -> float:
    value = comp.params[param]
    assert isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value)


def scratchpad(config: PlatformConfig) -> ComponentConfig | None:
    """The on-chip memory that holds tiles: role `scratchpad`, else the largest other one."""
    onchip = [c for c in config.components.values() if c.spec.memory == "onchip"]
    marked = [c for c in onchip if c.role == "scratchpad"]
    if marked:
        return marked[0]
    candidates = [c for c in onchip if c.role is None and c is not kv_buffer(config)]
    if not candidates:
        return None
    return max(candidates, key=lambda c: _num(c, c.spec.size_param or ""))


def kv_buffer(config: PlatformConfig) -> ComponentConfig | None:
    """The small K/V buffer: role `kv_buffer`, else an on-chip memory named `kvbuf`."""
    onchip = [c for c in config.components.values() if c.spec.memory == "onchip"]
    marked = [c for c in onchip if c.role == "kv_buffer"]
    if marked:
        return marked[0]
    named = [c for c in onchip if c.name == "kvbuf" and c.role is None]
    return named[0] if named else None


def derive(config: PlatformConfig) -> DerivedFigures:
    pes = config.components_of_type("pe_array")
    exps = config.components_of_type("exp_unit")
    offchip = [c for c in config.components.values() if c.spec.memory == "offchip"]
    pe_flops = sum(2 * _num(c, "rows") * _num(c, "cols") * _num(c, "clock") for c in pes)
    exp_rate = sum(_num(c, "lanes") * _num(c, "clock") for c in exps)
    bandwidth = sum(
        _num(c, "channels") * _num(c, "channel_bandwidth")
        for c in offchip
        if c.spec.param("channels") and c.spec.param("channel_bandwidth")
    )
    pad = scratchpad(config)
    onchip_bytes = int(_num(pad, pad.spec.size_param or "")) if pad else 0
    elements = onchip_bytes // int(_num(pes[0], "elem_bytes")) if pes else None
    return DerivedFigures(
        pe_flops=pe_flops,
        exp_per_s=exp_rate,
        offchip_bandwidth=bandwidth,
        machine_balance=pe_flops / bandwidth if bandwidth else None,
        onchip_bytes=onchip_bytes,
        onchip_elements=elements,
    )
