"""Worker job of the bank-level fast-forward tests: one replay on the paper machine with its
bank-level HBM (``--set hbm.fidelity=bank``), exact or fast-forwarded, with dataflow
parameters (importable by name)."""

from __future__ import annotations

import time
from typing import Any

from tlm_models.dataflows import emit
from tlm_models.fast_forward import FAST_FORWARD_CHUNK_OPS, FastForward, flatten, settings_for
from tlm_models.replay import replay_in_this_process
from tlm_models.resolved_run import resolve_run
from tlm_models.statistical_period import estimated_errors
from tlm_models.study.config import RunConfig

BANK = ("hbm.fidelity=bank",)


def bank_replay_stats(
    dataflow: str, seq_len: int, head_dim: int, fast: bool, params: tuple[tuple[str, str], ...] = ()
) -> dict[str, Any]:
    """Every statistic of one bank-level replay as {"/"-joined path: value}, the fast_forward
    section, every statistic's estimated error when fast-forwarded statistically, and the
    replay's wall time (s)."""
    run = resolve_run(
        RunConfig(
            dataflow=dataflow, seq_len=seq_len, head_dim=head_dim, overrides=BANK, extra=params
        )
    )
    emitted = emit(dataflow, run.workload, run.info, FAST_FORWARD_CHUNK_OPS, params=run.params)
    assert emitted.iterations is not None
    ff = FastForward(emitted.iterations, settings_for(run.platform)) if fast else None
    started = time.perf_counter()
    out = replay_in_this_process(run.platform, emitted.header, emitted.chunks, fast_forward=ff)
    values = {**flatten(out.replay, "replay")[0], **flatten(out.platform, "platform")[0]}
    estimated: dict[str, float] = {}
    if ff is not None and ff.period is not None and ff.period.spread is not None:
        statistical = ff.settings.statistical
        assert statistical is not None
        periods = emitted.iterations.skipped // ff.period.iterations
        errors = estimated_errors(ff.period, periods, values, statistical.sigmas)
        estimated = {"/".join(path): error for path, error in errors.items()}
    return {
        "stats": {"/".join(path): value for path, value in values.items()},
        "units": {
            "/".join(path): unit
            for tree, root in ((out.replay, "replay"), (out.platform, "platform"))
            for path, unit in flatten(tree, root)[1].items()
        },
        "fast_forward": out.fast_forward,
        "estimated_errors": estimated,  # every statistic's (the section lists the worst)
        "wall_s": time.perf_counter() - started,
    }
