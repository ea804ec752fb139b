"""DRAMSys STL memory traces (``.stl`` absolute, ``.rstl`` relative), parsed in bulk.

A line is ``<cycles>: [(<length>)] read|write <hex address> [(<length>)] [<hex data>]``, as
DRAMSys's StlPlayer reads it: the time counts clock cycles of the player's clock; in ``.stl``
it is the absolute issue time, in ``.rstl`` the delay after the previous request completed
(so only a simulation knows absolute times). Lines starting with ``#`` and blank lines are
skipped. The length in parentheses (bytes) may come before the command, as DRAMSys writes it,
or after the address; without one the default length applies. Write data, when given, is
checked against the length and otherwise ignored.

Parsing is one regular-expression pass per block of text plus vectorised digit conversion;
per-line Python work happens only to locate an error.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from tlm_models.errors import UserError
from tlm_models.files.bounded_input import open_regular

STL_DTYPE = np.dtype([("time_ps", "<u8"), ("is_write", "?"), ("address", "<u8"), ("length", "<u4")])
DEFAULT_CLOCK_HZ = 1e9
DEFAULT_LENGTH = 64
_BLOCK_BYTES = 16 << 20

_LINE = re.compile(
    rb"^[ \t]*(\d{1,19}):[ \t]*(?:\((\d{1,9})\)[ \t]*)?(read|write)[ \t]+(?:0[xX])?"
    rb"([0-9a-fA-F]{1,16})(?:[ \t]+\((\d{1,9})\))?(?:[ \t]+(?:0[xX])?([0-9a-fA-F]+))?[ \t]*\r?$",
    re.MULTILINE,
)
_SKIPPED = re.compile(rb"^[ \t]*(?:#[^\n]*)?\r?$", re.MULTILINE)
_DIGITS = np.full(256, 0xFF, dtype=np.uint8)
_DIGITS[np.frombuffer(b"0123456789", np.uint8)] = np.arange(10)
_DIGITS[np.frombuffer(b"abcdef", np.uint8)] = np.arange(10, 16)
_DIGITS[np.frombuffer(b"ABCDEF", np.uint8)] = np.arange(10, 16)


def is_relative(path: str | os.PathLike[str]) -> bool:
    return Path(path).suffix.lower() == ".rstl"


def read_stl(
    path: str | os.PathLike[str],
    clock_hz: float = DEFAULT_CLOCK_HZ,
    relative: bool | None = None,
    default_length: int = DEFAULT_LENGTH,
    block_bytes: int = _BLOCK_BYTES,
) -> Iterator[np.ndarray]:
    """Yield STL_DTYPE chunks; ``time_ps`` is absolute (.stl) or the delay (.rstl)."""
    path = Path(path)
    if clock_hz <= 0:
        raise UserError(f"{path}: STL clock must be positive, got {clock_hz} Hz")
    relative = is_relative(path) if relative is None else relative
    line = 1
    last_time = 0
    try:
        with open_regular(path, "STL trace") as f:
            rest = b""
            while True:
                block = f.read(block_bytes)
                text = rest + block
                if block:
                    cut = text.rfind(b"\n") + 1
                    text, rest = text[:cut], text[cut:]
                    if not text:
                        continue
                elif not text:
                    return
                chunk = _parse_block(text, path, line, clock_hz, default_length)
                if not relative and len(chunk):
                    last_time = _check_monotonic(chunk, text, path, line, last_time)
                line += text.count(b"\n")
                if len(chunk):
                    yield chunk
                if not block:
                    return
    except OSError as exc:
        raise UserError(f"{path}: cannot read STL trace: {exc.strerror or exc}") from None


def load_stl(
    path: str | os.PathLike[str],
    clock_hz: float = DEFAULT_CLOCK_HZ,
    relative: bool | None = None,
    default_length: int = DEFAULT_LENGTH,
) -> np.ndarray:
    """The whole STL trace as one STL_DTYPE array."""
    chunks = list(read_stl(path, clock_hz, relative, default_length))
    return np.concatenate(chunks) if chunks else np.empty(0, STL_DTYPE)


def _parse_block(
    text: bytes, path: Path, first_line: int, clock_hz: float, default_length: int
) -> np.ndarray:
    matches = _LINE.findall(text)
    # split(b"\n") pieces: the empty piece after a final newline matches _SKIPPED
    lines = text.count(b"\n") + 1
    if len(matches) + len(_SKIPPED.findall(text)) != lines:
        _raise_first_bad_line(text, path, first_line)
    if not matches:
        return np.empty(0, STL_DTYPE)
    time_s, len_before, command, address, len_after, data = (
        np.array(col, dtype=bytes) for col in zip(*matches, strict=True)
    )
    out = np.empty(len(matches), STL_DTYPE)
    out["is_write"] = command == b"write"
    out["address"] = _parse_uint(address, 16)
    cycles = _parse_uint(time_s, 10)
    period_ps = 1e12 / clock_hz
    too_late = np.flatnonzero(cycles.astype(np.float64) * period_ps >= 2.0**64)
    if len(too_late):
        lineno = _line_of_match(text, first_line, int(too_late[0]))
        raise UserError(f"{path}:{lineno}: time does not fit in 64 bits of picoseconds")
    if period_ps.is_integer():
        out["time_ps"] = cycles * np.uint64(period_ps)
    else:
        out["time_ps"] = np.round(cycles.astype(np.float64) * period_ps).astype(np.uint64)
    both = (np.char.str_len(len_before) > 0) & (np.char.str_len(len_after) > 0)
    lengths = _parse_uint(np.where(np.char.str_len(len_before) > 0, len_before, len_after), 10)
    lengths = np.where(lengths == 0, np.uint64(default_length), lengths)
    explicit_zero = (_parse_uint(len_before, 10) == 0) & (np.char.str_len(len_before) > 0)
    explicit_zero |= (_parse_uint(len_after, 10) == 0) & (np.char.str_len(len_after) > 0)
    out["length"] = lengths
    data_digits = np.char.str_len(data)
    data_on_read = (data_digits > 0) & ~out["is_write"]
    data_mismatch = (data_digits > 0) & (data_digits != 2 * lengths)
    for mask, why in (
        (both, "length given twice (before the command and after the address)"),
        (explicit_zero, "length (0) must be at least 1 byte"),
        (data_on_read, "a read carries no data"),
        (data_mismatch, "write data must have exactly two hex digits per byte of the length"),
    ):
        bad = np.flatnonzero(mask)
        if len(bad):
            lineno = _line_of_match(text, first_line, int(bad[0]))
            raise UserError(f"{path}:{lineno}: {why}")
    return out


def _parse_uint(col: np.ndarray, base: int) -> np.ndarray:
    """Digit strings (a bytes array, left-aligned, NUL padded) to uint64, vectorised."""
    width = col.dtype.itemsize
    if width == 0 or len(col) == 0:
        return np.zeros(len(col), np.uint64)
    digits = _DIGITS[np.ascontiguousarray(col).view(np.uint8).reshape(len(col), width)]
    value = np.zeros(len(col), np.uint64)
    b = np.uint64(base)
    for j in range(width):
        d = digits[:, j]
        present = d != 0xFF
        value = np.where(present, value * b + d.astype(np.uint64), value)
    return value


def _check_monotonic(
    chunk: np.ndarray, text: bytes, path: Path, first_line: int, last_time: int
) -> int:
    times = chunk["time_ps"]
    previous = np.concatenate(([np.uint64(last_time)], times[:-1]))
    bad = np.flatnonzero(times < previous)
    if len(bad):
        i = int(bad[0])
        lineno = _line_of_match(text, first_line, i)
        raise UserError(
            f"{path}:{lineno}: time goes backwards ({int(times[i])} ps after "
            f"{int(previous[i])} ps); .stl times are absolute and must not decrease "
            "(use .rstl for delays)"
        )
    return int(times[-1])


def _line_of_match(text: bytes, first_line: int, match_index: int) -> int:
    """Line number of the ``match_index``-th request line (error path only)."""
    seen = -1
    for offset, line in enumerate(text.split(b"\n")):
        if _LINE.match(line):
            seen += 1
            if seen == match_index:
                return first_line + offset
    return first_line


def _raise_first_bad_line(text: bytes, path: Path, first_line: int) -> None:
    for offset, raw in enumerate(text.split(b"\n")):
        if _LINE.match(raw) or _SKIPPED.match(raw):
            continue
        line = raw.decode("utf-8", "replace").strip()
        raise UserError(f"{path}:{first_line + offset}: {_diagnose(line)}: {line[:80]!r}")
    raise UserError(f"{path}:{first_line}: malformed STL block")  # unreachable in practice


def _diagnose(line: str) -> str:
    """What is wrong with a line that did not match, in the user's terms."""
    head, colon, tail = line.partition(":")
    if not colon:
        return "expected '<cycles>: read|write <hex address>' (missing ':' after the time)"
    head = head.strip()
    if head.startswith("-"):
        return "time must be a non-negative number of clock cycles"
    if not head.isdigit():
        return f"time {head!r} is not a whole number of clock cycles"
    if len(head) > 19:
        return "time is too large (at most 19 digits)"
    tokens = tail.split()
    if tokens and tokens[0].startswith("("):
        tokens = tokens[1:]
    if not tokens:
        return "missing command (read or write) and address"
    if tokens[0] not in ("read", "write"):
        hint = " (commands are lower case)" if tokens[0].lower() in ("read", "write") else ""
        return f"unknown command {tokens[0]!r}, expected read or write{hint}"
    if len(tokens) < 2:
        return "missing address"
    if not re.fullmatch(r"(0[xX])?[0-9a-fA-F]{1,16}", tokens[1]):
        return f"address {tokens[1]!r} is not a hex number of at most 16 digits"
    return "expected '[(<length>)] <hex data>' after the address (length at most 9 digits)"
