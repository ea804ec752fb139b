"""Functions run in worker processes by the worker tests: they must be importable by name."""

from __future__ import annotations

import os

import cppyy

from tlm_models import kernel

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


def tick() -> tuple[int, float, int]:
    """Runs a small design; returns ticks, the simulated end time in ns, and the worker pid."""
    gbl = _define()
    m = gbl.worker_test.Ticker("ticker")
    gbl.sc_core.sc_start()
    return int(m.ticks), float(gbl.sc_core.sc_time_stamp().to_seconds() * 1e9), os.getpid()


def traffic_platform(path: str) -> dict[str, int]:
    """Elaborates a platform holding a traffic generator ``gen``, runs it to the end."""
    from tlm_models.platform import load_platform
    from tlm_models.platform.builder import build_platform

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
