"""One entry point to open or write any trace: binary, text, or DRAMSys STL.

The format comes from the file's magic first (a binary trace is recognised under any name),
then from its extension. Operation traces yield RECORD_DTYPE chunks; STL memory traces yield
STL_DTYPE chunks under a header whose ``dataflow`` is ``"stl"``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tlm_models.errors import UserError
from tlm_models.trace.binary import (
    DEFAULT_CHUNK_RECORDS,
    BinaryTrace,
    is_binary_trace,
    write_binary,
)
from tlm_models.trace.header import TraceHeader
from tlm_models.trace.record import RECORD_DTYPE
from tlm_models.trace.stl import DEFAULT_CLOCK_HZ, STL_DTYPE, read_stl
from tlm_models.trace.text import read_text, write_text

BINARY_SUFFIXES = (".bin", ".attntrace")
TEXT_SUFFIXES = (".txt",)  # also matches name.trace.txt
STL_SUFFIXES = (".stl", ".rstl")
FORMATS = ("binary", "text", "stl", "rstl")
STL_DATAFLOW = "stl"


@dataclass
class OpenedTrace:
    """A trace ready to stream: its header and a way to walk its records in chunks."""

    path: Path
    format: str  # one of FORMATS
    header: TraceHeader
    _chunks: Callable[[int], Iterator[np.ndarray]]

    @property
    def dtype(self) -> np.dtype[np.void]:
        """RECORD_DTYPE for operation traces, STL_DTYPE for memory traces."""
        return STL_DTYPE if self.is_memory_trace else RECORD_DTYPE

    @property
    def is_memory_trace(self) -> bool:
        return self.format in ("stl", "rstl")

    def chunks(self, chunk_records: int = DEFAULT_CHUNK_RECORDS) -> Iterator[np.ndarray]:
        """Consecutive chunks of at most ``chunk_records`` records (STL: one per text block)."""
        return self._chunks(chunk_records)

    def records(self) -> np.ndarray:
        """All records in one array (a memmap for binary traces)."""
        if self.format == "binary":
            return BinaryTrace(self.path).records()
        parts = list(self.chunks())
        return np.concatenate(parts) if parts else np.empty(0, self.dtype)


def detect_format(path: str | os.PathLike[str]) -> str:
    """The trace format of ``path``: by magic, then by extension."""
    path = Path(path)
    if is_binary_trace(path):
        return "binary"
    return format_for_name(path)


def format_for_name(path: str | os.PathLike[str]) -> str:
    """The format a file name asks for (used when writing)."""
    suffix = Path(path).suffix.lower()
    if suffix in BINARY_SUFFIXES:
        return "binary"
    if suffix in TEXT_SUFFIXES:
        return "text"
    if suffix in STL_SUFFIXES:
        return suffix[1:]
    raise UserError(
        f"{path}: cannot tell the trace format from the name; use "
        f"{', '.join((*BINARY_SUFFIXES, '.trace.txt', *TEXT_SUFFIXES, *STL_SUFFIXES))}"
    )


def open_trace(path: str | os.PathLike[str], stl_clock_hz: float = DEFAULT_CLOCK_HZ) -> OpenedTrace:
    """Open a trace of any supported format; header errors surface here as UserError."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such trace file")
    fmt = detect_format(path)
    if fmt == "binary":
        trace = BinaryTrace(path)
        return OpenedTrace(path, fmt, trace.header, trace.chunks)
    if fmt == "text":
        header, records = read_text(path)
        return OpenedTrace(path, fmt, header, lambda size: _slices(records, size))
    relative = fmt == "rstl"
    header = TraceHeader(
        dataflow=STL_DATAFLOW,
        engines=[],
        params={"relative": relative, "clock_hz": stl_clock_hz},
    )
    return OpenedTrace(
        path, fmt, header, lambda _size: read_stl(path, stl_clock_hz, relative=relative)
    )


def write_trace(
    path: str | os.PathLike[str],
    header: TraceHeader,
    chunks: Iterable[np.ndarray],
    fmt: str | None = None,
) -> int:
    """Write an operation trace as binary or text (by ``fmt`` or the file name)."""
    fmt = fmt or format_for_name(path)
    if fmt == "binary":
        return write_binary(path, header, chunks)
    if fmt == "text":
        return write_text(path, header, chunks)
    raise UserError(f"{path}: cannot write operation traces as {fmt}; use binary or text")


def _slices(records: np.ndarray, size: int) -> Iterator[np.ndarray]:
    if size <= 0:
        raise ValueError("chunk size must be positive")
    for start in range(0, len(records), size):
        yield records[start : start + size]
