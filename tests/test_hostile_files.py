"""Hostile file systems: output paths that are not regular files, input files that never end or
nest without bound, file-system errors, concurrent sweeps and Ctrl-C. Each case ends in one
line on stderr (exit code 2, or 130 for Ctrl-C), never a traceback, a hang or a clobbered node,
and is refused before anything is simulated.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import study_jobs
from tlm_models.cli.main import main
from tlm_models.errors import UserError
from tlm_models.files.bounded_input import MAX_JSON_DEPTH, printable
from tlm_models.files.output_file import atomic_output, write_output
from tlm_models.replay.timeline import Timeline, Track, write_chrome_json
from tlm_models.replay.vcd import write_vcd
from tlm_models.run.config import RunConfig
from tlm_models.run.result import SC_TIME_RANGE_NS, check_time_range
from tlm_models.study.executor import SweepBatch
from tlm_models.study.grid import GridSpec, expand_grid
from tlm_models.study.job import JobOutcome
from tlm_models.study.store import ResultStore
from tlm_models.study.sweep import run_sweep
from tlm_models.study.sweep_lock import sweep_lock
from tlm_models.trace.binary import read_header
from tlm_models.trace.io import open_trace, write_trace

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "traces" / "samples" / "load_then_matmul.trace.txt"
#: Seconds a refused input may take (no simulation runs): far below any run's.
BOUND_S = 10.0
#: Sweep processes started at once into one directory.
SWEEPS = 2
RUN = ["run", "--dataflow", "flash2", "--seq-len", "256", "--head-dim", "64"]


def _special_files(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(what it is, path) for every kind of path an output must not replace."""
    tmp_path.mkdir(exist_ok=True)
    fifo = tmp_path / "fifo.bin"
    os.mkfifo(fifo)
    yield "a FIFO", fifo
    directory = tmp_path / "dir.bin"
    directory.mkdir()
    yield "a directory", directory
    sock = tmp_path / "sock.bin"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock))
    yield "a socket", sock
    server.close()
    device = tmp_path / "null.bin"
    device.symlink_to("/dev/null")  # refused as a character device, the link left as it is
    yield "a character device", device
    loop = tmp_path / "loop.bin"
    loop.symlink_to(tmp_path / "loop2.bin")
    (tmp_path / "loop2.bin").symlink_to(loop)
    yield "Too many levels of symbolic links", loop
    dangling = tmp_path / "dangling.bin"
    dangling.symlink_to(tmp_path / "missing" / "file")
    yield "a symbolic link to a missing file", dangling
    under_file = tmp_path / "plain"
    under_file.write_text("x")
    yield "Not a directory", under_file / "out.bin"
    yield "No such file or directory", tmp_path / "absent" / "out.bin"


def _state(path: Path) -> tuple[bool, int]:
    info = os.lstat(path) if os.path.lexists(path) else None
    return (info is not None, info.st_mode if info is not None else 0)


def _refused_cli(argv: list[str], capsys: pytest.CaptureFixture[str], expected: str) -> None:
    started = time.monotonic()
    code = main(argv)
    elapsed = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code == 2, (argv, out, err)
    assert expected in err, (argv, err)
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert elapsed < BOUND_S, (argv, elapsed)


@pytest.mark.parametrize("option", ["--timeline", "--vcd", "--export-stl"])
def test_run_refuses_output_paths_that_are_not_regular_files_before_simulating(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    for expected, path in _special_files(tmp_path / option.strip("-")):
        before = _state(path)
        _refused_cli([*RUN, option, str(path)], capsys, expected)
        assert _state(path) == before, (path, "was replaced")


def test_trace_convert_and_the_writers_refuse_special_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = open_trace(SAMPLE)
    timeline = Timeline([Track("pe", 1, [0.0], [1.0])])
    for expected, path in _special_files(tmp_path / "w"):
        before = _state(path)
        _refused_cli(["trace", "convert", str(SAMPLE), f"{path}"], capsys, expected)
        for write in (
            lambda p: write_chrome_json(timeline, p),
            lambda p: write_vcd(timeline, p),
            lambda p: write_trace(p, trace.header, trace.chunks(), "binary"),
            lambda p: write_trace(p, trace.header, trace.chunks(), "text"),
            lambda p: write_output(p, "x", "report"),
        ):
            with pytest.raises(UserError, match=expected):
                write(path)
        assert _state(path) == before, (path, "was replaced")
    # Nothing is left behind: no temporary file in any directory written to.
    assert not list(tmp_path.rglob("*.tmp"))


def test_a_symbolic_link_to_a_regular_file_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "real.bin"
    target.write_text("old")
    link = tmp_path / "link.bin"
    link.symlink_to(target)
    assert main(["trace", "convert", str(SAMPLE), str(link)]) == 0
    assert link.is_symlink()
    assert read_header(target)[2] == read_header(link)[2] > 0


def test_the_api_refuses_a_timeline_path_before_simulating(tmp_path: Path) -> None:
    from tlm_models import Workload, simulate

    fifo = tmp_path / "t.json"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(UserError, match="is a FIFO"):
        simulate("flash2", Workload(seq_len=256, head_dim=64), timeline=fifo)
    assert time.monotonic() - started < BOUND_S
    assert _state(fifo)[1] == os.lstat(fifo).st_mode


def test_a_failed_write_leaves_the_old_file_and_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("old")
    with pytest.raises(RuntimeError), atomic_output(path, "report") as f:
        f.write("half")
        raise RuntimeError("interrupted mid-write")
    assert path.read_text() == "old"
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    with (
        pytest.raises(UserError, match=r"out.txt: cannot write the report: No space left"),
        atomic_output(path, "report") as f,
    ):
        f.write("new")
        raise full
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_standard_output_on_a_full_disk_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with open("/dev/full", "w") as full:
        monkeypatch.setattr(sys, "stdout", full)
        code = main(["trace", "stats", str(SAMPLE)])
        # The file object still holds what could not be written: drop it before closing.
        monkeypatch.setattr(full, "flush", lambda: None)
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == "attn-tlm: error: standard output: No space left on device"


def _model_configs(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    yield "is a FIFO", fifo
    yield "is a character device", Path("/dev/zero")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    yield "nested too deeply (100000 levels", deep
    digits = tmp_path / "digits.json"
    digits.write_text('{"num_attention_heads": ' + "9" * 5000 + "}")
    yield "an integer of 5000 digits", digits
    big = tmp_path / "big.json"
    big.write_text(" " * (2 << 20) + "{}")
    yield "larger than the 1,048,576 B", big
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    yield "Too many levels of symbolic links", loop
    yield "is a directory", tmp_path


def test_model_config_is_read_through_the_bounded_reader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for expected, path in _model_configs(tmp_path):
        _refused_cli([*RUN[:-2], "--model-config", str(path)], capsys, expected)


def test_trace_headers_refuse_huge_integers_and_deep_nesting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = SAMPLE.read_text().splitlines(keepends=True)
    for params, expected in (
        ('{"n": ' + "9" * 5000 + "}", "an integer of 5000 digits"),
        ("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1), "nested too deeply"),
    ):
        path = tmp_path / "t.trace.txt"
        path.write_text("".join([lines[0], f"params: {params}\n", *lines[1:]]))
        _refused_cli(["trace", "check", str(path)], capsys, expected)
        binary = tmp_path / "t.bin"
        if not (tmp_path / "ok.bin").exists():
            assert main(["trace", "convert", str(SAMPLE), str(tmp_path / "ok.bin")]) == 0
            capsys.readouterr()
        raw = (tmp_path / "ok.bin").read_bytes()
        length = int.from_bytes(raw[12:16], "little")
        header = json.loads(raw[16 : 16 + length])
        header["params"] = "PARAMS"
        text = json.dumps(header, separators=(",", ":")).replace('"PARAMS"', f'{{"x":{params}}}')
        block = text.encode()
        padded = block + b" " * (-(16 + len(block)) % 64)
        body = raw[16 + length :]
        binary.write_bytes(raw[:12] + len(padded).to_bytes(4, "little") + padded + body)
        _refused_cli(["trace", "check", str(binary)], capsys, expected)


def test_trace_inputs_that_are_not_regular_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "t.bin"
    os.mkfifo(fifo)
    _refused_cli(["trace", "check", str(fifo)], capsys, "no such trace file")
    loop = tmp_path / "loop.yaml"
    loop.symlink_to(loop)
    including = tmp_path / "p.yaml"
    including.write_text("name: x\ncomponents:\n  hbm:\n    include: loop.yaml\n")
    # A platform's problems are listed one a line under a heading line.
    for platform, expected in ((loop, "Too many levels of symbolic links"), (including, "loop")):
        code = main(["platform", "check", str(platform)])
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err and expected in err, err


def _configs(count: int = 2) -> list[RunConfig]:
    return expand_grid(
        GridSpec(
            dataflows=("flash2",),
            seq_lens=tuple(1024 * (i + 1) for i in range(count)),
            head_dims=(64,),
            platforms=("p.yaml",),
        )
    )


class InlineExecutor:
    """Runs each job on the calling thread, a little apart, noting it in ``log`` (no worker
    processes: the lock, not the simulation, is under test)."""

    jobs = 1

    def __init__(self, log: Path | None = None) -> None:
        self.log = log

    def run(self, batch: SweepBatch) -> None:
        for config in batch.configs:
            time.sleep(0.05)
            if self.log is not None:
                with self.log.open("a") as log:
                    log.write(config.key() + "\n")
            batch.on_outcome(JobOutcome(config, batch.job(config), None, 0.05))


def _sweep(out: Path, count: int = 2, log: Path | None = None) -> None:
    run_sweep(
        _configs(count),
        out,
        job=study_jobs.fake_run,
        executor=InlineExecutor(log),
        stream=io.StringIO(),
    )


def test_results_jsonl_that_is_not_a_regular_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    zero = tmp_path / "zero"
    zero.mkdir()
    (zero / "results.jsonl").symlink_to("/dev/zero")
    directory = tmp_path / "dir"
    (directory / "results.jsonl").mkdir(parents=True)
    for out, expected in ((zero, "is a character device"), (directory, "is a directory")):
        _refused_cli(["report", str(out)], capsys, expected)
        with pytest.raises(UserError, match=expected):
            _sweep(out)


def test_report_and_sweep_directories_that_cannot_be_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "plain"
    plain.write_text("x")
    for out, expected in ((plain / "sweep", "Not a directory"), (plain, "not a directory")):
        with pytest.raises(UserError, match=expected):
            _sweep(out)
    done = tmp_path / "done"
    _sweep(done)
    (done / "report.md").mkdir()
    _refused_cli(["report", str(done)], capsys, "report.md: is a directory")


def test_a_full_disk_while_appending_is_one_error_and_the_resume_recovers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ResultStore(tmp_path)
    store.append({"key": "a"})
    real_write = os.write

    def half_then_full(fd: int, data: bytes | memoryview) -> int:
        real_write(fd, bytes(data)[:5])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(UserError, match=r"results.jsonl: cannot append a result: No space left"):
        store.append({"key": "b"})
    monkeypatch.undo()
    assert store.set_aside_torn_tail() == 5
    assert [r["key"] for r in store.records()] == ["a"]


def test_a_second_sweep_into_one_directory_is_refused(tmp_path: Path) -> None:
    with (
        sweep_lock(tmp_path),
        pytest.raises(UserError, match=r"another sweep \(process \d+\) is running"),
    ):
        _sweep(tmp_path)
    assert not (tmp_path / "results.jsonl").exists()
    _sweep(tmp_path)  # the lock is free again once its holder is done
    assert len(ResultStore(tmp_path).records()) == 2


def test_concurrent_sweeps_never_duplicate_work(tmp_path: Path) -> None:
    """Sweep processes at once into one directory: one runs, the others refuse; every
    configuration is simulated and recorded once, and results.csv has a row for each (two
    processes show it as well as four, at half the start-up time)."""
    code = (
        "import sys, time; from pathlib import Path; from tlm_models.errors import UserError;"
        "from tests.test_hostile_files import _sweep\n"
        "out = Path(sys.argv[1]); (out.parent / ('ready' + sys.argv[2])).touch()\n"
        "while not (out.parent / 'go').exists(): time.sleep(0.01)\n"
        "try:\n"
        "    _sweep(out, 4, out.parent / 'jobs.log')\n"
        "except UserError as exc:\n"
        "    print(exc, file=sys.stderr); sys.exit(2)\n"
    )
    out = tmp_path / "sweep"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(out), str(i)],
            cwd=ROOT,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(SWEEPS)
    ]
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("ready*"))) < SWEEPS and time.monotonic() < deadline:
        time.sleep(0.02)
    (tmp_path / "go").touch()  # all start their sweeps at once
    outcomes = [(p.wait(timeout=60), p.stderr.read() if p.stderr else "") for p in procs]
    assert all(code in (0, 2) for code, _ in outcomes), outcomes
    assert any(code == 2 for code, _ in outcomes), outcomes  # they did overlap
    assert all("another sweep" in err for code, err in outcomes if code == 2), outcomes
    runs = (tmp_path / "jobs.log").read_text().splitlines()
    assert sorted(runs) == sorted(c.key() for c in _configs(4))  # each simulated once
    keys = [r["key"] for r in ResultStore(out).records()]
    assert sorted(keys) == sorted(c.key() for c in _configs(4))
    rows = (out / "results.csv").read_text().splitlines()
    assert len(rows) == 1 + 4


@pytest.mark.parametrize("delay_s", [0.3, 0.8, 1.5])
def test_ctrl_c_at_any_moment_of_a_run_prints_one_line(tmp_path: Path, delay_s: float) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        # A run of a few seconds (paper tiles, every iteration), still going at 1.5 s.
        [
            sys.executable,
            "-m",
            "tlm_models.cli.main",
            *RUN[:3],
            "--seq-len",
            "16K",
            "--head-dim",
            "64",
            "--exact",
            "--param",
            "tiling=paper",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the signal goes to its group, as a terminal's Ctrl-C does
    )
    time.sleep(delay_s)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if not line.startswith("predicted:")]
    assert lines == ["attn-tlm: interrupted"] or proc.returncode == 0, (proc.returncode, err)


def test_a_dram_timing_of_megaseconds_is_refused_at_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A bank-level run with tRCD = 10^7 s spent minutes in the command histories' slot search
    before it reached the time-range error; a timing past 1 ms is refused as a unit slip."""
    code = main([*RUN, "--set", "hbm.fidelity=bank", "--set", "hbm.t_rcd=10000000s", "--json"])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert "t_rcd = " in err and "is longer than 1 ms" in err, err


def test_echoed_text_loses_terminal_escape_sequences() -> None:
    hostile = "model\x1b]0;owned\x07 \x1b[2J\x1b[31mred\x1b[0m\rback\x9b6n"
    assert printable(hostile) == "model0;owned redback6n"


def test_a_run_past_the_systemc_time_range_stops_with_an_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Seven HBM latencies of 10^7 s pass 2^64 ps at the second (it wrapped to an early
    time before, and the run went on with accesses served at once, exit 0)."""
    code = main([*RUN, "--set", "hbm.latency=10000000s", "--json"])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert "simulated time passed 2^64 ticks" in err and "213.5 days" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_an_extrapolated_time_beyond_the_range_is_refused() -> None:
    check_time_range(SC_TIME_RANGE_NS * 0.999)
    with pytest.raises(UserError, match=r"reached 224.9 days, beyond the 213.5 days"):
        check_time_range(224.9 * 86400e9)


def _check(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    return err


def test_platform_check_refuses_what_run_would(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["platform", "check", str(ROOT / "platforms" / "attenio.yaml"), "--set"]
    err = _check([*base, "sram.role=kv_buffer"], capsys)
    assert "role 'kv_buffer' is already 'sram''s" in err
    err = _check([*base, "description=" + "x" * 5000], capsys)
    assert "description of 5000 characters (at most 4096)" in err
    err = _check([*base, "name=a\x1b]0;owned\x07b"], capsys)
    assert "control characters or terminal escape sequences" in err
    assert "\x1b" not in err and "\x07" not in err, repr(err)


def test_a_model_name_cannot_reach_the_terminal_raw(tmp_path: Path) -> None:
    from tlm_models.workload.hf_config import read_model_config

    path = tmp_path / "config.json"
    path.write_text(
        json.dumps(
            {
                "_name_or_path": "evil\x1b[2J\x1b]0;title\x07",
                "num_attention_heads": 4,
                "hidden_size": 256,
                "num_hidden_layers": 2,
            }
        )
    )
    assert read_model_config(path).name == "evil0;title"


def test_oversized_grids_and_platforms_are_refused_at_once() -> None:
    from tlm_models.platform.compose import Platform

    spec = GridSpec(
        dataflows=("flash2", "attenio"),
        seq_lens=tuple(range(1, 1001)),
        head_dims=tuple(range(1, 101)),
        platforms=("p.yaml",),
    )
    started = time.monotonic()
    with pytest.raises(UserError, match=r"200,000 configurations, more than the 100,000"):
        expand_grid(spec)
    components = {f"c{i}": {"type": "sram"} for i in range(20_000)}
    with pytest.raises(UserError, match=r"20,000 components, more than the 10,000"):
        Platform.from_dict({"name": "x", "components": components})
    assert time.monotonic() - started < BOUND_S
