"""Worker jobs of the burst-train tests: one exact replay of a dataflow on the paper machine
with platform overrides, returning every statistic (they must be importable by name)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tlm_models.dataflows import emit
from tlm_models.fast_forward.control import flatten
from tlm_models.platform import load_platform
from tlm_models.replay.replayer import replay_in_this_process
from tlm_models.workload.spec import Workload

PLATFORM = Path(__file__).resolve().parent.parent / "platforms" / "attenio.yaml"


def replay_stats(
    dataflow: str, seq_len: int, head_dim: int, overrides: list[str], **shape: Any
) -> dict[str, Any]:
    """Every statistic of one exact replay as {"/"-joined path: value} and the replay's wall
    time in s; ``overrides``: `component.param=value`; ``shape``: further ``Workload`` fields."""
    config = load_platform(PLATFORM, overrides)
    emitted = emit(dataflow, Workload(seq_len=seq_len, head_dim=head_dim, **shape), config.info())
    started = time.perf_counter()
    out = replay_in_this_process(config, emitted.header, emitted.chunks)
    wall = time.perf_counter() - started
    values = {**flatten(out.replay, "replay")[0], **flatten(out.platform, "platform")[0]}
    return {"stats": {"/".join(path): value for path, value in values.items()}, "wall_s": wall}
