"""Worker job of the input tests: a replay fed in small chunks that only the session keeps
alive, watching which chunks are still alive between kernel slices (importable by name)."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from tlm_models.platform import load_platform
from tlm_models.replay import replayer as replay
from tlm_models.runtime.session import DONE, NEEDS_INPUT, RAN_DRY, NativeSession
from tlm_models.trace.io import open_trace
from tlm_models.trace.record import RECORD_DTYPE


def replay_in_fresh_chunks(
    trace_path: str, platform_path: str, chunk_records: int
) -> dict[str, Any]:
    """Replays ``trace_path`` fed as fresh copies of ``chunk_records`` records; returns the
    result and the liveness checks: a chunk whose records the replayer has not all read must
    be alive at every slice, and the session must let go of the ones it has read."""
    config = load_platform(platform_path)
    trace = open_trace(trace_path)
    session = NativeSession(config)
    session.new_replayer(trace.header.window, replay.LOOKAHEAD_OPS)
    replay._bind(session, config, trace.header)
    source = trace.chunks(chunk_records)
    fed: list[tuple[int, weakref.ref[np.ndarray]]] = []  # (records up to its end, the chunk)
    total = 0
    unread_but_freed = 0
    most_held = 0

    def check() -> None:
        nonlocal unread_but_freed, most_held
        read = session.records_read()
        unread_but_freed += sum(1 for end, ref in fed if end > read and ref() is None)
        most_held = max(most_held, sum(1 for _, ref in fed if ref() is not None))

    # replay.drive's loop, except that no reference to a fed chunk is kept here.
    while (step := session.step(replay.SLICE_NS)) not in (DONE, RAN_DRY):
        if step == NEEDS_INPUT:
            part = next(source, None)
            if part is None:
                session.end_of_input()
            else:
                chunk = np.array(part)  # a fresh copy only the session refers to once fed
                total += len(chunk)
                fed.append((total, weakref.ref(chunk)))
                session.feed(chunk)
                del chunk
        check()
    return {
        "failure": session.failure(),
        "finished": session.finished(),
        "result": session.result(),
        "chunks": len(fed),
        "unread_but_freed": unread_but_freed,
        "most_held": most_held,
    }


def feed_refusals(platform_path: str) -> list[str]:
    """What ``NativeSession.feed`` says to arrays the replayer cannot read in place."""
    config = load_platform(platform_path)
    session = NativeSession(config)
    session.new_replayer(64, replay.LOOKAHEAD_OPS)
    records = np.zeros(8, RECORD_DTYPE)
    said = []
    for bad in (records[::2], np.zeros(8, np.uint64)):
        try:
            session.feed(bad)
        except ValueError as exc:
            said.append(str(exc))
    return said
