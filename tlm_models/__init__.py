"""attn-tlm: SystemC TLM-2.0 models of attention accelerators, driven from Python.

The public API (docs/api.md)::

    from tlm_models import Platform, Workload, simulate
    result = simulate("attenio", Workload(seq_len=1024, head_dim=64), "platforms/attenio.yaml")

Importing the package is cheap: the API loads on first use, the compiled models on the first
simulation, in a worker process (``tlm_models.runtime.session``). ``tlm_models.systemc``
elaborates platforms as SystemC modules in the calling process through cppyy, with the user's
own C++ modules or Python-fed traffic (docs/python-systemc.md); cppyy loads only there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tlm_models.runtime.headers import INCLUDE_DIR

__version__ = "0.1.0"


__all__ = [
    "INCLUDE_DIR",
    "Platform",
    "RunResult",
    "SweepOutcome",
    "Workload",
    "__version__",
    "emit",
    "model_workload",
    "replay_trace",
    "resolve",
    "simulate",
    "sweep",
]

if TYPE_CHECKING:
    from tlm_models.api import (
        Platform,
        RunResult,
        SweepOutcome,
        Workload,
        emit,
        model_workload,
        replay_trace,
        resolve,
        simulate,
        sweep,
    )


def __getattr__(name: str) -> Any:
    """The API names, imported on first use (the CLI and workers need not import them)."""
    if name == "systemc":  # the package of SystemC from Python, without importing cppyy
        import importlib

        return importlib.import_module("tlm_models.systemc")
    if name in __all__:
        from tlm_models import api

        return getattr(api, name)
    raise AttributeError(f"module 'tlm_models' has no attribute {name!r}")
