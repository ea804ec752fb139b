"""VCD waveforms of activity: edges, merging of overlapping intervals, and the CLI option."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from tlm_models.replay.timeline import Timeline, Track
from tlm_models.replay.vcd import write_vcd

SAMPLE = Path(__file__).resolve().parent.parent / "traces" / "samples"


def _changes(text: str) -> list[str]:
    body = text.split("$enddefinitions $end", 1)[1]
    return [line for line in body.splitlines() if line and not line.startswith("$")]


def test_busy_intervals_become_edges(tmp_path: Path) -> None:
    timeline = Timeline(
        [
            # [1, 3) and [2, 4) overlap: one pulse 1..4 ns; [4, 5) touches it: still busy.
            Track("pe", 1, np.array([1.0, 2.0, 4.0]), np.array([3.0, 4.0, 5.0])),
            Track("hbm.ch0", 2, np.array([0.5]), np.array([1.5])),
        ]
    )
    path = tmp_path / "a.vcd"
    write_vcd(timeline, path)
    text = path.read_text()
    assert "$var wire 1 ! pe $end" in text
    assert '$var wire 1 " hbm_ch0 $end' in text
    assert _changes(text) == [
        "#0", "0!", '0"',
        "#500", '1"',
        "#1000", "1!",
        "#1500", '0"',
        "#5000", "0!",
    ]  # fmt: skip


def test_replay_writes_a_waveform(tmp_path: Path) -> None:
    out = tmp_path / "loop.vcd"
    proc = subprocess.run(
        [sys.executable, "-m", "tlm_models.cli.main", "replay",
         str(SAMPLE / "double_buffered_loop.trace.txt"), "--vcd", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert "$var wire 1" in text and " pe $end" in text and " dma0 $end" in text
    assert any(line.startswith("1") for line in _changes(text)), "no activity recorded"
