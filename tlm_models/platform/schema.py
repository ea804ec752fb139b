"""The typed, validated platform configuration that the builder elaborates and emitters read.

Values are in SI base units as plain numbers (bytes, bytes/s, Hz, picoseconds) so nothing
downstream parses units again; `loc` fields keep the file position for later messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from tlm_models.energy.table import EnergyTable
from tlm_models.errors import UserError
from tlm_models.platform.area.technology import Technology
from tlm_models.platform.derived import DerivedFigures, derive, kv_buffer, scratchpad
from tlm_models.platform.info import MemoryRegion, PlatformInfo
from tlm_models.platform.loader import Location
from tlm_models.platform.registry import KIND_UNITS, ComponentType, ParamValue, component_type
from tlm_models.platform.tiles import TileLayout, tile_prefix
from tlm_models.units import (
    format_address,
    format_bandwidth,
    format_frequency,
    format_size,
    format_time,
)

#: Roles an on-chip memory can play for dataflow emitters.
ROLES = ("scratchpad", "kv_buffer")


@dataclass(frozen=True)
class ComponentConfig:
    """One component: its type and every parameter (defaults filled in), in SI units."""

    name: str
    type: str
    params: dict[str, ParamValue]
    role: str | None = None
    loc: Location | None = None
    energy: EnergyTable | None = None  # the `energy:` table (docs/energy.md), if any

    @property
    def spec(self) -> ComponentType:
        spec = component_type(self.type)
        if spec is None:
            raise KeyError(f"component type '{self.type}' is not registered")
        return spec

    def display(self, param: str) -> str:
        """The parameter's value with its unit, as a user would write it."""
        return format_param(self.spec.param(param).kind, self.params[param])  # type: ignore[union-attr]


def format_param(kind: str, value: ParamValue) -> str:
    """Formats a parameter value of `kind` for display."""
    if kind == "size" and isinstance(value, int):
        return format_size(value)
    if kind == "bandwidth" and isinstance(value, (int, float)):
        return format_bandwidth(value)
    if kind == "frequency" and isinstance(value, (int, float)):
        return format_frequency(value)
    if kind == "time" and isinstance(value, int):
        return format_time(value)
    if kind == "address" and isinstance(value, int):
        return format_address(value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


@dataclass(frozen=True)
class SocketRef:
    """`component.socket` or `component.socket[index]` (an element of a multi-socket)."""

    component: str
    socket: str
    index: int | None = None

    def __str__(self) -> str:
        suffix = f"[{self.index}]" if self.index is not None else ""
        return f"{self.component}.{self.socket}{suffix}"


@dataclass(frozen=True)
class Binding:
    initiator: SocketRef
    target: SocketRef
    loc: Location | None = None

    def __str__(self) -> str:
        return f"{self.initiator} -> {self.target}"


@dataclass(frozen=True)
class AddressRange:
    """A window of the bus address space mapped to a memory component (from offset 0)."""

    base: int
    size: int
    target: str
    via: tuple[str, ...] = ()  # interconnects that decode it; empty = every one reaching target
    loc: Location | None = None
    #: The target's size parameter when the window's size was not given (it follows it).
    size_from: str | None = None

    @property
    def end(self) -> int:
        return self.base + self.size


@dataclass(frozen=True)
class Route:
    """`interconnect.add_route(base, size, out_index, offset)` derived from the address map:
    the downstream sees address - offset (offset = base at the interconnect whose port reaches
    the target itself, 0 at one whose port leads to another interconnect, which then decodes
    the window unchanged)."""

    interconnect: str
    base: int
    size: int
    out_index: int
    target: str
    offset: int = -1  # -1: the base

    def __post_init__(self) -> None:
        if self.offset < 0:
            object.__setattr__(self, "offset", self.base)


@dataclass(frozen=True)
class EngineConfig:
    """A trace engine name bound to an executor: a component, or one channel of it."""

    name: str
    component: str
    kind: str
    channel: int | None = None

    @property
    def path(self) -> str:
        if self.channel is None:
            return self.component
        return f"{self.component}.channel[{self.channel}]"


@dataclass(frozen=True)
class PlatformConfig:
    """A validated platform: components, bindings, address map with routes, engines."""

    name: str
    description: str
    components: dict[str, ComponentConfig]
    bindings: tuple[Binding, ...] = ()
    address_map: tuple[AddressRange, ...] = ()
    routes: tuple[Route, ...] = ()
    engines: dict[str, EngineConfig] = field(default_factory=dict)
    source: str = ""
    tiles: TileLayout | None = None  # a `tiles:` section (tiles.py), expanded into the above
    #: The `technology:` section (node, supply) that area and leakage are stated at, if any.
    technology: Technology | None = None

    @property
    def tile_count(self) -> int:
        """Compute tiles: the `tiles:` count, 1 for a platform without that section."""
        return 1 if self.tiles is None else self.tiles.count

    def tile_info(self, index: int) -> PlatformInfo:
        """What tile ``index``'s emitter needs: its view's figures and which tile of how many
        it is (the dataflow partitions its work by that, ``dataflows/partition.py``)."""
        view = self.tile_view(index)
        return replace(
            view.info(), name=self.name, tile=index, tiles=self.tile_count,
            tile_offchip=self._tile_windows(),
        )  # fmt: skip

    def _tile_windows(self) -> tuple[int, ...]:
        """The base of every tile's off-chip window (``tile_view``'s choice), in tile order:
        where a tile finds what another tile stored (split-K's partial results)."""
        count = self.tile_count
        offchip = [
            a for a in self.address_map if self.components[a.target].spec.memory == "offchip"
        ]
        if not offchip:
            return ()
        return tuple(offchip[i * len(offchip) // count].base for i in range(count))

    def tile_view(self, index: int) -> PlatformConfig:
        """Tile ``index`` as a one-tile platform for its dataflow emitter: the shared
        components and this tile's, this tile's engines under their template names (dma0, pe,
        ...), and first in the address map the off-chip window the tile's data live in.

        Off-chip windows are dealt to tiles in contiguous groups (tile i of C uses window
        floor(i x W / C) of the W off-chip windows): with two HBM stacks, the first half of
        the tiles keeps its heads in the first stack. Every tile still reaches every window.
        """
        if self.tiles is None or not 0 <= index < self.tiles.count:
            raise ValueError(f"platform '{self.name}' has no tile {index}")
        count = self.tiles.count
        others = tuple(tile_prefix(i) for i in range(count) if i != index)
        prefix = tile_prefix(index)
        components = {n: c for n, c in self.components.items() if not n.startswith(others)}
        engines = {
            n[len(prefix) :]: replace(e, name=n[len(prefix) :])
            for n, e in self.engines.items()
            if n.startswith(prefix)
        }
        windows = [a for a in self.address_map if a.target in components]
        offchip = [a for a in windows if components[a.target].spec.memory == "offchip"]
        mine = offchip[index * len(offchip) // count] if offchip else None
        ordered = ([mine] if mine else []) + [a for a in windows if a is not mine]
        return replace(
            self,
            components=components,
            address_map=tuple(ordered),
            engines=engines,
            tiles=None,
            bindings=tuple(
                b
                for b in self.bindings
                if b.initiator.component in components and b.target.component in components
            ),
            routes=tuple(r for r in self.routes if r.interconnect in components),
        )

    def components_of_type(self, type_name: str) -> list[ComponentConfig]:
        return [c for c in self.components.values() if c.type == type_name]

    def region_of(self, component: str) -> MemoryRegion | None:
        """The first address-map window of `component`, if it is mapped."""
        for entry in self.address_map:
            if entry.target == component:
                return MemoryRegion(component, entry.base, entry.size)
        return None

    def derived(self) -> DerivedFigures:
        """Peak figures (TFLOP/s, exp/s, off-chip bandwidth, machine balance, capacity)."""
        return derive(self)

    def info(self) -> PlatformInfo:
        """What dataflow emitters need, as plain numbers (see `PlatformInfo`).

        Off-chip region: the address-map window of an off-chip memory (hbm); scratchpad: the
        on-chip memory with role `scratchpad`, else the largest one; KV buffer: role
        `kv_buffer`, else an on-chip memory named `kvbuf`. The PE/Exp figures come from the
        components behind the `pe` and `exp` engines (else the first of their type). A tiled
        platform answers for tile 0 (``tile_info`` for the others).
        """
        if self.tiles is not None:
            return self.tile_info(0)
        problems: list[str] = []
        offchip = next(
            (
                r
                for a in self.address_map
                if self.components[a.target].spec.memory == "offchip"
                and (r := self.region_of(a.target))
            ),
            None,
        )
        pad = scratchpad(self)
        pad_region = self.region_of(pad.name) if pad else None
        kv = kv_buffer(self)
        pe = self._executor_component("pe", "pe_array")
        exp = self._executor_component("exp", "exp_unit")
        if offchip is None:
            problems.append("no off-chip memory (e.g. hbm) in the address map")
        if pad_region is None:
            problems.append("no on-chip scratchpad (sram) in the address map")
        if pe is None:
            problems.append("no pe_array")
        if exp is None:
            problems.append("no exp_unit")
        if pe is not None and exp is not None:
            pe_eb, exp_eb = int(pe.params["elem_bytes"]), int(exp.params["elem_bytes"])
            if pe_eb != exp_eb:
                problems.append(
                    f"the element width differs: {pe.name}.elem_bytes = {pe_eb} B but "
                    f"{exp.name}.elem_bytes = {exp_eb} B; tiling, off-chip bytes and operand "
                    f"traffic need one width (set both, e.g. --set {pe.name}.elem_bytes={pe_eb}B "
                    f"--set {exp.name}.elem_bytes={pe_eb}B)"
                )
        if problems or offchip is None or pad_region is None or pe is None or exp is None:
            raise UserError(
                f"{self.source or self.name}: platform '{self.name}' cannot drive a dataflow: "
                + "; ".join(problems)
            )
        figures = self.derived()
        return PlatformInfo(
            name=self.name,
            offchip=offchip,
            scratchpad=pad_region,
            engines={name: e.kind for name, e in self.engines.items()},
            pe_rows=int(pe.params["rows"]),
            pe_cols=int(pe.params["cols"]),
            pe_clock_hz=float(pe.params["clock"]),
            exp_lanes=int(exp.params["lanes"]),
            exp_clock_hz=float(exp.params["clock"]),
            offchip_bandwidth=figures.offchip_bandwidth,
            kv_buffer=self.region_of(kv.name) if kv else None,
            extra={
                "pe_elem_bytes": float(pe.params["elem_bytes"]),
                "exp_elem_bytes": float(exp.params["elem_bytes"]),
                "pe_flops": figures.pe_flops,
                # what tile choices estimate compute with (dataflows/flash2_tiles.py)
                "pe_broadcast": float(pe.params["mapping"] == "broadcast"),
                "pe_latency": float(pe.params["pipeline_latency"]),
                "exp_latency": float(exp.params["pipeline_latency"]),
                "exp_per_s": figures.exp_per_s,
                **self._interleave_cycle(offchip.name),
            },
            elem_bytes=int(pe.params["elem_bytes"]),
        )

    def _interleave_cycle(self, memory: str) -> dict[str, float]:
        """``offchip_cycle_bytes``: the address span after which the off-chip memory's channel
        interleave repeats (channels x interleave granule), for a memory that has both."""
        params = self.components[memory].params
        if "channels" not in params or "interleave" not in params:
            return {}
        return {"offchip_cycle_bytes": float(int(params["channels"]) * int(params["interleave"]))}

    def _executor_component(self, engine_kind: str, type_name: str) -> ComponentConfig | None:
        for engine in self.engines.values():
            if engine.kind == engine_kind and self.components[engine.component].type == type_name:
                return self.components[engine.component]
        of_type = self.components_of_type(type_name)
        return of_type[0] if of_type else None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (SI numbers with their units), stable for comparisons."""
        components: dict[str, Any] = {}
        for name, comp in self.components.items():
            params = {
                p.name: {"value": comp.params[p.name], "unit": KIND_UNITS[p.kind]}
                for p in comp.spec.params
            }
            components[name] = {"type": comp.type, "role": comp.role, "params": params}
            if comp.energy is not None:
                components[name]["energy"] = comp.energy.to_dict()
        return {
            "name": self.name,
            "description": self.description,
            "components": components,
            "bindings": [str(b) for b in self.bindings],
            "address_map": [
                {"base": a.base, "size": a.size, "target": a.target, "via": list(a.via)}
                for a in self.address_map
            ],
            "routes": [
                {
                    "interconnect": r.interconnect,
                    "base": r.base,
                    "size": r.size,
                    "out_index": r.out_index,
                    "target": r.target,
                    "offset": r.offset,
                }
                for r in self.routes
            ],
            "engines": {e.name: {"path": e.path, "kind": e.kind} for e in self.engines.values()},
            "derived": self.derived().to_dict(),
        }
