"""The timeline of a small replay is a well-formed Chrome trace (what Perfetto opens): one named
track per trace engine and per HBM channel, complete events with non-negative times, and only
events that touch the requested window."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tlm_models.replay.replayer import TimelineWindow
from tlm_models.replay.timeline import ENGINE_PROCESS
from tlm_models.run.trace_job import replay_trace_file
from tlm_models.run.worker import run_in_worker

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = str(ROOT / "traces" / "samples" / "double_buffered_loop.trace.txt")
PLATFORM = str(ROOT / "platforms" / "attenio.yaml")
HBM_CHANNELS = 16  # platforms/parts/hbm-spec.yaml


def _timeline(tmp_path: Path, window: TimelineWindow) -> dict[str, Any]:
    out = tmp_path / "timeline.json"
    run_in_worker(replay_trace_file, SAMPLE, PLATFORM, (), str(out), window, timeout=120)
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def _tracks(data: dict[str, Any]) -> dict[tuple[int, int], str]:
    return {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in data["traceEvents"]
        if e["ph"] == "M" and e["name"] == "thread_name"
    }


def test_structure(tmp_path: Path) -> None:
    data = _timeline(tmp_path, TimelineWindow(0.0, 1e6))
    assert isinstance(data["traceEvents"], list)
    tracks = _tracks(data)
    names = sorted(tracks.values())
    assert names.count("dma0") == 1 and names.count("pe") == 1
    assert sorted(n for n in names if n.startswith("hbm.")) == sorted(
        f"hbm.ch{c}" for c in range(HBM_CHANNELS)
    )
    assert len(names) == 2 + HBM_CHANNELS
    processes = {
        e["pid"] for e in data["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"
    }
    complete = [e for e in data["traceEvents"] if e["ph"] == "X"]
    for e in complete:
        assert {"ph", "ts", "dur", "pid", "tid", "name"} <= set(e)
        assert e["ts"] >= 0 and e["dur"] >= 0
        assert (e["pid"], e["tid"]) in tracks  # every event's track is named
        assert e["pid"] in processes
    by_track: dict[str, list[dict[str, Any]]] = {}
    for e in complete:
        by_track.setdefault(tracks[(e["pid"], e["tid"])], []).append(e)
    # The whole run fits the window: 4 loads, 3 matmuls, and HBM activity for the loads.
    assert [e["name"] for e in by_track["dma0"]] == ["load"] * 4
    assert [e["name"] for e in by_track["pe"]] == ["matmul"] * 3
    assert sorted(e["args"]["record"] for e in by_track["pe"]) == [3, 5, 6]
    assert any(name.startswith("hbm.") for name in by_track)
    assert data["otherData"]["window_ns"] == [0.0, 1e6]


def engine_events(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in data["traceEvents"] if e["ph"] == "X" and e["pid"] == ENGINE_PROCESS]


@pytest.mark.parametrize(("start", "end"), [(300.0, 600.0), (0.0, 50.0)])
def test_events_within_the_window(tmp_path: Path, start: float, end: float) -> None:
    full = _timeline(tmp_path, TimelineWindow(0.0, 1e6))
    data = _timeline(tmp_path, TimelineWindow(start, end))
    complete = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert complete
    for e in complete:
        first_ns, last_ns = e["ts"] * 1e3, (e["ts"] + e["dur"]) * 1e3
        assert first_ns < end + 1e-6 and last_ns >= start - 1e-6, e
    # Exactly the engine operations of the full run that touch the window.
    expected = [
        e
        for e in engine_events(full)
        if e["ts"] * 1e3 < end and (e["ts"] + e["dur"]) * 1e3 >= start
    ]
    assert len(engine_events(data)) == len(expected) < len(engine_events(full))
