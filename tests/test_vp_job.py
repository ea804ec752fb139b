"""`attn-tlm vp-job`: a dataflow's command stream, tensors and C header for a virtual prototype.

The job runs in the example VP (examples/vp/main.cpp --job DIR, which reads the job's C header)
and its registers give the bytes the header promises and, with the stream fetched in one block
before execution, the execution time of `attn-tlm run` on the same platform to the cycle; the
header compiles as C."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.cpp_build import build_cpp_test
from tlm_models.cli.main import main as cli_main
from tlm_models.run.config import RunConfig
from tlm_models.run.execute import run_one
from tlm_models.run.worker import run_in_worker
from tlm_models.trace.record import RECORD_DTYPE

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"}
TENSORS_AT = 0x1000_0000
BASE = 0x2_0000_0000


def _write_job(out: Path, dataflow: str = "flash2", *extra: str) -> None:
    argv = [
        "vp-job", "--dataflow", dataflow, "--seq-len", "256", "--head-dim", "64",
        "--platform", "platforms/vp-soc.yaml", "--base", "0x2_0000_0000",
        "--tensors-at", "0x1000_0000", "--out", str(out), *extra,
    ]  # fmt: skip
    assert cli_main(argv) == 0


def _defines(header: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in header.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0] == "#define":
            out[parts[1]] = int(parts[2].rstrip("ul"), 0)
    return out


@pytest.fixture(scope="module")
def job_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("job")
    _write_job(out)
    return out


def test_job_files(job_dir: Path) -> None:
    d = _defines(job_dir / "job.h")
    records = np.fromfile(job_dir / "commands.bin", dtype=RECORD_DTYPE)
    assert len(records) == d["ATTN_JOB_COMMAND_COUNT"] > 0
    assert d["ATTN_BASE"] == BASE
    assert d["ATTN_JOB_COMMAND_BASE"] % 4096 == 0
    # engines in the accelerator's numbering: dma0, dma1, pe = 2, exp = 3
    assert set(records["engine"].tolist()) <= {0, 1, 2, 3}
    loads, stores = records[records["kind"] == 1], records[records["kind"] == 2]
    assert (loads["src0"] >= TENSORS_AT).all() and (stores["dst"] >= TENSORS_AT).all()
    assert d["ATTN_JOB_BYTES_READ"] == int((loads["m"].astype(int) * loads["n"]).sum())
    assert d["ATTN_JOB_TENSOR_Q_ADDR"] == TENSORS_AT
    for name in ("Q", "K", "V"):
        data = np.fromfile(job_dir / f"{name}.bin", dtype=np.float16)
        assert data.size * 2 == d[f"ATTN_JOB_TENSOR_{name}_BYTES"] == 256 * 64 * 2
        assert 0.8 < float(data.std()) < 1.2
    assert not (job_dir / "O.bin").exists()  # an output: nothing to place
    assert d["ATTN_REG_CYCLES_LO"] == 0x100 and d["ATTN_ID_VALUE"] == 0x4154544E
    assert d["ATTN_ERROR_EXECUTION"] == 4


def test_header_compiles_as_c(job_dir: Path, tmp_path: Path) -> None:
    source = tmp_path / "driver.c"
    source.write_text(
        '#include "job.h"\n'
        '_Static_assert(ATTN_REG_EXEC_CYCLES_LO == 0x128u, "register map");\n'
        '_Static_assert(ATTN_JOB_COMMAND_BASE % 64 == 0, "aligned stream");\n'
        "unsigned long long stream(void) { return ATTN_BASE + ATTN_REG_COMMAND_BASE_LO; }\n"
    )
    proc = subprocess.run(
        ["gcc", "-std=c11", "-Wall", "-Werror", "-fsyntax-only", f"-I{job_dir}", str(source)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


def _vp(job: Path, *extra: str) -> dict[str, str]:
    binary = build_cpp_test(ROOT / "examples" / "vp" / "main.cpp")
    cmd = [str(binary), *extra, "--job", str(job)]
    proc = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{cmd} failed:\n{proc.stdout}\n{proc.stderr}"
    return dict(line.split(" ", 1) for line in proc.stdout.splitlines())


def test_job_runs_in_the_vp_as_attn_tlm_run(job_dir: Path) -> None:
    d = _defines(job_dir / "job.h")
    vp = _vp(job_dir)
    assert int(vp["status"]) == 2 and int(vp["error_code"]) == 0
    assert int(vp["bytes_read"]) == d["ATTN_JOB_BYTES_READ"]
    assert int(vp["bytes_written"]) == d["ATTN_JOB_BYTES_WRITTEN"]
    assert int(vp["ops"]) == d["ATTN_JOB_OPS"]
    config = RunConfig.of(
        dataflow="flash2", seq_len=256, head_dim=64, platform="platforms/vp-soc.yaml", exact=True
    )
    result = run_in_worker(run_one, config, timeout=600)
    assert result["offchip_bytes"]["read"] == d["ATTN_JOB_BYTES_READ"]
    assert result["offchip_bytes"]["write"] == d["ATTN_JOB_BYTES_WRITTEN"]
    # The stream (fewer records than a fetch block) is read before anything executes, so the
    # execution is the Python replay's to the picosecond.
    assert int(vp["sim_time_ps"]) == round(result["sim_time_ns"] * 1000)


def test_job_through_each_vp_family(job_dir: Path) -> None:
    """The same job through the three families' adapters, a protocol checker on every link:
    the same bytes everywhere; riscv-vp's habits (streaming width 0, unset response status)
    tolerated and counted, none elsewhere; riscv-vp and vcml (a bus that adds no time) execute
    to the picosecond as attn-tlm run on vp-soc.yaml with its bus made zero-time (no hop
    latency, 1 MiB per cycle); lt is attn-tlm run's on vp-soc.yaml as it is (test above)."""
    runs = {family: _vp(job_dir, "--family", family) for family in ("lt", "vcml", "riscv-vp")}
    for family, vp in runs.items():
        assert int(vp["status"]) == 2 and int(vp["error_code"]) == 0, family
        assert int(vp["protocol.violations"]) == 0, family
        assert vp["bytes_read"] == runs["lt"]["bytes_read"] != "0"
        assert vp["bytes_written"] == runs["lt"]["bytes_written"]
        habits = family == "riscv-vp"
        assert (int(vp["protocol.tolerated"]) > 0) == habits, family
        assert (int(vp["compat.zero_streaming_width"]) > 0) == habits, family
        assert (int(vp["compat.incomplete_responses"]) > 0) == habits, family
    assert runs["riscv-vp"]["sim_time_ps"] == runs["vcml"]["sim_time_ps"]
    assert runs["riscv-vp"]["cycles"] == runs["vcml"]["cycles"]
    config = RunConfig.of(
        dataflow="flash2",
        seq_len=256,
        head_dim=64,
        platform="platforms/vp-soc.yaml",
        exact=True,
        overrides=("bus.hop_latency=0ns", "bus.width=1MiB"),
    )
    result = run_in_worker(run_one, config, timeout=600)
    assert int(runs["vcml"]["sim_time_ps"]) == round(result["sim_time_ns"] * 1000)


@pytest.mark.parametrize(
    ("platform", "extra", "message"),
    [
        ("platforms/attenio-x4.yaml", [], "does not have the accelerator's structure"),
        ("platforms/vp-soc.yaml", ["--tensors-at", "0xFFFF_F000"], "beyond the accelerator's"),
        ("platforms/vp-soc.yaml", ["--commands-at", "0x2000_0010"], "must be 64-byte aligned"),
    ],
)
def test_bad_jobs_are_refused(
    platform: str,
    extra: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [
        "vp-job", "--dataflow", "flash2", "--seq-len", "256", "--head-dim", "64",
        "--platform", platform, "--base", "0x2_0000_0000", "--out", str(tmp_path), *extra,
    ]  # fmt: skip
    assert cli_main(argv) == 2
    assert message in capsys.readouterr().err
