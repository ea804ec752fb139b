"""Shared test helpers: emit a whole trace, count off-chip elements per tensor."""

from __future__ import annotations

import numpy as np

from tlm_models.dataflows import Workload, emit
from tlm_models.platform.info import PlatformInfo
from tlm_models.trace.header import TraceHeader
from tlm_models.trace.record import OpKind


def emit_all(
    name: str, w: Workload, p: PlatformInfo, chunk_ops: int = 4096
) -> tuple[TraceHeader, np.ndarray]:
    tr = emit(name, w, p, chunk_ops=chunk_ops)
    return tr.header, np.concatenate(list(tr.chunks))


def offchip_elements(header: TraceHeader, recs: np.ndarray) -> dict[str, int]:
    io = recs[(recs["kind"] == OpKind.LOAD) | (recs["kind"] == OpKind.STORE)]
    out: dict[str, int] = {}
    for t in np.unique(io["tensor"]):
        sel = io[io["tensor"] == t]
        nbytes = int((sel["m"].astype(np.int64) * sel["n"]).sum())
        out[header.tensors[int(t)].name] = nbytes // header.elem_bytes
    return out
