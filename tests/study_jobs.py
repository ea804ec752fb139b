"""Stand-ins for the study runner, run in worker processes by the sweep tests.

``fake_run`` returns a result with every contract key, computed from the configuration alone
(so identical inputs give identical outputs). Dataflow parameters steer it: ``crash=abort``
kills the worker, ``crash=raise`` raises, ``sleep=S`` waits S seconds, ``log=PATH`` appends
the configuration's key to PATH (to count invocations across processes).
"""

from __future__ import annotations

import os
import time
from typing import Any

from tlm_models.run.config import DATAFLOWS, RunConfig

#: Relative speed of each dataflow in the fake model (standard = 1).
_SPEED = {
    "standard": 1.0,
    "flat": 1.5,
    "flash2": 2.0,
    "attenio": 3.0,
    "fusemax": 3.5,
    "approx": 4.0,
}


def fake_result(config: RunConfig) -> dict[str, Any]:
    """A plausible result for ``config`` with all contract keys."""
    n, d = config.seq_len, config.head_dim
    rank = DATAFLOWS.index(config.dataflow)
    sim_time_ns = n * n * d / 2048 / _SPEED[config.dataflow]
    read = n * d * 2 * (8 - rank) * n // 1024
    write = n * d * 2
    return {
        "schema": "attn-tlm.result/1",
        "dataflow": config.dataflow,
        "platform": config.platform,
        "seq_len": n,
        "head_dim": d,
        "heads": config.heads,
        "overrides": list(config.overrides),
        "sim_time_ns": sim_time_ns,
        "offchip_bytes": {"read": read, "write": write, "total": read + write},
        "pe": {"busy_fraction": 0.5 + 0.1 * rank, "mac_utilization": 0.4 + 0.1 * rank},
        "exp": {"busy_fraction": 0.2 + 0.05 * rank, "lane_utilization": 0.1 + 0.05 * rank},
        "memory_stall_fraction": 0.5 - 0.1 * rank,
        "overlap_efficiency": 0.5 + 0.1 * rank,
        "exposed_io_ns": sim_time_ns * (0.5 - 0.1 * rank),
        "stalls": {"pe": {"load": 10.0 * n, "buffer": 2.0}, "dma0": {"credits": 1.0}},
        "ops": 100 * n,
        "wall_s": 0.01,
        "ops_per_s": 100 * n / 0.01,
        "bounds": {"mmm_lower": 2 * n * d * 2, "attenio_closed_form": 3 * n * d * 2},
        "energy": _fake_energy(read + write, 2 * n * n * d, sim_time_ns),
    }


def _fake_energy(offchip_bytes: int, macs: int, sim_time_ns: float) -> dict[str, Any]:
    """Energy of the fake result: 32 pJ per off-chip byte, 1 pJ per MAC, 1 W static."""
    hbm, pe, static = offchip_bytes * 32e-12, macs * 1e-12, sim_time_ns * 1e-9
    total = hbm + pe + static
    seconds = sim_time_ns * 1e-9

    def part(joules: float, static_j: float = 0.0) -> dict[str, Any]:
        return {"total_j": joules + static_j, "dynamic_j": joules, "static_j": static_j}

    return {
        **part(hbm + pe, static),
        "average_power_w": total / seconds,
        "edp_js": total * seconds,
        "by_component": {"hbm": part(hbm), "pe": part(pe, static), "dma": part(0.0)},
        "by_tensor": {},
    }


def fake_run(config: RunConfig) -> dict[str, Any]:
    """The fake job: see the module docstring for the parameters that steer it."""
    extra = dict(config.extra)
    if "log" in extra:
        with open(extra["log"], "a", encoding="utf-8") as stream:
            stream.write(config.key() + "\n")
    if extra.get("crash") == "abort":
        os.abort()
    if extra.get("crash") == "raise":
        raise RuntimeError("deliberate failure in the fake job")
    if "sleep" in extra:
        time.sleep(float(extra["sleep"]))
    return fake_result(config)


def not_a_dict(config: RunConfig) -> Any:
    """A broken job: returns something that is not a result."""
    return [config.seq_len]
