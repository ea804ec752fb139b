"""Dataflow emitters: each turns a workload and a platform into a streamed trace.

``emit(name, workload, platform_info, chunk_ops=...)`` returns an :class:`EmittedTrace` whose
header is complete before the first chunk of records is produced.
"""

from __future__ import annotations

from collections.abc import Callable

from tlm_models.dataflows.attenio import emit_attenio
from tlm_models.dataflows.builder import DEFAULT_CHUNK_OPS
from tlm_models.dataflows.flash2 import emit_flash2
from tlm_models.dataflows.flat import emit_flat
from tlm_models.dataflows.setup import EmittedTrace
from tlm_models.dataflows.standard import emit_standard
from tlm_models.dataflows.workload import Workload
from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo

Emitter = Callable[[Workload, PlatformInfo, int], EmittedTrace]

EMITTERS: dict[str, Emitter] = {
    "attenio": emit_attenio,
    "flash2": emit_flash2,
    "flat": emit_flat,
    "standard": emit_standard,
}


def emit(
    name: str, workload: Workload, platform_info: PlatformInfo, chunk_ops: int = DEFAULT_CHUNK_OPS
) -> EmittedTrace:
    """Emit dataflow ``name``'s trace; UserError for an unknown name or a plan that does not fit."""
    try:
        emitter = EMITTERS[name]
    except KeyError:
        raise UserError(
            f"unknown dataflow {name!r}; choose one of {', '.join(sorted(EMITTERS))}"
        ) from None
    return emitter(workload, platform_info, chunk_ops)


__all__ = ["EMITTERS", "EmittedTrace", "Workload", "emit"]
