"""Perfetto / Chrome-trace JSON timelines: one track per engine and per memory channel.

The file is the Chrome "JSON trace event" format that ui.perfetto.dev and chrome://tracing open:
complete events (``"ph": "X"``) with microsecond ``ts``/``dur``, grouped into a process per
kind of track and named with metadata events. Huge runs are kept under a size cap by recording
only a time window (the replayer's ``record_timeline(from, to, max_entries)``); the window and
whether the cap cut events are stated in ``otherData``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tlm_models.files.output_file import atomic_output
from tlm_models.trace.record import KIND_NAMES

#: Layout of one timeline entry as the C++ replayer writes it (see docs/replayer.md).
TIMELINE_DTYPE = np.dtype(
    [
        ("index", "<u8"),
        ("engine", "u1"),
        ("kind", "u1"),
        ("pad0", "<u2"),
        ("pad1", "<u4"),
        ("start_ns", "<f8"),
        ("end_ns", "<f8"),
    ]
)

ENGINE_PROCESS = 1
MEMORY_PROCESS = 2


@dataclass
class Track:
    """A named row of intervals (ns) in the timeline, e.g. ``pe`` or ``hbm.ch3``."""

    name: str
    process: int
    starts_ns: np.ndarray
    ends_ns: np.ndarray
    labels: Sequence[str] | None = None
    args: list[dict[str, Any]] | None = None


@dataclass
class Timeline:
    tracks: list[Track] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    #: Track groups (Perfetto processes) by number: a tiled run adds one per tile.
    processes: dict[int, str] = field(
        default_factory=lambda: {ENGINE_PROCESS: "engines", MEMORY_PROCESS: "memory channels"}
    )

    def event_count(self) -> int:
        return sum(len(t.starts_ns) for t in self.tracks)


def engine_tracks(entries: np.ndarray, engine_names: Sequence[str]) -> list[Track]:
    """Splits replayer timeline entries into one track per engine, labelled by op kind."""
    tracks = []
    for index, name in enumerate(engine_names):
        rows = entries[entries["engine"] == index]
        labels = [KIND_NAMES.get(int(k), f"kind{k}") for k in rows["kind"]]
        args = [{"record": int(i)} for i in rows["index"]]
        tracks.append(Track(name, ENGINE_PROCESS, rows["start_ns"], rows["end_ns"], labels, args))
    return tracks


def to_chrome_json(timeline: Timeline) -> dict[str, Any]:
    """The Chrome trace JSON object of a timeline (times converted from ns to us)."""
    events: list[dict[str, Any]] = [
        {"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": name}}
        for pid, name in timeline.processes.items()
    ]
    for tid, track in enumerate(timeline.tracks, start=1):
        events.append(
            {
                "ph": "M",
                "pid": track.process,
                "tid": tid,
                "name": "thread_name",
                "args": {"name": track.name},
            }
        )
        starts = np.asarray(track.starts_ns, dtype=np.float64)
        durations = np.asarray(track.ends_ns, dtype=np.float64) - starts
        for i in range(len(starts)):
            event: dict[str, Any] = {
                "ph": "X",
                "pid": track.process,
                "tid": tid,
                "name": track.labels[i] if track.labels is not None else track.name,
                "ts": float(starts[i]) / 1e3,
                "dur": float(durations[i]) / 1e3,
            }
            if track.args is not None:
                event["args"] = track.args[i]
            events.append(event)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {"generator": "attn-tlm", **timeline.metadata},
    }


def write_chrome_json(timeline: Timeline, path: Path) -> None:
    """Writes the timeline atomically (only to a regular file; tlm_models.files.output_file)."""
    with atomic_output(path, "timeline") as f:
        json.dump(to_chrome_json(timeline), f, separators=(",", ":"))
