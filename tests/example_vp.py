"""Runs the example VP (examples/vp/main.cpp, built and cached by tests.cpp_build) on a job
written by `attn-tlm vp-job`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.cpp_build import build_cpp_test

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"}


def run_example_vp(job: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """The VP's process on ``job`` with the extra arguments (exit status not checked)."""
    binary = build_cpp_test(ROOT / "examples" / "vp" / "main.cpp")
    cmd = [str(binary), "--job", str(job), *extra]
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=300)


def example_vp_output(job: Path, *extra: str) -> str:
    """The VP's standard output (its `key value` lines), asserting that it succeeded."""
    proc = run_example_vp(job, *extra)
    assert proc.returncode == 0, f"{proc.args} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout
