"""A stand-in simulator for the exploration tests, run in worker processes: its time is the
point's closed-form lower bound times a factor in [1, 1.5) fixed by the configuration's key
(so the bounds hold, as they do for the simulator, but do not give the order away)."""

from __future__ import annotations

import hashlib
from typing import Any

from tlm_models.explore.prune import estimate
from tlm_models.run.config import RunConfig


def factor(config: RunConfig) -> float:
    """1 + a fraction below 0.5 taken from a hash of the key (the same in every process)."""
    digest = hashlib.sha256(config.key().encode()).digest()
    return 1.0 + int.from_bytes(digest[:4], "big") / 2**33


def bound_result(config: RunConfig) -> dict[str, Any]:
    """The result record the search reads: time, off-chip bytes (exact) and energy."""
    est = estimate(config, with_area=False)
    time_s = est.time_lb_s * factor(config)
    energy = est.energy_lb_j * factor(config)
    return {
        "sim_time_ns": time_s * 1e9,
        "offchip_bytes": {"total": est.bytes},
        "energy": {"total_j": energy, "dynamic_j": energy, "static_j": 0.0},
    }


def bound_run(config: RunConfig) -> dict[str, Any]:
    return bound_result(config)


def slow_bound_run(config: RunConfig) -> dict[str, Any]:
    """``bound_run`` taking 0.4 s, long enough to interrupt a search between simulations."""
    import time

    time.sleep(0.4)
    return bound_result(config)
