"""Run a command as a user would in a terminal and measure what they see while it runs.

    python tools/record_session.py --log session.jsonl -- make demo

The command runs under a pseudo-terminal (so progress bars and counters behave as they do for
a person at a terminal); every chunk of output is time-stamped. At the end it prints the total
wall time, the longest silences (no byte written to the terminal for that long) with the last
line before and the first line after each, and the time of the first appearance of each line
that starts a phase (the lines matching ``--phase`` patterns, or by default every line whose
first word ends in a colon, e.g. ``setup:``, ``sweep:``). A progress bar that redraws itself
counts as output: that is what keeps a terminal from looking stuck. ``--log`` keeps every
chunk (time, text) as JSON lines for a later look; the command's exit status is returned.
"""

from __future__ import annotations

import argparse
import codecs
import fcntl
import itertools
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
DEFAULT_PHASE = re.compile(r"^[A-Za-z][\w .-]*: ")


@dataclass
class Session:
    """Time-stamped output of one command."""

    started: float
    chunks: list[tuple[float, str]] = field(default_factory=list)
    ended: float = 0.0
    status: int = 0

    def lines(self) -> list[tuple[float, str]]:
        """Each visible line (split at newlines and carriage returns) with its first time."""
        out: list[tuple[float, str]] = []
        pending = ""
        for t, text in self.chunks:
            pending += ANSI.sub("", text)
            *done, pending = re.split(r"[\r\n]", pending)
            out += [(t, line.strip()) for line in done if line.strip()]
        if pending.strip():
            out.append((self.chunks[-1][0], pending.strip()))
        return out

    def silences(self) -> list[tuple[float, float]]:
        """(start, length) of every gap between outputs, from the start to the end."""
        times = [self.started] + [t for t, _ in self.chunks] + [self.ended]
        return [(a, b - a) for a, b in itertools.pairwise(times)]


def record(command: list[str], echo: TextIO | None, size: tuple[int, int]) -> Session:
    """Run ``command`` under a pseudo-terminal of ``size`` (columns, rows), keeping its output
    with times. A terminal of no size would make progress bars draw nothing."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    session = Session(started=time.monotonic())
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # a character may span reads
    while True:
        ready, _, _ = select.select([master], [], [], 0.5)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        try:
            data = os.read(master, 65536)
        except OSError:  # the terminal closed: the command and its children are done
            break
        if not data:
            break
        text = decoder.decode(data)
        session.chunks.append((time.monotonic(), text))
        if echo is not None:
            echo.write(text)
            echo.flush()
    os.close(master)
    session.status = proc.wait()
    session.ended = time.monotonic()
    return session


def _line_at(lines: list[tuple[float, str]], t: float, before: bool) -> str:
    if before:
        candidates = [line for when, line in lines if when <= t]
        return candidates[-1] if candidates else "(start)"
    candidates = [line for when, line in lines if when > t]
    return candidates[0] if candidates else "(end)"


def summarize(session: Session, phases: list[re.Pattern[str]], top: int) -> str:
    """A Markdown summary: total, longest silences, phase starts."""
    total = session.ended - session.started
    lines = session.lines()
    rows = [f"Total wall time: {total:.1f} s; exit status {session.status}.", ""]
    gaps = sorted(session.silences(), key=lambda g: -g[1])[:top]
    rows += ["| silence s | from (s) | last line before | first line after |"]
    rows += ["|---:|---:|---|---|"]
    for start, length in gaps:
        before = _line_at(lines, start, before=True)[:70]
        after = _line_at(lines, start + length - 1e-9, before=False)[:70]
        rows.append(f"| {length:.1f} | {start - session.started:.1f} | `{before}` | `{after}` |")
    rows += ["", "| t (s) | phase |", "|---:|---|"]
    seen: set[str] = set()
    for when, line in lines:
        match = next((p.search(line) for p in phases if p.search(line)), None)
        if match is None:
            continue
        key = match.group(0)
        if key in seen:
            continue
        seen.add(key)
        rows.append(f"| {when - session.started:.1f} | `{line[:90]}` |")
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path, help="write every chunk (time, text) as JSON lines")
    parser.add_argument("--summary", type=Path, help="write the Markdown summary here too")
    parser.add_argument("--phase", action="append", default=[], help="regex of a phase's line")
    parser.add_argument("--top", type=int, default=5, help="how many silences to list")
    parser.add_argument("--quiet", action="store_true", help="do not echo the output")
    parser.add_argument("--columns", type=int, default=150, help="terminal width")
    parser.add_argument("--rows", type=int, default=40, help="terminal height")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --")
    try:
        phases = [re.compile(p) for p in args.phase] or [DEFAULT_PHASE]
    except re.error as exc:
        parser.error(f"--phase: {exc}")
    session = record(command, None if args.quiet else sys.stdout, (args.columns, args.rows))
    if args.log:
        with args.log.open("w") as f:
            for t, text in session.chunks:
                f.write(json.dumps({"t": round(t - session.started, 3), "text": text}) + "\n")
    text = summarize(session, phases, args.top)
    if args.summary:
        args.summary.write_text(text)
    print(text)
    return session.status


if __name__ == "__main__":
    sys.exit(main())
