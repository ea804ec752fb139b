"""Checks a platform node tree and turns it into a `PlatformConfig`, reporting every problem.

Each problem names file:line:column, the key path, what was expected and what was found, with a
suggestion for misspelt names. Checks run as far as the earlier ones allow (a binding to an
unknown component is reported, and the remaining bindings are still checked), so one run shows
all that is wrong with a file.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Iterable

from tlm_models.bounded_input import printable
from tlm_models.energy.table import EnergyTable, parse_table
from tlm_models.errors import shorten
from tlm_models.platform.area.technology import parse_technology
from tlm_models.platform.bounded_yaml import MAX_SCALAR_CHARS
from tlm_models.platform.limits import ADDRESS_SPACE, product_errors, range_error
from tlm_models.platform.loader import Diagnostic, Location, Node, PlatformError
from tlm_models.platform.registry import (
    KIND_UNITS,
    ComponentType,
    ParamSpec,
    ParamValue,
    component_type,
    component_types,
)
from tlm_models.platform.routing import route_address_map
from tlm_models.platform.schema import (
    ROLES,
    AddressRange,
    Binding,
    ComponentConfig,
    EngineConfig,
    PlatformConfig,
    SocketRef,
)
from tlm_models.platform.tiles import expand_tiles
from tlm_models.units import (
    UnitError,
    format_size,
    parse_address,
    parse_bandwidth,
    parse_frequency,
    parse_size,
    parse_time,
)

TOP_LEVEL_KEYS = (
    "name", "description", "components", "bindings", "address_map", "engines", "tiles",
    "technology",
)  # fmt: skip
ADDRESS_KEYS = ("base", "size", "target", "via")
#: Address-map bases and sizes are multiples of this, so no window splits a bus beat of an
#: interconnect (64 B is the default interconnect width and a common DMA burst granule).
ADDRESS_ALIGNMENT = 64

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SOCKET_REF = re.compile(r"^\s*([A-Za-z_]\w*)\.([A-Za-z_]\w*)(?:\[(\d+)\])?\s*$")
_ENGINE_PATH = re.compile(r"^\s*([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*)\[(\d+)\])?\s*$")


#: Components in a platform's `components` (tiles are copies of a template, not counted): a
#: chip of 64 tiles of 8 components is 512; 10,000 keeps validation under a second where a
#: million generated ones took minutes.
MAX_COMPONENTS = 10_000
#: A tile's copy of a template component is named with its tile's prefix (tiles.tile_prefix).
_TILE_PREFIX = re.compile(r"tile\d+_")


def suggest(word: str, choices: Iterable[str]) -> str:
    """`; did you mean 'x'?` for the closest choice, or nothing."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def _found(value: object) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    return shorten(value) if isinstance(value, str) else shorten(repr(value))[1:-1]


class _Checker:
    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[Diagnostic] = []
        # Components already reported as broken, and components named by a rejected binding:
        # later checks stay quiet about them instead of repeating one mistake as many.
        self.broken: set[str] = set()
        self.in_rejected_binding: set[str] = set()

    def error(self, loc: Location, key: str, message: str) -> None:
        self.problems.append(Diagnostic(loc, key, message))

    # -- generic shapes ------------------------------------------------------------------

    def mapping(self, node: Node, key: str, what: str) -> dict[str, Node] | None:
        if isinstance(node.value, dict):
            return node.value
        self.error(node.loc, key, f"expected {what} (a mapping), found {_found(node.value)}")
        return None

    def sequence(self, node: Node, key: str, what: str) -> list[Node] | None:
        if isinstance(node.value, list):
            return node.value
        self.error(node.loc, key, f"expected {what} (a list), found {_found(node.value)}")
        return None

    def text(self, node: Node, key: str, what: str) -> str | None:
        if isinstance(node.value, str):
            # The file's own limit holds for a `--set` value too (which is read as text when
            # it is longer), and text is echoed: no escape sequence may reach a terminal.
            if len(node.value) > MAX_SCALAR_CHARS:
                self.error(
                    node.loc,
                    key,
                    f"{what} of {len(node.value)} characters (at most {MAX_SCALAR_CHARS})",
                )
                return None
            if printable(node.value) != node.value:
                self.error(
                    node.loc,
                    key,
                    f"{what} holds control characters or terminal escape sequences "
                    f"({shorten(node.value)})",
                )
                return None
            return node.value
        self.error(node.loc, key, f"expected {what} (text), found {_found(node.value)}")
        return None

    def unknown_keys(
        self, entries: dict[str, Node], allowed: Iterable[str], key: str, what: str
    ) -> None:
        allowed = list(allowed)
        for name, node in entries.items():
            if name not in allowed:
                path = f"{key}.{name}" if key else name
                self.error(
                    node.where,
                    path,
                    f"unknown {what} '{name}' (expected one of: {', '.join(allowed)})"
                    + suggest(name, allowed),
                )

    # -- top level -----------------------------------------------------------------------

    def platform(self, root: Node) -> PlatformConfig | None:
        top = self.mapping(root, "", "a platform")
        if top is None:
            return None
        self.unknown_keys(top, TOP_LEVEL_KEYS, "", "top-level key")
        name = "platform"
        if "name" in top:
            name = self.text(top["name"], "name", "the platform's name") or name
        else:
            self.error(Location(self.source, 1, 1), "name", "missing required key 'name'")
        description = ""
        if "description" in top:
            description = self.text(top["description"], "description", "a description") or ""
        components: dict[str, ComponentConfig] = {}
        if "components" in top:
            components = self.components(top["components"])
        else:
            self.error(Location(self.source, 1, 1), "components", "missing 'components'")
        bindings = self.bindings(top.get("bindings"), components)
        self.unbound_sockets(components, bindings)
        address_map = self.address_map(top.get("address_map"), components)
        routes = route_address_map(bindings, address_map, components, self.error, self.source)
        engines = self.engines(top.get("engines"), components)
        technology = None
        if "technology" in top:
            technology, problems = parse_technology(top["technology"])
            self.problems.extend(problems)
        return PlatformConfig(
            name=name,
            description=description,
            components=components,
            bindings=tuple(bindings),
            address_map=tuple(address_map),
            routes=tuple(routes),
            engines=engines,
            source=self.source,
            technology=technology,
        )

    # -- components ----------------------------------------------------------------------

    def components(self, node: Node) -> dict[str, ComponentConfig]:
        entries = self.mapping(node, "components", "components by name")
        if not entries:
            if entries is not None:
                self.error(node.loc, "components", "a platform needs at least one component")
            return {}
        if len(entries) > MAX_COMPONENTS:
            self.error(
                node.loc,
                "components",
                f"{len(entries):,} components, more than the {MAX_COMPONENTS:,} a platform "
                "may have",
            )
            return {}
        result: dict[str, ComponentConfig] = {}
        for name, comp in entries.items():
            key = f"components.{name}"
            if not _NAME.match(name):
                self.broken.add(name)
                self.error(
                    comp.where,
                    key,
                    f"component name '{name}' is not an identifier (letters, digits, _)",
                )
                continue
            config = self.component(name, comp, key)
            if config is not None:
                result[name] = config
            else:
                self.broken.add(name)
        self.unique_roles(result, entries)
        return result

    def unique_roles(self, components: dict[str, ComponentConfig], nodes: dict[str, Node]) -> None:
        """Each role names one memory (of the chip, or of each tile: `tile3_kvbuf`): the
        dataflows place tiles in the scratchpad and K/V rows in the K/V buffer, and two
        candidates would leave the choice to file order."""
        holders: dict[tuple[str, str], list[str]] = {}
        for comp in components.values():
            if comp.role is not None:
                tile = _TILE_PREFIX.match(comp.name)
                scope = tile.group() if tile else ""
                holders.setdefault((scope, comp.role), []).append(comp.name)
        for (_scope, role), names in holders.items():
            for name in names[1:]:
                self.error(
                    nodes[name].where,
                    f"components.{name}.role",
                    f"role '{role}' is already '{names[0]}''s; each role names one memory",
                )

    def component(self, name: str, node: Node, key: str) -> ComponentConfig | None:
        entries = self.mapping(node, key, "a component with 'type' and parameters")
        if entries is None:
            return None
        if "include" in entries:
            return None  # the include failed and is reported already
        if "type" not in entries:
            self.error(node.where, key, "missing 'type' (or 'include' of a component file)")
            return None
        type_name = self.text(entries["type"], f"{key}.type", "a component type")
        if type_name is None:
            return None
        spec = component_type(type_name)
        if spec is None:
            known = sorted(component_types())
            self.error(
                entries["type"].loc,
                f"{key}.type",
                f"unknown component type '{type_name}' (known: {', '.join(known)})"
                + suggest(type_name, known),
            )
            return None
        params: dict[str, ParamValue] = {}
        allowed = [p.name for p in spec.params]
        role: str | None = None
        for pname, pnode in entries.items():
            if pname in ("type", "energy"):
                continue
            if pname == "role":
                role = self.role(spec, pnode, f"{key}.role")
                continue
            pspec = spec.param(pname)
            if pspec is None:
                self.error(
                    pnode.where,
                    f"{key}.{pname}",
                    f"unknown parameter '{pname}' for type '{spec.name}' "
                    f"(parameters: {', '.join(allowed)})" + suggest(pname, allowed),
                )
                continue
            value = self.param_value(pspec, pnode.value, pnode.loc, f"{key}.{pname}")
            if value is None and pspec.default is not None:
                # Reported; the default stands in so later checks still see this component.
                value = convert_param(pspec, pspec.default)
            if value is not None:
                params[pname] = value
        for pspec in spec.params:
            if pspec.name in entries:
                continue
            if pspec.required:
                self.error(
                    node.where,
                    f"{key}.{pspec.name}",
                    f"missing required parameter '{pspec.name}' ({pspec.kind})",
                )
                continue
            default = convert_param(pspec, pspec.default)
            params[pspec.name] = default
        if len(params) != len(spec.params):
            return None
        overflows = product_errors(spec.name, params)
        for pname, message in overflows:
            where = entries[pname].loc if pname in entries else node.where
            self.error(where, f"{key}.{pname}", message)
        if overflows:
            return None
        energy: EnergyTable | None = None
        if "energy" in entries:
            energy, problems = parse_table(spec.name, entries["energy"], params, f"{key}.energy")
            self.problems.extend(problems)
        return ComponentConfig(name, spec.name, params, role, node.where, energy)

    def role(self, spec: ComponentType, node: Node, key: str) -> str | None:
        if spec.memory != "onchip":
            self.error(node.where, key, f"'role' applies to on-chip memories, not '{spec.name}'")
            return None
        if node.value not in ROLES:
            self.error(
                node.loc,
                key,
                f"expected one of {', '.join(ROLES)}, found {_found(node.value)}"
                + suggest(str(node.value), ROLES),
            )
            return None
        return str(node.value)

    def param_value(
        self, spec: ParamSpec, value: object, loc: Location, key: str
    ) -> ParamValue | None:
        try:
            return convert_param(spec, value)
        except UnitError as exc:
            self.error(loc, key, str(exc))
            return None

    # -- bindings ------------------------------------------------------------------------

    def socket_ref(
        self,
        text: str,
        loc: Location,
        key: str,
        components: dict[str, ComponentConfig],
        role: str,
    ) -> SocketRef | None:
        match = _SOCKET_REF.match(text)
        if match is None:
            self.error(
                loc,
                key,
                f"expected a socket path like 'noc.in[0]' or 'dma.mem_port', found "
                f"'{text.strip()}'",
            )
            return None
        comp_name, socket_name, index = match.group(1), match.group(2), match.group(3)
        ref = SocketRef(comp_name, socket_name, int(index) if index is not None else None)
        comp = components.get(comp_name)
        if comp is None:
            if comp_name not in self.broken:
                self.error(
                    loc,
                    key,
                    f"'{ref}' names no component '{comp_name}'" + suggest(comp_name, components),
                )
            return None
        spec = comp.spec
        socket = spec.socket(socket_name)
        names = [s.name for s in spec.sockets]
        if socket is None:
            self.error(
                loc,
                key,
                f"'{ref}': a {spec.name} has no socket '{socket_name}' (sockets: "
                f"{', '.join(names)})" + suggest(socket_name, names),
            )
            return None
        if socket.role != role:
            article = "an" if socket.role == "initiator" else "a"
            hint = (
                "; a binding reads 'initiator.socket -> target.socket'"
                if role == "target"
                else "; the left side of '->' must be an initiator socket"
            )
            self.error(
                loc,
                key,
                f"'{ref}' is {article} {socket.role} socket where a {role} socket is "
                f"expected{hint}",
            )
            return None
        if ref.index is not None and not socket.multi:
            self.error(loc, key, f"'{ref}': socket '{socket_name}' is not a multi-socket")
            return None
        if ref.index is None and socket.multi and socket.role == "initiator":
            self.error(
                loc,
                key,
                f"'{ref}': multi-socket '{socket_name}' needs an index, e.g. "
                f"'{comp_name}.{socket_name}[0]' (its out index for routing)",
            )
            return None
        return ref

    def bindings(self, node: Node | None, components: dict[str, ComponentConfig]) -> list[Binding]:
        if node is None:
            return []
        items = self.sequence(node, "bindings", "bindings 'initiator.socket -> target.socket'")
        if items is None:
            return []
        result: list[Binding] = []
        seen: dict[tuple[str, str, int | None], Location] = {}
        for i, item in enumerate(items):
            key = f"bindings[{i}]"
            text = self.text(item, key, "a binding 'initiator.socket -> target.socket'")
            if text is None:
                continue
            if text.count("->") != 1:
                self.error(
                    item.loc,
                    key,
                    f"expected 'initiator.socket -> target.socket', found '{text}'",
                )
                self.rejected(text)
                continue
            left, right = text.split("->")
            ini = self.socket_ref(left, item.loc, key, components, "initiator")
            tgt = self.socket_ref(right, item.loc, key, components, "target")
            if ini is None or tgt is None:
                self.rejected(text)
                continue
            ok = True
            for ref in (ini, tgt):
                socket = components[ref.component].spec.socket(ref.socket)
                assert socket is not None
                if socket.multi and ref.index is None:
                    continue  # several initiators bind to an unindexed multi target
                slot = (ref.component, ref.socket, ref.index)
                if slot in seen:
                    self.error(
                        item.loc,
                        key,
                        f"socket '{ref}' is bound twice (first at line {seen[slot].line})"
                        + ("" if socket.multi else "; put an interconnect in between"),
                    )
                    ok = False
                else:
                    seen[slot] = item.loc
            if ok:
                result.append(Binding(ini, tgt, item.loc))
            else:
                self.rejected(text)
        self.contiguous_indices(result, components)
        return result

    def rejected(self, text: str) -> None:
        self.in_rejected_binding.update(re.findall(r"([A-Za-z_]\w*)\s*\.", text))

    def contiguous_indices(
        self, bindings: list[Binding], components: dict[str, ComponentConfig]
    ) -> None:
        """Multi initiator sockets bind in index order, so their indices must be 0..n-1."""
        used: dict[tuple[str, str], list[tuple[int, Location | None]]] = {}
        for b in bindings:
            if b.initiator.index is not None:
                used.setdefault((b.initiator.component, b.initiator.socket), []).append(
                    (b.initiator.index, b.loc)
                )
        for (comp, socket), indices in used.items():
            if comp in self.in_rejected_binding:
                continue
            expected = set(range(len(indices)))
            missing = sorted(expected - {i for i, _ in indices})
            if missing:
                loc = max((loc for _, loc in indices if loc), key=lambda x: x.line)
                self.error(
                    loc,
                    "bindings",
                    f"indices of '{comp}.{socket}' must run 0..{len(indices) - 1} without gaps "
                    f"(missing {', '.join(f'[{m}]' for m in missing)})",
                )

    def unbound_sockets(
        self, components: dict[str, ComponentConfig], bindings: list[Binding]
    ) -> None:
        bound = {(r.component, r.socket) for b in bindings for r in (b.initiator, b.target)}
        for comp in components.values():
            if comp.name in self.in_rejected_binding:
                continue
            for socket in comp.spec.sockets:
                if socket.required and (comp.name, socket.name) not in bound:
                    self.error(
                        comp.loc or Location(self.source),
                        f"components.{comp.name}",
                        f"{socket.role} socket '{comp.name}.{socket.name}' is not bound "
                        "(add it to 'bindings')",
                    )

    # -- address map ---------------------------------------------------------------------

    def address_map(
        self, node: Node | None, components: dict[str, ComponentConfig]
    ) -> list[AddressRange]:
        if node is None:
            return []
        items = self.sequence(node, "address_map", "address windows {base, size?, target}")
        if items is None:
            return []
        result: list[AddressRange] = []
        for i, item in enumerate(items):
            entry = self.address_entry(item, f"address_map[{i}]", components)
            if entry is not None:
                result.append(entry)
        ordered = sorted(result, key=lambda a: a.base)
        reach: AddressRange | None = None  # the window ending furthest up so far
        for cur in ordered:
            if reach is not None and cur.base < reach.end:
                self.error(cur.loc or Location(self.source), "address_map", _overlap(reach, cur))
            if reach is None or cur.end > reach.end:
                reach = cur
        return result

    def address_entry(
        self, item: Node, key: str, components: dict[str, ComponentConfig]
    ) -> AddressRange | None:
        entries = self.mapping(item, key, "an address window {base, size, target}")
        if entries is None:
            return None
        self.unknown_keys(entries, ADDRESS_KEYS, key, "address-map key")
        missing = [k for k in ("base", "target") if k not in entries]
        for k in missing:
            self.error(item.loc, f"{key}.{k}", f"missing '{k}'")
        if missing:
            return None
        values: dict[str, int] = {}
        for k in ("base", "size"):
            if k not in entries:
                continue  # the size defaults to the target's (checked below)
            try:
                values[k] = parse_address(entries[k].value)
            except UnitError as exc:
                self.error(entries[k].loc, f"{key}.{k}", str(exc))
                continue
            minimum = 1 if k == "size" else 0
            if values[k] < minimum:
                self.error(
                    entries[k].loc,
                    f"{key}.{k}",
                    f"expected {'a positive size' if k == 'size' else 'an address >= 0'}, "
                    f"found {values[k]}",
                )
                del values[k]
            elif values[k] % ADDRESS_ALIGNMENT:
                self.error(
                    entries[k].loc,
                    f"{key}.{k}",
                    f"{k} {values[k]:#x} is not a multiple of {ADDRESS_ALIGNMENT} B (address "
                    "windows are aligned to the bus beat)",
                )
        target = self.text(entries["target"], f"{key}.target", "a memory component name")
        via = self.via(entries.get("via"), f"{key}.via", components)
        if target is None or via is None or len(values) != len({"base", "size"} & set(entries)):
            return None
        comp = components.get(target)
        if comp is None and target in self.broken:
            return None
        if comp is None:
            self.error(
                entries["target"].loc,
                f"{key}.target",
                f"no component '{target}'" + suggest(target, components),
            )
            return None
        spec = comp.spec
        if spec.memory is None or spec.size_param is None:
            self.error(
                entries["target"].loc,
                f"{key}.target",
                f"'{target}' is a {spec.name}, not a memory; address windows map memories",
            )
            return None
        capacity = comp.params[spec.size_param]
        assert isinstance(capacity, int)
        values.setdefault("size", capacity)
        if values["size"] % ADDRESS_ALIGNMENT:
            self.error(
                item.loc,
                f"{key}.size",
                f"'{target}' has {spec.size_param} {format_size(capacity)}, not a multiple of "
                f"{ADDRESS_ALIGNMENT} B: give the window's size explicitly",
            )
            return None
        if values["base"] + values["size"] > ADDRESS_SPACE:
            self.error(
                entries["base"].loc,
                f"{key}.base",
                f"window [{values['base']:#x}, +{format_size(values['size'])}) ends beyond the "
                "64-bit address space (2^64)",
            )
            return None
        if values["size"] > capacity:
            self.error(
                entries["size"].loc if "size" in entries else item.loc,
                f"{key}.size",
                f"window of {format_size(values['size'])} is larger than '{target}' "
                f"({spec.size_param} = {format_size(capacity)})",
            )
            return None
        derived = spec.size_param if "size" not in entries else None
        return AddressRange(values["base"], values["size"], target, via, item.loc, derived)

    def via(
        self, node: Node | None, key: str, components: dict[str, ComponentConfig]
    ) -> tuple[str, ...] | None:
        if node is None:
            return ()
        raw = node.value
        names = [raw] if isinstance(raw, str) else raw
        if not isinstance(names, list):
            self.error(node.loc, key, f"expected an interconnect name or a list, found {raw!r}")
            return None
        result: list[str] = []
        for n in names:
            value = n.value if isinstance(n, Node) else n
            loc = n.loc if isinstance(n, Node) else node.loc
            comp = components.get(value) if isinstance(value, str) else None
            if comp is None or not isinstance(value, str):
                self.error(
                    loc,
                    key,
                    f"expected an interconnect component, found {_found(value)}"
                    + suggest(str(value), components),
                )
                return None
            if not comp.spec.routes:
                self.error(loc, key, f"'{value}' is a {comp.type}, not an interconnect")
                return None
            result.append(value)
        return tuple(result)

    # -- engines -------------------------------------------------------------------------

    def engines(
        self, node: Node | None, components: dict[str, ComponentConfig]
    ) -> dict[str, EngineConfig]:
        if node is None:
            return {}
        entries = self.mapping(node, "engines", "trace engines by name")
        if entries is None:
            return {}
        result: dict[str, EngineConfig] = {}
        used: dict[str, str] = {}
        for name, item in entries.items():
            key = f"engines.{name}"
            path = self.text(item, key, "an executor path such as 'pe' or 'dma.channel[0]'")
            if path is None:
                continue
            engine = self.engine(name, path, item.loc, key, components)
            if engine is None:
                continue
            if engine.path in used:
                self.error(
                    item.loc, key, f"'{engine.path}' is already engine '{used[engine.path]}'"
                )
                continue
            used[engine.path] = name
            result[name] = engine
        return result

    def engine(
        self,
        name: str,
        path: str,
        loc: Location,
        key: str,
        components: dict[str, ComponentConfig],
    ) -> EngineConfig | None:
        match = _ENGINE_PATH.match(path)
        if match is None:
            self.error(loc, key, f"expected 'component' or 'component.channel[i]', found '{path}'")
            return None
        comp_name, accessor, index = match.groups()
        comp = components.get(comp_name)
        if comp is None and comp_name in self.broken:
            return None
        if comp is None:
            self.error(
                loc,
                key,
                f"'{path}' names no component '{comp_name}'" + suggest(comp_name, components),
            )
            return None
        executor = comp.spec.executor
        if executor is None:
            self.error(loc, key, f"'{comp_name}' is a {comp.type}, which executes no operations")
            return None
        if executor.channel_accessor is None:
            if accessor is not None:
                self.error(loc, key, f"a {comp.type} is itself the engine: write '{comp_name}'")
                return None
            return EngineConfig(name, comp_name, executor.kind)
        if accessor != executor.channel_accessor or index is None:
            self.error(
                loc,
                key,
                f"a {comp.type} executes through its channels: expected "
                f"'{comp_name}.{executor.channel_accessor}[i]', found '{path}'",
            )
            return None
        count = comp.params.get(executor.channel_count_param or "")
        if isinstance(count, int) and int(index) >= count:
            self.error(
                loc,
                key,
                f"channel index {index} out of range: '{comp_name}' has {count} channel"
                f"{'s' if count != 1 else ''} (0..{count - 1})",
            )
            return None
        return EngineConfig(name, comp_name, executor.kind, int(index))


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UnitError(f"expected a whole number, found {_found(value)}")
    return value


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise UnitError(f"expected true or false, found {_found(value)}")
    return value


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise UnitError(f"expected a text, found {_found(value)}")
    return value


def _converter(spec: ParamSpec) -> Callable[[object], ParamValue]:
    converters: dict[str, Callable[[object], ParamValue]] = {
        "count": _count,
        "size": parse_size,
        "bandwidth": parse_bandwidth,
        "frequency": parse_frequency,
        "time": parse_time,
        "bool": _flag,
        "address": parse_address,
        "text": _text,
    }
    return converters[spec.kind]


def convert_param(spec: ParamSpec, value: object) -> ParamValue:
    """A YAML value of parameter `spec` in SI units, or UnitError saying what is wrong."""
    if spec.kind == "choice":
        if not isinstance(value, str) or value not in spec.choices:
            raise UnitError(
                f"expected one of {', '.join(spec.choices)}, found {_found(value)}"
                + suggest(str(value), spec.choices)
            )
        return value
    result = _converter(spec)(value)
    if not isinstance(result, bool) and isinstance(result, (int, float)) and result < spec.minimum:
        if spec.minimum == 0:
            what = "not negative"
        elif result <= 0:
            what = "positive"
        else:
            what = f"at least {spec.minimum} {KIND_UNITS[spec.kind]}".rstrip()
        raise UnitError(f"must be {what}, found {_found(value)}")
    too_big = range_error(spec, result)
    if too_big:
        raise UnitError(too_big)
    return result


def validate(root: Node, source: str, earlier: list[Diagnostic] | None = None) -> PlatformConfig:
    """A validated `PlatformConfig`, or a `PlatformError` listing every problem."""
    checker = _Checker(source)
    root, tiles = expand_tiles(root, checker.problems)  # tiles.py: a flat platform from here on
    config = checker.platform(root)
    if config is not None and tiles is not None:
        config = dataclasses.replace(config, tiles=tiles)
    problems = [*(earlier or []), *checker.problems]
    if problems or config is None:
        problems.sort(key=lambda d: (d.loc.file != source, d.loc.file, d.loc.line, d.loc.column))
        raise PlatformError(problems)
    return config


def _overlap(low: AddressRange, high: AddressRange) -> str:
    """Two windows overlap: which they are, where the lower one's size comes from (a memory's
    size parameter, e.g. a `--set sram.capacity=...` that grew it), and which base to move."""
    at = f" at line {low.loc.line}" if low.loc and low.loc.line else ""
    grown = (
        f", its size taken from {low.target}.{low.size_from} = {format_size(low.size)}"
        if low.size_from
        else ""
    )
    fix = f"move the window of '{high.target}' to a base >= {low.end:#x}"
    tiles = [re.match(r"tile(\d+)_", name) for name in (low.target, high.target)]
    if tiles[0] and tiles[1] and tiles[0].group(1) != tiles[1].group(1):
        fix = f"raise tiles.address_stride to at least {format_size(low.end - low.base)}"
    elif low.size_from:
        fix += f" (or give the window of '{low.target}' a smaller explicit size)"
    return (
        f"window of '{high.target}' [{high.base:#x}, {high.end:#x}) overlaps the window of "
        f"'{low.target}' [{low.base:#x}, {low.end:#x}){at}{grown}: {fix}"
    )
