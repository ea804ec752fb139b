"""The worker runner: one simulation per process, crashes become exceptions, the caller goes on."""

from __future__ import annotations

import pytest

from tests import worker_jobs
from tlm_models.errors import SimulationError
from tlm_models.run.worker import run_in_worker


def test_simulation_runs_in_a_worker_and_returns_plain_data() -> None:
    ticks, end_ns, _pid = run_in_worker(worker_jobs.tick)
    assert ticks == 10
    assert end_ns == pytest.approx(100.0)


def test_two_simulations_in_a_row_use_two_processes() -> None:
    first = run_in_worker(worker_jobs.tick)
    second = run_in_worker(worker_jobs.tick)
    assert first[:2] == second[:2] == (10, pytest.approx(100.0))
    assert first[2] != second[2]


def test_segfault_in_a_model_is_reported_and_the_next_run_works() -> None:
    with pytest.raises(SimulationError, match="SIGSEGV"):
        run_in_worker(worker_jobs.segfault)
    assert run_in_worker(worker_jobs.tick)[0] == 10


def test_systemc_fatal_is_reported_and_the_next_run_works() -> None:
    with pytest.raises(SimulationError, match="deliberate fatal from a model"):
        run_in_worker(worker_jobs.systemc_fatal)
    assert run_in_worker(worker_jobs.tick)[0] == 10


def test_python_exception_in_a_worker_names_its_cause() -> None:
    with pytest.raises(SimulationError, match="ValueError: deliberate Python error"):
        run_in_worker(worker_jobs.python_error)
