"""Worker jobs of tests/test_python_systemc.py (importable by name: each runs in its own
process, since SystemC elaborates once per process)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from tlm_models.errors import UserError
from tlm_models.systemc import REQUEST_DTYPE, Simulation, requests

PAPER = Path(__file__).resolve().parent.parent / "platforms" / "attenio.yaml"
HEADER = Path(__file__).resolve().parent / "data" / "systemc" / "paced_memory.h"
#: The user's memory's window: free in attenio.yaml (hbm at 0, sram 0x1_..., kvbuf 0x2_...).
USER_BASE = 0x3_0000_0000
#: The writes start this long after the last read completed (the generator reads the results).
GAP_PS = 100_000


def _layout(sim: Simulation) -> dict[str, int]:
    """``FedRequest``'s field offsets and size as C++ sees them."""
    import cppyy

    cppyy.cppdef(
        "#include <cstddef>\n"
        "std::size_t attn_test_fed_offset(int i) {\n"
        "  using R = tlm_models::FedRequest;\n"
        "  const std::size_t at[] = {offsetof(R, issue_ps), offsetof(R, address),\n"
        "    offsetof(R, length), offsetof(R, write), offsetof(R, done_ps), offsetof(R, status),\n"
        "    sizeof(R)};\n"
        "  return at[i];\n}\n"
    )
    names = [*(REQUEST_DTYPE.names or ()), "itemsize"]
    return {name: int(sim.cpp.attn_test_fed_offset(i)) for i, name in enumerate(names)}


def paper_platform_with_user_modules() -> dict[str, Any]:
    """The paper's platform, a user's C++ memory on dma_noc's next output and a Python traffic
    generator on its next input: 16 reads of 256 B from the HBM, then, 100 ns after the last
    read completed, 8 writes of 512 B into the user's memory."""
    sim = Simulation(PAPER)
    sim.add_module(
        "mem",
        "user_models::PacedMemory",
        header=HEADER,
        params={"size": "64 KiB", "latency": "20 ns", "bytes_per_cycle": 64, "cycle": "1 ns"},
    )
    sim.bind("dma_noc.out", "mem.target")
    sim.map(USER_BASE, "64 KiB", "mem", via="dma_noc")
    seen: dict[str, Any] = {}

    def traffic() -> Iterator[np.ndarray]:
        reads = requests(np.arange(16) * 256, 256)
        yield reads
        seen["read_done_ps"] = reads["done_ps"].tolist()
        seen["read_status"] = reads["status"].tolist()
        writes = requests(USER_BASE + np.arange(8) * 512, 512, write=True)
        writes["issue_ps"][0] = int(reads["done_ps"].max()) + GAP_PS
        yield writes
        seen["write_done_ps"] = writes["done_ps"].tolist()

    sim.add_traffic("gen", traffic())
    sim.bind("gen.socket", "dma_noc.in")
    partial_ns = sim.run("1 us")
    partial_requests = sim.stat("gen/requests")
    end_ns = sim.run()
    again_ns = sim.run()  # nothing left to do: returns at once
    return {
        "again_ns": again_ns,
        "partial_ns": partial_ns,
        "partial_requests": partial_requests,
        "end_ns": end_ns,
        "stats": sim.flat_stats(),
        "layout": _layout(sim),
        "modules": sorted(sim.modules),
        **seen,
    }


TRAFFIC = Path(__file__).resolve().parent / "data" / "platforms" / "traffic.yaml"


def _refusal(call: Callable[[], object]) -> str:
    try:
        call()
    except UserError as exc:
        return str(exc)
    raise AssertionError("no UserError")


def failures_and_refusals() -> dict[str, Any]:
    """A small platform file with an override, a Python generator that raises after its first
    chunk, and the calls SystemC cannot honour."""
    sim = Simulation(TRAFFIC, overrides=("gen.requests=4",))

    def traffic() -> Iterator[np.ndarray]:
        yield requests(0x1000_0000 + np.arange(4) * 64, 64)
        raise ValueError("pattern ran out")

    sim.add_traffic("py", traffic())
    out: dict[str, Any] = {
        "no_module": _refusal(lambda: sim.bind("pi.socket", "noc.in")),
        "index": _refusal(lambda: sim.bind("py.socket", "noc.in[2]")),
        "bound": _refusal(lambda: sim.bind("py.socket", "hbm.target")),
        "role": _refusal(lambda: sim.bind("noc.in", "hbm.target")),
        "taken": _refusal(lambda: sim.add_traffic("gen", [])),
    }
    sim.bind("py.socket", "noc.in")
    out["second"] = _refusal(lambda: Simulation(TRAFFIC))
    try:
        sim.run()
    except ValueError as exc:
        out["raised"] = str(exc)
    out["py_requests"] = sim.stat("py/requests")
    out["gen_requests"] = sim.stat("gen/requests")
    out["rerun"] = _refusal(sim.run)
    return out
