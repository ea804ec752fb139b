"""Runs a sweep's jobs on this machine: J threads, each driving one worker process at a time.

Threads only wait (the simulation runs in the worker process), so J threads keep J
simulations busy. Outcomes are handed to the caller on the calling thread, one at a time, so
the caller records them without locks.
"""

from __future__ import annotations

import ctypes
import os
import queue
import threading
from dataclasses import dataclass

from tlm_models.run.worker import kill_worker_of
from tlm_models.study.executor import SweepBatch
from tlm_models.study.job import JobOutcome, SweepItem, run_job

__all__ = ["LocalExecutor"]


class _Cancelled(BaseException):
    """Raised inside a busy thread on interrupt: run_in_worker then kills its worker process."""


@dataclass
class LocalExecutor:
    """``jobs`` configurations at a time on this machine (default: one per CPU core)."""

    jobs: int | None = None

    def run(self, batch: SweepBatch) -> None:
        """Runs every configuration; hands each outcome over as it finishes.

        On KeyboardInterrupt, stops starting new configurations, kills the running workers,
        hands over the results that had already finished, and raises KeyboardInterrupt again.
        """
        configs, job = batch.configs, batch.job
        on_outcome, on_idle = batch.on_outcome, batch.on_idle
        pending: queue.Queue[SweepItem] = queue.Queue()
        for config in configs:
            pending.put(config)
        finished: queue.Queue[JobOutcome] = queue.Queue()
        stop = threading.Event()
        busy_lock = threading.Lock()
        busy: set[int] = set()

        def work() -> None:
            ident = threading.get_ident()
            try:
                while not stop.is_set():
                    try:
                        config = pending.get_nowait()
                    except queue.Empty:
                        return
                    with busy_lock:
                        busy.add(ident)
                    outcome = run_job(job, config)
                    with busy_lock:
                        busy.discard(ident)
                    finished.put(outcome)
            except _Cancelled:
                return

        count = max(1, min(self.jobs or os.cpu_count() or 1, len(configs)))
        threads = [threading.Thread(target=work, daemon=True) for _ in range(count)]
        for thread in threads:
            thread.start()
        received = 0
        try:
            while received < len(configs):
                try:
                    outcome = finished.get(timeout=0.2)
                except queue.Empty:
                    if not any(thread.is_alive() for thread in threads) and finished.empty():
                        raise RuntimeError("sweep threads ended before all jobs finished") from None
                    on_idle()
                    continue
                received += 1
                on_outcome(outcome)
        except KeyboardInterrupt:
            stop.set()
            with busy_lock:
                for ident in busy:
                    _raise_in_thread(ident)
                    kill_worker_of(ident)  # also when the thread is blocked outside bytecode
            for thread in threads:
                thread.join(timeout=5.0)
            # Results that completed before the interrupt are kept; failures after it are
            # artefacts of the interrupt (workers see the terminal's SIGINT too).
            while not finished.empty():
                outcome = finished.get_nowait()
                if outcome.ok:
                    on_outcome(outcome)
            raise


def _raise_in_thread(ident: int) -> None:
    """Makes thread ``ident`` raise _Cancelled at its next bytecode (CPython API)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(_Cancelled))
