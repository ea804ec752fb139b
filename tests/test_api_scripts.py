"""The API where Python code runs: a plain script with ``simulate`` at module level (no
``if __name__ == '__main__':`` guard), run as ``python file.py`` and ``python -c``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """\
from tlm_models import Workload, simulate

result = simulate("flash2", Workload(seq_len=256, head_dim=64))
print(result.sim_time_ns > 0, result.offchip_bytes.total == result.bounds["closed_form"])
"""


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_a_script_without_a_main_guard_runs(tmp_path: Path) -> None:
    """It used to die with 'bootstrapping phase' in the worker, then 'worker crashed: exit
    code 1': multiprocessing ran the script again in the worker, which called simulate."""
    script = tmp_path / "plain.py"
    script.write_text(SCRIPT, encoding="utf-8")
    done = _run([str(script)], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "True True"  # its bytes are its closed form
    assert "bootstrapping" not in done.stderr


def test_python_dash_c_runs(tmp_path: Path) -> None:
    done = _run(["-c", SCRIPT], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "True True"


def test_simulate_with_progress_says_what_it_predicts_like_the_cli(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tlm_models import Workload, simulate

    result = simulate("attenio", Workload(seq_len=512, head_dim=64), progress=True)
    err = capsys.readouterr().err
    assert err.startswith("predicted: ")
    assert "ops" in err.splitlines()[0]
    assert result.offchip_bytes.total == result.bounds["closed_form"]  # type: ignore[index]
