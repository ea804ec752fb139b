"""Loading SystemC through cppyy: lazy import, the cached sc_main stub, SystemC discovery."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_importing_the_package_does_not_load_cppyy() -> None:
    proc = _python(
        "import sys, time; t = time.perf_counter(); import tlm_models, tlm_models.cli.main; "
        "print(time.perf_counter() - t); print('cppyy' in sys.modules)"
    )
    assert proc.returncode == 0, proc.stderr
    seconds, loaded = proc.stdout.split()
    assert loaded == "False"
    assert float(seconds) < 0.5


def test_stub_cache_is_rebuilt_when_invalid(tmp_path: Path) -> None:
    # In a fresh process: overwriting a library this process has mapped would crash it.
    proc = _python(
        "from tlm_models.runtime import kernel\n"
        "first = kernel.stub_library()\n"
        "print(first.parent)\n"
        "first.write_bytes(b'not a shared library')\n"
        "rebuilt = kernel.stub_library()\n"
        "print(rebuilt == first, rebuilt.read_bytes()[:4] == b'\\x7fELF')\n",
        env={"XDG_CACHE_HOME": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr
    parent, line = proc.stdout.splitlines()
    assert parent == str(tmp_path / "attn-tlm")
    assert line == "True True"


def test_missing_systemc_home_gives_one_clear_message(tmp_path: Path) -> None:
    proc = _python(
        "from tlm_models.runtime import kernel\n"
        "try:\n    kernel.systemc_paths()\nexcept kernel.SystemCNotFound as e:\n    print(e)\n",
        env={"SYSTEMC_HOME": str(tmp_path)},
    )
    assert proc.returncode == 0
    assert f"SYSTEMC_HOME={tmp_path} does not hold a SystemC installation" in proc.stdout


def test_models_load_and_fatals_throw() -> None:
    proc = _python(
        "from tlm_models.runtime import kernel\n"
        "g = kernel.load_models()\n"
        "sc = g.sc_core\n"
        "try:\n"
        "    sc.sc_report_handler.report(sc.SC_FATAL, 'test/fatal', 'boom', 'f.cpp', 1)\n"
        "except Exception as e:\n"
        "    print('caught', 'boom' in str(e))\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert "caught True" in proc.stdout
