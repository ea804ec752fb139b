"""Dataflow emitters: each turns a workload and a platform into a streamed trace.

``emit(name, workload, platform_info, chunk_ops=..., params=...)`` returns an
:class:`EmittedTrace` whose header is complete before the first chunk of records is produced.
``EMITTERS`` are the exact dataflows (they compute softmax attention; their ``--param``
switches are declared in ``variants.py``); ``APPROXIMATE`` are the approximate ones, which
take dataflow parameters (e.g. ``degree``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tlm_models.dataflows.approx import approx_params, emit_approx
from tlm_models.dataflows.attenio import emit_attenio
from tlm_models.dataflows.builder import DEFAULT_CHUNK_OPS
from tlm_models.dataflows.flash2 import emit_flash2
from tlm_models.dataflows.flat import emit_flat
from tlm_models.dataflows.fusemax import emit_fusemax
from tlm_models.dataflows.setup import EmittedTrace
from tlm_models.dataflows.standard import emit_standard
from tlm_models.dataflows.variants import resolve
from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo
from tlm_models.workload.spec import Workload

ParamEmitter = Callable[[Workload, PlatformInfo, int, Mapping[str, object]], EmittedTrace]

EMITTERS: dict[str, ParamEmitter] = {
    "attenio": emit_attenio,
    "flash2": emit_flash2,
    "flat": emit_flat,
    "fusemax": emit_fusemax,
    "standard": emit_standard,
}

APPROXIMATE: dict[str, ParamEmitter] = {
    "approx": emit_approx,
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
    if name in APPROXIMATE:
        return APPROXIMATE[name](workload, platform_info, chunk_ops, params or {})
    return EMITTERS[name](workload, platform_info, chunk_ops, params or {})


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
