"""The global quantum under CPU contention (docs/integration.md, "The global quantum and CPU
contention"): the example VP with a second CPU storing a word every 10 ns through a quantum
keeper while a job runs. At a quantum of 10 ns or 100 ns the job's execution time is the job's
alone to the picosecond (the accelerator's bursts are booked first and the stores fill the
gaps); at 100 us the stores, booked a quantum ahead, push the accelerator's bursts back: slower,
never faster (the documented bound). With split_requests on the memory and the system bus
(--split-requests) a burst is served in the gaps between the stores instead of after their whole
run: the job alone is unchanged, a short burst of stores moves it by less than 0.5 % at 100 us,
and stores throughout the job delay it by less than their own time on the bus link (one cycle,
1 ns, per 4-byte store)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.example_vp import example_vp_output
from tlm_models.cli.main import main as cli_main


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("quantum") / "job"
    argv = [
        "vp-job", "--dataflow", "flash2", "--seq-len", "256", "--head-dim", "64",
        "--platform", "platforms/vp-soc.yaml", "--base", "0x2_0000_0000",
        "--tensors-at", "0x1000_0000", "--out", str(out),
    ]  # fmt: skip
    assert cli_main(argv) == 0
    return out


def _sim_time_ps(job: Path, *extra: str) -> int:
    out = dict(line.split(" ", 1) for line in example_vp_output(job, *extra).splitlines())
    assert out["status"] == "2" and out["protocol.violations"] == "0"
    return int(out["sim_time_ps"])


def test_short_quanta_leave_the_job_as_it_is_and_100us_only_delays_it(job: Path) -> None:
    alone = _sim_time_ps(job)
    assert alone == _sim_time_ps(job, "--cpu-stores", "0", "--quantum", "100000")
    for stores in ("96", "2000"):
        for quantum in ("10", "100"):
            assert _sim_time_ps(job, "--cpu-stores", stores, "--quantum", quantum) == alone
        assert _sim_time_ps(job, "--cpu-stores", stores, "--quantum", "100000") > alone


def test_split_requests_bound_the_delay_by_the_stores_own_bus_time(job: Path) -> None:
    alone = _sim_time_ps(job)
    assert _sim_time_ps(job, "--split-requests") == alone
    short = _sim_time_ps(job, "--split-requests", "--cpu-stores", "96", "--quantum", "100000")
    assert alone <= short <= alone * 1.005
    stores = 2000
    throughout = _sim_time_ps(
        job, "--split-requests", "--cpu-stores", str(stores), "--quantum", "100000"
    )
    assert (
        _sim_time_ps(job, "--split-requests", "--cpu-stores", str(stores), "--quantum", "10")
        == alone
    )
    assert alone < throughout <= alone + stores * 1000  # 1 ns of bus link per store
