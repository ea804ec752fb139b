"""Perfetto timeline of a tiled run: one track group per tile, then the shared memories."""

from __future__ import annotations

import json
from pathlib import Path

from tests.tile_jobs import timeline_job
from tlm_models.run.worker import run_in_worker


def test_tiled_timeline_has_a_track_group_per_tile(tmp_path: Path) -> None:
    """Each tile's engines (dma0, dma1, pe, exp) are the threads of process ``tile<i>``; every
    operation lies in the 20 µs window or straddles its start; the HBM's channels follow."""
    path = tmp_path / "tiles.json"
    run_in_worker(timeline_job, str(path))
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    processes = {
        e["pid"]: e["args"]["name"]
        for e in events
        if e["ph"] == "M" and e["name"] == "process_name"
    }
    assert sorted(processes.values()) == ["memory channels", "tile0", "tile1", "tile2", "tile3"]
    threads: dict[int, set[str]] = {}
    for e in events:
        if e["ph"] == "M" and e["name"] == "thread_name":
            threads.setdefault(e["pid"], set()).add(e["args"]["name"])
    for pid, name in processes.items():
        if name.startswith("tile"):
            assert threads[pid] == {"dma0", "dma1", "pe", "exp"}
            ops = [e for e in events if e["ph"] == "X" and e["pid"] == pid]
            assert ops and all(e["ts"] < 20.0 and e["ts"] + e["dur"] > 0.0 for e in ops)
    assert trace["otherData"]["tiles"] == 4
    assert trace["otherData"]["window_ns"] == [0.0, 20_000.0]
