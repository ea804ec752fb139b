"""Requests of a Python traffic generator: the record layout shared with C++ and the feeder.

A Python generator never runs per transaction: it hands ``FedTrafficGenerator``
(``fed_traffic_generator.h``) whole numpy arrays of requests, which the C++ thread issues as
``b_transport`` calls, writing each completion time and response status back into the array.
Python is called again only when a chunk is used up (a call into Python costs as much as
several LT transactions; docs/python-systemc.md has the measured rates).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from tlm_models.errors import UserError

__all__ = ["REQUEST_DTYPE", "TLM_OK_RESPONSE", "ChunkFeeder", "ChunkSource", "requests"]

#: One request; the layout of ``tlm_models::FedRequest`` (40 bytes). ``issue_ps``: earliest
#: issue time (absolute, ps); ``write``: 0 read, 1 write; ``done_ps`` and ``status`` (a
#: ``tlm::tlm_response_status``, 1 = OK) are written back when the request completes.
REQUEST_DTYPE = np.dtype(
    {
        "names": ["issue_ps", "address", "length", "write", "done_ps", "status"],
        "formats": ["<u8", "<u8", "<u4", "u1", "<u8", "<i4"],
        "offsets": [0, 8, 16, 20, 24, 32],
        "itemsize": 40,
    }
)

#: ``tlm::TLM_OK_RESPONSE``: the ``status`` of a request that completed without error.
TLM_OK_RESPONSE = 1


def requests(
    addresses: Any,
    length: Any,
    *,
    write: Any = False,
    issue_ps: Any = 0,
) -> np.ndarray:
    """A chunk of requests: one per address; ``length``, ``write`` and ``issue_ps`` are a value
    for all or one per address (numpy broadcasting).

    >>> requests([0x0, 0x100], 256, write=[False, True])[["address", "write"]].tolist()
    [(0, 0), (256, 1)]
    """
    address = np.asarray(addresses, dtype=np.uint64).reshape(-1)
    out = np.zeros(len(address), dtype=REQUEST_DTYPE)
    out["address"] = address
    out["length"] = length
    out["write"] = np.asarray(write, dtype=bool)
    out["issue_ps"] = issue_ps
    return out


def _as_chunk(value: object, index: int) -> np.ndarray:
    """``value`` as a contiguous REQUEST_DTYPE array: the caller's own array when it is one (so
    the results land in it), else a converted copy."""
    if not isinstance(value, np.ndarray):
        raise UserError(
            f"traffic chunk {index}: expected a numpy array of REQUEST_DTYPE records, "
            f"got {type(value).__name__}"
        )
    if value.dtype != REQUEST_DTYPE or not value.flags.c_contiguous or value.ndim != 1:
        missing = [n for n in ("address", "length") if n not in (value.dtype.names or ())]
        if missing:
            raise UserError(
                f"traffic chunk {index}: the records lack field(s) {', '.join(missing)} "
                "(build them with tlm_models.systemc.requests)"
            )
        converted = np.zeros(value.size, dtype=REQUEST_DTYPE)
        for name in value.dtype.names or ():
            if name in (converted.dtype.names or ()):
                converted[name] = value[name].reshape(-1)
        value = converted
    short = np.flatnonzero(value["length"] == 0)
    if len(short):
        raise UserError(
            f"traffic chunk {index}, request {int(short[0])}: length must be at least 1 B"
        )
    return value


#: What ``add_traffic`` takes: one chunk, an iterable of chunks (a generator), or a callable
#: returning the next chunk, None at the end.
ChunkSource = np.ndarray | Iterable[np.ndarray] | Callable[[], np.ndarray | None]


def _until_none(next_chunk: Callable[[], np.ndarray | None]) -> Iterator[np.ndarray]:
    """Calls ``next_chunk`` for each chunk until it returns None (``iter(f, None)`` would
    compare an array with None element by element)."""
    while (chunk := next_chunk()) is not None:
        yield chunk


class ChunkFeeder:
    """The refill callback of one ``FedTrafficGenerator``: takes the next chunk from the user's
    iterable, keeps it alive while C++ reads it, and never lets an exception cross into C++
    (one that did would leave the SystemC kernel unusable): it is kept and raised after
    ``sc_start`` returns."""

    def __init__(self, name: str, generator: Any, chunks: ChunkSource):
        self.name = name
        self._generator = generator
        self._chunks: Iterator[np.ndarray]
        if isinstance(chunks, np.ndarray):
            self._chunks = iter([chunks])
        elif callable(chunks):
            self._chunks = _until_none(chunks)
        else:
            self._chunks = iter(chunks)
        self._current: np.ndarray | None = None
        self._index = 0
        self.error: BaseException | None = None

    def __call__(self) -> int:
        try:
            while True:
                value = next(self._chunks, None)
                if value is None:
                    self._current = None
                    return 0
                chunk = _as_chunk(value, self._index)
                self._index += 1
                if len(chunk):
                    break
            self._current = chunk
            self._generator.feed(chunk.ctypes.data, len(chunk))
            return 1
        except BaseException as exc:  # re-raised in the caller of sc_start, never into C++
            if isinstance(exc, UserError):
                exc = UserError(f"traffic generator '{self.name}': {exc}")
            self.error = exc
            return -1
