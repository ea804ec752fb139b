"""A run's off-chip request stream as a DRAMSys STL trace (``attn-tlm run --export-stl``).

The off-chip memory logs every request it receives (``tlm_models/request_log.h``): arrival time
in the run, address, length, read or write. The export sorts them by arrival (loosely-timed
initiators call ahead of time, so call order is not time order; equal times keep call order),
adds the off-chip window's base back (the memory sees window-relative addresses) and writes
``<cycles>: (<length>) read|write 0x<address>`` lines, cycles of ``clock_hz`` rounded down.
``attn-tlm replay FILE --stl-clock HZ`` or another DRAM simulator replays the file.

A platform with several off-chip memories (two HBM stacks, ``platforms/attenio-x16.yaml``) gets
one file per memory, since an STL trace feeds one memory controller: ``OUT.stl`` becomes
``OUT.hbm0.stl`` and ``OUT.hbm1.stl``, each with the addresses of its own window. On a tiled
platform the requests of all tiles arrive at the shared memories and are logged there, in one
stream per memory. The export needs every request, so a run that exports replays exactly
(fast-forward skips iterations whose requests would be missing).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tlm_models.errors import UserError
from tlm_models.files.output_file import atomic_output
from tlm_models.platform.info import MemoryRegion
from tlm_models.platform.schema import PlatformConfig
from tlm_models.runtime.session import ticks_per_second

#: Why a run that exports its requests is not fast-forwarded (the result's fast_forward.reason).
EXACT_REASON = "--export-stl: the STL trace holds every request, so the run replays exactly"

#: One logged request, as the C++ LoggedRequest lays it out (24 bytes).
REQUEST_DTYPE = np.dtype(
    [("arrival", "<u8"), ("address", "<u8"), ("length", "<u4"), ("is_write", "<u4")]
)
#: Requests kept per run: 8 M x 24 B = 192 MiB at most.
MAX_REQUESTS = 8 << 20


def offchip_regions(config: PlatformConfig) -> list[MemoryRegion]:
    """Every off-chip memory of ``config`` with its first address window, in address order."""
    regions = [
        config.region_of(name)
        for name, c in config.components.items()
        if c.spec.memory == "offchip"
    ]
    return sorted((r for r in regions if r is not None), key=lambda r: r.base)


def stl_paths(path: Path, memories: Sequence[str]) -> dict[str, Path]:
    """Where each memory's STL file goes: ``path`` itself for one memory, else ``path`` with
    the memory's name before the suffix (``out.stl`` -> ``out.hbm0.stl``)."""
    if len(memories) == 1:
        return {memories[0]: path}
    return {m: path.with_name(f"{path.stem}.{m}{path.suffix}") for m in memories}


def enable(session: Any, memory: str, max_requests: int = MAX_REQUESTS) -> None:
    """Starts logging the requests of the off-chip memory ``memory`` of ``session`` (a
    NativeSession)."""
    if not session.enable_request_log(memory, max_requests):
        raise UserError(f"the off-chip memory ({memory}) keeps no request log for --export-stl")


def logged_requests(session: Any, memory: str) -> np.ndarray:
    """The requests ``memory`` logged, in call order; UserError if the log overflowed."""
    out: np.ndarray
    out, dropped = session.request_log(memory, REQUEST_DTYPE)
    if dropped:
        raise UserError(
            f"the run sent more than {MAX_REQUESTS:,} requests to the off-chip memory; "
            "--export-stl keeps at most that many"
        )
    return out


def write_stl(path: Path, requests: np.ndarray, base: int, clock_hz: float = 1e9) -> int:
    """Writes ``requests`` (REQUEST_DTYPE, arrival in ticks) as an STL file; returns the count."""
    ticks_per_s = ticks_per_second()
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
    with atomic_output(path, "STL export") as f:
        f.write(header)
        if len(lines):
            f.write("\n".join(lines.tolist()) + "\n")
    return len(r)


def enable_all(session: Any, config: PlatformConfig, max_requests: int = MAX_REQUESTS) -> None:
    """Starts logging the requests of every off-chip memory of ``config``."""
    for region in offchip_regions(config):
        enable(session, region.name, max_requests)


def logged_by_memory(session: Any, config: PlatformConfig) -> dict[str, np.ndarray]:
    """Each off-chip memory's logged requests (``enable_all`` started them), by name."""
    return {r.name: logged_requests(session, r.name) for r in offchip_regions(config)}


def write_stl_files(
    path: Path, requests: dict[str, np.ndarray], config: PlatformConfig, clock_hz: float
) -> dict[str, Path]:
    """Writes each memory's requests as its STL file (``stl_paths``); returns where."""
    regions = {r.name: r for r in offchip_regions(config)}
    paths = stl_paths(path, list(requests))
    for memory, out in paths.items():
        write_stl(out, requests[memory], regions[memory].base, clock_hz)
    return paths
