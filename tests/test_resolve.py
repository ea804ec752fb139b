"""Resolve once, in the caller: overrides, element width, workload and plan checked before a
worker starts; one size parser on every command."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tlm_models.cli.main import main
from tlm_models.dataflows.io_formulas import flash2_traffic
from tlm_models.errors import UserError
from tlm_models.run.config import RunConfig
from tlm_models.run.execute import run_one
from tlm_models.run.resolve import resolve_run, resolve_runs
from tlm_models.run.worker import run_in_worker

FP32 = ("pe.elem_bytes=4B", "exp.elem_bytes=4B")


def _no_worker(*args: object, **kwargs: object) -> None:
    raise AssertionError("a worker was started")


def test_a_set_typo_is_reported_at_once_with_a_suggestion(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    main(["bounds", "--seq-len", "1K", "--head-dim", "64"])  # imports warm, as in a fresh CLI
    capsys.readouterr()
    monkeypatch.setattr("tlm_models.cli.run_cmd.run_in_worker", _no_worker)
    started = time.process_time()  # CPU time: the machine may be shared (wall ~0.3 s idle)
    argv = ["run", "--dataflow", "flash2", "--seq-len", "1K", "--head-dim", "64"]
    code = main([*argv, "--set", "sram.capacty=256KiB"])
    elapsed = time.process_time() - started
    err = capsys.readouterr().err
    assert code == 2
    assert "unknown parameter 'capacty'" in err and "did you mean 'capacity'?" in err
    assert elapsed < 1.0


def test_a_sweep_with_a_set_typo_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sweep"
    argv = ["sweep", "--dataflows", "flash2,attenio", "--seq-lens", "1K", "--head-dims", "64"]
    argv += ["--out", str(out)]
    started = time.process_time()
    code = main([*argv, "--set", "sram.capacity=256KiB,512KiB", "--set", "pe.colls=16,32"])
    elapsed = time.process_time() - started
    err = capsys.readouterr().err
    assert code == 2 and "did you mean 'cols'?" in err and "in configuration: " in err
    assert not out.exists()
    assert elapsed < 1.0


def test_a_plan_that_does_not_fit_is_refused_before_running() -> None:
    config = RunConfig.of("flash2", 1024, 64, overrides=("sram.capacity=256B",))
    with pytest.raises(UserError, match=r"needs 261 elements on chip .* but M = 128 elements"):
        resolve_run(config)


def test_dataflow_parameters_are_checked_in_the_caller() -> None:
    with pytest.raises(UserError, match=r"dataflow 'flash2' takes .*; unknown: degree"):
        resolve_run(RunConfig.of("flash2", 1024, 64, extra=(("degree", "2"),)))
    with pytest.raises(UserError, match="unknown: degre"):
        resolve_runs([RunConfig.of("approx", 1024, 16, extra=(("degre", "2"),))])


def test_the_element_width_comes_from_the_platform_once() -> None:
    fp16 = resolve_run(RunConfig.of("flash2", 1024, 64))
    fp32 = resolve_run(RunConfig.of("flash2", 1024, 64, overrides=FP32))
    assert (fp16.elem_bytes, fp16.capacity_elements) == (2, 262_144)  # 512 KiB / 2 B
    assert (fp32.elem_bytes, fp32.capacity_elements) == (4, 131_072)  # 512 KiB / 4 B
    paper = {"tiling": "paper"}
    t16 = flash2_traffic(fp16.workload, fp16.info, paper)
    t32 = flash2_traffic(fp32.workload, fp32.info, paper)
    # The paper's tiles: Bc = ceil(M / 4d) halves with M; Br = min(Bc, d) = 64 stays, so the
    # elements stay and the bytes double: T = (Nd + 2Nd * ceil(N / Br) + Nd) * elem_bytes.
    nd = 1024 * 64
    assert t16.total_elements == t32.total_elements == nd + 2 * nd * 16 + nd
    assert (t16.total_bytes, t32.total_bytes) == (34 * nd * 2, 34 * nd * 4)


def test_one_component_alone_changing_the_width_is_refused() -> None:
    with pytest.raises(UserError, match=r"pe\.elem_bytes = 4 B but exp\.elem_bytes = 2 B"):
        resolve_run(RunConfig.of("flash2", 1024, 64, overrides=("pe.elem_bytes=4B",)))


def test_a_workload_of_another_width_is_refused() -> None:
    with pytest.raises(UserError, match="4 B elements but platform 'attenio' computes on 2 B"):
        resolve_run(RunConfig.of("flash2", 1024, 64), elem_bytes=4)


def test_an_fp32_run_moves_its_closed_form_bytes() -> None:
    paper = (("tiling", "paper"),)
    run = resolve_run(RunConfig.of("flash2", 1024, 64, overrides=FP32, extra=paper))
    result: dict[str, Any] = run_in_worker(run_one, run)
    assert result["elem_bytes"] == 4 and result["capacity_elements"] == 131_072
    # Bc = ceil(131072 / 256) = 512 columns, less what Br = 64 rows of statistics take.
    assert result["tiling"]["br"] == 64 and result["tiling"]["bc_rule"] == 512
    assert result["offchip_bytes"]["total"] == 34 * 1024 * 64 * 4
    assert result["bounds"]["closed_form"] == result["offchip_bytes"]["total"]


def test_run_takes_the_same_sizes_as_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    from tlm_models.cli.main import build_parser
    from tlm_models.cli.run_cmd import config_of

    args = build_parser().parse_args(
        ["run", "--dataflow", "attenio", "--seq-len", "1M", "--head-dim", "64"]
    )
    assert config_of(args).seq_len == 1 << 20
    assert main(["bounds", "--seq-len", "1M", "--head-dim", "64", "--json"]) == 0
    assert '"seq_len": 1048576' in capsys.readouterr().out
