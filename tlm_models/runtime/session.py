"""Python side of the compiled replay session (``native/session_api.cpp``), bound with ctypes.

A simulation process loads the library built by :mod:`tlm_models.runtime.aot` (no cppyy, no JIT),
elaborates a validated platform through it and drives the replayer. Calls cross per component,
per binding and per trace chunk, never per operation.
"""

from __future__ import annotations

import ctypes
import json
from pathlib import Path
from typing import Any

import numpy as np

from tlm_models.errors import SimulationError, UserError
from tlm_models.platform.registry import ParamValue
from tlm_models.platform.schema import ComponentConfig, PlatformConfig
from tlm_models.runtime import aot, kernel
from tlm_models.trace.record import RECORD_DTYPE

_c = ctypes
_P = _c.c_void_p
_S = _c.c_char_p
_U = _c.c_uint
_U64 = _c.c_uint64
_SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    "attn_session_new": (_P, [_S]),
    "attn_error": (_S, [_P]),
    "attn_add_component": (_c.c_int, [_P, _S, _S, _U, _c.POINTER(_S), _c.POINTER(_S)]),
    "attn_bind": (_c.c_int, [_P, _S, _S, _S, _S]),
    "attn_add_route": (_c.c_int, [_P, _S, _U64, _U64, _U, _U64]),
    "attn_add_engine": (_c.c_int, [_P, _S, _S, _U]),
    "attn_replayer_new": (_c.c_int, [_P, _c.c_uint32, _U64]),
    "attn_select_replayer": (_c.c_int, [_P, _U]),
    "attn_selected_replayer": (_U, [_P]),
    "attn_gate_replayers": (_c.c_int, [_P]),
    "attn_gate_handoffs": (_U64, [_P]),
    "attn_ungate_engine": (_c.c_int, [_P, _U]),
    "attn_bind_engine": (_c.c_int, [_P, _U, _S, _U]),
    "attn_bind_executor": (_c.c_int, [_P, _U, _P, _S, _U]),
    "attn_set_tensor": (_c.c_int, [_P, _U, _S]),
    "attn_record_timeline": (_c.c_int, [_P, _c.c_double, _c.c_double, _U64]),
    "attn_feed": (_c.c_int, [_P, _P, _U64]),
    "attn_feed_borrowed": (_c.c_int, [_P, _P, _U64]),
    "attn_chunks_pending": (_U64, [_P]),
    "attn_end_of_input": (_c.c_int, [_P]),
    "attn_step": (_c.c_int, [_P, _c.c_double]),
    "attn_waiting_on": (_S, [_P]),
    "attn_run_for": (_c.c_int, [_P, _c.c_double]),
    "attn_replay_failed": (_c.c_int, [_P]),
    "attn_replay_finished": (_c.c_int, [_P]),
    "attn_records_read": (_U64, [_P]),
    "attn_now_ns": (_c.c_double, [_P]),
    "attn_result_json": (_S, [_P]),
    "attn_platform_stats_json": (_S, [_P]),
    "attn_observe_iterations": (_c.c_int, [_P]),
    "attn_mark_iteration": (None, [_P, _U64, _U64]),
    "attn_stop_iteration_snapshots": (None, [_P]),
    "attn_snapshot_layout": (_S, [_P]),
    "attn_snapshot_width": (_U64, [_P]),
    "attn_snapshot_count": (_U64, [_P]),
    "attn_take_snapshots": (None, [_P, _P, _P, _P]),
    "attn_timeline_size": (_U64, [_P]),
    "attn_timeline_copy": (None, [_P, _P]),
    "attn_channel_activity": (_c.POINTER(_U64), [_P, _S, _U, _c.POINTER(_U64)]),
    "attn_enable_request_log": (_c.c_int, [_P, _S, _U64]),
    "attn_request_log": (_U64, [_P, _S, _P, _c.POINTER(_U64)]),
    "attn_has_activity": (_c.c_int, [_P, _S]),
    "attn_ticks_per_second": (_c.c_double, []),
    "attn_stl_player_new": (_c.c_int, [_P, _S, _c.c_int, _U64, _U]),
    "attn_stl_feed": (_c.c_int, [_P, _P, _P, _P, _P, _U64]),
    "attn_stl_run": (_c.c_int, [_P]),
    "attn_stl_error": (_S, [_P]),
    "attn_stl_stats_json": (_S, [_P]),
    "attn_stl_latency_copy": (None, [_P, _P]),
}

#: attn_step's answers.
DONE, NEEDS_INPUT, RAN_DRY, RUNNING, TIME_RANGE = 0, 1, 2, 3, 4

#: Loaded libraries by file. Usually one; a platform with a component type this process has not
#: registered (a user's, arriving with the platform in a worker) loads one built for it too.
#: Each is loaded with local symbols, so their identical C entry points do not collide.
_libraries: dict[Path, ctypes.CDLL] = {}


def load_library(config: PlatformConfig | None = None) -> ctypes.CDLL:
    """The compiled models for the registered types and ``config``'s own (compiled if missing)."""
    extra = {} if config is None else {c.spec.name: c.spec for c in config.components.values()}
    path = aot.ensure_library(aot.library_types(extra))
    lib = _libraries.get(path)
    if lib is None:
        kernel.prepare_process()
        lib = ctypes.CDLL(str(path))
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        _libraries[path] = lib
    return lib


def _text(value: ParamValue) -> bytes:
    """A parameter value as component.h's set_value reads it."""
    if isinstance(value, bool):
        return b"1" if value else b"0"
    if isinstance(value, float):
        return repr(value).encode()
    return str(value).encode()


class NativeSession:
    """One elaborated platform and its replayer in this process."""

    def __init__(self, config: PlatformConfig) -> None:
        self.lib = load_library(config)
        self.config = config
        # Each replayer's chunks fed and not yet read in full (feed): the replayer reads them
        # where they lie, so they must stay alive until then.
        self._held: dict[int, list[np.ndarray]] = {}
        self.handle = self.lib.attn_session_new(config.name.encode())
        for name, comp in config.components.items():
            self._add_component(name, comp)
        for binding in _binding_order(config):
            self._check(
                self.lib.attn_bind(
                    self.handle,
                    binding.initiator.component.encode(),
                    binding.initiator.socket.encode(),
                    binding.target.component.encode(),
                    binding.target.socket.encode(),
                )
            )
        for route in config.routes:
            self._check(
                self.lib.attn_add_route(
                    self.handle, route.interconnect.encode(), route.base, route.size,
                    route.out_index, route.offset,
                )
            )  # fmt: skip
        for name, engine in config.engines.items():
            channel = 0 if engine.channel is None else engine.channel
            self._check(
                self.lib.attn_add_engine(
                    self.handle, name.encode(), engine.component.encode(), channel
                )
            )

    def _error(self) -> str:
        return bytes(self.lib.attn_error(self.handle)).decode(errors="replace")

    def _check(self, code: int) -> None:
        if code == TIME_RANGE:  # the platform's figures, not a fault of the simulation
            raise UserError(self._error())
        if code != 0:
            raise SimulationError(self._error())

    def _add_component(self, name: str, comp: ComponentConfig) -> None:
        items = [(p.name, comp.params[p.name]) for p in comp.spec.params]
        keys = (ctypes.c_char_p * len(items))(*(k.encode() for k, _ in items))
        values = (ctypes.c_char_p * len(items))(*(_text(v) for _, v in items))
        code = self.lib.attn_add_component(
            self.handle, comp.spec.name.encode(), name.encode(), len(items), keys, values
        )
        if code == 2:
            raise UserError(f"{comp.loc or self.config.source}: components.{name}: {self._error()}")
        self._check(code)

    # The replayer -----------------------------------------------------------------------------

    def new_replayer(self, window: int, lookahead: int) -> None:
        """Adds a replayer (one per trace; a tiled platform has one per tile) and selects it."""
        self._check(self.lib.attn_replayer_new(self.handle, window, lookahead))

    def select_replayer(self, index: int) -> None:
        """Addresses replayer ``index`` (creation order) in the calls that follow."""
        self._check(self.lib.attn_select_replayer(self.handle, index))

    def selected_replayer(self) -> int:
        """The replayer addressed now; after ``step`` answered NEEDS_INPUT, the one to feed."""
        return int(self.lib.attn_selected_replayer(self.handle))

    def gate_replayers(self) -> None:
        """Orders the replayers' operations by simulated start time, ties by creation order
        (issue_gate.h): replayers sharing components then give results that do not depend
        on how their traces are fed."""
        self._check(self.lib.attn_gate_replayers(self.handle))

    def ungate_engine(self, index: int) -> None:
        """The selected replayer's engine ``index`` issues without the gate (it reaches only
        its own tile's components)."""
        self._check(self.lib.attn_ungate_engine(self.handle, index))

    def gate_handoffs(self) -> int:
        """Times a gated replayer gave way to another (thread switches the gate caused)."""
        return int(self.lib.attn_gate_handoffs(self.handle))

    def bind_engine(self, index: int, engine: str, kind: int) -> None:
        self._check(self.lib.attn_bind_engine(self.handle, index, engine.encode(), kind))

    def bind_executor(self, index: int, executor_address: int, name: str, kind: int) -> None:
        """Binds an ``OpExecutor`` the caller built (its address, e.g. from cppyy) to engine
        ``index``; it must outlive the simulation."""
        self._check(
            self.lib.attn_bind_executor(self.handle, index, executor_address, name.encode(), kind)
        )

    def set_tensor(self, index: int, name: str) -> None:
        self._check(self.lib.attn_set_tensor(self.handle, index, name.encode()))

    def record_timeline(self, start_ns: float, end_ns: float, max_entries: int) -> None:
        """The replayer's timeline and every memory's channel activity within the window."""
        self._check(
            self.lib.attn_record_timeline(self.handle, start_ns * 1e3, end_ns * 1e3, max_entries)
        )

    def feed(self, chunk: np.ndarray) -> None:
        """Hands ``chunk`` (C-contiguous records) to the selected replayer without a copy; the
        session keeps it until the replayer has read it. The chunk must not change meanwhile
        (a memory map of a file, an emitter's fresh array)."""
        if chunk.dtype != RECORD_DTYPE or not chunk.flags.c_contiguous:
            raise ValueError("feed takes C-contiguous arrays of 64-byte trace records")
        held = self._held.setdefault(self.selected_replayer(), [])
        pending = int(self.lib.attn_chunks_pending(self.handle))
        del held[: max(0, len(held) - pending)]  # read in full: nothing points into them now
        self._check(self.lib.attn_feed_borrowed(self.handle, chunk.ctypes.data, len(chunk)))
        held.append(chunk)

    def end_of_input(self) -> None:
        self._check(self.lib.attn_end_of_input(self.handle))

    def step(self, slice_ns: float) -> int:
        code = int(self.lib.attn_step(self.handle, slice_ns))
        if code < 0 or code == TIME_RANGE:
            self._check(code)
        return code

    def run_for(self, ns: float) -> None:
        """Runs the kernel for ``ns`` of simulated time (platforms without a replayer)."""
        self._check(self.lib.attn_run_for(self.handle, ns))

    def failure(self) -> str | None:
        """The replayer's error message when the replay failed."""
        return self._error() if self.lib.attn_replay_failed(self.handle) else None

    def waiting_on(self) -> str:
        """What an unfinished replay waits on."""
        return bytes(self.lib.attn_waiting_on(self.handle)).decode(errors="replace")

    def finished(self) -> bool:
        return bool(self.lib.attn_replay_finished(self.handle))

    def records_read(self) -> int:
        return int(self.lib.attn_records_read(self.handle))

    def now_ns(self) -> float:
        """The kernel's simulated time."""
        return float(self.lib.attn_now_ns(self.handle))

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = json.loads(bytes(self.lib.attn_result_json(self.handle)))
        return out

    def platform_stats(self) -> dict[str, Any]:
        out: dict[str, Any] = json.loads(bytes(self.lib.attn_platform_stats_json(self.handle)))
        return out

    # Iteration snapshots (fast-forward) ------------------------------------------------------

    def observe_iterations(self) -> None:
        """Snapshot every statistic when a marked record is issued (set up before running)."""
        self._check(self.lib.attn_observe_iterations(self.handle))

    def mark_iteration(self, iteration: int, record: int) -> None:
        self.lib.attn_mark_iteration(self.handle, iteration, record)

    def stop_iteration_snapshots(self) -> None:
        self.lib.attn_stop_iteration_snapshots(self.handle)

    def snapshot_layout(self) -> list[tuple[tuple[str, ...], str]]:
        """(path, unit) of each snapshot column; empty before the first snapshot."""
        text = bytes(self.lib.attn_snapshot_layout(self.handle))
        return [(tuple(path), str(unit)) for path, unit in json.loads(text)] if text else []

    def take_snapshots(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The snapshots taken since the last call: (rows x columns values, iterations, start
        times in picoseconds)."""
        count = int(self.lib.attn_snapshot_count(self.handle))
        width = int(self.lib.attn_snapshot_width(self.handle))
        rows = np.zeros((count, width), dtype=np.float64)
        iterations = np.zeros(count, dtype=np.uint64)
        starts = np.zeros(count, dtype=np.uint64)
        if count:
            self.lib.attn_take_snapshots(
                self.handle, rows.ctypes.data, iterations.ctypes.data, starts.ctypes.data
            )
        return rows, iterations, starts

    def timeline_entries(self, dtype: np.dtype[Any]) -> np.ndarray:
        entries = np.zeros(int(self.lib.attn_timeline_size(self.handle)), dtype=dtype)
        if len(entries):
            self.lib.attn_timeline_copy(self.handle, entries.ctypes.data)
        return entries

    def enable_request_log(self, component: str, max_requests: int) -> bool:
        """Starts logging ``component``'s requests; False when it keeps no request log."""
        code = int(self.lib.attn_enable_request_log(self.handle, component.encode(), max_requests))
        return code == 0

    def request_log(self, component: str, dtype: np.dtype[Any]) -> tuple[np.ndarray, int]:
        """The requests ``component`` logged (``dtype`` records, call order) and how many did
        not fit in the log."""
        dropped = ctypes.c_uint64(0)
        name = component.encode()
        count = int(self.lib.attn_request_log(self.handle, name, None, ctypes.byref(dropped)))
        out = np.zeros(count, dtype=dtype)
        if count:
            self.lib.attn_request_log(self.handle, name, out.ctypes.data, ctypes.byref(dropped))
        return out, int(dropped.value)

    def has_activity(self, component: str) -> bool:
        return bool(self.lib.attn_has_activity(self.handle, component.encode()))

    def channel_activity(self, component: str, channel: int) -> np.ndarray:
        """Busy intervals of one memory channel: an (n, 2) array of picosecond (start, end)."""
        count = ctypes.c_uint64(0)
        ptr = self.lib.attn_channel_activity(
            self.handle, component.encode(), channel, ctypes.byref(count)
        )
        if not ptr or count.value == 0:
            return np.zeros((0, 2), dtype=np.uint64)
        return np.ctypeslib.as_array(ptr, shape=(count.value * 2,)).reshape(-1, 2).copy()

    # An STL player instead of a replayer (attn-tlm replay x.stl) ------------------------------

    def new_stl_player(
        self, memory: str, relative: bool, max_length: int, max_outstanding: int
    ) -> None:
        """Binds an STL player to ``memory``'s target socket."""
        code = self.lib.attn_stl_player_new(
            self.handle, memory.encode(), int(relative), max_length, max_outstanding
        )
        if code == 2:
            raise UserError(f"STL player: {self._error()}")
        self._check(code)

    def stl_feed(
        self, time_ps: np.ndarray, is_write: np.ndarray, address: np.ndarray, length: np.ndarray
    ) -> None:
        """Appends requests given as contiguous columns (u64, u8, u64, u32)."""
        columns: list[np.ndarray] = [
            np.ascontiguousarray(time_ps, dtype=np.uint64),
            np.ascontiguousarray(is_write, dtype=np.uint8),
            np.ascontiguousarray(address, dtype=np.uint64),
            np.ascontiguousarray(length, dtype=np.uint32),
        ]
        self._check(
            self.lib.attn_stl_feed(self.handle, *(c.ctypes.data for c in columns), len(columns[0]))
        )

    def stl_run(self) -> None:
        self._check(self.lib.attn_stl_run(self.handle))

    def stl_error(self) -> str:
        return bytes(self.lib.attn_stl_error(self.handle)).decode(errors="replace")

    def stl_stats(self) -> dict[str, Any]:
        out: dict[str, Any] = json.loads(bytes(self.lib.attn_stl_stats_json(self.handle)))
        return out

    def stl_latencies(self, count: int) -> np.ndarray:
        """The latencies of the first ``count`` completed requests, in ticks."""
        out = np.zeros(count, dtype=np.uint64)
        if count:
            self.lib.attn_stl_latency_copy(self.handle, out.ctypes.data)
        return out


def _binding_order(config: PlatformConfig) -> list[Any]:
    from tlm_models.runtime.bound_platform import binding_order

    return binding_order(config.bindings)


def ticks_per_second() -> float:
    """Ticks of the simulation's time resolution per second (1e12 at 1 ps)."""
    return float(round(load_library().attn_ticks_per_second()))
