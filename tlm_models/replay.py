"""Drives the C++ replayer with a trace on an elaborated platform; returns plain results.

Runs inside a simulation process (a worker): it elaborates the platform, binds the trace's
engines, then alternates between handing a chunk of records to the replayer (by pointer; the
replayer copies it) and running the kernel in slices. Slicing keeps Ctrl-C prompt and lets the
replayer pause for input without a Python call on the per-operation path.
"""

from __future__ import annotations

import ctypes
import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from tlm_models import kernel, stl_export
from tlm_models.errors import SimulationError, UserError
from tlm_models.platform.builder import BuiltPlatform, build_platform
from tlm_models.platform.schema import PlatformConfig
from tlm_models.timeline import TIMELINE_DTYPE, Timeline, Track, engine_tracks
from tlm_models.trace.header import TraceHeader
from tlm_models.trace.record import RECORD_DTYPE, EngineKind

ENGINE_KINDS = {kind.name.lower(): int(kind) for kind in EngineKind}
#: Simulated time run per kernel call; short enough for a prompt Ctrl-C.
SLICE_NS = 200_000.0
#: Records kept in the replayer's read-ahead before it proceeds with the heads it knows.
LOOKAHEAD_OPS = 1 << 21

#: Wall seconds between progress reports from the replay loop.
PROGRESS_INTERVAL_S = 0.25
#: Where the replay loop reports (simulated ns, operations read); set by the worker.
_progress: Callable[[float, int], None] | None = None

#: SystemC objects of the simulations of this process. They live until the process ends:
#: SystemC may refer to them after sc_start returns, and tearing a platform down through
#: cppyy costs about a second, far more than the run itself (the worker exits right after).
_SIMULATION_OBJECTS: list[Any] = []


@dataclass(frozen=True)
class TimelineWindow:
    """Which part of a run goes into the timeline file, and at most how many operations."""

    start_ns: float = 0.0
    end_ns: float = 50_000.0
    max_entries: int = 200_000


@dataclass
class ReplayOutput:
    """The replayer's statistics tree, the platform's, the timeline and run figures."""

    replay: dict[str, Any]
    platform: dict[str, Any]
    timeline: Timeline | None
    wall_s: float
    ops: int
    #: The off-chip memory's requests (stl_export.REQUEST_DTYPE) when asked for.
    memory_requests: np.ndarray | None = None


def _engine_kind(config: PlatformConfig, name: str) -> str:
    return config.engines[name].kind


def _bind(gbl: Any, replayer: Any, built: BuiltPlatform, header: TraceHeader) -> None:
    kinds = gbl.tlm_models.EngineKind
    for index, name in enumerate(header.engines):
        if name not in built.engines:
            raise UserError(
                f"the trace uses engine '{name}', which platform '{built.config.name}' does not "
                f"have (it has: {', '.join(sorted(built.engines))})"
            )
        kind = _engine_kind(built.config, name)
        if kind not in ENGINE_KINDS:
            raise UserError(f"engine '{name}' is a '{kind}' engine, which traces cannot drive")
        replayer.bind_engine(index, built.engines[name], name, getattr(kinds, kind))
    for index, tensor in enumerate(header.tensors):
        replayer.set_tensor(index, tensor.name)


def _records(chunks: Iterable[np.ndarray]) -> Iterator[np.ndarray]:
    for chunk in chunks:
        if chunk.dtype != RECORD_DTYPE:
            raise UserError(f"trace chunk has dtype {chunk.dtype}, expected the 64-byte record")
        if len(chunk):
            yield np.ascontiguousarray(chunk)


def report_progress_to(sink: Callable[[float, int], None] | None) -> None:
    """Replays in this process call ``sink(simulated ns, operations read)`` between kernel
    slices, at most every ``PROGRESS_INTERVAL_S`` (never per operation)."""
    global _progress
    _progress = sink


def _drive(gbl: Any, replayer: Any, chunks: Iterator[np.ndarray]) -> None:
    """Runs the kernel until the replay has finished, feeding records when it asks for them.

    Each kernel call runs at least one slice and always reaches the next pending event: a gap
    between events longer than a slice (a 1 ms memory latency, a 1 kHz clock) is crossed in
    one call, so simulated time advances whatever the platform's latencies and rates. A kernel
    with no event left while the replay waits is a model that cannot progress: an error naming
    what the replay waits on, not a hang.
    """
    import cppyy.ll

    sc = gbl.sc_core
    op_ptr = "const tlm_models::TraceOp*"
    slice_time = sc.sc_time(SLICE_NS, sc.SC_NS)
    started = False  # before the first call the kernel has not made its processes runnable
    next_report = time.monotonic()
    while not replayer.finished():
        if _progress is not None and time.monotonic() >= next_report:
            _progress(sc.sc_time_stamp().to_seconds() * 1e9, int(replayer.records_read()))
            next_report = time.monotonic() + PROGRESS_INTERVAL_S
        if replayer.wants_input():
            chunk = next(chunks, None)
            if chunk is None:
                replayer.end_of_input()
            else:
                replayer.feed(cppyy.ll.cast[op_ptr](chunk.ctypes.data), len(chunk))
            continue
        if started and not sc.sc_pending_activity():
            break
        gap = sc.sc_time_to_pending_activity(sc.sc_get_curr_simcontext()) if started else slice_time
        sc.sc_start(gap if gap > slice_time else slice_time, sc.SC_EXIT_ON_STARVATION)
        started = True
        if sc.sc_get_status() == sc.SC_STOPPED:
            break
    if replayer.failed():
        raise UserError(f"replay failed: {replayer.error()}")
    if not replayer.finished():
        raise SimulationError(
            "replay cannot progress: no event is pending in the simulation while the replay "
            f"waits on {replayer.waiting_on()}"
        )


def _timeline(
    gbl: Any, replayer: Any, built: BuiltPlatform, header: TraceHeader, window: TimelineWindow
) -> Timeline:
    import cppyy.ll

    entries = np.zeros(int(replayer.timeline_size()), dtype=TIMELINE_DTYPE)
    if len(entries):
        replayer.timeline_copy(cppyy.ll.cast["void*"](entries.ctypes.data))
    tracks = engine_tracks(entries, header.engines)
    tracks.extend(_memory_tracks(built))
    return Timeline(
        tracks,
        {
            "window_ns": [window.start_ns, window.end_ns],
            "max_entries": window.max_entries,
            "entries": len(entries),
        },
    )


def _memory_tracks(built: BuiltPlatform) -> list[Track]:
    """One track per off-chip memory channel, from the channels' activity logs."""
    import cppyy.ll

    tracks: list[Track] = []
    for name, module in built.modules.items():
        if not hasattr(module, "channel_activity"):
            continue
        for channel in range(int(built.params[name].channels)):
            log = module.channel_activity(channel)
            count = int(log.size())
            if count == 0:
                tracks.append(Track(f"{name}.ch{channel}", 2, np.zeros(0), np.zeros(0)))
                continue
            # BusyInterval is two integer picosecond counts; read the vector's storage directly.
            address = cppyy.ll.addressof(log.data())
            raw = np.ctypeslib.as_array(
                (ctypes.c_uint64 * (2 * count)).from_address(address)
            ).reshape(count, 2)
            # One label for every channel: the pictures colour by label, and a channel's
            # activity is one kind of thing (its data bus transferring).
            tracks.append(
                Track(
                    f"{name}.ch{channel}",
                    2,
                    raw[:, 0] / 1e3,
                    raw[:, 1] / 1e3,
                    ["transfer"] * count,
                )
            )
    return tracks


def replay_in_this_process(
    config: PlatformConfig,
    header: TraceHeader,
    chunks: Iterable[np.ndarray],
    timeline: TimelineWindow | None = None,
    log_requests: bool = False,
) -> ReplayOutput:
    """Elaborates ``config``, replays the trace and collects results. Once per process.

    ``log_requests`` keeps every request the off-chip memory receives (``memory_requests``).
    """
    gbl = kernel.load_models()
    built = build_platform(config)
    replayer = gbl.tlm_models.Replayer("replayer")
    _SIMULATION_OBJECTS.append((built, replayer))
    replayer.set_window(header.window)
    replayer.set_lookahead(LOOKAHEAD_OPS)
    _bind(gbl, replayer, built, header)
    sc = gbl.sc_core
    if timeline is not None:
        replayer.record_timeline(
            sc.sc_time(timeline.start_ns, sc.SC_NS),
            sc.sc_time(timeline.end_ns, sc.SC_NS),
            timeline.max_entries,
        )
        _enable_memory_activity(built, timeline)
    memory = built.modules[config.info().offchip.name]
    if log_requests:
        stl_export.enable(memory)
    started = time.perf_counter()
    _drive(gbl, replayer, _records(chunks))
    wall = time.perf_counter() - started
    result = json.loads(str(replayer.result_json()))
    return ReplayOutput(
        memory_requests=stl_export.logged_requests(memory) if log_requests else None,
        replay=result,
        platform=built.collect_stats(),
        timeline=_timeline(gbl, replayer, built, header, timeline) if timeline else None,
        wall_s=wall,
        ops=int(replayer.records_read()),
    )


def _enable_memory_activity(built: BuiltPlatform, window: TimelineWindow) -> None:
    gbl = kernel.load_models()
    sc = gbl.sc_core
    for module in built.modules.values():
        if hasattr(module, "enable_activity_log"):
            module.enable_activity_log(
                sc.sc_time(window.start_ns, sc.SC_NS),
                sc.sc_time(window.end_ns, sc.SC_NS),
                window.max_entries,
            )
