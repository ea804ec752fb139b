"""Numeric execution of a chip's per-tile traces together (``replay/reference.py`` for each tile).

Each tile has its own on-chip memories and runs its records in trace order; the off-chip
windows are shared, so a tile reads what another stored. Cross-tile tokens order them as the
replay does (``tile_sync.h``): a store with a token (k) posts it once executed, and a load with
a token does not run before ``code`` posts of it; meanwhile the next tile runs. A load whose
posts never come is an error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from tlm_models.platform.info import PlatformInfo
from tlm_models.replay.reference import ReferenceExecutor, TraceExecutionError
from tlm_models.trace.header import TraceHeader
from tlm_models.trace.record import OpKind


def run_tiles(
    traces: Sequence[tuple[TraceHeader, np.ndarray, PlatformInfo]],
    inputs: Mapping[str, np.ndarray],
) -> list[ReferenceExecutor]:
    """Loads Q, K, V into every tile's window, executes every tile's records (the tiles take
    turns, each running until a load waits for a token); returns the tiles' executors, whose
    ``tensor("O")`` shows their window's O."""
    executors = [ReferenceExecutor(header, info) for header, _, info in traces]
    shared = {ex.regions[0].base: ex.regions[0] for ex in executors}  # one per window
    for ex in executors:
        ex.regions = [*shared.values(), *ex.regions[1:]]
        for name, value in inputs.items():
            ex.tensor(name)[...] = value
    posts: Counter[int] = Counter()
    heads = [0] * len(traces)
    while any(heads[t] < len(recs) for t, (_, recs, _) in enumerate(traces)):
        progress = False
        for t, (_, recs, _) in enumerate(traces):
            while heads[t] < len(recs):
                rec = recs[heads[t]]
                kind, token = int(rec["kind"]), int(rec["k"])
                if kind == OpKind.LOAD and token and posts[token] < int(rec["code"]):
                    break
                executors[t].execute(rec)
                if kind == OpKind.STORE and token:
                    posts[token] += 1
                heads[t] += 1
                progress = True
        if not progress:
            waiting = [t for t, (_, recs, _) in enumerate(traces) if heads[t] < len(recs)]
            raise TraceExecutionError(
                f"tiles {waiting} wait for tokens no tile posts (record "
                f"{heads[waiting[0]]} of tile {waiting[0]})"
            )
    return executors
