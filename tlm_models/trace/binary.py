"""The binary trace file: magic, version, JSON header, then 64-byte records (traces/README.md).

Records are read through ``np.memmap`` so a 50 M-record trace is walked chunk by chunk without
copying; the writer streams chunks to a temporary file and renames it into place at close, so
an interrupted run never leaves a truncated file that looks valid.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import IO

import numpy as np

from tlm_models.errors import UserError
from tlm_models.files.bounded_input import (
    InputRefused,
    decode_utf8,
    loads_json,
    open_regular,
    open_regular_file,
)
from tlm_models.files.output_file import atomic_output
from tlm_models.trace.header import FORMAT_VERSION, TraceHeader
from tlm_models.trace.header_codec import header_from_dict, header_to_dict
from tlm_models.trace.record import RECORD_DTYPE

MAGIC = b"ATTNTRC\0"
_PREFIX = struct.Struct("<8sII")  # magic, format version, header length
RECORD_BYTES = RECORD_DTYPE.itemsize
ALIGN = 64
# Room kept in the header block so op_count can be patched in place at close (up to 20 digits).
_OP_COUNT_RESERVE = 20
# A header beyond this is not a trace header; refuse before reading it into memory.
MAX_HEADER_BYTES = 64 << 20
DEFAULT_CHUNK_RECORDS = 1 << 20


def _header_block(header: TraceHeader, op_count: int, length: int | None = None) -> bytes:
    """The JSON header padded with spaces to ``length`` (default: reserve room, align records)."""
    data = header_to_dict(header)
    data["op_count"] = op_count
    text = json.dumps(data, separators=(",", ":")).encode("utf-8")
    if length is None:
        unpadded = _PREFIX.size + len(text) + _OP_COUNT_RESERVE
        length = -(-unpadded // ALIGN) * ALIGN - _PREFIX.size
    if len(text) > length:
        raise ValueError(f"trace header grew beyond its reserved {length} bytes")
    return text + b" " * (length - len(text))


class BinaryTraceWriter:
    """Streams record chunks to ``path``; use as a context manager (or call :meth:`close`)."""

    def __init__(self, path: str | os.PathLike[str], header: TraceHeader) -> None:
        self.path = Path(path)
        self.header = header
        self.op_count = 0
        self._block = _header_block(header, 0)
        # Only a regular file is written, through a temporary renamed into place once on disk.
        self._output = atomic_output(self.path, "trace", binary=True)
        self._file: IO[bytes] | None = self._output.__enter__()
        try:
            self._file.write(_PREFIX.pack(MAGIC, FORMAT_VERSION, len(self._block)))
            self._file.write(self._block)
        except BaseException as exc:
            self._file = None
            self._output.__exit__(type(exc), exc, exc.__traceback__)  # removes the temporary
            raise

    def write(self, chunk: np.ndarray) -> None:
        """Append records; ``chunk`` is a 1-D array of RECORD_DTYPE (any memory layout)."""
        if self._file is None:
            raise ValueError(f"{self.path}: writer is closed")
        if chunk.dtype != RECORD_DTYPE or chunk.ndim != 1:
            raise TypeError(f"trace chunks must be 1-D RECORD_DTYPE arrays, got {chunk.dtype}")
        self._file.write(np.ascontiguousarray(chunk).view(np.uint8).data)
        self.op_count += len(chunk)

    def close(self) -> None:
        """Patch op_count into the header and move the finished file into place."""
        if self._file is None:
            return
        f, self._file = self._file, None
        try:
            end = f.tell()
            f.seek(_PREFIX.size)
            f.write(_header_block(self.header, self.op_count, len(self._block)))
            f.seek(end)  # the output's size check compares the file with where writing ended
        except BaseException as exc:
            self._output.__exit__(type(exc), exc, exc.__traceback__)
            raise
        self._output.__exit__(None, None, None)
        self.header.op_count = self.op_count

    def abort(self) -> None:
        """Drop the partial file; the destination is left untouched."""
        if self._file is not None:
            self._file = None
            error = UserError(f"{self.path}: the trace was not finished")
            with contextlib.suppress(UserError):
                self._output.__exit__(UserError, error, None)

    def __enter__(self) -> BinaryTraceWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def write_binary(
    path: str | os.PathLike[str],
    header: TraceHeader,
    chunks: Iterable[np.ndarray],
) -> int:
    """Write a whole trace from an iterable of chunks; returns the record count."""
    with BinaryTraceWriter(path, header) as writer:
        for chunk in chunks:
            writer.write(chunk)
    return writer.op_count


class BinaryTrace:
    """An opened binary trace: validated header plus zero-copy access to its records."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.header, self.data_offset, self.record_count = read_header(self.path)

    def records(self) -> np.ndarray:
        """All records as a read-only memmap (no data is read until touched)."""
        if self.record_count == 0:
            return np.empty(0, dtype=RECORD_DTYPE)
        return np.memmap(
            self.path,
            dtype=RECORD_DTYPE,
            mode="r",
            offset=self.data_offset,
            shape=(self.record_count,),
        )

    def chunks(self, chunk_records: int = DEFAULT_CHUNK_RECORDS) -> Iterator[np.ndarray]:
        """Consecutive slices of at most ``chunk_records`` records, views into the memmap."""
        if chunk_records <= 0:
            raise ValueError("chunk_records must be positive")
        records = self.records()
        for start in range(0, self.record_count, chunk_records):
            yield records[start : start + chunk_records]


def read_binary(path: str | os.PathLike[str]) -> tuple[TraceHeader, np.ndarray]:
    """Header and the whole record memmap of a binary trace."""
    trace = BinaryTrace(path)
    return trace.header, trace.records()


def is_binary_trace(path: str | os.PathLike[str]) -> bool:
    """True if the file starts with the binary trace magic."""
    try:
        with open_regular_file(path) as f:
            return f.read(len(MAGIC)) == MAGIC
    except (OSError, InputRefused):
        return False


def read_header(path: Path) -> tuple[TraceHeader, int, int]:
    """The header, the byte offset of the first record and the number of records."""
    try:
        with open_regular(path, "trace") as f:
            size = os.fstat(f.fileno()).st_size
            prefix = f.read(_PREFIX.size)
            if len(prefix) < _PREFIX.size:
                raise UserError(
                    f"{path}: truncated trace: {size} bytes, the fixed prefix alone is "
                    f"{_PREFIX.size} bytes (magic, version, header length)"
                )
            magic, version, length = _PREFIX.unpack(prefix)
            if magic != MAGIC:
                raise UserError(
                    f"{path}: not an attn-tlm binary trace: starts with {magic!r}, "
                    f"expected {MAGIC!r}"
                )
            if version != FORMAT_VERSION:
                raise UserError(
                    f"{path}: binary trace format version {version} is not supported "
                    f"(this build reads version {FORMAT_VERSION})"
                )
            data_offset = _PREFIX.size + length
            if length > MAX_HEADER_BYTES or data_offset > size:
                raise UserError(
                    f"{path}: truncated trace: header claims {length} bytes but the file has "
                    f"{size - _PREFIX.size} bytes after the prefix"
                )
            block = f.read(length)
    except OSError as exc:
        raise UserError(f"{path}: cannot read trace: {exc.strerror or exc}") from None
    decoded = loads_json(decode_utf8(block, str(path), "trace header"), str(path), "trace header")
    header = header_from_dict(decoded, str(path))
    if data_offset % ALIGN:
        raise UserError(
            f"{path}: records start at byte {data_offset}, expected a multiple of {ALIGN} "
            "(header not padded)"
        )
    body = size - data_offset
    whole, partial = divmod(body, RECORD_BYTES)
    if partial:
        raise UserError(
            f"{path}: file size {size} bytes is not header ({data_offset} bytes) plus a multiple "
            f"of {RECORD_BYTES}: record {whole} is cut off after {partial} bytes"
        )
    if header.op_count != whole:
        raise UserError(
            f"{path}: header op_count is {header.op_count} but the file holds {whole} records"
            + (" (truncated copy?)" if whole < header.op_count else "")
        )
    return header, data_offset, whole
