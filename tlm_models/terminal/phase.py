"""A named phase of a long command on a terminal: ``writing the report … 4.2 s``, redrawn
twice a second by a helper thread until the phase ends, then replaced by one line saying
how long it took. Silent when stderr is not a terminal (pipes, logs, ``--json``).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from tlm_models.units import format_duration

__all__ = ["is_terminal", "phase"]


def is_terminal(stream: TextIO) -> bool:
    """Whether progress drawn on ``stream`` reaches a person (not a pipe or a file)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


@contextmanager
def phase(text: str, stream: TextIO | None = None) -> Iterator[None]:
    """Shows ``text`` with its elapsed time while the body runs (on a terminal only)."""
    out = sys.stderr if stream is None else stream
    if not is_terminal(out):
        yield
        return
    from tqdm import tqdm

    bar = tqdm(file=out, bar_format="{desc} … {elapsed}", desc=text, leave=False)
    stop = threading.Event()

    def redraw() -> None:
        while not stop.wait(0.5):
            bar.refresh()

    started = time.monotonic()
    thread = threading.Thread(target=redraw, name="phase", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        bar.close()
        print(f"{text}: {format_duration(time.monotonic() - started)}", file=out, flush=True)
