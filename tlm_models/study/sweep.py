"""Runs a grid of configurations into a sweep directory, resumable and failure-tolerant.

Each finished configuration is appended to DIR/results.jsonl at once (and DIR/results.csv is
rewritten), so Ctrl-C or a crash of the sweep itself loses nothing that finished. Running the
same sweep again skips configurations already recorded; a configuration whose simulation
crashes is recorded with its error and the others carry on.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from tlm_models.errors import UserError
from tlm_models.files.output_file import check_output_directory
from tlm_models.run.config import RunConfig
from tlm_models.run.cost import machine_stretch
from tlm_models.run.resolve import ResolvedRun, resolve_runs
from tlm_models.study.executor import SweepBatch, SweepExecutor
from tlm_models.study.executor_local import LocalExecutor
from tlm_models.study.job import JobFunction, JobOutcome, SweepItem, config_of, load_job
from tlm_models.study.progress import Progress
from tlm_models.study.store import TORN_FILE, ResultStore, error_record, result_record
from tlm_models.study.sweep_lock import sweep_lock
from tlm_models.study.table import CSV_FILE, write_csv

__all__ = ["SweepExecutor", "SweepSummary", "run_sweep"]


@dataclass(frozen=True)
class SweepSummary:
    """How a sweep ended. ``failed`` counts the grid's configurations whose record is an error."""

    total: int
    skipped: int
    ran: int
    failed: int
    interrupted: bool

    @property
    def exit_code(self) -> int:
        """130 when interrupted, 1 when any configuration failed, else 0."""
        if self.interrupted:
            return 130
        return 1 if self.failed else 0


def run_sweep(
    configs: Sequence[RunConfig],
    out_dir: Path,
    *,
    job: JobFunction | None = None,
    executor: SweepExecutor | None = None,
    retry_failed: bool = False,
    stream: TextIO | None = None,
    interactive: bool | None = None,
    cost_of: Callable[[ResolvedRun], float] | None = None,
    resolved: Sequence[ResolvedRun] | None = None,
) -> SweepSummary:
    """Runs the configurations not yet in ``out_dir`` and records each result as it finishes.

    ``job`` defaults to the study runner, which receives each run resolved here, in the
    caller, once (``resolved``, when the caller has resolved ``configs`` already; a bad
    configuration raises ``UserError`` before anything runs); a user's job receives the
    configuration. ``executor`` defaults to this machine with one job per core.
    Recorded failures are skipped too unless ``retry_failed``. ``cost_of`` predicts a
    configuration's cost (operations) for the ETA; it runs on a background thread while the
    sweep runs, so a slow estimate delays only the ETA.
    """
    keys = [config.key() for config in configs]
    if len(set(keys)) != len(keys):
        twice = next(key for key, count in Counter(keys).items() if count > 1)
        raise UserError(f"the sweep lists one configuration twice: {twice}")
    check_output_directory(out_dir, "sweep directory")
    runs = None
    if job is None:
        runs = list(resolved) if resolved is not None else resolve_runs(configs)
        if [run.config.key() for run in runs] != keys:
            raise ValueError("run_sweep: resolved runs must be those of configs, in order")
    with sweep_lock(out_dir):
        return _run_locked(
            configs if runs is None else runs,
            keys,
            out_dir,
            load_job() if job is None else job,
            LocalExecutor() if executor is None else executor,
            retry_failed,
            stream,
            interactive,
            cost_of,
        )


def _run_locked(
    items: Sequence[SweepItem],
    keys: list[str],
    out_dir: Path,
    job: JobFunction,
    executor: SweepExecutor,
    retry_failed: bool,
    stream: TextIO | None,
    interactive: bool | None,
    cost_of: Callable[[ResolvedRun], float] | None,
) -> SweepSummary:
    """run_sweep's work, while this process holds the directory's sweep lock."""
    configs = [config_of(item) for item in items]
    store = ResultStore(out_dir)
    torn = store.set_aside_torn_tail()
    if torn:
        print(
            f"{store.path}: a torn last line ({torn} B, from an interrupted write) was moved to "
            f"{TORN_FILE}; its configuration runs again",
            file=sys.stderr if stream is None else stream,
        )
    latest = store.latest()

    def wanted(config: RunConfig) -> bool:
        record = latest.get(config.key())
        return record is None or (retry_failed and "error" in record)

    to_run = [item for item in items if wanted(config_of(item))]
    progress = Progress(
        total=len(configs),
        skipped=len(configs) - len(to_run),
        stream=sys.stderr if stream is None else stream,
        interactive=interactive,
        parallel=max(1, min(len(to_run), _parallelism(executor))),
        pending=[config_of(item).key() for item in to_run],
    )
    if isinstance(executor, LocalExecutor):  # its jobs share this machine's cores
        progress.prior_rate = 1.0 / machine_stretch(progress.parallel)
    progress.failed = sum(1 for c in configs if not wanted(c) and "error" in latest[c.key()])
    progress.done -= progress.failed
    if latest or (out_dir / CSV_FILE).exists():
        write_csv(out_dir / CSV_FILE, latest.values())  # the table follows results.jsonl

    ran = 0

    def record(outcome: JobOutcome) -> None:
        nonlocal ran
        entry = _record_of(outcome)
        store.append(entry)
        latest[entry["key"]] = entry
        write_csv(out_dir / CSV_FILE, latest.values())
        ran += 1
        progress.finished(
            outcome.config.key(), "error" not in entry, outcome.wall_s, entry.get("error", "")
        )

    progress.start()
    if cost_of is not None and to_run:
        runs = [item for item in to_run if isinstance(item, ResolvedRun)]
        _estimate_in_background(runs, cost_of, progress)
    interrupted = False
    try:
        if to_run:
            executor.run(SweepBatch(to_run, job, record, progress.tick))
    except KeyboardInterrupt:
        interrupted = True
    failed = sum(1 for key in keys if "error" in latest.get(key, {}))
    progress.close("interrupted; run the same command again to resume" if interrupted else "")
    return SweepSummary(
        total=len(configs),
        skipped=len(configs) - len(to_run),
        ran=ran,
        failed=failed,
        interrupted=interrupted,
    )


def _parallelism(executor: SweepExecutor) -> int:
    """How many configurations run at once (for the ETA); a cluster's is unknown: one."""
    jobs = getattr(executor, "jobs", 1)
    if isinstance(executor, LocalExecutor):
        return jobs or os.cpu_count() or 1
    return int(jobs) if isinstance(jobs, int) else 1


def _estimate_in_background(
    runs: Sequence[ResolvedRun], cost_of: Callable[[ResolvedRun], float], progress: Progress
) -> None:
    """Predicts every configuration's cost on a daemon thread and hands the costs over in one
    go (a partial set would bias the ETA towards whatever was estimated first). The progress
    display reads them on the sweep's thread at its next event; the handover is one
    dictionary update under the GIL."""

    def estimate() -> None:
        costs: dict[str, float] = {}
        for run in runs:
            try:
                costs[run.config.key()] = float(cost_of(run))
            except Exception:  # the run itself reports what is wrong with the configuration
                continue
        progress.set_costs(costs)

    threading.Thread(target=estimate, name="sweep-cost", daemon=True).start()


def _record_of(outcome: JobOutcome) -> dict[str, Any]:
    """The results.jsonl line of an outcome; a result that is not JSON becomes an error."""
    if outcome.result is None:
        return error_record(outcome.config, outcome.error or "unknown error")
    entry = result_record(outcome.config, outcome.result)
    try:
        json.dumps(entry)
    except (TypeError, ValueError) as exc:
        return error_record(outcome.config, f"result is not JSON data: {exc}")
    return entry
