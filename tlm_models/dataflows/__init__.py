"""Dataflow emitters: each turns a workload and a platform into a streamed trace.

``emit(name, workload, platform_info, chunk_ops=..., params=...)`` returns an
:class:`EmittedTrace` whose header is complete before the first chunk of records is produced.
``EMITTERS`` are the exact dataflows (they compute softmax attention; their ``--param``
switches are declared in ``variants.py``); ``APPROXIMATE`` are the approximate ones, which
take dataflow parameters (e.g. ``degree``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tlm_models.dataflows.approx import approx_params, trace_approx
from tlm_models.dataflows.attenio import trace_attenio
from tlm_models.dataflows.builder import DEFAULT_CHUNK_OPS
from tlm_models.dataflows.flash2 import trace_flash2
from tlm_models.dataflows.flat import trace_flat
from tlm_models.dataflows.fusemax import trace_fusemax
from tlm_models.dataflows.setup import DataflowTrace, EmittedTrace
from tlm_models.dataflows.standard import trace_standard
from tlm_models.dataflows.variants import resolve
from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo
from tlm_models.workload.spec import Workload

#: A dataflow: its trace set up for a workload, a platform and the dataflow's parameters.
DataflowBuilder = Callable[[Workload, PlatformInfo, Mapping[str, object]], DataflowTrace]

EMITTERS: dict[str, DataflowBuilder] = {
    "attenio": trace_attenio,
    "flash2": trace_flash2,
    "flat": trace_flat,
    "fusemax": trace_fusemax,
    "standard": trace_standard,
}

APPROXIMATE: dict[str, DataflowBuilder] = {
    "approx": trace_approx,
}


def emit(
    name: str,
    workload: Workload,
    platform_info: PlatformInfo,
    chunk_ops: int = DEFAULT_CHUNK_OPS,
    params: Mapping[str, object] | None = None,
) -> EmittedTrace:
    """Emit dataflow ``name``'s trace; UserError for an unknown name, parameters it does not
    take, or a plan that does not fit."""
    check_dataflow_params(name, params or {})
    build = APPROXIMATE[name] if name in APPROXIMATE else EMITTERS[name]
    return build(workload, platform_info, params or {}).emitted(chunk_ops)


def check_dataflow_params(name: str, params: Mapping[str, object]) -> None:
    """UserError for an unknown dataflow or parameters it does not take (checked in the caller
    before a run starts, and again by ``emit``)."""
    if name in APPROXIMATE:
        approx_params(params)
        return
    if name not in EMITTERS:
        known = sorted([*EMITTERS, *APPROXIMATE])
        raise UserError(f"unknown dataflow {name!r}; choose one of {', '.join(known)}")
    resolve(name, params)


__all__ = [
    "APPROXIMATE",
    "DEFAULT_CHUNK_OPS",
    "EMITTERS",
    "EmittedTrace",
    "Workload",
    "check_dataflow_params",
    "emit",
]
