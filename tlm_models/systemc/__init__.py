"""SystemC from Python: the models as SystemC modules in this process, through cppyy.

Compose a platform (a YAML file or a ``Platform``, with overrides), add your own SystemC module
written in C++ (a header cling compiles) or a traffic generator fed from Python, bind them to
the platform's sockets by name, run, and read every statistic in one tree
(docs/python-systemc.md)::

    from tlm_models.systemc import Simulation, requests

    sim = Simulation("platforms/attenio.yaml")
    sim.add_traffic("gen", requests(range(0, 1 << 20, 256), 256))
    sim.bind("gen.socket", "dma_noc.in")
    sim.run()
    print(sim.stat("gen/bytes_read"), sim.stat("hbm/reads"))

The process that elaborates becomes the SystemC process (once per process);
``run_in_worker(fn, ...)`` runs a function that builds a ``Simulation`` in a fresh worker and
returns its plain-data result. Dataflow runs and sweeps take the compiled library instead
(``attn-tlm run``, ``tlm_models.simulate``). This folder sits at the top beside ``api``: it
may import ``run`` (its worker), ``runtime`` (it elaborates through
``runtime.bound_platform``), ``platform``, ``units`` and ``errors``; nothing below imports
it. Importing it is cheap: cppyy loads on the first call that needs SystemC.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
    "REQUEST_DTYPE",
    "TLM_OK_RESPONSE",
    "Simulation",
    "requests",
    "run_in_worker",
]

if TYPE_CHECKING:
    from tlm_models.run.worker import run_in_worker
    from tlm_models.systemc.request_chunks import REQUEST_DTYPE, TLM_OK_RESPONSE, requests
    from tlm_models.systemc.simulation import Simulation

_HOMES = {
    "REQUEST_DTYPE": "tlm_models.systemc.request_chunks",
    "TLM_OK_RESPONSE": "tlm_models.systemc.request_chunks",
    "requests": "tlm_models.systemc.request_chunks",
    "Simulation": "tlm_models.systemc.simulation",
    "run_in_worker": "tlm_models.run.worker",
}


def __getattr__(name: str) -> Any:
    """Each name imported on first use (numpy and the platform code load only when needed)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'tlm_models.systemc' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(home), name)
