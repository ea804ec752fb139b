"""The example virtual prototype (examples/vp) built with CMake and with the documented g++
line prints identical counters, for its own command stream and for a binary trace file; external
projects find the models through ``attn-tlm config`` (CMake package and pkg-config)."""

from __future__ import annotations

import fcntl
import math
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tlm_models
from tlm_models.cli import config_cmd
from tlm_models.cli.main import main as cli_main
from tlm_models.trace.binary import write_binary
from tlm_models.trace.header import TensorInfo, TraceHeader
from tlm_models.trace.record import RECORD_DTYPE

ROOT = Path(__file__).resolve().parent.parent
VP_DIR = ROOT / "examples" / "vp"
BUILD = ROOT / "build" / "vp-tests"
ENV = {**os.environ, "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"}
SRAM = 1 << 32

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed")


def _run(cmd: list[str], cwd: Path | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{shlex.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _gxx_line(output: Path) -> list[str]:
    """The g++ line of docs/integration.md."""
    return [
        "g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror",
        *config_cmd.include_flags(), str(VP_DIR / "main.cpp"), "-o", str(output),
        *config_cmd.link_flags(),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def binaries() -> tuple[Path, Path]:
    # Every pytest-xdist worker that runs a test of this module builds here: one at a time, and
    # the g++ binary replaced atomically, since another worker may be executing the old one.
    cmake_dir = BUILD / "cmake"
    gxx = BUILD / "gxx" / "attn_vp"
    gxx.parent.mkdir(parents=True, exist_ok=True)
    with (BUILD / "build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _run(["cmake", "-S", str(VP_DIR), "-B", str(cmake_dir), "-DCMAKE_BUILD_TYPE=Release"])
        _run(["cmake", "--build", str(cmake_dir)])
        fresh = gxx.with_name(f"attn_vp.{os.getpid()}")
        _run(_gxx_line(fresh))
        os.replace(fresh, gxx)
    return cmake_dir / "attn_vp", gxx


def _counters(text: str) -> dict[str, float]:
    pairs = (line.split() for line in text.splitlines())
    # An undefined ratio of the replay statistics prints as `null`.
    return {key: math.nan if value == "null" else float(value) for key, value in pairs}


def test_builds_print_identical_counters(binaries: tuple[Path, Path]) -> None:
    cmake_bin, gxx_bin = binaries
    out = _run([str(cmake_bin)])
    assert out == _run([str(gxx_bin)])
    c = _counters(out)
    assert c["status"] == 2 and c["error_code"] == 0
    assert c["ops"] == 9
    assert c["bytes_read"] == 3 * 64 * 128  # Q, K, V
    assert c["bytes_written"] == 64 * 128  # O
    assert 0 < c["exec_cycles"] <= c["cycles"]
    assert c["sim_time_ps"] == c["exec_cycles"] * 1000  # 1 GHz, whole cycles here
    assert c["replay.sim_time"] * 1000 == c["sim_time_ps"]
    assert c["replay.ops"] == 9
    assert c["fetch_bytes"] == 9 * 64  # one fetch block
    assert 0 < c["fetch_cycles"] < c["cycles"] - c["exec_cycles"] + 1
    for engine in ("dma0", "dma1", "pe", "exp"):
        assert 0 < c[f"busy_cycles.{engine}"] <= c["exec_cycles"]
        assert c[f"busy_cycles.{engine}"] == pytest.approx(c[f"busy_ns.{engine}"], abs=1)


def _trace_file(path: Path) -> tuple[int, int]:
    """A trace whose engine list is not in the accelerator's order; returns (loaded, stored)."""
    header = TraceHeader(
        dataflow="vp-test",
        engines=["pe", "dma0", "exp", "dma1"],
        tensors=[TensorInfo("Q", 0x200000, (32, 64), 2), TensorInfo("O", 0x300000, (32, 64), 2)],
        window=8,
    )
    recs = np.zeros(5, dtype=RECORD_DTYPE)
    recs["tensor"] = 0xFF
    # load Q (dma0), exp on it (exp), vector copy (pe), store (dma1), a second load (dma0)
    recs[0] = (1, 1, 0, 0, (0, 0, 0, 0), 32, 128, 0, 0x200000, 0, SRAM, 0, 0)
    recs[1] = (5, 2, 0xFF, 0, (1, 0, 0, 0), 32, 64, 0, SRAM, 0, SRAM + 0x4000, 0, 0)
    recs[2] = (4, 0, 0xFF, 0, (1, 0, 0, 0), 32, 64, 0, SRAM + 0x4000, 0, SRAM + 0x8000, 0, 0)
    recs[3] = (2, 3, 1, 0, (1, 0, 0, 0), 32, 128, 0, SRAM + 0x8000, 0, 0x300000, 0, 0)
    recs[4] = (1, 1, 0, 0, (0, 0, 0, 0), 16, 64, 0, 0x200000, 0, SRAM + 0x10000, 128, 0)
    write_binary(path, header, [recs])
    return 32 * 128 + 16 * 64, 32 * 128


def test_trace_file_runs_in_both_builds(binaries: tuple[Path, Path], tmp_path: Path) -> None:
    trace = tmp_path / "small.bin"
    loaded, stored = _trace_file(trace)
    cmake_bin, gxx_bin = binaries
    out = _run([str(cmake_bin), str(trace)])
    assert out == _run([str(gxx_bin), str(trace)])
    c = _counters(out)
    assert c["status"] == 2
    assert c["ops"] == 5
    assert c["bytes_read"] == loaded
    assert c["bytes_written"] == stored
    assert c["busy_cycles.pe"] > 0 and c["busy_cycles.exp"] > 0


def test_fetch_block_option(binaries: tuple[Path, Path], tmp_path: Path) -> None:
    trace = tmp_path / "small.bin"
    _trace_file(trace)
    one_block = _counters(_run([str(binaries[1]), str(trace)]))
    blocks = _counters(_run([str(binaries[1]), "--fetch-block", "2", str(trace)]))
    assert blocks["status"] == 2 and blocks["ops"] == 5
    assert blocks["fetch_bytes"] == one_block["fetch_bytes"] == 5 * 64
    assert blocks["bytes_read"] == one_block["bytes_read"]
    for bad in (["--fetch-block", "0"], ["--fetch-block"], ["--nope"]):
        proc = subprocess.run([str(binaries[1]), *bad], env=ENV, capture_output=True, text=True)
        assert proc.returncode == 2, bad
        assert proc.stderr.startswith("attn_vp: ")


def test_bad_trace_file_is_refused(binaries: tuple[Path, Path], tmp_path: Path) -> None:
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"NOTATRACE" + bytes(100))
    proc = subprocess.run([str(binaries[1]), str(bad)], env=ENV, capture_output=True, text=True)
    assert proc.returncode == 2
    assert "not an attn-tlm binary trace" in proc.stderr


EXTERNAL_MAIN = """\
#include <cstdio>
#include <systemc>
#include "tlm_models/protocol_checker.h"
int sc_main(int, char**) {
  tlm_models::ProtocolChecker checker("checker");
  std::printf("violations %llu\\n", static_cast<unsigned long long>(checker.violations()));
  return 0;
}
"""


def test_external_cmake_project_finds_the_package(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "main.cpp").write_text(EXTERNAL_MAIN)
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\n"
        "project(external_vp LANGUAGES CXX)\n"
        "find_package(attn_tlm CONFIG REQUIRED)\n"
        "add_executable(external_vp main.cpp)\n"
        "target_link_libraries(external_vp PRIVATE attn_tlm::models)\n"
    )
    build = tmp_path / "build"
    package_dir = config_cmd.answer("cmakedir")
    _run(["cmake", "-S", str(src), "-B", str(build), f"-Dattn_tlm_DIR={package_dir}"])
    _run(["cmake", "--build", str(build)])
    assert _run([str(build / "external_vp")]) == "violations 0\n"


def test_external_pkg_config_build(tmp_path: Path) -> None:
    if shutil.which("pkg-config") is None:
        pytest.skip("pkg-config not installed")
    (tmp_path / "main.cpp").write_text(EXTERNAL_MAIN)
    env = {**ENV, "PKG_CONFIG_PATH": config_cmd.answer("pkgconfig")}
    flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", "attn-tlm"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert f"-I{tlm_models.INCLUDE_DIR}" in [f"-I{Path(f[2:]).resolve()}" for f in flags]
    binary = tmp_path / "external_vp"
    _run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", str(tmp_path / "main.cpp"),
          "-o", str(binary), *flags])  # fmt: skip
    assert _run([str(binary)]) == "violations 0\n"


def test_pkg_config_version_is_the_package_version() -> None:
    pc = Path(config_cmd.answer("pkgconfig")) / "attn-tlm.pc"
    assert f"Version: {tlm_models.__version__}\n" in pc.read_text()


def test_config_command_prints_each_answer_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["config", "--cmakedir", "--includes", "--pkgconfig"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == str(config_cmd.CMAKE_DIR)
    assert (Path(lines[0]) / "attn_tlmConfig.cmake").is_file()
    assert lines[1].split()[0] == f"-I{tlm_models.INCLUDE_DIR}"
    assert (Path(lines[2]) / "attn-tlm.pc").is_file()


def test_config_command_without_options_is_a_user_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["config"]) == 2
    assert "give at least one of" in capsys.readouterr().err
