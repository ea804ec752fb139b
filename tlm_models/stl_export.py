"""A run's off-chip request stream as a DRAMSys STL trace (``attn-tlm run --export-stl``).

The off-chip memory logs every request it receives (``tlm_models/request_log.h``): arrival time
in the run, address, length, read or write. The export sorts them by arrival (loosely-timed
initiators call ahead of time, so call order is not time order; equal times keep call order),
adds the off-chip window's base back (the memory sees window-relative addresses) and writes
``<cycles>: (<length>) read|write 0x<address>`` lines, cycles of ``clock_hz`` rounded down.
``attn-tlm replay FILE --stl-clock HZ`` or another DRAM simulator replays the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tlm_models import kernel
from tlm_models.errors import UserError

#: One logged request, as the C++ LoggedRequest lays it out (24 bytes).
REQUEST_DTYPE = np.dtype(
    [("arrival", "<u8"), ("address", "<u8"), ("length", "<u4"), ("is_write", "<u4")]
)
#: Requests kept per run: 8 M x 24 B = 192 MiB at most.
MAX_REQUESTS = 8 << 20


def enable(memory: Any, max_requests: int = MAX_REQUESTS) -> None:
    """Starts logging the requests of ``memory`` (an HbmMemory)."""
    if not hasattr(memory, "enable_request_log"):
        raise UserError(
            f"the off-chip memory ({type(memory).__name__}) keeps no request log for --export-stl"
        )
    memory.enable_request_log(max_requests)


def logged_requests(memory: Any) -> np.ndarray:
    """The requests ``memory`` logged, in call order; UserError if the log overflowed."""
    import cppyy.ll

    log = memory.request_log()
    if int(log.dropped()):
        raise UserError(
            f"the run sent more than {MAX_REQUESTS:,} requests to the off-chip memory; "
            "--export-stl keeps at most that many"
        )
    out = np.zeros(int(log.size()), dtype=REQUEST_DTYPE)
    if len(out):
        log.copy(cppyy.ll.cast["void*"](out.ctypes.data))
    return out


def write_stl(path: Path, requests: np.ndarray, base: int, clock_hz: float = 1e9) -> int:
    """Writes ``requests`` (REQUEST_DTYPE, arrival in ticks) as an STL file; returns the count."""
    resolution = float(kernel.load_models().sc_core.sc_get_time_resolution().to_seconds())
    ticks_per_s = float(round(1.0 / resolution))
    order = np.argsort(requests["arrival"], kind="stable")
    r = requests[order]
    cycles = (r["arrival"].astype(np.float64) * (clock_hz / ticks_per_s)).astype(np.uint64)
    command = np.where(r["is_write"] != 0, ") write 0x", ") read 0x")
    lines = np.char.add(
        np.char.add(np.char.add(cycles.astype(str), ": ("), r["length"].astype(str)),
        np.char.add(command, np.char.mod("%x", r["address"] + np.uint64(base))),
    )
    header = (
        f"# off-chip requests of an attn-tlm run: {len(r)} requests, times in cycles of "
        f"{clock_hz:g} Hz\n"
    )
    with open(path, "w", encoding="ascii") as f:
        f.write(header)
        if len(lines):
            f.write("\n".join(lines.tolist()) + "\n")
    return len(r)
