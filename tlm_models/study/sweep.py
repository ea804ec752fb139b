"""Runs a grid of configurations into a sweep directory, resumable and failure-tolerant.

Each finished configuration is appended to DIR/results.jsonl at once (and DIR/results.csv is
rewritten), so Ctrl-C or a crash of the sweep itself loses nothing that finished. Running the
same sweep again skips configurations already recorded; a configuration whose simulation
crashes is recorded with its error and the others carry on.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

from tlm_models.errors import UserError
from tlm_models.study.config import RunConfig
from tlm_models.study.executor_local import LocalExecutor
from tlm_models.study.job import JobFunction, JobOutcome, load_job
from tlm_models.study.progress import Progress
from tlm_models.study.store import TORN_FILE, ResultStore, error_record, result_record
from tlm_models.study.table import CSV_FILE, write_csv

__all__ = ["SweepExecutor", "SweepSummary", "run_sweep"]


class SweepExecutor(Protocol):
    """Where jobs run: ``run`` calls ``on_outcome`` on the calling thread as each finishes."""

    def run(
        self,
        configs: Sequence[RunConfig],
        job: JobFunction,
        on_outcome: Callable[[JobOutcome], None],
        on_idle: Callable[[], None],
    ) -> None: ...


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
) -> SweepSummary:
    """Runs the configurations not yet in ``out_dir`` and records each result as it finishes.

    ``job`` defaults to the study runner; ``executor`` to this machine with one job per core.
    Recorded failures are skipped too unless ``retry_failed``.
    """
    keys = [config.key() for config in configs]
    if len(set(keys)) != len(keys):
        twice = next(key for key in keys if keys.count(key) > 1)
        raise UserError(f"the sweep lists one configuration twice: {twice}")
    job = load_job() if job is None else job
    executor = LocalExecutor() if executor is None else executor
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

    to_run = [config for config in configs if wanted(config)]
    progress = Progress(
        total=len(configs),
        skipped=len(configs) - len(to_run),
        stream=sys.stderr if stream is None else stream,
        interactive=interactive,
    )
    progress.failed = sum(1 for c in configs if not wanted(c) and "error" in latest[c.key()])
    progress.done -= progress.failed
    out_dir.mkdir(parents=True, exist_ok=True)
    if latest:
        write_csv(out_dir / CSV_FILE, latest.values())

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
    interrupted = False
    try:
        executor.run(to_run, job, record, progress.tick)
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
