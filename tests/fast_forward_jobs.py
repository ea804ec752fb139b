"""Worker jobs of the fast-forward tests: one replay of a dataflow, exact or fast-forwarded,
returning every statistic (they must be importable by name)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from tlm_models.dataflows import emit
from tlm_models.dataflows.io_formulas import TRAFFIC, approx_traffic
from tlm_models.fast_forward.control import (
    FAST_FORWARD_CHUNK_OPS,
    HOST_FIGURES,
    flatten,
    settings_for,
)
from tlm_models.fast_forward.growth import fast_forward_for
from tlm_models.platform import load_platform
from tlm_models.replay.replayer import replay_in_this_process
from tlm_models.workload.spec import Workload

PLATFORM = Path(__file__).resolve().parent.parent / "platforms" / "attenio.yaml"


def replay_stats(
    dataflow: str,
    seq_len: int,
    head_dim: int,
    fast: bool,
    overrides: tuple[str, ...] = (),
    params: dict[str, str] | None = None,
    **shape: Any,
) -> dict[str, Any]:
    """Every statistic of one replay as {"/"-joined path: value}, plus the fast_forward section
    and the closed-form off-chip bytes; ``overrides``: platform overrides ("sram.capacity=..."),
    ``params``: the dataflow's parameters, ``shape``: further ``Workload`` fields (heads,
    kv_heads, kv_len, batch, mask, ...)."""
    config = load_platform(PLATFORM, overrides)
    workload = Workload(seq_len=seq_len, head_dim=head_dim, **shape)
    emitted = emit(dataflow, workload, config.info(), FAST_FORWARD_CHUNK_OPS, params=params)
    assert emitted.iterations is not None
    ff = fast_forward_for(emitted.iterations, settings_for(config)) if fast else None
    out = replay_in_this_process(config, emitted.header, emitted.chunks, fast_forward=ff)
    values = {**flatten(out.replay, "replay")[0], **flatten(out.platform, "platform")[0]}
    return {
        "stats": {"/".join(path): value for path, value in values.items()},
        "fast_forward": out.fast_forward,
        "simulated_ops": out.ops,
        "closed_form_bytes": TRAFFIC.get(dataflow, approx_traffic)(
            workload, config.info(), params or {}
        ).total_bytes,
    }


def worst_difference(exact: dict[str, Any], fast: dict[str, Any]) -> tuple[float, str]:
    """The largest relative difference between two ``replay_stats``-like results' statistics
    and where it is (figures of the simulating process left out)."""
    worst, where = 0.0, ""
    for path, want in exact["stats"].items():
        if path.split("/")[-1] in HOST_FIGURES:
            continue  # figures of the simulating process (its buffers), not of the machine
        got = fast["stats"][path]
        if math.isnan(want) and math.isnan(got):
            continue
        error = abs(got - want) / abs(want) if want else abs(got)
        if error > worst:
            worst, where = error, path
    return worst, where
