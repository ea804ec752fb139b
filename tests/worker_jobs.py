"""Functions run in worker processes by the worker tests: they must be importable by name."""

from __future__ import annotations

import os
from pathlib import Path

import cppyy

from tlm_models.runtime import kernel

_CRASHERS = r"""
namespace worker_test {
// Dereferences a null pointer from inside a SystemC thread: a real segfault in the kernel.
struct Segfaulter : sc_core::sc_module {
  SC_HAS_PROCESS(Segfaulter);
  explicit Segfaulter(sc_core::sc_module_name n) : sc_core::sc_module(n) { SC_THREAD(run); }
  void run() {
    wait(5, sc_core::SC_NS);
    volatile int* p = nullptr;
    *p = 42;
  }
};
// Reports a SystemC fatal from inside a thread, as a model does on a broken invariant.
struct Fatal : sc_core::sc_module {
  SC_HAS_PROCESS(Fatal);
  explicit Fatal(sc_core::sc_module_name n) : sc_core::sc_module(n) { SC_THREAD(run); }
  void run() {
    wait(5, sc_core::SC_NS);
    SC_REPORT_FATAL("worker_test/fatal", "deliberate fatal from a model");
  }
};
// Counts ten 10 ns steps.
struct Ticker : sc_core::sc_module {
  SC_HAS_PROCESS(Ticker);
  int ticks = 0;
  explicit Ticker(sc_core::sc_module_name n) : sc_core::sc_module(n) { SC_THREAD(run); }
  void run() { for (int i = 0; i < 10; ++i) { wait(10, sc_core::SC_NS); ++ticks; } }
};
// An engine that never returns from its first operation: it waits for an event nobody
// notifies, as a model waiting on a target that never answers would.
struct StuckEngine : tlm_models::OpExecutor {
  sc_core::sc_event never{"never"};
  tlm_models::OpTiming execute(const tlm_models::TraceOp&, const sc_core::sc_time&) override {
    sc_core::wait(never);
    return tlm_models::OpTiming{};
  }
};
// Prints a SystemC warning, as the kernel does for e.g. W571, from inside the simulation.
inline void report_warning() { SC_REPORT_WARNING("worker_test/warning", "deliberate warning"); }
}
"""


def _define() -> object:
    gbl = kernel.load_models()
    if not hasattr(gbl, "worker_test"):
        cppyy.cppdef(_CRASHERS)
    return gbl


def segfault() -> None:
    gbl = _define()
    _m = gbl.worker_test.Segfaulter("crasher")
    gbl.sc_core.sc_start()


def systemc_fatal() -> None:
    gbl = _define()
    _m = gbl.worker_test.Fatal("fatal")
    gbl.sc_core.sc_start()


def python_error() -> None:
    raise ValueError("deliberate Python error")


def stuck_replay() -> None:
    """Replays two loads on an engine that never returns from the first."""
    import cppyy.ll
    import numpy as np

    from tlm_models.platform.schema import PlatformConfig
    from tlm_models.replay.replayer import _drive
    from tlm_models.runtime.session import NativeSession
    from tlm_models.trace.record import RECORD_DTYPE, EngineKind, OpKind

    gbl = _define()
    engine = gbl.worker_test.StuckEngine()
    session = NativeSession(PlatformConfig(name="stuck", description="", components={}))
    session.new_replayer(window=16, lookahead=16)
    # OpExecutor is StuckEngine's only base: the object's address is the executor's.
    session.bind_executor(0, cppyy.ll.addressof(engine), "dma0", int(EngineKind.DMA))
    records = np.zeros(2, dtype=RECORD_DTYPE)
    records["kind"] = OpKind.LOAD
    records["m"] = records["n"] = 1
    _drive(session, iter([records]), None)


def stdout_is_stderr() -> bool:
    """Issues a SystemC warning (printed on stdout by SystemC) in the worker; returns whether
    the worker's stdout is the same open file as its stderr."""
    gbl = _define()
    gbl.worker_test.report_warning()
    out, err = os.fstat(1), os.fstat(2)
    return (out.st_dev, out.st_ino) == (err.st_dev, err.st_ino)


def sleep_with_pid_file(path: str) -> None:
    """Writes this worker's pid to ``path``, then sleeps until killed."""
    import time

    Path(path).write_text(str(os.getpid()))
    while True:
        time.sleep(1)


def tick() -> tuple[int, float, int]:
    """Runs a small design; returns ticks, the simulated end time in ns, and the worker pid."""
    gbl = _define()
    m = gbl.worker_test.Ticker("ticker")
    gbl.sc_core.sc_start()
    return int(m.ticks), float(gbl.sc_core.sc_time_stamp().to_seconds() * 1e9), os.getpid()


def traffic_platform(path: str) -> dict[str, int]:
    """Elaborates a platform holding a traffic generator ``gen``, runs it to the end."""
    from tlm_models.platform import load_platform
    from tlm_models.runtime.bound_platform import build_platform

    gbl = kernel.load_models()
    built = build_platform(load_platform(path))
    gbl.sc_core.sc_start()
    gen = built.modules["gen"]
    return {
        "sim_time_ps": int(gbl.sc_core.sc_time_stamp().value()),
        "last_completion_ps": int(gen.last_completion().value()),
        "bytes": int(gen.bytes()),
        "completed": int(gen.completed()),
        "errors": int(gen.errors()),
    }
