"""What a run will cost before it starts: operations, expected wall time and a roofline floor
of its simulated time.

Operations, MACs and exps come from running the dataflow's emitter in counting mode (loops
cost O(1) each, no records are built). Counting a large trace can itself take seconds (FLAT's
per-phase Python), so it has a time budget: past it, the trace at N/2, N/4, ... is counted and
scaled up by the growth exponent measured between the two largest sizes that fit the budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TextIO

from tlm_models.dataflows import emit
from tlm_models.dataflows.builder import CountBudgetExceeded, OpCount, counting_ops
from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo
from tlm_models.run.config import RunConfig
from tlm_models.run.resolve import ResolvedRun
from tlm_models.units import format_count, format_duration, format_ns
from tlm_models.workload.spec import Workload

__all__ = [
    "LARGE_RUN_S",
    "REPLAY_OPS_PER_S",
    "CostEstimate",
    "announce",
    "estimate_cost",
    "predicted_ops",
    "roofline_ns",
]

#: Replay speed used for wall-time predictions before anything ran: the Python-driven replay
#: on the 2-core development machine with SRAM operand traffic on (docs/replayer.md, 1.2-1.7 M
#: ops/s), emission included.
REPLAY_OPS_PER_S = 1.3e6
#: Runs predicted to take longer than this get a warning before they start.
LARGE_RUN_S = 120.0
#: Smallest sequence length counted when scaling a count up.
_MIN_COUNTED_N = 256


@dataclass(frozen=True)
class CostEstimate:
    """Predicted size of one run. ``counted_at`` is the length the count ran at (== seq_len,
    the longer of Nq and Nk, when exact); ``roofline_ns`` the simulated time if the busiest of
    compute, exp and off-chip bandwidth ran at peak the whole time (a floor of the simulated
    time)."""

    ops: int
    macs: int
    exps: int
    counted_at: int
    seq_len: int
    roofline_ns: float

    @property
    def exact(self) -> bool:
        return self.counted_at == self.seq_len

    @property
    def wall_s(self) -> float:
        """Expected wall time of the replay at ``REPLAY_OPS_PER_S``."""
        return self.ops / REPLAY_OPS_PER_S

    def describe(self) -> str:
        """``≈ 5.5 M ops, about 4 s of replay, simulated time ≥ 1.20 ms (roofline)``."""

        how = "" if self.exact else f" (scaled from a count at N = {self.counted_at:,})"
        return (
            f"{'' if self.exact else '≈ '}{format_count(self.ops)} ops{how}, about "
            f"{format_duration(self.wall_s)} of replay at {REPLAY_OPS_PER_S / 1e6:.1f} M ops/s; "
            f"simulated time ≥ {format_ns(self.roofline_ns)} (roofline)"
        )


def roofline_ns(info: PlatformInfo, macs: float, exps: float, offchip_bytes: float) -> float:
    """The simulated time if the busiest resource ran at its peak throughout (ns)."""
    compute = macs / (info.pe_rows * info.pe_cols * info.pe_clock_hz)
    exp = exps / (info.exp_lanes * info.exp_clock_hz)
    memory = offchip_bytes / info.offchip_bandwidth if info.offchip_bandwidth > 0 else 0.0
    return max(compute, exp, memory) * 1e9


def _tile_infos(run: ResolvedRun) -> tuple[PlatformInfo, ...]:
    """Each compute tile's figures (one for an untiled platform), from the resolved platform."""
    if run.platform.tiles is None:
        return (run.info,)
    return tuple(run.platform.tile_info(i) for i in range(run.platform.tile_count))


def _length(config: RunConfig) -> int:
    """The length a count scales: the longer of Nq and Nk."""
    return max(config.seq_len, config.kv_len)


def _workload_at(run: ResolvedRun, length: int) -> Workload:
    """The run's workload with Nq and Nk scaled by ``length / _length(config)`` (a sliding
    window kept within the keys), for a count at a smaller size: the run's own at full size."""
    config, full = run.config, _length(run.config)
    if length == full:
        return run.workload
    nq = max(1, config.seq_len * length // full)
    nk = max(1, config.kv_len * length // full)
    if config.mask != "none":
        nk = max(nk, nq)
    window = min(config.window, nk) if config.mask == "sliding" else 0
    return replace(run.workload, seq_len=nq, kv_len=nk, window=window)


def _count(
    run: ResolvedRun, infos: tuple[PlatformInfo, ...], length: int, budget_s: float
) -> OpCount:
    """The operations of every tile's share (each tile emits its own trace)."""
    workload = _workload_at(run, length)
    with counting_ops(budget_s) as count:
        for info in infos:
            for _ in emit(run.config.dataflow, workload, info, params=run.params).chunks:
                pass
    return count


def estimate_cost(run: ResolvedRun, budget_s: float = 0.5) -> CostEstimate:
    """Predicted operations, MACs, exps and roofline time of ``run`` (see the module doc).

    Raises what the emitter raises for a configuration that cannot run (a UserError)."""
    from tlm_models.run.execute import bounds_bytes

    config = run.config
    infos = _tile_infos(run)
    info = infos[0]
    n = _length(config)
    counts: list[tuple[int, OpCount]] = []
    while n >= 1:
        try:
            # Each tile's share is counted: the budget grows with them, so that a tiled
            # run is counted at the same length as an untiled one would be.
            budget = budget_s * len(infos) if n > _MIN_COUNTED_N else 60.0
            counts.append((n, _count(run, infos, n, budget)))
        except CountBudgetExceeded:
            n //= 2
            continue
        except UserError:
            if not counts:  # the configuration itself cannot run: the run says why
                raise
            break  # a tiling that does not plan at the smaller size: one count it is
        if n == _length(config) or len(counts) == 2:
            break
        n //= 2  # a second, smaller count measures how the trace grows
    at, count = counts[0]
    scale = 1.0
    if at != _length(config):
        exponent = 2.0  # attention's work grows as N^2 unless two counts say otherwise
        if len(counts) == 2 and counts[1][1].ops > 0:
            exponent = min(3.0, max(1.0, math.log(count.ops / counts[1][1].ops, 2)))
        scale = (_length(config) / at) ** exponent
    bounds = bounds_bytes(run.workload, info, config.dataflow, run.params)
    macs, exps = count.macs * scale, count.exps * scale
    return CostEstimate(
        ops=round(count.ops * scale),
        macs=round(macs),
        exps=round(exps),
        counted_at=at,
        seq_len=_length(config),
        # The tiles' compute rates add up; the off-chip bandwidth is shared (info's is all).
        roofline_ns=roofline_ns(
            info, macs / len(infos), exps / len(infos), bounds.get("closed_form", 0.0)
        ),
    )


def predicted_ops(run: ResolvedRun) -> float:
    """A sweep's cost weight of ``run``: its predicted operation count (a shorter count
    budget than a single run's: a sweep estimates every configuration before its ETA shows)."""
    return float(estimate_cost(run, budget_s=0.2).ops)


def announce(run: ResolvedRun, stream: TextIO) -> CostEstimate:
    """Prints the predicted cost of ``run`` and, when it is long, a warning (``attn-tlm run``
    and ``simulate(progress=True)``); returns the estimate for the progress bar."""
    from tlm_models.units import format_duration

    cost = estimate_cost(run)
    print(f"predicted: {cost.describe()}", file=stream, flush=True)
    if cost.wall_s > LARGE_RUN_S:
        print(
            f"attn-tlm: warning: a large run (about {format_duration(cost.wall_s)}); "
            "Ctrl-C stops it",
            file=stream,
            flush=True,
        )
    return cost
