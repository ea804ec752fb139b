"""A sweep's progress on stderr: done / failed / total, elapsed time and ETA.

On a terminal one line is redrawn in place; otherwise (a log file, CI) each finished
configuration prints one plain line, so logs stay readable.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TextIO

__all__ = ["Progress", "format_duration"]


def format_duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``2 h 07 min``: a duration a person reads at a glance."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


@dataclass
class Progress:
    """Counts finished configurations of a sweep and reports them on ``stream``.

    ``skipped`` are configurations already done before this run; they count as done but not
    toward the rate used for the ETA.
    """

    total: int
    skipped: int = 0
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    interactive: bool | None = None
    clock: float = field(default_factory=time.monotonic)
    done: int = 0
    failed: int = 0
    _last_draw: float = 0.0

    def __post_init__(self) -> None:
        if self.interactive is None:
            isatty = getattr(self.stream, "isatty", None)
            self.interactive = bool(isatty and isatty())
        self.done = self.skipped

    def line(self, now: float | None = None) -> str:
        """The status text: counts, elapsed time and (once something finished) the ETA."""
        elapsed = (time.monotonic() if now is None else now) - self.clock
        finished_now = self.done + self.failed - self.skipped
        remaining = self.total - self.done - self.failed
        text = (
            f"sweep: {self.done}/{self.total} done, {self.failed} failed, "
            f"elapsed {format_duration(elapsed)}"
        )
        if remaining > 0 and finished_now > 0:
            text += f", ETA {format_duration(elapsed / finished_now * remaining)}"
        return text

    def start(self) -> None:
        """Shows the initial state (how much a resumed sweep already has)."""
        if self.interactive:
            self._draw()
        else:
            note = f" ({self.skipped} already done)" if self.skipped else ""
            print(f"sweep: {self.total} configurations{note}", file=self.stream, flush=True)

    def finished(self, label: str, ok: bool, wall_s: float, error: str = "") -> None:
        """Counts one configuration that finished (``ok``) or failed, taking ``wall_s`` s."""
        if ok:
            self.done += 1
        else:
            self.failed += 1
        if self.interactive:
            if not ok:  # a failure stays visible above the redrawn line
                self.stream.write(f"\r\x1b[2KFAILED after {wall_s:.1f} s: {label}: {error}\n")
            self._draw()
        else:
            status = "done" if ok else f"FAILED ({error})"
            print(
                f"{self.line()} | {status} in {wall_s:.1f} s: {label}", file=self.stream, flush=True
            )

    def tick(self, now: float | None = None) -> None:
        """Redraws the terminal line about once a second so elapsed time and ETA move."""
        now = time.monotonic() if now is None else now
        if self.interactive and now - self._last_draw >= 1.0:
            self._draw()

    def close(self, note: str = "") -> None:
        """Ends the progress display with the final counts (and ``note``, e.g. interrupted)."""
        suffix = f" ({note})" if note else ""
        if self.interactive:
            self.stream.write("\r\x1b[2K")
        print(self.line() + suffix, file=self.stream, flush=True)

    def _draw(self) -> None:
        self._last_draw = time.monotonic()
        self.stream.write("\r\x1b[2K" + self.line())
        self.stream.flush()
