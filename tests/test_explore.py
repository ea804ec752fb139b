"""attn-tlm explore: spaces, closed-form screening, branch and bound, Pareto, resume, CLI."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from tests import explore_jobs
from tlm_models.cli.main import main
from tlm_models.errors import UserError
from tlm_models.explore import area_model, prune
from tlm_models.explore.area_model import AreaFigures
from tlm_models.explore.pareto import Constraints, front, parse_constraints, parse_objectives
from tlm_models.explore.prune import estimate, platform_of
from tlm_models.explore.report import run_command
from tlm_models.explore.search import Outcome, explore, screen
from tlm_models.explore.space import parse_vary, space_points
from tlm_models.run.config import RunConfig
from tlm_models.study.store import ResultStore, result_record

N, D = 8192, 64
PLATFORM = "platforms/attenio.yaml"


def tiling_configs(dataflow: str = "attenio", overrides: tuple[str, ...] = ()) -> list[RunConfig]:
    info = platform_of(PLATFORM, overrides).info()
    w = RunConfig.of(dataflow, N, D).workload
    return [
        RunConfig.of(dataflow, N, D, overrides=overrides, extra=point)
        for point in space_points("tiling", dataflow, w, info)
    ]


class Recorder:
    """An in-process simulator (``explore_jobs.bound_result``) that counts its runs."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.ran: list[str] = []
        self.records: dict[str, dict[str, Any]] = {}
        self.stop_after = stop_after

    def __call__(self, batch: Sequence[RunConfig]) -> tuple[Mapping[str, dict[str, Any]], bool]:
        out: dict[str, dict[str, Any]] = {}
        for config in batch:
            if self.stop_after is not None and len(self.ran) >= self.stop_after:
                return out, True
            record = result_record(config, explore_jobs.bound_result(config))
            self.ran.append(config.key())
            self.records[config.key()] = record
            out[config.key()] = record
        return out, False


@lru_cache(maxsize=16)
def _brute_force(configs: tuple[RunConfig, ...], objectives: tuple[str, ...]) -> Outcome:
    return explore(configs, objectives, Constraints(), Recorder(), enumerate_all=True)


def brute_force(configs: Sequence[RunConfig], objectives: Sequence[str]) -> Outcome:
    """Every point simulated (the stand-in's figures), once per space and objectives."""
    return _brute_force(tuple(configs), tuple(objectives))


# --- spaces -------------------------------------------------------------------------------


def test_vary_ranges_double_from_lo_to_hi_with_units() -> None:
    assert parse_vary("pe.rows=16..128", ["attenio"]).values == ("16", "32", "64", "128")
    sram = parse_vary("sram.capacity=128KiB..4MiB", ["attenio"])
    assert sram.platform and sram.values == (
        "128KiB", "256KiB", "512KiB", "1MiB", "2MiB", "4MiB",
    )  # fmt: skip
    assert parse_vary("hbm.channels=4,8,16", ["attenio"]).values == ("4", "8", "16")
    assert parse_vary("stage=1..6", ["attenio"]).values == ("1", "2", "4", "6")
    scoped = parse_vary("flash2.br=64,128", ["attenio", "flash2"])
    assert not scoped.platform and scoped.dataflow == "flash2"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("stages=1..4", "--vary stages=1..4: 'stages' is no --param of attenio"),
        ("pe.rows=128..16", "expected LO..HI with 0 < LO <= HI"),
        ("pe.rows=4,4", "a value is listed twice"),
        ("sram.capacity=128KiB..4", "both ends need a unit"),
        ("flash2.rows=1", "flash2 has no --param 'rows'"),
        ("pe.rows", "expected a --vary axis as key.path=value"),
    ],
)
def test_bad_vary_is_one_line_naming_the_flag(text: str, message: str) -> None:
    with pytest.raises(UserError, match=message.replace(".", r"\.").replace("'", "'")) as info:
        parse_vary(text, ["attenio"])
    assert "\n" not in str(info.value)


def test_attenio_tiling_space_holds_the_analytic_a_at_every_stage() -> None:
    points = {dict(c.extra)["stage"] + "/" + dict(c.extra)["rows"] for c in tiling_configs()}
    assert {"1/auto", "2/auto", "4/auto", "8/auto", "2/64", "8/1920"} <= points
    assert len(points) == 4 * 31  # a = 64, 128, ..., 1920 and the analytic a, 4 depths


# --- closed forms and bounds --------------------------------------------------------------


def test_the_analytic_a_moves_the_fewest_bytes_and_its_bound_is_below_the_simulated_time() -> None:
    kept, dropped = screen(tiling_configs(), Constraints(), with_area=False)
    assert not dropped
    least = min(c.estimate.bytes for c in kept)
    best = [dict(c.config.extra) for c in kept if c.estimate.bytes == least]
    # T = 2Nd + 2Nd ceil(N/a): a = 1984 (stage 1, 2), 1982 (4), 1978 (8) all give 5 blocks
    assert least == (2 * N * D + 2 * N * D * 5) * 2
    assert {p["rows"] for p in best} == {"auto", "1664", "1728", "1792", "1856", "1920"}
    analytic = next(c for c in kept if dict(c.config.extra) == {"stage": "2", "rows": "auto"})
    # Simulated (attn-tlm run --dataflow attenio --seq-len 8K --head-dim 64): 7.446811 ms.
    assert 0.8 * 7.446811e-3 < analytic.estimate.time_lb_s < 7.446811e-3


def test_a_too_large_a_is_dropped_as_not_fitting() -> None:
    configs = [RunConfig.of("attenio", N, D, extra=(("stage", "8"), ("rows", "1984")))]
    kept, dropped = screen(configs, Constraints(), with_area=False)
    assert not kept and "at most a = 1978" in dropped[0][1]


def test_a_bad_parameter_value_is_the_users_error_not_a_misfit() -> None:
    with pytest.raises(UserError, match="attenio stage must be a positive integer"):
        estimate(RunConfig.of("attenio", N, D, extra=(("stage", "x"),)), with_area=False)


# --- search -------------------------------------------------------------------------------


@pytest.mark.parametrize("objective", ["time", "energy", "edp", "bytes"])
def test_branch_and_bound_finds_the_enumerated_optimum_with_fewer_runs(objective: str) -> None:
    configs = tiling_configs()
    full = brute_force(configs, [objective])
    recorder = Recorder()
    found = explore(configs, [objective], Constraints(), recorder)
    assert found.front() == full.front()
    assert found.vector(found.front()[0]) == full.vector(full.front()[0])
    assert not found.bound_violations
    if objective in ("time", "bytes"):  # the energy bound is the same for every tiling
        assert len(recorder.ran) < len(configs) / 4


def test_the_pareto_front_matches_enumeration() -> None:
    configs = tiling_configs()
    full = brute_force(configs, ["time", "bytes"])
    found = explore(configs, ["time", "bytes"], Constraints(), Recorder())
    assert found.front() == full.front()
    assert found.simulated < len(configs) / 4


def test_front_keeps_undominated_points_once() -> None:
    points = [("a", (1.0, 5.0)), ("b", (2.0, 2.0)), ("c", (2.0, 3.0)), ("d", (1.0, 5.0))]
    assert front(points) == ["a", "b"]


def test_limits_drop_points_before_and_after_simulation() -> None:
    configs = tiling_configs()
    full = brute_force(configs, ["time"])
    max_bytes = (2 * N * D + 2 * N * D * 6) * 2  # at most 6 blocks of a
    max_time = sorted(m.time_s for m in full.measured.values())[10]
    limit = Constraints(max_bytes=max_bytes, max_time_s=max_time)
    found = explore(configs, ["time"], limit, Recorder(), enumerate_all=True)
    assert found.dropped and all("bytes" in why for _, why in found.dropped)
    fits = {c.key for c in found.candidates}
    assert fits == {c.key() for c in configs if full.measured[c.key()].bytes <= max_bytes}
    fast = {k for k in fits if full.measured[k].time_s <= max_time}
    assert set(found.measured) == fast
    assert set(found.rejected) == fits - fast
    assert all(why.startswith("time ") for why in found.rejected.values())
    searched = explore(configs, ["time"], limit, Recorder())
    assert searched.front() == found.front()


def test_area_and_power_limits_use_the_area_model(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """A stand-in area model: 1 mm^2 per 512 PEs, 0.1 W of leakage per mm^2."""
    prune.estimate.cache_clear()  # estimates priced by the real model must not be reused
    request.addfinalizer(prune.estimate.cache_clear)  # nor this test's afterwards

    def area_of(platform: Any) -> AreaFigures:
        pe = platform.components_of_type("pe_array")[0].params
        mm2 = int(pe["rows"]) * int(pe["cols"]) / 512
        return AreaFigures(mm2, 0.1 * mm2)

    monkeypatch.setattr(prune, "area_of", area_of)
    configs = [
        RunConfig.of("attenio", N, D, overrides=(f"pe.rows={rows}",)) for rows in (16, 32, 64, 128)
    ]
    limits = Constraints(max_area_mm2=4.0, max_power_w=2.0)
    found = explore(configs, ["time", "area"], limits, Recorder(), with_area=True)
    assert [c.config.overrides for c in found.candidates] == [
        ("pe.rows=16",),
        ("pe.rows=32",),
        ("pe.rows=64",),
    ]
    assert "area 8.000 mm^2 > 4.000 mm^2" in found.dropped[0][1]
    # 64 rows: 2.07 W (the stand-in's dynamic energy over its time, plus 0.4 W leakage)
    assert found.rejected[configs[2].key()].startswith("power 2.068 W > 2.000 W")
    assert set(found.front()) == {configs[0].key(), configs[1].key()}
    m = found.measured[configs[1].key()]
    record = explore_jobs.bound_result(configs[1])
    time_s = record["sim_time_ns"] * 1e-9
    assert m.area_mm2 == 2.0
    assert m.energy_j == pytest.approx(record["energy"]["dynamic_j"] + 0.2 * time_s)
    assert m.power_w == pytest.approx(m.energy_j / time_s)


def test_an_interrupted_search_resumes_from_the_store_without_rerunning(tmp_path: Path) -> None:
    configs = tiling_configs()
    store = ResultStore(tmp_path)
    first = Recorder(stop_after=3)
    partial = explore(configs, ["time"], Constraints(), first)
    assert partial.interrupted and len(first.ran) == 3
    for key in first.ran:  # what the sweep had appended before the interrupt
        store.append(first.records[key])
    second = Recorder()
    resumed = explore(configs, ["time"], Constraints(), second, stored=store.latest())
    assert resumed.reused == 3 and not set(second.ran) & set(first.ran)
    once = explore(configs, ["time"], Constraints(), Recorder())
    assert resumed.front() == once.front()
    assert resumed.simulated == once.simulated


# --- outputs and the command line ---------------------------------------------------------


def test_run_command_reproduces_the_configuration() -> None:
    config = RunConfig.of(
        "flash2", 32768, 64, heads=2, overrides=("pe.rows=32",), extra=(("br", "64"), ("bc", "512"))
    )
    assert run_command(config) == (
        "attn-tlm run --dataflow flash2 --seq-len 32768 --head-dim 64 --heads 2 "
        "--set pe.rows=32 --param br=64 --param bc=512"
    )


def test_cli_explores_resumably_and_writes_the_front(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x"
    argv = [
        "explore", "--dataflow", "attenio", "--seq-len", "8K", "--head-dim", "64",
        "--vary", "stage=1,2", "--vary", "rows=512,1024,1536",
        "--objective", "time,bytes", "--out", str(out), "--no-plot",
        "--job", "tests.explore_jobs:bound_run",
    ]  # fmt: skip
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "simulated:" in first and "attn-tlm run --dataflow attenio" in first
    assert (out / "explore.json").is_file() and (out / "front.md").is_file()
    ran = len(ResultStore(out).records())
    assert main(argv) == 0
    assert "0 run now" in capsys.readouterr().out
    assert len(ResultStore(out).records()) == ran


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--objective", "speed"], "--objective: unknown objective 'speed'"),
        (["--max-area", "4 acres"], "--max-area: expected a positive area such as 4mm2"),
        (["--max-power", "5"], "--max-power: expected a power such as 5W"),
        (["--max-bytes", "lots"], "--max-bytes: expected a size such as 512MiB"),
        (
            ["--vary", "pe.rowz=16..64"],
            "--vary pe.rowz=16: components.pe.rowz: unknown parameter 'rowz'",
        ),
        (["--vary", "stage=1,2", "--vary", "stage=4"], "--vary stage=... is given twice"),
        (["--per-round", "0"], "--per-round must be at least 1, found 0"),
        (["--jobs", "0"], "--jobs must be at least 1, found 0"),
    ],
)
def test_cli_rejects_bad_input_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    argv = ["explore", "--dataflow", "attenio", "--seq-len", "8K", "--head-dim", "64"]
    assert main([*argv, "--out", str(tmp_path / "x"), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_cli_refuses_area_limits_without_the_area_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(area_model, "_estimator", lambda: None)
    argv = ["explore", "--dataflow", "attenio", "--seq-len", "8K", "--head-dim", "64"]
    assert main([*argv, "--out", str(tmp_path), "--max-area", "4mm2"]) == 2
    assert "need the area model" in capsys.readouterr().err


def test_approx_has_no_bounds_to_explore(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["explore", "--dataflow", "approx", "--seq-len", "8K", "--out", str(tmp_path)]) == 2
    assert "--dataflow: approx has no closed-form bounds" in capsys.readouterr().err


def test_objectives_and_limits_parse() -> None:
    assert parse_objectives("time,energy") == ("time", "energy")
    limits = parse_constraints("4 mm^2", "500mW", "200ms", "1GiB")
    assert limits == Constraints(4.0, 0.5, pytest.approx(0.2), 1 << 30)


def test_the_area_model_prices_the_platforms_of_the_space() -> None:
    """The paper machine is 4.333 mm^2 in the area model (tlm_models/platform/area); half its
    array fits 4 mm^2."""
    configs = [RunConfig.of("attenio", N, D, overrides=(f"pe.rows={r}",)) for r in (32, 64)]
    found = explore(configs, ["time"], Constraints(max_area_mm2=4.0), Recorder(), with_area=True)
    assert [c.config for c in found.candidates] == configs[:1]
    assert found.dropped[0][1].startswith("area 4.333 mm^2 > 4.000 mm^2")
    area = found.candidates[0].estimate.area
    assert area is not None and area.total_mm2 == pytest.approx(3.5137, abs=5e-5)
    assert area.leakage_w > 0


@pytest.mark.parametrize(
    "extra", [(("rows", "auto"),), (("rows", "256"),), (("stage", "4"), ("rows", "128"))]
)
def test_bounds_hold_against_the_simulator(extra: tuple[tuple[str, str], ...]) -> None:
    """AttenIO's chain bound is the tightest (88 % of the simulated time at N = 32K): a real
    run must not beat it, and its bytes are the closed form's."""
    from tlm_models.study.job import load_job, run_job

    config = RunConfig.of("attenio", 1024, 64, extra=extra)
    outcome = run_job(load_job(), config)
    assert outcome.result is not None, outcome.error
    est = estimate(config, with_area=False)
    assert outcome.result["offchip_bytes"]["total"] == est.bytes
    simulated = outcome.result["sim_time_ns"] * 1e-9
    assert 0.6 * simulated < est.time_lb_s <= simulated


def test_a_killed_search_resumes_from_its_store(tmp_path: Path) -> None:
    """Ctrl-C in the middle of a search: exit 130, every finished simulation kept; the same
    command then runs only what is left and ends on the uninterrupted search's front."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "x"
    argv = [
        sys.executable, "-m", "tlm_models.cli.main", "explore", "--dataflow", "attenio",
        "--seq-len", "8K", "--head-dim", "64", "--vary", "rows=512,768,1024,1280,1536,1792",
        "--objective", "bytes,time", "--enumerate", "--no-plot", "--out", str(out),
        "--job", "tests.explore_jobs:slow_bound_run",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    # A pytest-xdist worker ignores SIGINT and its children inherit that: give the command the
    # default disposition back, as a terminal's shell does.
    proc = subprocess.Popen(
        argv,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while len(ResultStore(out).records()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    kept = {r["key"] for r in ResultStore(out).records()}
    assert 2 <= len(kept) < 6
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{6 - len(kept)} run now, {len(kept)} from the store" in done.stdout
    keys = [r["key"] for r in ResultStore(out).records()]
    assert len(keys) == len(set(keys)) == 6
