"""Set-up's one line per step, plus one for each wait of minutes inside it (a package built
from source for want of a wheel, a large download): `make test` was silent for 235 s while
pip compiled cppyy's bindings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PIP_LINES = [
    "Collecting cppyy",
    "  Downloading cppyy_cling-6.32.8-py2.py3-none-manylinux2014_x86_64.whl (80.5 MB)",
    "  Downloading numpy-2.1.0.whl (1.2 MB)",
    "Building wheel for CPyCppyy (pyproject.toml): started",
    "Successfully installed cppyy-3.5.0",
]


def _step(*lines: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    script = f"import sys; print({chr(10).join(lines)!r}); sys.exit({code})"
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "quiet_step.py"), "installing", "--",
         sys.executable, "-c", script],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip


def test_builds_from_source_and_large_downloads_get_a_line_each() -> None:
    out = _step(*PIP_LINES).stdout.splitlines()
    assert out[0] == "setup: installing …"
    assert out[1] == (
        "setup:   downloading cppyy_cling-6.32.8-py2.py3-none-manylinux2014_x86_64.whl (80.5 MB)"
    )
    assert out[2].startswith("setup:   building CPyCppyy from source (the package index has no")
    assert out[3].startswith("setup: installing: done in ")
    assert len(out) == 4  # the small download and the rest stay quiet


def test_a_failed_step_prints_everything() -> None:
    done = _step("some output", "ERROR: broken", code=3)
    assert done.returncode == 3
    assert "FAILED" in done.stdout and "ERROR: broken" in done.stdout


def test_a_package_built_from_source_is_announced_once() -> None:
    # pip says "Building wheel for X" when it starts, while it runs and when it is done: a
    # fresh set-up printed the same CPyCppyy line four times.
    out = _step(
        "Building wheel for CPyCppyy (pyproject.toml): started",
        "Building wheel for CPyCppyy (pyproject.toml): still running...",
        "Building wheel for CPyCppyy (pyproject.toml): still running...",
        "Building wheel for CPyCppyy (pyproject.toml): finished with status 'done'",
    ).stdout.splitlines()
    assert [line for line in out if "building CPyCppyy" in line] == [
        "setup:   building CPyCppyy from source (the package index has no wheel for it here; "
        "C++ bindings take minutes)"
    ]
