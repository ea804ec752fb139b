"""Shared test helpers: emit a whole trace, count off-chip elements per tensor, and measure a
trace's numeric error against a reference in every adversarial engine order."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tlm_models.dataflows import Workload, emit
from tlm_models.platform.info import PlatformInfo
from tlm_models.replay.reference import adversarial_orders, run_attention
from tlm_models.trace.header import TraceHeader
from tlm_models.trace.record import OpKind

#: What a correct trace computes from its inputs (softmax attention, or its approximation).
Reference = Callable[[TraceHeader, dict[str, np.ndarray]], np.ndarray]


def emit_all(
    name: str,
    w: Workload,
    p: PlatformInfo,
    chunk_ops: int = 4096,
    params: dict[str, str] | None = None,
) -> tuple[TraceHeader, np.ndarray]:
    tr = emit(name, w, p, chunk_ops=chunk_ops, params=params)
    return tr.header, np.concatenate(list(tr.chunks))


def offchip_elements(header: TraceHeader, recs: np.ndarray) -> dict[str, int]:
    io = recs[(recs["kind"] == OpKind.LOAD) | (recs["kind"] == OpKind.STORE)]
    out: dict[str, int] = {}
    for t in np.unique(io["tensor"]):
        sel = io[io["tensor"] == t]
        nbytes = int((sel["m"].astype(np.int64) * sel["n"]).sum())
        out[header.tensors[int(t)].name] = nbytes // header.elem_bytes
    return out


def relative_error(
    header: TraceHeader,
    recs: np.ndarray,
    p: PlatformInfo,
    inputs: dict[str, np.ndarray],
    order: list[str] | None,
    reference: Reference,
    granularity: int | None = None,
) -> float:
    """max |O - O_ref| / max |O_ref| of the trace executed in ``order`` (inf when not finite),
    records split into forwarding granules of ``granularity`` elements when given."""
    with np.errstate(all="ignore"):
        out = run_attention(header, [recs], p, inputs, order, granularity)
    ref = reference(header, inputs)
    err = float(np.abs(out - ref).max() / np.abs(ref).max())
    return err if np.isfinite(err) else float("inf")


def worst_error(
    header: TraceHeader,
    recs: np.ndarray,
    p: PlatformInfo,
    inputs: dict[str, np.ndarray],
    reference: Reference,
    granularity: int | None = None,
) -> float:
    """The largest relative error over trace order and every adversarial engine order."""
    orders: list[list[str] | None] = [None, *adversarial_orders(header.engines)]
    return max(relative_error(header, recs, p, inputs, o, reference, granularity) for o in orders)
