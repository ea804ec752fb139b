"""``Simulation``: a platform elaborated as SystemC modules in this process, with the user's own.

The process that creates a ``Simulation`` becomes the SystemC process: cppyy loads SystemC and
the models into it, and SystemC elaborates once per process (a second elaboration, or a start
after ``sc_stop``, is refused by the kernel). Scripts that want several simulations, or want a
crash in a model not to take them down, run each in a worker with ``run_in_worker``.

Composition order follows SystemC's: the platform's modules are constructed and bound first
(on the first call that needs them), then the user's modules are added and bound, then ``run``
ends the elaboration. Every module stays referenced for the life of the process: a module
that Python collected while SystemC still reaches it would crash the kernel.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from tlm_models.errors import SimulationError, UserError, suggest
from tlm_models.platform.compose import Platform
from tlm_models.platform.schema import PlatformConfig
from tlm_models.runtime.bound_platform import BuiltPlatform, build_platform
from tlm_models.systemc.request_chunks import ChunkFeeder, ChunkSource
from tlm_models.units import UnitError, parse_address, parse_size, parse_time

__all__ = ["PlatformSource", "Simulation"]

PlatformSource = Platform | PlatformConfig | str | os.PathLike[str]

#: Simulations of this process (at most one: SystemC elaborates once); never released, so that
#: no module is collected while the kernel can reach it.
_ELABORATED: list[Simulation] = []

_SOCKET = re.compile(r"^\s*(\w+)\.(\w+)(?:\[(\d+)\])?\s*$")


def _platform_config(platform: PlatformSource, overrides: Iterable[str]) -> PlatformConfig:
    overrides = tuple(overrides)
    if isinstance(platform, PlatformConfig):
        if overrides:
            raise UserError(
                "overrides apply to a Platform or a platform file, not a PlatformConfig"
            )
        return platform
    loaded = platform if isinstance(platform, Platform) else Platform.load(platform)
    return (loaded.with_overrides(*overrides) if overrides else loaded).config


def _ps(text: str | float, what: str) -> int:
    """Picoseconds from '10 us' or a number of seconds."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        if text < 0:
            raise UserError(f"{what} must not be negative, got {text} s")
        return round(text * 1e12)
    try:
        return parse_time(text)
    except UnitError as exc:
        raise UserError(f"{what}: {exc}") from None


def _refuse_second() -> None:
    if _ELABORATED:
        raise UserError(
            "this process has elaborated a SystemC simulation already and SystemC elaborates "
            "once per process: run each Simulation in its own process "
            "(tlm_models.systemc.run_in_worker)"
        )


def _flatten(tree: dict[str, Any], prefix: str, out: dict[str, float]) -> None:
    for name, stat in tree.get("stats", {}).items():
        out[f"{prefix}{name}"] = float(stat["value"])
    for child in tree.get("children", []):
        _flatten(child, f"{prefix}{child['name']}/", out)


class Simulation:
    """A platform as SystemC modules in this process, the user's modules bound into it.

    >>> sim = Simulation("platforms/attenio.yaml")                     # doctest: +SKIP
    >>> gen = sim.add_traffic("gen", requests(range(0, 4096, 256), 256))  # doctest: +SKIP
    >>> sim.bind("gen.socket", "dma_noc.in")                           # doctest: +SKIP
    >>> sim.run(); sim.stat("gen/bytes_read")                          # doctest: +SKIP
    4096.0
    """

    def __init__(self, platform: PlatformSource, *, overrides: Iterable[str] = ()) -> None:
        _refuse_second()
        self.config = _platform_config(platform, overrides)  # validated here, before SystemC
        self._built: BuiltPlatform | None = None
        self._user: dict[str, Any] = {}
        self._feeders: list[ChunkFeeder] = []
        self._keep: list[Any] = []  # Params and other objects C++ may still point at
        self._bound: Counter[tuple[str, str]] = Counter()
        for b in self.config.bindings:
            self._bound[(b.initiator.component, b.initiator.socket)] += 1
            self._bound[(b.target.component, b.target.socket)] += 1
        # (interconnect, out index, target component) of every binding to an interconnect's out
        self._outputs: list[tuple[str, int, str]] = [
            (b.initiator.component, b.initiator.index, b.target.component)
            for b in self.config.bindings
            if b.initiator.index is not None
        ]
        self._started = False

    # --- the C++ side -------------------------------------------------------------------------

    @property
    def cpp(self) -> Any:
        """``cppyy.gbl``, with SystemC, TLM and the models loaded (``cpp.sc_core``, ...)."""
        from tlm_models.runtime.kernel import load_models

        return load_models()

    def _platform(self) -> BuiltPlatform:
        if self._built is None:
            _refuse_second()
            self.cpp  # noqa: B018 -- loads SystemC and the models
            _ELABORATED.append(self)
            self._built = build_platform(self.config)
        return self._built

    @property
    def modules(self) -> dict[str, Any]:
        """Every module by name: the platform's components, then the user's modules."""
        return {**self._platform().modules, **self._user}

    def include(self, header: str | os.PathLike[str], include_dirs: Iterable[Any] = ()) -> None:
        """Makes a C++ header known to cling (``include_dirs`` first go on the include path)."""
        import cppyy

        self.cpp  # noqa: B018 -- SystemC first: the header includes it
        for directory in include_dirs:
            cppyy.add_include_path(os.fspath(directory))
        text = os.fspath(header)
        try:
            ok = cppyy.include(text)
        except Exception as exc:  # cling's compile errors
            raise UserError(f"{text}: does not compile with the models:\n{exc}") from None
        if not ok:
            raise UserError(f"{text}: cannot be included (not found on the include path?)")

    def _check_new(self, name: str) -> None:
        if self._started:
            raise UserError(
                f"cannot add '{name}': the simulation has started (elaboration is over)"
            )
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise UserError(f"module name {name!r}: expected a C++-style identifier")
        if name in self.config.components or name in self._user:
            raise UserError(f"module name '{name}' is taken by another module")

    def _class(self, qualified: str) -> Any:
        scope = self.cpp
        for part in qualified.split("::"):
            found = getattr(scope, part, None)
            if found is None:
                raise UserError(
                    f"C++ class '{qualified}' is not declared (include its header first)"
                )
            scope = found
        return scope

    def add_module(
        self,
        name: str,
        cpp_class: str,
        *,
        header: str | os.PathLike[str] | None = None,
        include_dirs: Iterable[Any] = (),
        params: Mapping[str, object] | None = None,
        args: tuple[Any, ...] = (),
    ) -> Any:
        """Constructs the user's SystemC module ``cpp_class`` (qualified, e.g.
        ``user_models::Checker``) as ``name`` and returns it.

        ``header`` is included first (compiled by cling). With ``params`` the module is built as
        ``cpp_class(name, p)`` from its nested ``Params`` with those fields set (times as '20 ns',
        sizes as '4 KiB' or numbers) and checked by ``Params::check()`` when it has one;
        otherwise as ``cpp_class(name, *args)``.
        """
        self._check_new(name)
        self._platform()
        if header is not None:
            self.include(header, include_dirs)
        cls = self._class(cpp_class)
        if params is not None:
            built_params = self._params(name, cls, params)
            self._keep.append(built_params)
            args = (built_params,)
        try:
            module = cls(name, *args)
        except Exception as exc:
            raise UserError(f"module '{name}': constructing {cpp_class} failed: {exc}") from None
        self._user[name] = module
        return module

    def _params(self, name: str, cls: Any, values: Mapping[str, object]) -> Any:
        if not hasattr(cls, "Params"):
            raise UserError(f"module '{name}': {cls.__cpp_name__} has no nested Params")
        params = cls.Params()
        sc = self.cpp.sc_core
        fields = [f for f in dir(params) if not f.startswith("_")]
        for field, value in values.items():
            if not hasattr(params, field):
                raise UserError(
                    f"module '{name}': Params has no field '{field}'{suggest(field, fields)}"
                )
            current = getattr(params, field)
            try:
                if isinstance(current, sc.sc_time):
                    value = sc.sc_time(float(_ps(value, f"{name}.{field}")), sc.SC_PS)  # type: ignore[arg-type]
                elif isinstance(value, str) and isinstance(current, int):
                    value = parse_size(value)
                setattr(params, field, value)
            except (TypeError, ValueError) as exc:
                raise UserError(f"module '{name}': Params.{field} = {value!r}: {exc}") from None
        problem = str(params.check()) if hasattr(params, "check") else ""
        if problem:
            raise UserError(f"module '{name}': {problem}")
        return params

    def add_traffic(
        self,
        name: str,
        chunks: ChunkSource,
        *,
        max_outstanding: int = 1,
    ) -> Any:
        """A traffic generator fed from Python: ``chunks`` is an array of ``REQUEST_DTYPE``
        records (``requests(...)``), an iterable of them, or a callable returning the next one
        (None at the end). A generator may decide each chunk from the results of the previous
        one: when it resumes, the chunk it yielded holds ``done_ps`` and ``status``. Returns the
        C++ ``FedTrafficGenerator``; bind its ``socket`` with ``bind(f"{name}.socket", ...)``."""
        self._check_new(name)
        if max_outstanding < 1:
            raise UserError(f"traffic generator '{name}': max_outstanding must be at least 1")
        self._platform()
        self.include("tlm_models/fed_traffic_generator.h")
        cls = self.cpp.tlm_models.FedTrafficGenerator
        params = cls.Params()
        params.max_outstanding = max_outstanding
        generator = cls(name, params)
        feeder = ChunkFeeder(name, generator, chunks)
        generator.set_refill(feeder)
        self._user[name] = generator
        self._feeders.append(feeder)
        return generator

    # --- binding and routes -------------------------------------------------------------------

    def _socket(self, text: str, role: str) -> tuple[Any, str, str, int | None]:
        match = _SOCKET.match(text)
        if match is None:
            raise UserError(f"socket '{text}': expected component.socket or component.socket[i]")
        component, socket, index_text = match.groups()
        index = int(index_text) if index_text is not None else None
        modules = self.modules
        if component not in modules:
            raise UserError(
                f"socket '{text}': no module '{component}'{suggest(component, modules)}"
            )
        if component in self.config.components:
            spec = self.config.components[component].spec
            sspec = spec.socket(socket)
            if sspec is None:
                names = [s.name for s in spec.sockets]
                raise UserError(
                    f"socket '{text}': {spec.name} has no socket '{socket}' "
                    f"(sockets: {', '.join(names)})"
                )
            if sspec.role != role:
                raise UserError(
                    f"socket '{text}' is a {sspec.role} socket: bind(initiator, target)"
                )
            bound = self._bound[(component, socket)]
            if sspec.multi:
                if index is not None and index != bound:
                    raise UserError(
                        f"socket '{text}': {component}.{socket} binds in index order; "
                        f"the next free one is [{bound}]"
                    )
                index = bound
            elif index is not None:
                raise UserError(f"socket '{text}': {component}.{socket} takes no index")
            elif bound:
                raise UserError(f"socket '{text}' is bound already")
        obj = getattr(modules[component], socket, None)
        if obj is None:
            raise UserError(f"socket '{text}': module '{component}' has no member '{socket}'")
        return obj, component, socket, index

    def bind(self, initiator: str, target: str) -> None:
        """Binds ``initiator`` (``gen.socket``) to ``target`` (``dma_noc.in`` — a platform
        multi-socket takes the next index — or ``mem.target``)."""
        if self._started:
            raise UserError("cannot bind: the simulation has started (elaboration is over)")
        i_obj, i_comp, i_sock, i_index = self._socket(initiator, "initiator")
        t_obj, t_comp, t_sock, _ = self._socket(target, "target")
        try:
            i_obj.bind(t_obj)
        except Exception as exc:
            raise UserError(f"binding {initiator} -> {target} failed: {exc}") from None
        self._bound[(i_comp, i_sock)] += 1
        self._bound[(t_comp, t_sock)] += 1
        if i_index is not None:
            self._outputs.append((i_comp, i_index, t_comp))

    def map(self, base: int | str, size: int | str, target: str, *, via: str) -> None:
        """Routes the bus window ``[base, base + size)`` of interconnect ``via`` to the output
        bound to module ``target`` (which sees ``address - base``)."""
        if self._started:
            raise UserError("cannot map: the simulation has started (elaboration is over)")
        comp = self.config.components.get(via)
        if comp is None or not comp.spec.routes:
            raise UserError(f"map via '{via}': not an interconnect of the platform")
        outs = [i for ic, i, t in self._outputs if ic == via and t == target]
        if not outs:
            raise UserError(f"map via '{via}': no output of '{via}' is bound to '{target}'")
        try:
            start, length = parse_address(base), parse_size(size)
        except UnitError as exc:
            raise UserError(f"map {target}: {exc}") from None
        try:
            self._platform().modules[via].add_route(start, length, outs[0], start)
        except Exception as exc:
            raise UserError(f"map {target} via {via}: {exc}") from None

    # --- running ------------------------------------------------------------------------------

    @property
    def now_ns(self) -> float:
        """The simulated time, ns."""
        return self._now_ps() / 1000

    def run(self, duration: str | float | None = None, *, slice: str | float = "1 ms") -> float:
        """Runs for ``duration`` ('10 us', or seconds) or, when None, until no event is left;
        returns the simulated time in ns. Runs in slices of simulated time so that Ctrl-C
        stops it between slices; an exception in a Python traffic generator is raised here.
        """
        self._platform()
        sc = self.cpp.sc_core
        if sc.sc_get_status() == sc.SC_STOPPED or sc.sc_end_of_simulation_invoked():
            raise UserError(
                "the simulation has stopped: SystemC cannot start again in this process"
            )
        step = _ps(slice, "slice")
        if step <= 0:
            raise UserError("slice must be longer than 0 s")
        if duration is None:
            if self._started and not sc.sc_pending_activity():
                return self.now_ns  # finished already (sc_start would warn, W571)
            while True:
                self._start(sc, step, sc.SC_EXIT_ON_STARVATION)
                if sc.sc_get_status() == sc.SC_STOPPED or not sc.sc_pending_activity():
                    break
        else:
            end = self._now_ps() + _ps(duration, "duration")
            while (left := end - self._now_ps()) > 0:
                self._start(sc, min(step, left), sc.SC_RUN_TO_TIME)
                if sc.sc_get_status() == sc.SC_STOPPED:
                    break
        return self.now_ns

    def _now_ps(self) -> int:
        """The simulated time in whole ps, from the kernel's integer ticks (exact)."""
        sc = self.cpp.sc_core
        ps_per_tick = float(sc.sc_get_time_resolution().to_seconds()) * 1e12
        return round(int(sc.sc_time_stamp().value()) * ps_per_tick)

    def _start(self, sc: Any, ps: int, policy: Any) -> None:
        self._started = True
        try:
            sc.sc_start(sc.sc_time(float(ps), sc.SC_PS), policy)
        except Exception as exc:
            self._raise_feeder_error()
            raise SimulationError(f"SystemC: {exc}") from None
        self._raise_feeder_error()

    def _raise_feeder_error(self) -> None:
        for feeder in self._feeders:
            if feeder.error is not None:
                error, feeder.error = feeder.error, None
                raise error

    # --- results ------------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Every module's statistics as one tree ``{"name", "stats", "children"}``: the
        platform's components and the user's modules that are ``tlm_models::StatsProvider``s."""
        gbl = self.cpp
        root = gbl.tlm_models.StatsGroup(self.config.name)
        for name, module in self.modules.items():
            if isinstance(module, gbl.tlm_models.StatsProvider):
                module.collect_stats(root.child(name))
        tree: dict[str, Any] = json.loads(str(root.to_json()))
        return tree

    def flat_stats(self) -> dict[str, float]:
        """The statistics as ``{"hbm/bytes_read": value, "hbm/channel0/busy_time": ...}``."""
        out: dict[str, float] = {}
        for child in self.stats().get("children", []):
            _flatten(child, f"{child['name']}/", out)
        return out

    def stat(self, path: str) -> float:
        """One statistic by path, e.g. ``stat("gen/requests")``."""
        flat = self.flat_stats()
        if path not in flat:
            raise UserError(f"no statistic '{path}'{suggest(path, flat)}")
        return flat[path]
