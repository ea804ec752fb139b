"""Drives the C++ replayer with a trace on an elaborated platform; returns plain results.

Runs inside a simulation process (a worker): it elaborates the platform through the compiled
session (``tlm_models.runtime.session``), binds the trace's engines, then alternates between
handing a chunk of records to the replayer (by pointer; the replayer copies it) and running the
kernel in slices. Slicing keeps Ctrl-C prompt and lets the
replayer pause for input without a Python call on the per-operation path.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from tlm_models.errors import SimulationError, UserError
from tlm_models.fast_forward.control import FastForward
from tlm_models.platform.schema import PlatformConfig
from tlm_models.replay import stl_out as stl_export
from tlm_models.replay.timeline import TIMELINE_DTYPE, Timeline, Track, engine_tracks
from tlm_models.runtime.session import DONE, NEEDS_INPUT, RAN_DRY, NativeSession
from tlm_models.trace.header import TraceHeader
from tlm_models.trace.record import RECORD_DTYPE, EngineKind

ENGINE_KINDS = {kind.name.lower(): int(kind) for kind in EngineKind}
#: Simulated time run per kernel call; short enough for a prompt Ctrl-C.
SLICE_NS = 200_000.0
#: Records kept in the replayer's read-ahead before it proceeds with the heads it knows.
LOOKAHEAD_OPS = 1 << 21
#: The same when fast-forwarding: an engine idle for a long phase (the store channel while
#: approximate attention's key rows build H) would otherwise have the whole phase read, so
#: marked, before the loop is seen to repeat, and none of it could be skipped. Dependencies
#: order such phases, so the schedule does not change (tests/test_approx_fast_forward.py).
FAST_FORWARD_LOOKAHEAD_OPS = 1 << 15

#: Wall seconds between progress reports from the replay loop.
PROGRESS_INTERVAL_S = 0.25
#: Where the replay loop reports (simulated ns, operations read); set by the worker.
_progress: Callable[[float, int], None] | None = None

#: Sessions of the simulations of this process. They live until the process ends: SystemC may
#: refer to their objects after sc_start returns, and the worker exits right after its run.
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
    fast_forward: dict[str, Any] | None = None  # what was extrapolated (None: simulated whole)
    #: The off-chip memory's requests (stl_export.REQUEST_DTYPE) when asked for.
    #: Each off-chip memory's logged requests, by name (``log_requests``).
    memory_requests: dict[str, np.ndarray] | None = None


def _bind(session: NativeSession, config: PlatformConfig, header: TraceHeader) -> None:
    for index, name in enumerate(header.engines):
        if name not in config.engines:
            raise UserError(
                f"the trace uses engine '{name}', which platform '{config.name}' does not "
                f"have (it has: {', '.join(sorted(config.engines))})"
            )
        kind = config.engines[name].kind
        if kind not in ENGINE_KINDS:
            raise UserError(f"engine '{name}' is a '{kind}' engine, which traces cannot drive")
        session.bind_engine(index, name, ENGINE_KINDS[kind])
    for index, tensor in enumerate(header.tensors):
        session.set_tensor(index, tensor.name)


def records_of(chunks: Iterable[np.ndarray]) -> Iterator[np.ndarray]:
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


def drive(
    session: NativeSession,
    next_chunk: Callable[[], np.ndarray | None],
    poll: Callable[[], None] | None = None,
) -> None:
    """Runs the kernel until no replayer needs more (the slicing and the end-of-events rule
    are in ``attn_step``, native/session_api.cpp), feeding ``next_chunk()`` to the replayer
    that asks (None: its trace has ended) and calling ``poll`` (fast-forward) between
    slices. Shared by one-replayer and tiled runs; failures are the caller's to read."""
    # The session keeps each chunk until its replayer has read it (NativeSession.feed).
    next_report = time.monotonic()
    while True:
        if _progress is not None and time.monotonic() >= next_report:
            _progress(session.now_ns(), session.records_read())
            next_report = time.monotonic() + PROGRESS_INTERVAL_S
        step = session.step(SLICE_NS)
        if step in (DONE, RAN_DRY):
            break
        if step == NEEDS_INPUT:
            chunk = next_chunk()
            if poll is not None:
                poll()  # the chunk's iteration marks reach the replayer first
            if chunk is None:
                session.end_of_input()
            else:
                session.feed(chunk)
        elif poll is not None:
            poll()


def _drive(
    session: NativeSession, chunks: Iterator[np.ndarray], fast_forward: FastForward | None
) -> None:
    """Drives a one-replayer session to the end; a failed or stuck replay raises."""
    drive(session, lambda: next(chunks, None), fast_forward.poll if fast_forward else None)
    failure = session.failure()
    if failure is not None:
        raise UserError(f"replay failed: {failure}")
    if not session.finished():
        raise SimulationError(
            "replay cannot progress: no event is pending in the simulation while the replay "
            f"waits on {session.waiting_on()}"
        )


def _timeline(session: NativeSession, header: TraceHeader, window: TimelineWindow) -> Timeline:
    entries = session.timeline_entries(TIMELINE_DTYPE)
    tracks = engine_tracks(entries, header.engines)
    tracks.extend(_memory_tracks(session))
    return Timeline(
        tracks,
        {
            "window_ns": [window.start_ns, window.end_ns],
            "max_entries": window.max_entries,
            "entries": len(entries),
        },
    )


def _memory_tracks(session: NativeSession) -> list[Track]:
    """One track per off-chip memory channel, from the channels' activity logs."""
    tracks: list[Track] = []
    for name, comp in session.config.components.items():
        if not session.has_activity(name):
            continue
        for channel in range(int(comp.params["channels"])):
            raw = session.channel_activity(name, channel)
            # One label for every channel: the pictures colour by label, and a channel's
            # activity is one kind of thing (its data bus transferring).
            tracks.append(
                Track(
                    f"{name}.ch{channel}",
                    2,
                    raw[:, 0] / 1e3,
                    raw[:, 1] / 1e3,
                    ["transfer"] * len(raw) if len(raw) else None,
                )
            )
    return tracks


def _reject_queued_memory(config: PlatformConfig) -> None:
    """The engines time their memory requests ahead of the simulation clock (temporal
    decoupling), which a memory that waits inside b_transport cannot serve."""
    for c in config.components_of_type("hbm"):
        if c.params.get("request_mode") == "queued":
            raise UserError(
                f"{c.name}.request_mode=queued applies to STL replays (attn-tlm replay x.stl "
                "--outstanding N); the accelerator's engines need 'immediate'"
            )


def replay_in_this_process(
    config: PlatformConfig,
    header: TraceHeader,
    chunks: Iterable[np.ndarray],
    timeline: TimelineWindow | None = None,
    log_requests: bool = False,
    fast_forward: FastForward | None = None,
) -> ReplayOutput:
    """Elaborates ``config``, replays the trace and collects results. Once per process.

    ``log_requests`` keeps every request the off-chip memories receive (``memory_requests``).
    With ``fast_forward`` (over the emitter's iteration control) the loop's steady state is
    extrapolated instead of simulated; the output's ``fast_forward`` section says how much."""
    _reject_queued_memory(config)
    session = NativeSession(config)
    _SIMULATION_OBJECTS.append(session)
    session.new_replayer(
        header.window, LOOKAHEAD_OPS if fast_forward is None else FAST_FORWARD_LOOKAHEAD_OPS
    )
    _bind(session, config, header)
    if timeline is not None:
        session.record_timeline(timeline.start_ns, timeline.end_ns, timeline.max_entries)
    if fast_forward is not None:
        fast_forward.attach(session)
    if log_requests:
        stl_export.enable_all(session, config)
    started = time.perf_counter()
    _drive(session, records_of(chunks), fast_forward)
    wall = time.perf_counter() - started
    replay, platform = session.result(), session.platform_stats()
    section = fast_forward.apply(replay, platform) if fast_forward is not None else None
    return ReplayOutput(
        memory_requests=stl_export.logged_by_memory(session, config) if log_requests else None,
        replay=replay,
        platform=platform,
        timeline=_timeline(session, header, timeline) if timeline else None,
        wall_s=wall,
        ops=session.records_read(),
        fast_forward=section,
    )
