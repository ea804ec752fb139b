"""What every progress display shares (one simulation's bar, a sweep's): the stream it writes
to, whether that reaches a person (a bar is drawn) or not (quiet), and the clock it measures
elapsed time on."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from tlm_models.terminal.phase import is_terminal

__all__ = ["TerminalProgress"]


@dataclass(kw_only=True)
class TerminalProgress:
    """``interactive`` None: whether ``stream`` is a terminal. ``timer`` is the clock
    (replaceable in tests); ``started`` the start time on it (None: now)."""

    stream: TextIO = field(default_factory=lambda: sys.stderr)
    interactive: bool | None = None
    timer: Callable[[], float] = time.monotonic
    started: float | None = None
    _bar: Any = None
    _last_draw: float = -1e9

    def __post_init__(self) -> None:
        if self.interactive is None:
            self.interactive = is_terminal(self.stream)
        if self.started is None:
            self.started = self.timer()

    def elapsed(self) -> float:
        """Seconds on ``timer`` since ``started``."""
        assert self.started is not None
        return self.timer() - self.started
