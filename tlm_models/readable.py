"""Numbers as a person reads them: ``37.88 ms`` rather than ``37,878,968.000 ns``, ``2.00 GiB``,
``5.5 M`` operations, ``3 min 05 s``. Every figure the command line and the report print for
people goes through here; the result JSON keeps exact SI values.
"""

from __future__ import annotations

import math

__all__ = ["format_bytes", "format_count", "format_duration", "format_ns", "format_rate"]

_TIME_UNITS = (("s", 1e9), ("ms", 1e6), ("µs", 1e3), ("ns", 1.0))
_BYTE_UNITS = (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))


def _three_figures(value: float) -> str:
    """Three significant figures without exponent: 1.23, 12.3, 123, 1234."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    digits = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:,.{digits}f}"


def format_ns(ns: float) -> str:
    """A simulated duration in nanoseconds in the largest unit that keeps it >= 1."""
    for unit, scale in _TIME_UNITS:
        if abs(ns) >= scale:
            return f"{_three_figures(ns / scale)} {unit}"
    return f"{_three_figures(ns)} ns"


def format_bytes(nbytes: float) -> str:
    """Bytes in binary units: ``2.00 GiB``, ``512 KiB``, ``96 B``."""
    for unit, scale in _BYTE_UNITS:
        if abs(nbytes) >= scale:
            return f"{_three_figures(nbytes / scale)} {unit}"
    return f"{nbytes:,.0f} B"


def format_count(count: float) -> str:
    """A large count: ``950``, ``12.3 k``, ``5.49 M``, ``1.20 G``."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(count) >= scale:
            return f"{_three_figures(count / scale)} {unit}"
    return f"{count:,.0f}"


def format_rate(per_s: float, what: str) -> str:
    """``1.32 M ops/s``."""
    return f"{format_count(per_s)} {what}/s".replace("  ", " ")


def format_duration(seconds: float) -> str:
    """A wall-clock duration: ``42 s``, ``3 min 05 s``, ``2 h 07 min``."""
    seconds = max(0.0, seconds)
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
