"""tools/record_session.py, which measures the silences a user sees (docs/demo-session.md)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import record_session  # noqa: E402


def test_the_longest_silence_and_the_phases_are_measured() -> None:
    script = (
        "import os, sys, time\n"
        "print('setup: one', flush=True)\n"
        "time.sleep(1.2)\n"
        "sys.stdout.write('sweep: 1/2\\r'); sys.stdout.flush()\n"
        "time.sleep(0.3)\n"
        "print('sweep: 2/2 width', os.get_terminal_size(1).columns, flush=True)\n"
    )
    session = record_session.record([sys.executable, "-c", script], None, (120, 30))
    assert session.status == 0
    lines = [line for _, line in session.lines()]
    assert lines == ["setup: one", "sweep: 1/2", "sweep: 2/2 width 120"]  # a sized terminal
    longest = max(length for _, length in session.silences())
    assert 1.1 <= longest < 2.0, session.silences()
    summary = record_session.summarize(session, [record_session.DEFAULT_PHASE], top=2)
    assert "| `setup: one` | `sweep: 1/2` |" in summary.splitlines()[4], summary
    assert summary.count("`sweep: ") >= 2


def test_the_exit_status_is_the_commands() -> None:
    session = record_session.record([sys.executable, "-c", "raise SystemExit(3)"], None, (80, 24))
    assert session.status == 3
