"""Builds every C++ model test (tests/cpp/test_*.cpp) with g++ -Wall -Wextra -Werror against the
system SystemC and runs each of its cases in its own process (SystemC elaborates once per
process)."""

from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.cpp_build import build_cpp_test

CPP_DIR = Path(__file__).resolve().parent / "cpp"
SOURCES = sorted(CPP_DIR.glob("test_*.cpp"))


def _cases() -> list[tuple[Path, str]]:
    cases: list[tuple[Path, str]] = []
    # Build on every core; each file's lock keeps parallel test workers from building twice.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        binaries = list(pool.map(build_cpp_test, SOURCES))
    for binary in binaries:
        names = subprocess.run(
            [str(binary), "--list"], check=True, capture_output=True, text=True
        ).stdout.split()
        cases.extend((binary, name) for name in names)
    return cases


CASES = _cases()


def test_every_cpp_test_file_has_cases() -> None:
    assert SOURCES, "no C++ model tests found"
    assert CASES


@pytest.mark.parametrize(("binary", "case"), CASES, ids=[f"{b.stem}::{c}" for b, c in CASES])
def test_cpp_case(binary: Path, case: str) -> None:
    proc = subprocess.run(
        [str(binary), case],
        capture_output=True,
        text=True,
        timeout=300,
        env={"SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"},
    )
    assert proc.returncode == 0, f"{binary.name} {case} failed:\n{proc.stdout}\n{proc.stderr}"
