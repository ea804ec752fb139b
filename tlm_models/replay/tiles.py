"""Replays one trace per tile of a tiled platform in one simulation (docs/models/tiles.md).

Each tile's trace drives that tile's engines through its own C++ replayer (its engine names are
the template's, ``dma0`` or ``pe``, bound to ``tile{i}_dma0``...), so every tile schedules its
operations as a one-tile replay would; the tiles meet only in the shared components (the
crossbar and the off-chip memories), whose bandwidth servers resolve their contention. The
replayers issue through one gate (issue_gate.h): operations of all tiles reach the shared
components in order of start time, ties by tile index, so the result does not depend on how
the traces are fed. The kernel pauses whenever one replayer needs records; that replayer is
fed the next slice (at most FEED_RECORDS records) of its own stream.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tlm_models.errors import SimulationError, UserError
from tlm_models.fast_forward.tiles import TileFastForward
from tlm_models.platform.schema import PlatformConfig
from tlm_models.platform.tiles import tile_prefix
from tlm_models.replay import stl_out as stl_export
from tlm_models.replay.replayer import (
    _SIMULATION_OBJECTS,
    ENGINE_KINDS,
    FAST_FORWARD_LOOKAHEAD_OPS,
    LOOKAHEAD_OPS,
    TimelineWindow,
    _memory_tracks,
    drive,
    records_of,
)
from tlm_models.replay.timeline import MEMORY_PROCESS, TIMELINE_DTYPE, Timeline, engine_tracks
from tlm_models.runtime.session import NativeSession
from tlm_models.trace.header import TraceHeader

#: Perfetto process of tile i's engines: TILE_PROCESS + i (1 and 2 are the one-tile groups).
TILE_PROCESS = 10

#: Records handed to a tile's replayer per feed (1 MiB). The replayers read what they are fed
#: where it lies (NativeSession.feed); when they copied it, an emitter's chunk of a whole head
#: (160,000 records at N = 4K, 10 MiB) fed whole kept 16 fresh copies alive, and slices of this
#: size recycled the same few MiB (docs/replayer.md, "Sixteen tiles").
FEED_RECORDS = 1 << 14


def feed_slices(chunks: Iterator[np.ndarray]) -> Iterator[np.ndarray]:
    """The records of ``chunks`` in slices of at most FEED_RECORDS (views, not copies)."""
    for chunk in chunks:
        for start in range(0, len(chunk), FEED_RECORDS):
            yield chunk[start : start + FEED_RECORDS]


@dataclass
class TileReplayOutput:
    """Each tile's replay statistics tree (tile order), the platform's, and run figures."""

    tiles: list[dict[str, Any]]
    platform: dict[str, Any]
    wall_s: float
    ops: int
    fast_forward: dict[str, Any] | None = None  # what was extrapolated (None: simulated whole)
    #: Times a tile's replayer gave way to another at the issue gate (host thread switches:
    #: a cost of the simulation, not a simulated figure; it may vary with the feed).
    gate_handoffs: int = 0
    timeline: Timeline | None = None  # one track group per tile, and the memory channels
    #: Each off-chip memory's logged requests from all tiles, by name (``log_requests``).
    memory_requests: dict[str, np.ndarray] | None = None


def _tiles_timeline(
    session: NativeSession,
    headers: Sequence[TraceHeader],
    window: TimelineWindow,
) -> Timeline:
    """Each tile's engines as a track group of their own (``tile3``: dma0, pe, ...), then the
    off-chip memories' channels, which every tile shares."""
    timeline = Timeline(processes={MEMORY_PROCESS: "memory channels"})
    entries = 0
    for tile, header in enumerate(headers):
        session.select_replayer(tile)
        rows = session.timeline_entries(TIMELINE_DTYPE)
        entries += len(rows)
        timeline.processes[TILE_PROCESS + tile] = f"tile{tile}"
        for track in engine_tracks(rows, header.engines):
            track.process = TILE_PROCESS + tile
            timeline.tracks.append(track)
    timeline.tracks.extend(_memory_tracks(session))
    timeline.metadata = {
        "window_ns": [window.start_ns, window.end_ns],
        "max_entries": window.max_entries,
        "entries": entries,
        "tiles": len(headers),
    }
    return timeline


def reaches_only_its_tile(config: PlatformConfig, tile: int, component: str) -> bool:
    """Whether every component ``component`` reaches through the bindings (its initiator
    sockets, and theirs onward) belongs to tile ``tile``, itself included."""
    prefix = tile_prefix(tile)
    seen, todo = {component}, [component]
    while todo:
        here = todo.pop()
        if not here.startswith(prefix):
            return False
        for binding in config.bindings:
            if binding.initiator.component == here and binding.target.component not in seen:
                seen.add(binding.target.component)
                todo.append(binding.target.component)
    return True


def _bind_tile(
    session: NativeSession, config: PlatformConfig, tile: int, header: TraceHeader
) -> None:
    prefix = tile_prefix(tile)
    for index, local in enumerate(header.engines):
        name = prefix + local
        engine = config.engines.get(name)
        if engine is None:
            raise UserError(
                f"tile {tile}'s trace uses engine '{local}', which the tile template of "
                f"platform '{config.name}' does not declare"
            )
        session.bind_engine(index, name, ENGINE_KINDS[engine.kind])
        if reaches_only_its_tile(config, tile, engine.component):
            session.ungate_engine(index)  # its order among the other tiles' changes nothing
    for index, tensor in enumerate(header.tensors):
        session.set_tensor(index, tensor.name)


def replay_tiles_in_this_process(
    config: PlatformConfig,
    traces: Sequence[tuple[TraceHeader, Iterable[np.ndarray]]],
    fast_forward: TileFastForward | None = None,
    timeline: TimelineWindow | None = None,
    log_requests: bool = False,
) -> TileReplayOutput:
    """Elaborates ``config`` and replays ``traces[i]`` on tile i, all in one simulation (once
    per process). The platform must have as many tiles as there are traces. With
    ``fast_forward`` the chip's steady state is skipped on every tile together; the output's
    ``fast_forward`` section says how much. ``timeline``: every tile's operations (at most
    ``max_entries`` a tile) and the memory channels' activity within the window.
    ``log_requests`` keeps every request the shared off-chip memories receive."""
    if config.tile_count != len(traces):
        raise UserError(
            f"platform '{config.name}' has {config.tile_count} tile(s) but {len(traces)} "
            "trace(s) were given (one per tile)"
        )
    session = NativeSession(config)
    _SIMULATION_OBJECTS.append(session)
    streams: list[Iterator[np.ndarray]] = []
    for tile, (header, chunks) in enumerate(traces):
        session.new_replayer(
            header.window, LOOKAHEAD_OPS if fast_forward is None else FAST_FORWARD_LOOKAHEAD_OPS
        )
        _bind_tile(session, config, tile, header)
        if timeline is not None:
            session.record_timeline(timeline.start_ns, timeline.end_ns, timeline.max_entries)
        streams.append(feed_slices(records_of(chunks)))
    if len(traces) > 1:  # the tiles' order at shared servers: simulated time, then index
        session.gate_replayers()
    if fast_forward is not None:
        session.select_replayer(0)
        fast_forward.attach(session)
    if log_requests:
        stl_export.enable_all(session, config)
    started = time.perf_counter()
    drive(
        session,
        lambda: next(streams[session.selected_replayer()], None),
        fast_forward.poll if fast_forward is not None else None,
    )
    wall = time.perf_counter() - started
    for tile in range(len(traces)):  # a failure stops the kernel: name it, not its victims
        session.select_replayer(tile)
        failure = session.failure()
        if failure is not None:
            raise UserError(f"replay of tile {tile} failed: {failure}")
    tiles: list[dict[str, Any]] = []
    ops = 0
    for tile in range(len(traces)):
        session.select_replayer(tile)
        if not session.finished():
            raise SimulationError(
                f"replay cannot progress: no event is pending while tile {tile}'s replay "
                f"waits on {session.waiting_on()}"
            )
        tiles.append(session.result())
        ops += session.records_read()
    platform = session.platform_stats()
    section = fast_forward.apply(tiles, platform) if fast_forward is not None else None
    recorded = (
        _tiles_timeline(session, [h for h, _ in traces], timeline) if timeline is not None else None
    )
    return TileReplayOutput(
        tiles,
        platform,
        wall,
        ops,
        section,
        session.gate_handoffs(),
        recorded,
        stl_export.logged_by_memory(session, config) if log_requests else None,
    )
