"""Checks that a change of the models' implementation leaves every simulated number alone.

`record DIR` runs a fixed set of configurations (`attn-tlm run --json`, one fresh process each)
and writes their result JSONs to DIR; `diff OLD NEW` compares two such directories number by
number and prints every difference, ignoring only the host's figures (wall times, rates,
process memory). Exit status 1 when anything simulated differs.

    .venv/bin/python tools/compare_results.py record build/results-before
    (change the models)
    .venv/bin/python tools/compare_results.py record build/results-after
    .venv/bin/python tools/compare_results.py diff build/results-before build/results-after
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
X4, X16 = "platforms/attenio-x4.yaml", "platforms/attenio-x16.yaml"
BANK = "--set hbm.fidelity=bank"

#: name -> `attn-tlm run` arguments: every dataflow, d = 64 and 128, 4K-8K, bandwidth- and
#: bank-level HBM, exact and fast-forwarded, one tile, 4 and 16 tiles.
RUNS: dict[str, str] = {
    "flash2-8k-64": "--dataflow flash2 --seq-len 8K --head-dim 64 --exact",
    "flash2-4k-128-bank": f"--dataflow flash2 --seq-len 4K --head-dim 128 {BANK}",
    "attenio-8k-64": "--dataflow attenio --seq-len 8K --head-dim 64 --exact",
    "attenio-4k-128": "--dataflow attenio --seq-len 4K --head-dim 128",
    "flat-4k-64": "--dataflow flat --seq-len 4K --head-dim 64 --exact",
    "flat-8k-128": "--dataflow flat --seq-len 8K --head-dim 128",
    "standard-8k-64": "--dataflow standard --seq-len 8K --head-dim 64",
    "standard-4k-128-bank": f"--dataflow standard --seq-len 4K --head-dim 128 --exact {BANK}",
    "x4-flash2-4k-64": (
        f"--dataflow flash2 --seq-len 4K --head-dim 64 --heads 4 --platform {X4} --exact"
    ),
    "x16-attenio-4k-64": (
        f"--dataflow attenio --seq-len 4K --head-dim 64 --heads 16 --platform {X16} --exact"
    ),
}

#: Keys whose values are figures of the host, not of the simulation.
HOST_KEYS = ("wall", "ops_per_s", "rss", "cpu_s", "elapsed")


def _is_host(key: str) -> bool:
    return any(k in key for k in HOST_KEYS)


def record(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, args in RUNS.items():
        proc = subprocess.run(
            [sys.executable, "-m", "tlm_models.cli.main", "run", *args.split(), "--json"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise SystemExit(f"{name} failed:\n{proc.stderr[-2000:]}")
        (out / f"{name}.json").write_text(proc.stdout)
        print(f"{name}: recorded", flush=True)


def differences(old: Any, new: Any, path: str = "") -> list[str]:
    """Every place where two result trees differ, host figures left out."""
    if isinstance(old, dict) and isinstance(new, dict):
        found: list[str] = []
        for key in sorted(set(old) | set(new)):
            if _is_host(key):
                continue
            where = f"{path}.{key}" if path else key
            if key not in old or key not in new:
                found.append(f"{where}: only in {'new' if key not in old else 'old'}")
            else:
                found.extend(differences(old[key], new[key], where))
        return found
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return [f"{path}: {len(old)} entries, now {len(new)}"]
        pairs = enumerate(zip(old, new, strict=True))
        return [d for i, (a, b) in pairs for d in differences(a, b, f"{path}[{i}]")]
    return [] if old == new else [f"{path}: {old!r} -> {new!r}"]


def diff(old_dir: Path, new_dir: Path) -> int:
    bad = 0
    for old_file in sorted(old_dir.glob("*.json")):
        new_file = new_dir / old_file.name
        if not new_file.exists():
            print(f"{old_file.stem}: missing in {new_dir}")
            bad += 1
            continue
        found = differences(json.loads(old_file.read_text()), json.loads(new_file.read_text()))
        print(f"{old_file.stem}: {'identical' if not found else f'{len(found)} differences'}")
        for line in found[:20]:
            print(f"  {line}")
        bad += bool(found)
    return 1 if bad else 0


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "record":
        record(Path(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "diff":
        raise SystemExit(diff(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
