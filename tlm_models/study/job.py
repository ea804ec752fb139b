"""The job a sweep runs per configuration, run in a fresh worker process, with its outcome.

A job is a module-level function ``job(config) -> dict`` (the result JSON); by default
``tlm_models.run.execute.run_one``, which receives the run already resolved in the caller
(``ResolvedRun``: the platform loaded and validated once per platform and overrides, never again
in the worker); a user's job receives the ``RunConfig``. Running it never raises for a failed
simulation: the failure becomes part of the outcome so a sweep records it and goes on.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tlm_models.errors import SimulationError, UserError
from tlm_models.run.config import RunConfig
from tlm_models.run.resolve import ResolvedRun
from tlm_models.run.worker import run_in_worker

__all__ = [
    "DEFAULT_JOB",
    "JobFunction",
    "JobOutcome",
    "SweepItem",
    "config_of",
    "load_job",
    "run_job",
]

JobFunction = Callable[[Any], dict[str, Any]]

#: What a sweep hands a job: the resolved run (the default job) or the configuration (a user's).
SweepItem = RunConfig | ResolvedRun


def config_of(item: SweepItem) -> RunConfig:
    """The configuration of a sweep item (its identity in the sweep directory)."""
    return item.config if isinstance(item, ResolvedRun) else item


#: The study runner: simulates one configuration and returns its result JSON.
DEFAULT_JOB = "tlm_models.run.execute:run_one"


@dataclass(frozen=True)
class JobOutcome:
    """What came back for one configuration: a result dict, or an error message."""

    config: RunConfig
    result: dict[str, Any] | None
    error: str | None
    wall_s: float

    @property
    def ok(self) -> bool:
        return self.error is None


def load_job(spec: str = DEFAULT_JOB) -> JobFunction:
    """Imports ``"package.module:function"``; a missing module or name is a UserError."""
    module_name, colon, function_name = spec.partition(":")
    if not colon or not module_name or not function_name:
        raise UserError(f"a job is named as module:function, found '{spec}'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UserError(f"job module '{module_name}' cannot be imported: {exc}") from None
    job = getattr(module, function_name, None)
    if not callable(job):
        raise UserError(f"job module '{module_name}' has no function '{function_name}'")
    loaded: JobFunction = job
    return loaded


def run_job(job: JobFunction, item: SweepItem) -> JobOutcome:
    """Runs ``job(item)`` in a fresh worker process; a crash or error becomes the outcome."""
    start = time.monotonic()
    config = config_of(item)
    try:
        result = run_in_worker(job, item)
    except UserError as exc:
        return JobOutcome(config, None, f"UserError: {exc}", time.monotonic() - start)
    except SimulationError as exc:
        return JobOutcome(config, None, str(exc), time.monotonic() - start)
    except Exception as exc:  # starting the worker failed: recorded like any other failure
        message = f"could not run the job: {type(exc).__name__}: {exc}"
        return JobOutcome(config, None, message, time.monotonic() - start)
    wall_s = time.monotonic() - start
    if not isinstance(result, dict):
        error = f"job returned {type(result).__name__}, not a result dict"
        return JobOutcome(config, None, error, wall_s)
    return JobOutcome(config, result, None, wall_s)
