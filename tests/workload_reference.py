"""numpy references for whole workloads: masked softmax attention and its polynomial
approximation with K/V heads shared by query-head groups, read from a trace header."""

from __future__ import annotations

import numpy as np

from tlm_models.trace.header import TraceHeader
from tlm_models.workload.spec import Workload


def header_workload(header: TraceHeader) -> Workload:
    """The workload a trace header describes."""
    p = header.params
    return Workload(
        seq_len=int(p["seq_len"]),
        head_dim=int(p["head_dim"]),
        heads=int(p["heads"]),
        batch=int(p["batch"]),
        elem_bytes=header.elem_bytes,
        kv_heads=int(p["kv_heads"]),
        kv_len=int(p["kv_len"]),
        mask=str(p["mask"]),
        window=int(p["window"]),
        phase=str(p["phase"]),
    )


def workload_inputs(w: Workload, seed: int = 1, scale: float = 1.0) -> dict[str, np.ndarray]:
    """Q of (Hq B, Nq, d), K and V of (Hkv B, Nk, d), uniform in [-scale, scale]."""
    rng = np.random.default_rng(seed)
    q = (w.head_count, w.seq_len, w.head_dim)
    kv = (w.kv_head_count, w.kv_len, w.head_dim)
    return {
        name: rng.uniform(-scale, scale, shape).astype(np.float32)
        for name, shape in (("Q", q), ("K", kv), ("V", kv))
    }


def _scores(w: Workload, inputs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per query head: S = Q K^T / sqrt(d) against its K/V head (float64), and V expanded."""
    heads = [w.kv_head_of(h) for h in range(w.head_count)]
    q = inputs["Q"].astype(np.float64)
    k = inputs["K"].astype(np.float64)[heads]
    v = inputs["V"].astype(np.float64)[heads]
    return q @ np.swapaxes(k, -1, -2) * w.scale, v


def masked_attention(header: TraceHeader, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """softmax(mask(Q K^T / sqrt(d))) V per query head: masked scores are left out."""
    w = header_workload(header)
    s, v = _scores(w, inputs)
    s = np.where(w.mask_matrix(), s, -np.inf)
    s -= s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    return (p / p.sum(axis=-1, keepdims=True)) @ v  # type: ignore[no-any-return]


def masked_polynomial(header: TraceHeader, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """D^-1 (mask . P(Q K^T / sqrt(d))) V with the header's polynomial coefficients."""
    w = header_workload(header)
    s, v = _scores(w, inputs)
    p = np.polynomial.polynomial.polyval(s, np.array(header.params["coefficients"]))
    p = np.where(w.mask_matrix(), p, 0.0)
    return (p / p.sum(axis=-1, keepdims=True)) @ v  # type: ignore[no-any-return]
