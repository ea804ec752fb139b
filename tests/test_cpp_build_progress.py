"""`make test`'s C++ compiles show that they are alive: a fresh clone's `make test` stood 97 s
without a byte on a loaded machine while one test program compiled."""

from __future__ import annotations

import io
import re
import sys
import time
from pathlib import Path

import pytest

from tests import cpp_build


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _build_one_slow_program(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, seconds: float, stdout: io.StringIO
) -> str:
    """Runs the build of one stale program whose compile takes ``seconds``; its output."""
    source = cpp_build.ROOT / "tests" / "cpp" / "test_slow.cpp"
    monkeypatch.setattr(cpp_build, "SOURCES", [source])
    monkeypatch.setattr(cpp_build, "binary_path", lambda s: tmp_path / "absent")
    monkeypatch.setattr(cpp_build, "build_cpp_test", lambda s: time.sleep(seconds))
    monkeypatch.setattr(sys, "stdout", stdout)
    assert cpp_build.main() == 0
    return stdout.getvalue()


def test_a_long_compile_counts_its_seconds_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    out = _build_one_slow_program(monkeypatch, tmp_path, 2.3, _Terminal())
    assert out.count("\r  compiling … 0/1 done, ") >= 2, out  # redrawn while g++ runs
    assert re.search(r"\x1b\[2K  tests/cpp/test_slow\.cpp \(2 s\) \[1/1\]\n", out), out
    assert out.endswith("C++ test programs built in 2 s\n"), out


def test_a_log_gets_one_line_per_program_and_no_redraws(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    out = _build_one_slow_program(monkeypatch, tmp_path, 1.2, io.StringIO())
    assert "\r" not in out
    assert out.splitlines()[1] == "  tests/cpp/test_slow.cpp (1 s) [1/1]"
