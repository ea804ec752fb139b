"""Closed-form off-chip traffic of each dataflow's tiling, and the I/O lower bounds.

Counts are elements moved between off-chip memory and the chip (loads + stores), per tensor,
for all heads; the emitted traces move exactly these (tests check it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tlm_models.dataflows.approx import approx_params, approx_tiling
from tlm_models.dataflows.attenio import attenio_tiling
from tlm_models.dataflows.flash2 import flash2_tiling
from tlm_models.dataflows.flat import flat_tiling
from tlm_models.dataflows.query_blocks import key_intervals, query_blocks
from tlm_models.dataflows.standard import standard_tiling
from tlm_models.dataflows.variants import resolve
from tlm_models.dataflows.workload import Workload
from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo

#: A dataflow's ``--param`` switches (``variants.py``); None = the defaults.
Params = Mapping[str, object] | None


@dataclass(frozen=True)
class Traffic:
    """Off-chip elements per tensor (all heads) and the tile parameter that set them."""

    dataflow: str
    elements: dict[str, int]
    elem_bytes: int
    tile: dict[str, int | str]  # tile parameters (approx also names its case)

    @property
    def total_elements(self) -> int:
        return sum(self.elements.values())

    @property
    def total_bytes(self) -> int:
        return self.total_elements * self.elem_bytes


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _streamed(w: Workload, q_rows: int, extra: dict[str, int]) -> dict[str, int]:
    """Q and O once, K and V once per block of ``q_rows`` queries: Nd + 2Nd*ceil(N/x) + Nd."""
    nd = w.seq_len * w.head_dim
    per_head = {
        "Q": nd,
        "K": nd * _ceil(w.seq_len, q_rows),
        "V": nd * _ceil(w.seq_len, q_rows),
        "O": nd,
        **extra,
    }
    return {k: v * w.head_count for k, v in per_head.items()}


def block_keys(w: Workload, rows: int) -> list[tuple[int, int]]:
    """(query rows, keys seen) of each block of ``rows`` of one K/V head's group: the group's
    g * Nq rows head-major, a block seeing the union of its positions' key ranges."""
    return [
        (r, sum(hi - lo for lo, hi in key_intervals(w, f, r))) for f, r in query_blocks(w, rows)
    ]


def causal_keys_per_head(nq: int, nk: int, rows: int) -> int:
    """Keys loaded per head by blocks of ``rows`` queries under a causal mask, when blocks do
    not cross heads: block b ends at query min((b+1)R, Nq) - 1 and sees that many keys plus
    Nk - Nq, so the sum is nb (Nk - Nq) + R nb (nb - 1) / 2 + Nq, nb = ceil(Nq / R)."""
    nb = _ceil(nq, rows)
    return nb * (nk - nq) + rows * nb * (nb - 1) // 2 + nq


def online_softmax_elements(w: Workload, rows: int) -> dict[str, int]:
    """FlashAttention-2 and AttenIO with blocks of ``rows`` query rows: Q and O once, K and V
    rows once per block that sees them. Mask none: K = V = Hkv B Nk d ceil(g Nq / R), which is
    Nd + 2Nd ceil(N/R) + Nd for self-attention; causal (blocks within a head): Hkv B g d
    (nb (Nk - Nq) + R nb (nb - 1)/2 + Nq) (:func:`causal_keys_per_head`); otherwise the sum
    over blocks of the keys each sees (:func:`block_keys`)."""
    qo = w.head_count * w.tensor_elements
    kv = w.kv_head_count * w.head_dim * sum(keys for _, keys in block_keys(w, rows))
    return {"Q": qo, "K": kv, "V": kv, "O": qo}


def online_softmax_macs(w: Workload, rows: int) -> int:
    """MACs of FlashAttention-2 and AttenIO: S = Q K^T and O += P V over the keys each block
    loads, 2 d (rows x keys) per block, all K/V heads."""
    return w.kv_head_count * 2 * w.head_dim * sum(r * keys for r, keys in block_keys(w, rows))


def attenio_traffic(w: Workload, p: PlatformInfo, params: Params = None) -> Traffic:
    """T = Nd + 2Nd*ceil(N/a) + Nd with a = floor((M - 2*stage*d)/(2d + 4)) for dense
    self-attention; masks, GQA and decode: :func:`online_softmax_elements` with R = a."""
    a = attenio_tiling(w, p, params)
    return Traffic("attenio", online_softmax_elements(w, a), w.elem_bytes, {"a": a})


def flash2_traffic(w: Workload, p: PlatformInfo, params: Params = None) -> Traffic:
    """T = Nd + 2Nd*ceil(N/Br) + Nd with Br = min(ceil(M/4d), d), whatever the tiling of Bc
    and the overlap, for dense self-attention; masks, GQA and decode:
    :func:`online_softmax_elements` with R = Br."""
    variant = resolve("flash2", params)
    buffers = 2 if variant["overlap"] == "double" else 1
    t = flash2_tiling(w, p.capacity_elements(w.elem_bytes), variant["tiling"], buffers)
    elements = online_softmax_elements(w, t.br)
    return Traffic("flash2", elements, w.elem_bytes, {"br": t.br, "bc": t.bc})


def standard_traffic(w: Workload, p: PlatformInfo, params: Params = None) -> Traffic:
    """T = 2Nd + 2Nd*ceil(N/T) + 4N^2: S written and read, P written and read once each
    (the same for either overlap)."""
    resolve("standard", params)
    t = standard_tiling(w, p.capacity_elements(w.elem_bytes))
    nn = w.seq_len * w.seq_len
    return Traffic(
        "standard",
        _streamed(w, t.tile, {"S": 2 * nn, "P": 2 * nn}),
        w.elem_bytes,
        {"tile": t.tile, "softmax_rows": t.softmax_rows},
    )


def flat_traffic(w: Workload, p: PlatformInfo, params: Params = None) -> Traffic:
    """T = 2Nd + 2Nd*ceil(N/R) (+ 2N^2 when score rows spill, R = 1), either overlap."""
    resolve("flat", params)
    t = flat_tiling(w, p.capacity_elements(w.elem_bytes), p.pe_rows)
    extra = {"S": 2 * w.seq_len * w.seq_len} if t.spill else {}
    return Traffic(
        "flat",
        _streamed(w, t.rows, extra),
        w.elem_bytes,
        {"rows": t.rows, "stage": t.stage, "spill": int(t.spill)},
    )


def approx_traffic(
    w: Workload, p: PlatformInfo, params: Mapping[str, object] | None = None
) -> Traffic:
    """Polynomial attention, per head (B blocks):
    Case I (H on chip): T = 4Nd, every input row read once and every output row written once;
    "columns" (c of the d value columns per block): T = 2Nd*B + 2Nd, K and Q once per block;
    "features" (w-variable groups, B = sum_{s<=g} C(G, s) blocks): K and Q rows give
    L = d*sum_{s<=g} C(G-1, s-1) columns over all blocks, V is read once per block and the
    partial sums [D | numerators] are written after the first block, read and written after
    the middle ones and read before the last: T = 2NL + NdB + Nd + 2N(d+1)(B-1)."""
    g = approx_params(params).degree
    t = approx_tiling(w, p.capacity_elements(w.elem_bytes), g)
    rows = w.seq_len * w.head_count
    per_row = t.row_traffic(w.head_dim)
    return Traffic(
        "approx",
        {name: count * rows for name, count in per_row.items()},
        w.elem_bytes,
        {"degree": g, **t.tile()},
    )


def approx_lower_bound(n: int, d: int) -> int:
    """Any attention algorithm reads Q, K, V and writes O at least once: 4Nd elements. This is
    Omega(Nd), the Case I bound, met exactly by the approx dataflow when H fits on chip."""
    return 4 * n * d


def approx_tiled_order(n: int, d: int, r: int, m: int) -> float:
    """N d * r(d+1)/M: the growth of re-reading the inputs once per M-sized slice of H when
    H (r x (d+1)) does not fit; evaluated with constant 1."""
    return n * d * r * (d + 1) / m


TRAFFIC: dict[str, Callable[[Workload, PlatformInfo, Params], Traffic]] = {
    "standard": standard_traffic,
    "flat": flat_traffic,
    "flash2": flash2_traffic,
    "attenio": attenio_traffic,
}


def mmm_lower_bound(n: int, d: int, m: int) -> float:
    """Tall-and-skinny MMM bound (elements): Nd + N^2 d(d+1)/(M - d) + N^2."""
    if m <= d:
        raise UserError(f"the MMM lower bound needs M > d (M = {m}, d = {d})")
    return n * d + n * n * d * (d + 1) / (m - d) + n * n


def attention_order_bound(n: int, d: int, m: int) -> float:
    """Order of growth of exact attention I/O, Theta(N^2 d^2 / M), evaluated with constant 1."""
    return n * n * d * d / m
