"""Value Change Dump of engine and memory-channel activity, for waveform viewers (GTKWave).

One 1-bit signal per timeline track (engines, HBM channels): 1 while the track is busy, inside
one scope per track group (``engines`` and ``memory_channels``; on a tiled platform ``tile0``,
``tile1``, ... each with its engines, so equal engine names stay apart). The
replayer runs loosely timed — it books each operation's interval when it issues it, ahead of
the kernel's time — so the waveform is written from the same recorded intervals as the
Perfetto timeline, in the same window, rather than traced live with ``sc_trace``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from tlm_models.files.output_file import write_output
from tlm_models.replay.timeline import Timeline

TIMESCALE_PS = 1


def _identifier(index: int) -> str:
    """Short VCD identifier codes: printable ASCII 33..126, little-endian base 94."""
    chars = []
    index += 1
    while index:
        index, digit = divmod(index - 1, 94)
        chars.append(chr(33 + digit))
    return "".join(chars)


def _signal_name(track: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", track)


def _changes(starts_ns: np.ndarray, ends_ns: np.ndarray) -> Iterator[tuple[int, int]]:
    """(time in ps, value) edges of a busy signal; overlapping intervals merge."""
    order = np.argsort(starts_ns, kind="stable")
    busy_until = -1
    for i in order:
        start = round(float(starts_ns[i]) * 1000)
        end = round(float(ends_ns[i]) * 1000)
        if end <= start:
            continue
        if start > busy_until:
            if busy_until >= 0:
                yield busy_until, 0
            yield start, 1
        busy_until = max(busy_until, end)
    if busy_until >= 0:
        yield busy_until, 0


def _scope_name(timeline: Timeline, process: int) -> str:
    return _signal_name(timeline.processes.get(process, f"group{process}"))


def write_vcd(timeline: Timeline, path: Path) -> None:
    """Writes the busy signals of every track; changes at one instant settle to the last."""
    ids = [_identifier(i) for i in range(len(timeline.tracks))]
    events: list[tuple[int, int, str]] = []
    for ident, track in zip(ids, timeline.tracks, strict=True):
        for time_ps, value in _changes(np.asarray(track.starts_ns), np.asarray(track.ends_ns)):
            events.append((time_ps, value, ident))
    events.sort(key=lambda e: e[0])
    lines = [
        "$comment attn-tlm engine and memory-channel activity $end",
        f"$timescale {TIMESCALE_PS} ps $end",
        "$scope module attn_tlm $end",
    ]
    by_group: dict[int, list[tuple[str, str]]] = {}
    for ident, track in zip(ids, timeline.tracks, strict=True):
        by_group.setdefault(track.process, []).append((ident, track.name))
    for process in sorted(by_group):
        lines.append(f"$scope module {_scope_name(timeline, process)} $end")
        lines += [f"$var wire 1 {i} {_signal_name(name)} $end" for i, name in by_group[process]]
        lines.append("$upscope $end")
    lines += ["$upscope $end", "$enddefinitions $end", "#0", "$dumpvars"]
    lines += [f"0{ident}" for ident in ids]
    lines.append("$end")
    current: int | None = None
    for time_ps, value, ident in events:
        if time_ps != current:
            lines.append(f"#{time_ps}")
            current = time_ps
        lines.append(f"{value}{ident}")
    write_output(path, "\n".join(lines) + "\n", "waveform")
