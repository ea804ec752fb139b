"""Regenerates `tlm_models/platform/area/cacti_sram.json`: CACTI 7.0 area, leakage and read
energy of single-bank SRAM macros over capacity, read-write ports and technology node.

CACTI is run outside the package: the zigzag-dse wheel on PyPI (`pip download --no-deps
zigzag-dse==3.9.1`) ships a built CACTI 7.0 with its technology files; point `--cacti` at the
folder holding its `cacti` binary and `tech_params/` (zigzag/cacti/cacti_master in the wheel).
`make cacti-table` does all of it under build/. The estimator reads only the JSON.

Every macro is a scratch RAM ("ram", no tags) of one bank with a 64 B line and a 512-bit port,
ITRS high-performance cells and periphery at 360 K (CACTI's example configuration), optimised
for cycle time within 20 % of the best delay (CACTI's default objective).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from pathlib import Path

NODES_NM = (22, 32, 45, 65, 90)  # CACTI 7.0's SRAM technology files (16 nm gives no result)
PORTS = (1, 2)
LINE_BYTES = 64
CAPACITIES = tuple(2**k for k in range(11, 25))  # 2 KiB .. 16 MiB (smaller: < 32 rows)
#: ITRS high-performance supply of each node in CACTI's tech_params/<node>nm.dat (first column).
VDD = {22: 0.8, 32: 0.9, 45: 1.0, 65: 1.1, 90: 1.2}
TEMPERATURE_K = 360

_AREA = re.compile(r"Cache height x width \(mm\):\s*([0-9.eE+-]+)\s*x\s*([0-9.eE+-]+)")
_LEAK = re.compile(r"Total leakage power of a bank \(mW\):\s*([0-9.eE+-]+)")
_GATE = re.compile(r"Total gate leakage power of a bank \(mW\):\s*([0-9.eE+-]+)")
_READ = re.compile(r"Total dynamic read energy per access \(nJ\):\s*([0-9.eE+-]+)")


def config(template: str, capacity: int, ports: int, node_nm: int) -> str:
    """CACTI's example input (`cache.cfg_temp` beside its binary: every line CACTI reads,
    including its off-chip I/O ones) with the lines that describe one macro replaced."""
    ours = {
        "-size (bytes)": str(capacity),
        "-block size (bytes)": str(LINE_BYTES),
        "-output/input bus width": str(LINE_BYTES * 8),
        "-associativity": "1",
        "-read-write port": str(ports),
        "-exclusive read port": "0",
        "-exclusive write port": "0",
        "-single ended read ports": "0",
        "-UCA bank count": "1",
        "-technology (u)": str(node_nm / 1000),
        "-operating temperature (K)": str(TEMPERATURE_K),
        "-cache type": '"ram"',
        "-Data array cell type -": '"itrs-hp"',
        "-Data array peripheral type -": '"itrs-hp"',
    }
    lines = []
    for line in template.replace("\r", "").splitlines():
        key = next((k for k in ours if line.startswith(k + " ")), None)
        lines.append(f"{key} {ours[key]}" if key else line)
    return "\n".join(lines) + "\n"


def run(cacti: Path, capacity: int, ports: int, node_nm: int) -> dict[str, float] | None:
    """One macro's figures, or None where CACTI finds no organisation."""
    with tempfile.NamedTemporaryFile("w", suffix=".cfg", delete=False) as cfg:
        cfg.write(config((cacti / "cache.cfg_temp").read_text(), capacity, ports, node_nm))
    done = subprocess.run(
        ["./cacti", "-infile", cfg.name], cwd=cacti, capture_output=True, text=True, check=False
    )
    Path(cfg.name).unlink()
    area, leak, gate = (
        _AREA.search(done.stdout),
        _LEAK.search(done.stdout),
        _GATE.search(done.stdout),
    )
    read = _READ.search(done.stdout)
    if done.returncode or not (area and leak and gate and read):
        return None
    return {
        "area_mm2": float(area[1]) * float(area[2]),
        "leakage_mw": float(leak[1]) + float(gate[1]),
        "read_nj": float(read[1]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cacti", type=Path, required=True, help="folder of CACTI 7.0's binary")
    parser.add_argument(
        "--out", type=Path, default=Path("tlm_models/platform/area/cacti_sram.json")
    )
    args = parser.parse_args()
    rows = []
    for node in NODES_NM:
        for ports in PORTS:
            for capacity in CAPACITIES:
                figures = run(args.cacti.resolve(), capacity, ports, node)
                if figures is not None:
                    rows.append({"node_nm": node, "ports": ports, "bytes": capacity, **figures})
                    print(node, ports, capacity, figures, flush=True)
    table = {
        "source": "CACTI 7.0 (the build shipped in zigzag-dse 3.9.1), tools/cacti_sram_table.py",
        "line_bytes": LINE_BYTES,
        "temperature_k": TEMPERATURE_K,
        "cells": "itrs-hp",
        "vdd_v": {str(k): v for k, v in VDD.items()},
        "macros": rows,
    }
    args.out.write_text(compact_json(table))


def compact_json(table: dict[str, object]) -> str:
    """The table with one macro a line (diffs of a regeneration stay readable)."""
    head = json.dumps({k: v for k, v in table.items() if k != "macros"}, indent=1)[:-2]
    rows = ",\n  ".join(json.dumps(row) for row in table["macros"])  # type: ignore[attr-defined]
    return f'{head},\n "macros": [\n  {rows}\n ]\n}}\n'


if __name__ == "__main__":
    main()
