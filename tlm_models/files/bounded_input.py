"""Input files read with limits: a hostile file ends in a one-line error, never a hang.

Every file the package reads from the user (platforms and their includes, traces, STL files,
config.json, results.jsonl, ERT files) is opened here. Only a regular file is read, and it is
opened without blocking before it is checked, so a FIFO, a device such as /dev/zero, a
directory or a symbolic-link loop is refused at once (a FIFO swapped in after a check cannot
block either). The content is read up to a size cap; text must be UTF-8; JSON is parsed with a
nesting cap and an integer-digit cap (Python's own limit on int() ends in a ValueError
traceback, its recursion limit in a RecursionError). :func:`printable` strips terminal escape
sequences and control characters from anything echoed back to the terminal.
"""

from __future__ import annotations

import json
import os
import re
import stat
from itertools import accumulate
from pathlib import Path
from typing import IO, Any

from tlm_models.errors import UserError
from tlm_models.files.output_file import file_kind

__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_JSON_INT_DIGITS",
    "InputRefused",
    "loads_json",
    "open_regular",
    "open_regular_file",
    "printable",
    "read_bounded",
    "read_capped",
    "read_json",
    "read_text_bounded",
]

#: JSON nesting: a result record nests 5 levels, a config.json or trace header 3; 64 is far
#: above any file the package writes or reads and far below the interpreter's recursion limit.
MAX_JSON_DEPTH = 64
#: The longest integer in JSON: a 64-bit value has 20 digits; 100 leaves room for any count
#: while int() of it stays instant (Python refuses over 4,300 digits with a traceback).
MAX_JSON_INT_DIGITS = 100


class InputRefused(Exception):
    """A file that is not read: not a regular file, or larger than its cap (the message
    names neither the path nor what the file is; the caller adds them)."""


def open_regular_file(path: str | os.PathLike[str]) -> IO[bytes]:
    """``path`` opened for reading in binary if it is a regular file (after following
    symbolic links); InputRefused if it is anything else, OSError if it cannot be opened."""
    # O_NONBLOCK: opening a FIFO must not wait for a writer; a regular file ignores it.
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise InputRefused("is a directory, not a regular file") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputRefused(f"is {file_kind(mode)}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_capped(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``; InputRefused beyond ``max_bytes``."""
    with open_regular_file(path) as f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputRefused(f"larger than the {max_bytes:,} B such a file may have")
    return data


def open_regular(path: str | os.PathLike[str], what: str) -> IO[bytes]:
    """:func:`open_regular_file` with a UserError naming the path and what it should be."""
    name = os.fspath(path)
    try:
        return open_regular_file(name)
    except InputRefused as exc:
        raise UserError(f"{name}: {exc} (expected a {what})") from None
    except OSError as exc:
        raise UserError(f"{name}: cannot read the {what}: {exc.strerror or exc}") from None


def read_bounded(path: str | os.PathLike[str], what: str, max_bytes: int) -> bytes:
    """:func:`read_capped` with a UserError naming the path and what it should be."""
    name = os.fspath(path)
    try:
        return read_capped(name, max_bytes)
    except InputRefused as exc:
        raise UserError(f"{name}: {exc} (expected a {what})") from None
    except OSError as exc:
        raise UserError(f"{name}: cannot read the {what}: {exc.strerror or exc}") from None


def decode_utf8(data: bytes, where: str, what: str) -> str:
    """``data`` as UTF-8 text, or a UserError naming the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(
            f"{where}: the {what} is not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None


def read_text_bounded(path: str | os.PathLike[str], what: str, max_bytes: int) -> str:
    """The UTF-8 text of the regular file ``path`` of at most ``max_bytes``."""
    return decode_utf8(read_bounded(path, what, max_bytes), os.fspath(path), what)


# Strings are removed before brackets are counted: a bracket inside a string is not nesting.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON ``text`` (0 for a scalar)."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_JSON_INT_DIGITS:
        raise ValueError(f"an integer of {digits} digits (at most {MAX_JSON_INT_DIGITS})")
    return int(text)


def loads_json(text: str, where: str, what: str = "JSON") -> Any:
    """``json.loads`` within the nesting and integer caps; UserError naming ``where``."""
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise UserError(
            f"{where}: the {what} is nested too deeply ({depth} levels, at most {MAX_JSON_DEPTH})"
        )
    try:
        return json.loads(text, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{where}: the {what} is not valid JSON: {exc.msg} (line {exc.lineno} column "
            f"{exc.colno})"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise UserError(f"{where}: the {what} holds {exc}") from None


def read_json(path: Path, what: str, max_bytes: int) -> Any:
    """A JSON file read through :func:`read_text_bounded` and :func:`loads_json`."""
    return loads_json(read_text_bounded(path, what, max_bytes), str(path), what)


# CSI and other escape sequences, then any remaining C0/C1 control character but tab/newline.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]?|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape_controls(text: str) -> str:
    """``text`` with every control character but tab and newline shown as its escape (``\\x1b``):
    an error message quoting a hostile value stays one inert line."""
    return _CONTROLS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` without terminal escape sequences or control characters (tab and newline
    stay): a file's description or a model's name cannot move the cursor or retitle the
    terminal when it is echoed."""
    return _ESCAPES.sub("", text)
