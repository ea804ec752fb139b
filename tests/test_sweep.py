"""Sweeps: results on disk as they finish, resume, failures recorded, CSV, CLI, interrupt."""

from __future__ import annotations

import _thread
import argparse
import csv
import io
import json
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests import study_jobs
from tlm_models.cli import study_cmd
from tlm_models.errors import UserError
from tlm_models.run.config import RunConfig
from tlm_models.study.executor_local import LocalExecutor
from tlm_models.study.grid import GridSpec, expand_grid, parse_swept_setting
from tlm_models.study.progress import Progress, format_duration, sweep_eta
from tlm_models.study.store import ResultStore
from tlm_models.study.sweep import run_sweep
from tlm_models.study.table import flatten

CONTRACT_KEYS = {
    "schema",
    "dataflow",
    "platform",
    "seq_len",
    "head_dim",
    "heads",
    "sim_time_ns",
    "offchip_bytes",
    "pe",
    "exp",
    "memory_stall_fraction",
    "overlap_efficiency",
    "exposed_io_ns",
    "stalls",
    "ops",
    "wall_s",
    "ops_per_s",
    "overrides",
}


def _grid(
    *params: str, dataflows: tuple[str, ...] = ("standard", "flat", "attenio")
) -> list[RunConfig]:
    return expand_grid(
        GridSpec(
            dataflows=dataflows,
            seq_lens=(8192, 16384),
            head_dims=(64,),
            platforms=("p.yaml",),
            params=tuple(parse_swept_setting(p, "--param") for p in params),
        )
    )


def _sweep(configs: list[RunConfig], out: Path, **kwargs: Any) -> Any:
    stream = io.StringIO()
    summary = run_sweep(
        configs, out, job=study_jobs.fake_run, executor=LocalExecutor(2), stream=stream, **kwargs
    )
    return summary, stream.getvalue()


def _invocations(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_results_carry_the_contract_keys_and_the_csv_is_flat(tmp_path: Path) -> None:
    configs = _grid()
    summary, log = _sweep(configs, tmp_path)
    assert (summary.total, summary.ran, summary.failed, summary.exit_code) == (6, 6, 0, 0)
    records = ResultStore(tmp_path).records()
    assert len(records) == 6
    for record in records:
        assert record.keys() >= CONTRACT_KEYS
        assert record["key"] == RunConfig.from_dict(record["config"]).key()
        assert record["offchip_bytes"]["total"] > 0
    with (tmp_path / "results.csv").open() as stream:
        rows = list(csv.DictReader(stream))
    assert len(rows) == 6
    header = list(rows[0])
    assert header[:5] == ["key", "dataflow", "platform", "seq_len", "head_dim"]
    assert {
        "offchip_bytes.total",
        "pe.mac_utilization",
        "stalls.pe.load",
        "bounds.mmm_lower",
    } <= set(header)
    assert [row["dataflow"] for row in rows] == ["standard"] * 2 + ["flat"] * 2 + ["attenio"] * 2
    assert "6/6 done, 0 failed" in log


def test_rerun_skips_finished_configurations(tmp_path: Path) -> None:
    calls = tmp_path / "calls.txt"
    first = _grid(f"log={calls}", dataflows=("standard",))
    _sweep(first, tmp_path / "out")
    assert len(_invocations(calls)) == 2
    summary, _ = _sweep(first, tmp_path / "out")
    assert (summary.skipped, summary.ran, summary.exit_code) == (2, 0, 0)
    assert len(_invocations(calls)) == 2
    wider = _grid(f"log={calls}", dataflows=("standard", "flash2"))
    summary, _ = _sweep(wider, tmp_path / "out")
    assert (summary.skipped, summary.ran) == (2, 2)
    assert sorted(_invocations(calls)[2:]) == sorted(c.key() for c in wider[2:])
    assert len(ResultStore(tmp_path / "out").records()) == 4


def test_a_crashing_configuration_is_recorded_and_the_others_finish(tmp_path: Path) -> None:
    configs = _grid("flat.crash=abort")
    summary, log = _sweep(configs, tmp_path)
    assert (summary.ran, summary.failed, summary.exit_code) == (6, 2, 1)
    latest = ResultStore(tmp_path).latest()
    failed = {k: r for k, r in latest.items() if "error" in r}
    assert {r["dataflow"] for r in failed.values()} == {"flat"}
    assert all("SIGABRT" in r["error"] for r in failed.values())
    assert all("sim_time_ns" in r for k, r in latest.items() if k not in failed)
    assert "FAILED" in log
    # Recorded failures stay failed (and the exit code says so) until asked to retry.
    summary, _ = _sweep(configs, tmp_path)
    assert (summary.ran, summary.failed, summary.exit_code) == (0, 2, 1)
    summary, _ = _sweep(configs, tmp_path, retry_failed=True)
    assert (summary.ran, summary.failed) == (2, 2)


def test_a_raising_job_and_a_non_dict_result_are_errors(tmp_path: Path) -> None:
    configs = _grid("attenio.crash=raise")
    summary, _ = _sweep(configs, tmp_path / "a")
    errors = [r["error"] for r in ResultStore(tmp_path / "a").records() if "error" in r]
    assert len(errors) == 2 and all("deliberate failure" in e for e in errors)
    summary = run_sweep(
        configs[:1],
        tmp_path / "b",
        job=study_jobs.not_a_dict,
        executor=LocalExecutor(1),
        stream=io.StringIO(),
    )
    assert summary.failed == 1
    assert "not a result dict" in ResultStore(tmp_path / "b").records()[0]["error"]


def test_identical_inputs_give_identical_outputs(tmp_path: Path) -> None:
    from tlm_models.study.report import write_report

    configs = _grid("flat.crash=raise")
    outputs = []
    for name in ("one", "two"):
        _sweep(configs, tmp_path / name)
        write_report(tmp_path / name, plots=False)
        outputs.append(
            (
                (tmp_path / name / "results.csv").read_bytes(),
                (tmp_path / name / "report.md").read_bytes(),
                sorted((tmp_path / name / "results.jsonl").read_text().splitlines()),
            )
        )
    assert outputs[0] == outputs[1]


def test_interrupt_keeps_finished_results_and_kills_running_ones(tmp_path: Path) -> None:
    configs = expand_grid(
        GridSpec(
            dataflows=("standard", "flat"),
            seq_lens=(8192,),
            head_dims=(64,),
            params=(parse_swept_setting("flat.sleep=60", "--param"),),
        )
    )
    results = tmp_path / "results.jsonl"

    def interrupt_after_first_result() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (results.exists() and results.read_text()):
            time.sleep(0.05)
        time.sleep(0.3)
        _thread.interrupt_main()

    # A Ctrl-C reaches a CLI process through Python's default SIGINT handler; interrupt_main
    # does nothing when an earlier test in this process left another handler in place.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    watcher = threading.Thread(target=interrupt_after_first_result, daemon=True)
    start = time.monotonic()
    watcher.start()
    try:
        summary, log = _sweep(configs, tmp_path)
    finally:
        signal.signal(signal.SIGINT, previous)
    elapsed = time.monotonic() - start
    # the 60 s configuration was killed, not waited for
    assert elapsed < 20, (elapsed, previous)
    assert summary.interrupted and summary.exit_code == 130
    records = ResultStore(tmp_path).records()
    assert [r["dataflow"] for r in records] == ["standard"]
    assert "interrupted" in log


def test_flatten_dots_nested_keys_and_serialises_lists() -> None:
    flat = flatten({"a": 1, "b": {"c": 2, "d": {"e": "x"}}, "f": ["1", 2], "g": None})
    assert flat == {"a": 1, "b.c": 2, "b.d.e": "x", "f": '["1", 2]', "g": None}


def test_a_torn_last_line_is_ignored(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    store.append({"key": "k1", "x": 1})
    with store.path.open("a") as stream:
        stream.write('{"key": "k2", "x"')
    assert [r["key"] for r in store.records()] == ["k1"]


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_prints_plain_lines_with_eta_when_not_a_terminal() -> None:
    stream = io.StringIO()
    clock = FakeClock()
    progress = Progress(
        total=4, skipped=1, stream=stream, timer=clock, pending=["cfg-a", "cfg-b", "cfg-c"]
    )
    progress.start()
    clock.now += 10
    progress.finished("cfg-a", ok=True, wall_s=1.25)
    progress.finished("cfg-b", ok=False, wall_s=0.5, error="boom")
    lines = stream.getvalue().splitlines()
    assert lines[0] == "sweep: 4 configurations (1 already done)"
    # No costs: each configuration weighs the same; cfg-a ran 1.25 s, so cfg-b and cfg-c
    # need 2 x 1.25 s on one lane.
    assert lines[1].startswith("sweep: 2/4 done, 0 failed, elapsed 10 s, ETA 2.5 s")
    assert "done in 1.2 s: cfg-a" in lines[1]
    assert "2/4 done, 1 failed" in lines[2] and "FAILED (boom)" in lines[2]
    assert format_duration(185) == "3 min 05 s"
    assert format_duration(7620) == "2 h 07 min"


def test_progress_draws_a_bar_with_counts_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    progress = Progress(total=5, stream=stream, timer=FakeClock(), pending=["a", "b"])
    progress.start()
    progress.finished("a", ok=True, wall_s=1.0)
    progress.close()
    text = stream.getvalue()
    assert "| 0/5 done, 0 failed, elapsed 0.0 s, ETA: estimating" in text
    assert "| 1/5 done, 0 failed, elapsed 0.0 s, ETA 1.0 s" in text
    assert text.endswith("sweep: 1/5 done, 0 failed, elapsed 0.0 s, ETA 1.0 s\n")


def test_sweep_eta_weights_remaining_work_by_predicted_cost() -> None:
    # One job of cost 1e6 took 2 s: 0.5 M/s per lane. Remaining 3e6 + 1e6 on 2 lanes = 4 s,
    # but the 3e6 job alone needs 6 s.
    assert sweep_eta([(1e6, 2.0)], [3e6, 1e6], parallel=2, prior_rate=1.0) == 6.0
    # Before anything finished the prior rate predicts: 8e6 on 2 lanes at 2e6/s = 2 s.
    assert sweep_eta([], [4e6, 4e6], parallel=2, prior_rate=2e6) == 2.0
    assert sweep_eta([(1.0, 1.0)], [], parallel=1, prior_rate=1.0) == 0.0


def test_a_cheap_first_point_does_not_predict_an_hour() -> None:
    """The demo's symptom: a tiny configuration finishing first set the ETA for 50 large
    ones. With costs (predicted seconds), the rate is measured in predicted seconds per second
    and the ETA is right."""
    clock = FakeClock()
    keys = [f"cfg-{i}" for i in range(5)]
    progress = Progress(total=5, stream=io.StringIO(), timer=clock, pending=list(keys))
    progress.start()
    assert progress.eta() is None  # no costs, nothing finished: no ETA yet
    progress.set_costs({"cfg-0": 0.01, "cfg-1": 1.0, "cfg-2": 1.0, "cfg-3": 1.0, "cfg-4": 1.0})
    assert "ETA 4.0 s" in progress.line()  # 4.01 s as predicted (the prior rate 1)
    assert progress.stream.getvalue().splitlines()[-1] == (
        "sweep: predicted 5 configurations in about 4.0 s on 1 worker (4.0 s of runs)"
    )
    clock.now += 0.05
    progress.finished("cfg-0", ok=True, wall_s=0.02)  # half as fast as predicted
    assert progress.eta() == pytest.approx(8.0)
    clock.now += 1.5  # the ETA counts down between events
    assert progress.eta() == pytest.approx(6.5)
    assert "ETA 6.5 s" in progress.line()
    # 10 s later nothing else finished: the running job (1 predicted second) goes at most
    # 1 / 11.5 predicted seconds per second, so the remaining 4 s take at least 46 s: the ETA
    # grows, never sits at 0.
    clock.now += 10.0
    assert progress.eta() == pytest.approx(4.0 / (1.0 / 11.5))


def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    study_cmd.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


def test_cli_sweep_writes_results_and_report_and_exits_1_on_failure(tmp_path: Path) -> None:
    platform = tmp_path / "plat.yaml"
    platform.write_text("name: test\n")
    out = tmp_path / "out"
    argv = [
        "sweep",
        "--platform",
        str(platform),
        "--dataflows",
        "standard,flat",
        "--seq-lens",
        "8K",
        "--head-dims",
        "64,128",
        "--param",
        "flat.crash=raise",
        "--jobs",
        "2",
        "--out",
        str(out),
        "--job",
        "tests.study_jobs:fake_run",
        "--no-report",
    ]
    assert _cli(argv) == 1
    assert len(ResultStore(out).records()) == 4
    assert _cli(["report", str(out), "--no-plots"]) == 0
    report = (out / "report.md").read_text()
    assert "## Failed configurations" in report and "deliberate failure" in report


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--dataflows", "flashy"], "unknown dataflow"),
        (["--seq-lens", "8X"], "sequence length"),
        (["--set", "sram.capacity"], "key.path=value"),
        (["--executor", "dask"], "needs --scheduler"),
        (["--scheduler", "tcp://x:1"], "only used with --executor dask"),
        (["--jobs", "0"], "--jobs"),
        (["--platform", "no/such.yaml"], "not found"),
        (["--job", "tests.study_jobs:nothing"], "no function 'nothing'"),
    ],
)
def test_cli_rejects_bad_input_with_a_user_error(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    platform = tmp_path / "plat.yaml"
    platform.write_text("name: test\n")
    base = {
        "--platform": str(platform),
        "--dataflows": "standard",
        "--seq-lens": "8K",
        "--head-dims": "64",
        "--out": str(tmp_path / "out"),
        "--job": "tests.study_jobs:fake_run",
    }
    argv = ["sweep"]
    for option, value in base.items():
        if option not in extra:
            argv += [option, value]
    with pytest.raises(UserError, match=message):
        _cli(argv + extra)
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_report_of_an_empty_directory_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"no results\.jsonl"):
        _cli(["report", str(tmp_path)])


def test_result_records_are_json_lines(tmp_path: Path) -> None:
    _sweep(_grid(dataflows=("standard",)), tmp_path)
    for line in (tmp_path / "results.jsonl").read_text().splitlines():
        assert json.loads(line)["schema"] == "attn-tlm.result/1"


@pytest.mark.parametrize("cut", [1, -2])
def test_a_torn_last_line_is_set_aside_and_its_point_runs_again(tmp_path: Path, cut: int) -> None:
    configs = _grid()
    out = tmp_path / "sweep"
    _sweep(configs, out)
    lines = (out / "results.jsonl").read_bytes().splitlines(keepends=True)
    # A crash mid-write of the last record: only its first bytes reached the disk.
    torn = lines[-1][:cut]
    (out / "results.jsonl").write_bytes(b"".join(lines[:-1]) + torn)
    _summary, log = _sweep(configs, out)
    assert f"torn last line ({len(torn)} B" in log
    assert (out / "results.jsonl.torn").read_bytes() == torn + b"\n"
    records = ResultStore(out).records()  # every line parses
    keys = [r["key"] for r in records]
    assert sorted(keys) == sorted(c.key() for c in configs)  # no duplicate, nothing lost
    with (out / "results.csv").open() as stream:
        assert len(list(csv.DictReader(stream))) == len(configs)
    _summary, log = _sweep(configs, out)  # a clean file: nothing set aside, nothing rerun
    assert "torn" not in log
    assert [r["key"] for r in ResultStore(out).records()] == keys
