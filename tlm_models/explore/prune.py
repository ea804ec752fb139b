"""What is known of a point before it is simulated: exact off-chip bytes, lower bounds on time
and energy, and the platform's area and leakage.

- bytes: the dataflow's closed form (``dataflows/io_formulas.py``), which the emitted traces
  move exactly; a point whose tiles do not fit raises there and is never simulated.
- time >= the largest of: bytes / peak off-chip bandwidth; MACs / (MACs per cycle x clock);
  and, for AttenIO and FlashAttention-2 on dense self-attention on a broadcast array, the
  issue cycles of their two matmuls per K/V step (docs/models/pe_array.md: the array is
  occupied ``ceil(m n / P) k`` cycles by an m x n x k matmul, and takes one operation at a
  time). The last term sees what the MAC count does not: a block of a rows fills
  ``a / P`` of the array per pass, so small tiles cost more cycles per MAC.
- energy >= MACs x the PE array's cheapest MAC energy + leakage x the time bound (every other
  action costs >= 0).
- area and leakage: ``tlm_models.platform.area`` (``area_model.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from tlm_models.dataflows.flash2 import flash2_plan
from tlm_models.dataflows.flash2_tiles import DEFAULT_EXP_LATENCY, DEFAULT_PE_LATENCY
from tlm_models.dataflows.io_formulas import (
    TRAFFIC,
    flat_work,
    online_softmax_macs,
    query_block_height,
    standard_work,
)
from tlm_models.dataflows.query_blocks import block_shape
from tlm_models.dataflows.variants import resolve
from tlm_models.errors import UserError
from tlm_models.explore.area_model import AreaFigures, area_of
from tlm_models.platform import PlatformConfig, load_platform
from tlm_models.platform.info import PlatformInfo
from tlm_models.run.config import RunConfig, resolve_platform
from tlm_models.workload.spec import Workload, check_supported

__all__ = ["Estimate", "Infeasible", "estimate", "pe_issue_cycles", "platform_of"]


class Infeasible(Exception):
    """The point cannot run (its tiles do not fit, the workload is not supported): why."""


@dataclass(frozen=True)
class Estimate:
    """Closed-form figures of one point (``time_lb_s``, ``energy_lb_j``: lower bounds)."""

    bytes: int
    macs: int
    time_lb_s: float
    energy_lb_j: float
    area: AreaFigures | None
    tile: Mapping[str, int | str]


@lru_cache(maxsize=512)
def platform_of(platform: str, overrides: tuple[str, ...]) -> PlatformConfig:
    """The validated platform with ``overrides`` (a bad override is the user's error)."""
    return load_platform(resolve_platform(platform), overrides)


@lru_cache(maxsize=4096)
def estimate(config: RunConfig, *, with_area: bool) -> Estimate:
    """The closed-form figures of ``config``; Infeasible when it cannot run, UserError for a
    bad parameter value (a typo is not a point that does not fit). Cached: a search, its
    report and a resumed search ask for the same points."""
    cfg = platform_of(config.platform, config.overrides)
    if cfg.tile_count > 1:
        raise UserError(
            f"{config.platform}: explore takes single-tile platforms (its bounds count one "
            f"PE array), this one has {cfg.tile_count} tiles"
        )
    info = cfg.info()
    params = dict(config.extra)
    resolve(config.dataflow, params)
    w = config.workload.at_width(info.elem_bytes)
    try:
        check_supported(config.dataflow, w)
        traffic = TRAFFIC[config.dataflow](w, info, params)
        macs = _macs(config.dataflow, w, info, params)
        issue = pe_issue_cycles(config.dataflow, w, info, params, _split_k(cfg))
    except UserError as exc:
        raise Infeasible(str(exc)) from None
    peak_macs = info.pe_rows * info.pe_cols * info.pe_clock_hz
    time_lb = max(
        traffic.total_bytes / info.offchip_bandwidth,
        macs / peak_macs,
        issue / info.pe_clock_hz,
    )
    area = area_of(cfg) if with_area else None
    leakage = area.leakage_w if area is not None else 0.0
    energy_lb = macs * _mac_joules(cfg) + leakage * time_lb
    return Estimate(traffic.total_bytes, macs, time_lb, energy_lb, area, dict(traffic.tile))


def _macs(dataflow: str, w: Workload, p: PlatformInfo, params: Mapping[str, str]) -> int:
    """MACs the dataflow performs (the score and output matmuls over the keys it visits)."""
    if dataflow == "standard":
        return standard_work(w, p)["macs"]
    if dataflow == "flat":
        return flat_work(w, p, params)["macs"]
    return online_softmax_macs(w, query_block_height(dataflow, w, p, params))


def _split_k(cfg: PlatformConfig) -> bool:
    pe = cfg.components_of_type("pe_array")
    return bool(pe and pe[0].params.get("split_k", False))


def pe_issue_cycles(
    dataflow: str, w: Workload, p: PlatformInfo, params: Mapping[str, str], split_k: bool
) -> float:
    """A lower bound on the PE array's cycles from the matmuls of AttenIO and FlashAttention-2
    on dense self-attention on a broadcast array without split-K; 0 (no bound beyond the MAC
    count) otherwise. FlashAttention-2: the issue cycles ceil(m n / P) k of S = Q K^T
    (r x c x d) and O += P V (r x d x c) of every K/V tile. AttenIO: per K/V row, the chain
    its trace imposes (``_attenio_block_cycles``)."""
    if dataflow not in ("attenio", "flash2") or not w.dense or split_k:
        return 0.0
    if not p.extra.get("pe_broadcast", 0.0):
        return 0.0
    macs, n, d = p.pe_rows * p.pe_cols, w.seq_len, w.head_dim
    height = query_block_height(dataflow, w, p, params)
    rows = block_shape(w, height).positions
    full, last = divmod(n, rows)
    blocks = [rows] * full + ([last] if last else [])

    def matmul(m: int, cols: int, k: int) -> int:
        return -(-m * cols // macs) * k

    if dataflow == "attenio":
        return w.head_count * sum(_attenio_block_cycles(p, r, n, d) for r in blocks)
    bc = flash2_plan(w, p, params).tiling.bc
    tiles, rest = divmod(n, bc)
    widths = [bc] * tiles + ([rest] if rest else [])
    return float(
        w.head_count * sum(matmul(r, c, d) + matmul(r, d, c) for r in blocks for c in widths)
    )


def _attenio_block_cycles(p: PlatformInfo, a: int, keys: int, d: int) -> float:
    """PE cycles one AttenIO block of ``a`` query rows takes at the least over ``keys`` K/V
    rows: per row, the chain of its trace (``attenio._row_body``) on an in-order array, each
    step at its issue cycles and latencies (docs/models/pe_array.md, exp_unit.md): k_j moved
    into the KV buffer (1 issue + L; s reads it), s = Q_i k_j^T (I_S = ceil(a/P) d issue + L:
    a matmul forwards nothing until done), the row max (1 + L to its first granule) and
    m_old - m (1 + L), the Exp unit's alpha = exp(m_old - m) and p = exp(s - m) in order
    (ceil(a / lanes) each, p done L_exp later), the O update (I_O = ceil(a d / P), it waits for
    all of p), then the two l updates (1 issue each) before the next row's move. The block's
    first row has no alpha and is counted at I_S + I_O + its exp alone."""
    macs = p.pe_rows * p.pe_cols
    ratio = p.pe_clock_hz / p.exp_clock_hz  # Exp-unit cycles in PE cycles
    lat = p.extra.get("pe_latency", DEFAULT_PE_LATENCY)
    exp_lat = p.extra.get("exp_latency", DEFAULT_EXP_LATENCY)
    score = -(-a // macs) * d
    update = -(-a * d // macs)
    exps = -(-a // p.exp_lanes)
    kvbuf = p.kv_buffer
    move = 1 + lat if kvbuf is not None and kvbuf.size >= d * p.elem_bytes else 0
    row = move + score + lat + 2 * (1 + lat) + (2 * exps + exp_lat) * ratio + update + 2
    first = score + update + (exps + exp_lat) * ratio
    return first + (keys - 1) * row


def _mac_joules(cfg: PlatformConfig) -> float:
    """The cheapest MAC action of the PE array's energy table (0 J without one)."""
    pe = cfg.components_of_type("pe_array")
    table = pe[0].energy if pe else None
    if table is None:
        return 0.0
    costs = [
        float(j)
        for name in table.entries
        if name.startswith("mac") and (j := table.joules_per(name)) is not None
    ]
    return min(costs, default=0.0)
