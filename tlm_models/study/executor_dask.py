"""Runs a sweep's jobs on a Dask distributed cluster (``--executor dask --scheduler ADDR``).

Each task still simulates in a fresh process on its Dask worker (``run_in_worker``), so a
crashing configuration costs one task, never the worker. Outcomes are collected as they
complete and handed to the caller on its own thread, exactly like the local executor.
"""

from __future__ import annotations

import importlib
import multiprocessing
import time
from dataclasses import dataclass
from typing import Any

from tlm_models.errors import UserError
from tlm_models.study.executor import SweepBatch
from tlm_models.study.job import JobOutcome, SweepItem, config_of, run_job

__all__ = ["DaskExecutor", "worker_can_start_processes"]


def worker_can_start_processes() -> bool:
    """True when this (Dask worker) process may start child processes.

    Workers under a nanny are daemonic by default, and daemonic processes may not have
    children; simulations need them.
    """
    return not multiprocessing.current_process().daemon


@dataclass
class DaskExecutor:
    """Submits one task per configuration to the scheduler at ``scheduler`` (e.g. tcp://host:8786)."""

    scheduler: str
    connect_timeout_s: float = 10.0

    def run(self, batch: SweepBatch) -> None:
        """Runs every configuration on the cluster; on KeyboardInterrupt cancels what is left."""
        configs, job = batch.configs, batch.job
        on_outcome, on_idle = batch.on_outcome, batch.on_idle
        # Imported here (and untyped) so local sweeps never pay for loading distributed.
        distributed: Any = importlib.import_module("distributed")
        try:
            client = distributed.Client(self.scheduler, timeout=self.connect_timeout_s)
        except (OSError, TimeoutError) as exc:
            raise UserError(
                f"cannot reach the Dask scheduler at {self.scheduler} ({exc}); start one with "
                "'dask scheduler' and workers with 'dask worker ADDRESS' (see docs/study.md)"
            ) from None
        try:
            self._check_workers(client)
            futures = {
                client.submit(run_job, job, config, pure=False): config for config in configs
            }
            pending = distributed.as_completed(list(futures))
            try:
                while not pending.is_empty():
                    ready = pending.next_batch(block=False) if pending.has_ready() else []
                    if not ready:
                        on_idle()
                        time.sleep(0.1)
                        continue
                    for future in ready:
                        on_outcome(_outcome(future, futures[future]))
            except KeyboardInterrupt:
                client.cancel(list(futures))
                raise
        finally:
            client.close()

    def _check_workers(self, client: Any) -> None:
        """Fails early, with the fix, when the workers cannot start simulation processes."""
        answers = client.run(worker_can_start_processes)
        if not answers:
            raise UserError(f"the Dask scheduler at {self.scheduler} has no workers")
        daemonic = sorted(address for address, ok in answers.items() if not ok)
        if daemonic:
            raise UserError(
                f"Dask workers {', '.join(daemonic)} run as daemonic processes and cannot start "
                "simulation processes; start them with DASK_DISTRIBUTED__WORKER__DAEMON=False "
                "(or 'dask worker --no-nanny')"
            )


def _outcome(future: Any, item: SweepItem) -> JobOutcome:
    """The task's outcome; a task lost on the cluster (worker died) becomes an error."""
    config = config_of(item)
    try:
        outcome = future.result()
    except Exception as exc:
        return JobOutcome(config, None, f"Dask task failed: {type(exc).__name__}: {exc}", 0.0)
    if not isinstance(outcome, JobOutcome):
        return JobOutcome(config, None, f"Dask task returned {type(outcome).__name__}", 0.0)
    return outcome
