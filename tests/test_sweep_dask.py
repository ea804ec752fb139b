"""The same sweep on a Dask cluster: a LocalCluster of two worker processes on loopback."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.study_jobs import fake_result, fake_run
from tlm_models.cli import study_cmd
from tlm_models.errors import UserError
from tlm_models.run.config import RunConfig
from tlm_models.study.executor import SweepBatch
from tlm_models.study.executor_dask import DaskExecutor
from tlm_models.study.store import ResultStore

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")


def _cluster(daemon: bool) -> Any:
    with dask.config.set({"distributed.worker.daemon": daemon}):
        return distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
        )


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    cluster = _cluster(daemon=False)
    try:
        yield str(cluster.scheduler_address)
    finally:
        cluster.close()


def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    study_cmd.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


def _argv(tmp_path: Path, scheduler: str, *extra: str) -> list[str]:
    platform = tmp_path / "plat.yaml"
    platform.write_text("name: test\n")
    return [
        "sweep", "--executor", "dask", "--scheduler", scheduler, "--platform", str(platform),
        "--dataflows", "standard,flat,attenio", "--seq-lens", "8K,16K", "--head-dims", "64",
        "--out", str(tmp_path / "out"), "--job", "tests.study_jobs:fake_run", "--no-report",
        *extra,
    ]  # fmt: skip


def test_sweep_on_a_dask_cluster_records_results_and_failures(
    tmp_path: Path, scheduler: str
) -> None:
    argv = _argv(tmp_path, scheduler, "--param", "flat.crash=abort")
    assert _cli(argv) == 1
    latest = ResultStore(tmp_path / "out").latest()
    assert len(latest) == 6
    for record in latest.values():
        config = RunConfig.from_dict(record["config"])
        if config.dataflow == "flat":
            assert "SIGABRT" in record["error"]
        else:
            expected = fake_result(config)
            assert record["sim_time_ns"] == expected["sim_time_ns"]
            assert record["offchip_bytes"] == expected["offchip_bytes"]
    assert (tmp_path / "out" / "results.csv").exists()
    # Resume through Dask as well: nothing left to run.
    assert _cli(argv) == 1
    assert len(ResultStore(tmp_path / "out").records()) == 6


def test_daemonic_workers_are_refused_with_the_fix(tmp_path: Path) -> None:
    cluster = _cluster(daemon=True)
    try:
        with pytest.raises(UserError, match="DASK_DISTRIBUTED__WORKER__DAEMON=False"):
            _cli(_argv(tmp_path, str(cluster.scheduler_address)))
    finally:
        cluster.close()
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_an_unreachable_scheduler_is_a_user_error() -> None:
    executor = DaskExecutor("tcp://127.0.0.1:9", connect_timeout_s=1.0)
    with pytest.raises(UserError, match="cannot reach the Dask scheduler"):
        executor.run(SweepBatch([RunConfig.of("standard", 8192, 64)], fake_run, print, print))
