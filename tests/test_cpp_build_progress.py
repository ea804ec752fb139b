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


def test_a_long_compile_counts_its_seconds_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    source = cpp_build.ROOT / "tests" / "cpp" / "test_slow.cpp"
    monkeypatch.setattr(cpp_build, "SOURCES", [source])
    monkeypatch.setattr(cpp_build, "binary_path", lambda s: tmp_path / "absent")
    monkeypatch.setattr(cpp_build, "build_cpp_test", lambda s: time.sleep(2.3))
    term = _Terminal()
    monkeypatch.setattr(sys, "stdout", term)
    assert cpp_build.main() == 0
    out = term.getvalue()
    assert out.count("\r  compiling … 0/1 done, ") >= 2, out  # redrawn while g++ runs
    assert re.search(r"\x1b\[2K  tests/cpp/test_slow\.cpp \(2 s\) \[1/1\]\n", out), out
    assert out.endswith("C++ test programs built in 2 s\n"), out


def test_a_log_gets_one_line_per_program_and_no_redraws(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    source = cpp_build.ROOT / "tests" / "cpp" / "test_slow.cpp"
    monkeypatch.setattr(cpp_build, "SOURCES", [source])
    monkeypatch.setattr(cpp_build, "binary_path", lambda s: tmp_path / "absent")
    monkeypatch.setattr(cpp_build, "build_cpp_test", lambda s: time.sleep(1.2))
    log = io.StringIO()
    monkeypatch.setattr(sys, "stdout", log)
    assert cpp_build.main() == 0
    assert "\r" not in log.getvalue()
    assert log.getvalue().splitlines()[1] == "  tests/cpp/test_slow.cpp (1 s) [1/1]"
