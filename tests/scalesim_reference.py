"""SCALE-Sim v3 as the reference of the systolic PE timing (docs/models/pe_array.md).

SCALE-Sim runs in a virtual environment of its own, because it needs a NumPy older than the
project's (3.0.0 fails with NumPy >= 2.3). ``python -m tests.scalesim_reference`` creates it
(``make test`` does so first); the tests create it on first use otherwise, once, under a file
lock that parallel test workers share. Its results for the GEMMs the tests use are kept in
tests/data/scalesim_gemm_cycles.json (``--write`` regenerates them), and the tests re-run
SCALE-Sim on a subset every time, so a drift of either side fails them.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The reference and the NumPy it works with (3.0.0 raises TypeError with NumPy >= 2.3).
REQUIREMENTS = ("scalesim==3.0.0", "numpy>=2.0.2,<2.3")
VENV = ROOT / "build" / "scalesim-venv"
RUNNER = Path(__file__).resolve().parent / "scalesim_run.py"
DATA = Path(__file__).resolve().parent / "data" / "scalesim_gemm_cycles.json"

#: Our mapping names and SCALE-Sim's.
DATAFLOWS = {"output_stationary": "os", "weight_stationary": "ws", "input_stationary": "is"}

Key = tuple[int, int, str, int, int, int]  # rows, cols, mapping, M, N, K


def scalesim_python() -> Path:
    """The Python of the SCALE-Sim environment, created on first use."""
    python = VENV / "bin" / "python"
    stamp = VENV / ".installed"
    wanted = " ".join(REQUIREMENTS)
    VENV.parent.mkdir(parents=True, exist_ok=True)
    with (VENV.parent / (VENV.name + ".lock")).open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first worker builds it, the others wait
        if not (stamp.exists() and stamp.read_text() == wanted):
            _run([sys.executable, "-m", "venv", "--clear", str(VENV)])
            _run([str(python), "-m", "pip", "install", "--quiet", *REQUIREMENTS])
            stamp.write_text(wanted)
    return python


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode != 0:
        raise RuntimeError(
            f"setting up SCALE-Sim in {VENV} failed: {' '.join(command)}:\n{done.stderr[-2000:]}"
        )


def run_scalesim(keys: Iterable[Key]) -> dict[Key, int]:
    """SCALE-Sim's total cycles of each GEMM (one SCALE-Sim process; stalls must be 0)."""
    groups: dict[tuple[int, int, str], list[tuple[int, int, int]]] = {}
    for rows, cols, mapping, m, n, k in keys:
        groups.setdefault((rows, cols, mapping), []).append((m, n, k))
    if not groups:
        return {}
    cases = [
        {"rows": r, "cols": c, "dataflow": DATAFLOWS[mapping], "shapes": shapes}
        for (r, c, mapping), shapes in groups.items()
    ]
    done = subprocess.run(
        [str(scalesim_python()), str(RUNNER)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"SCALE-Sim failed:\n{done.stderr[-2000:]}")
    cycles: dict[Key, int] = {}
    for (array, shapes), results in zip(groups.items(), json.loads(done.stdout), strict=True):
        for shape, (total, stalls) in zip(shapes, results, strict=True):
            if stalls != 0:
                raise RuntimeError(f"SCALE-Sim stalled {stalls} cycles on {array} {shape}")
            cycles[(*array, *shape)] = total
    return cycles


def load_cycles() -> dict[Key, int]:
    """The stored SCALE-Sim results."""
    data = json.loads(DATA.read_text())
    return {
        (e["rows"], e["cols"], e["mapping"], e["m"], e["n"], e["k"]): e["cycles"]
        for e in data["gemms"]
    }


def write_cycles(keys: Iterable[Key]) -> None:
    """Runs SCALE-Sim on ``keys`` and stores the results."""
    cycles = run_scalesim(sorted(set(keys)))
    gemms = [
        {"rows": r, "cols": c, "mapping": mp, "m": m, "n": n, "k": k, "cycles": cycles[key]}
        for key in sorted(cycles)
        for r, c, mp, m, n, k in (key,)
    ]
    source = (
        f"SCALE-Sim v3 ({', '.join(REQUIREMENTS)}), GEMM mode, bandwidth CALC: "
        "COMPUTE_REPORT.csv 'Total Cycles' (no stalls)"
    )
    rows = ",\n".join(json.dumps(g) for g in gemms)  # one GEMM a line: readable diffs
    DATA.write_text(f'{{"source": {json.dumps(source)},\n"gemms": [\n{rows}\n]}}\n')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--write", action="store_true", help="re-run SCALE-Sim on the tests' GEMMs and store them"
    )
    args = parser.parse_args()
    if args.write:
        from tests.test_pe_systolic import reference_keys

        write_cycles(reference_keys())
        print(f"wrote {DATA}")
    else:
        print(scalesim_python())


if __name__ == "__main__":
    main()
