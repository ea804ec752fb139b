"""The contract between a sweep and where its simulations run (this machine, a Dask cluster):
one batch of work in, outcomes handed back on the calling thread."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from tlm_models.study.job import JobFunction, JobOutcome, SweepItem

__all__ = ["SweepBatch", "SweepExecutor"]


@dataclass(frozen=True)
class SweepBatch:
    """The configurations still to run (never empty), the job that runs one, ``on_outcome``
    called on the calling thread as each finishes, ``on_idle`` called while waiting."""

    configs: Sequence[SweepItem]
    job: JobFunction
    on_outcome: Callable[[JobOutcome], None]
    on_idle: Callable[[], None]


class SweepExecutor(Protocol):
    """Where jobs run: ``run`` returns when every configuration's outcome was handed over; on
    KeyboardInterrupt it stops what is left and raises it again."""

    def run(self, batch: SweepBatch) -> None: ...
