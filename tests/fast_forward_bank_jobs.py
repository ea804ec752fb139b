"""Worker job of the bank-level fast-forward tests: one replay on the paper machine with its
bank-level HBM (``--set hbm.fidelity=bank``), exact or fast-forwarded, with dataflow
parameters (importable by name)."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from typing import Any

from tlm_models.dataflows import emit
from tlm_models.fast_forward.control import (
    FAST_FORWARD_CHUNK_OPS,
    HOST_FIGURES,
    flatten,
    settings_for,
)
from tlm_models.fast_forward.growth import fast_forward_for
from tlm_models.fast_forward.statistical import estimated_errors, sigmas_for
from tlm_models.replay.replayer import replay_in_this_process
from tlm_models.run.config import RunConfig
from tlm_models.run.resolve import resolve_run

BANK = ("hbm.fidelity=bank",)


def bank_replay_stats(
    dataflow: str,
    seq_len: int,
    head_dim: int,
    fast: bool,
    params: tuple[tuple[str, str], ...] = (),
    mask: str = "none",
    error_bound: float = 1e-3,
    max_fraction: float = 0.2,
    policy: str = "bound",
) -> dict[str, Any]:
    """Every statistic of one bank-level replay as {"/"-joined path: value}, the fast_forward
    section, every statistic's estimated error when fast-forwarded statistically, and the
    replay's wall and CPU times (s); ``error_bound``, ``max_fraction`` and ``policy`` as
    ``--ff-error-bound``, ``--ff-max-fraction`` and ``--ff-policy``."""
    config = RunConfig.of(
        dataflow=dataflow,
        seq_len=seq_len,
        head_dim=head_dim,
        overrides=BANK,
        extra=params,
        mask=mask,
        ff_error_bound=error_bound,
        ff_max_fraction=max_fraction,
        ff_policy=policy,
    )
    run = resolve_run(config)
    emitted = emit(dataflow, run.workload, run.info, FAST_FORWARD_CHUNK_OPS, params=run.params)
    assert emitted.iterations is not None
    settings = settings_for(run.platform, error_bound, max_fraction, policy)
    ff = fast_forward_for(emitted.iterations, settings) if fast else None
    started, cpu = time.perf_counter(), time.process_time()
    out = replay_in_this_process(run.platform, emitted.header, emitted.chunks, fast_forward=ff)
    values = {**flatten(out.replay, "replay")[0], **flatten(out.platform, "platform")[0]}
    estimated: dict[str, float] = {}
    if ff is not None and ff.period is not None and ff.period.spread is not None:
        statistical = ff.settings.statistical
        assert statistical is not None
        periods = emitted.iterations.skipped // ff.period.iterations
        errors = estimated_errors(ff.period, periods, values, sigmas_for(ff.period, statistical))
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
        "cpu_s": time.process_time() - cpu,  # this process's CPU time (steadier under load)
    }


def differences(exact: dict[str, Any], fast: dict[str, Any]) -> Iterator[tuple[str, float]]:
    """Each statistic's difference between two ``bank_replay_stats`` results relative to its
    exact value (a statistic exactly 0 counts a difference as infinite), by path; the
    simulating process's own figures (its buffers) are left out."""
    for path, want in exact["stats"].items():
        got = fast["stats"][path]
        if path.rsplit("/", 1)[-1] in HOST_FIGURES or (math.isnan(want) and math.isnan(got)):
            continue
        diff = abs(got - want)
        yield path, diff / abs(want) if want else (math.inf if diff else 0.0)
