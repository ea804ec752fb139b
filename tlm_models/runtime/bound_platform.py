"""Elaboration: a validated `PlatformConfig` -> SystemC modules, bound, routed, with engines.

Runs in a process that has loaded SystemC (`tlm_models.runtime.kernel.load_models`), once per
process.
Components are constructed in file order; sockets are bound by path, multi-sockets in index order
(an interconnect's `out[i]` must be its i-th binding, since routes name out indices); routes come
from the address map. The returned `BuiltPlatform` holds every module: Python must not
garbage-collect a SystemC module while the simulation can still reach it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tlm_models.errors import UserError
from tlm_models.platform.registry import ComponentType
from tlm_models.platform.schema import Binding, ComponentConfig, PlatformConfig


@dataclass
class BuiltPlatform:
    """The elaborated platform: modules by component name and executors by engine name."""

    config: PlatformConfig
    modules: dict[str, Any]
    engines: dict[str, Any]
    params: dict[str, Any] = field(default_factory=dict)  # the Params each module was built from

    def collect_stats(self) -> dict[str, Any]:
        """Every component's statistics as one tree: {"name", "stats", "children": [...]}."""
        gbl = _gbl()
        root = gbl.tlm_models.StatsGroup(self.config.name)
        for name, module in self.modules.items():
            module.collect_stats(root.child(name))
        result: dict[str, Any] = json.loads(str(root.to_json()))
        return result

    def reset_stats(self) -> None:
        for module in self.modules.values():
            module.reset_stats()


def _gbl() -> Any:
    from tlm_models.runtime.kernel import load_models

    return load_models()


def _resolve_class(gbl: Any, qualified: str) -> Any:
    scope = gbl
    for part in qualified.split("::"):
        scope = getattr(scope, part)
    return scope


def _load_headers(config: PlatformConfig) -> None:
    seen: set[str] = set()
    for comp in config.components.values():
        if comp.spec.name not in seen:
            seen.add(comp.spec.name)
            load_component_header(comp.spec)


def load_component_header(spec: ComponentType) -> None:
    """Makes ``spec``'s C++ class known to cppyy (its include directories, then its header)."""
    import cppyy

    for directory in spec.include_dirs:
        cppyy.add_include_path(str(directory))
    if not cppyy.include(spec.header):
        raise UserError(f"cannot include '{spec.header}' for component type '{spec.name}'")


def _params(gbl: Any, spec: ComponentType, comp: ComponentConfig, cls: Any) -> Any:
    """A C++ `Params` filled from the typed config; each field has the parameter's name."""
    sc = gbl.sc_core
    params = cls.Params()
    for pspec in spec.params:
        value = comp.params[pspec.name]
        if pspec.kind == "time":
            assert isinstance(value, int)
            value = sc.sc_time(float(value), sc.SC_PS)
        elif pspec.kind in ("bandwidth", "frequency"):
            value = float(value)
        setattr(params, pspec.name, value)
    return params


def binding_order(bindings: tuple[Binding, ...]) -> list[Binding]:
    """Multi-sockets bind in index order: sort by initiator index, then target index."""
    return sorted(
        bindings,
        key=lambda b: (
            b.initiator.index if b.initiator.index is not None else -1,
            b.target.index if b.target.index is not None else -1,
        ),
    )


def build_platform(config: PlatformConfig) -> BuiltPlatform:
    """Elaborates `config` in this process (which must not have elaborated before)."""
    gbl = _gbl()
    _load_headers(config)
    modules: dict[str, Any] = {}
    all_params: dict[str, Any] = {}
    for name, comp in config.components.items():
        spec = comp.spec
        cls = _resolve_class(gbl, spec.qualified_class)
        params = _params(gbl, spec, comp, cls)
        problem = str(params.check()) if hasattr(params, "check") else ""
        if problem:
            raise UserError(f"{comp.loc or config.source}: components.{name}: {problem}")
        all_params[name] = params
        modules[name] = cls(name, params)
    for binding in binding_order(config.bindings):
        initiator = getattr(modules[binding.initiator.component], binding.initiator.socket)
        target = getattr(modules[binding.target.component], binding.target.socket)
        initiator.bind(target)
    for route in config.routes:
        modules[route.interconnect].add_route(route.base, route.size, route.out_index, route.offset)
    engines: dict[str, Any] = {}
    for name, engine in config.engines.items():
        module = modules[engine.component]
        executor = config.components[engine.component].spec.executor
        assert executor is not None
        if engine.channel is None or executor.channel_accessor is None:
            engines[name] = module
        else:
            engines[name] = getattr(module, executor.channel_accessor)(engine.channel)
    return BuiltPlatform(config, modules, engines, all_params)
