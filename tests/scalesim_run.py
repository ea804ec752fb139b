"""Runs SCALE-Sim v3 on GEMMs; executed by the Python of the SCALE-Sim environment
(tests/scalesim_reference.py), never imported by the project.

stdin: a JSON list of ``{"rows", "cols", "dataflow": "os"|"ws"|"is", "shapes": [[M, N, K], ...]}``
stdout: a JSON list, per case, of ``[total_cycles, stall_cycles]`` per shape, as SCALE-Sim's
COMPUTE_REPORT.csv gives them ("Total Cycles", "Stall Cycles").

The configuration is SCALE-Sim's own format with bandwidth estimation (``CALC``): operand
SRAMs large enough that nothing stalls, so the report's cycles are the array's compute cycles.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from scalesim.scale_sim import scalesim

CONFIG = """[general]
run_name = gemm

[architecture_presets]
ArrayHeight = {rows}
ArrayWidth = {cols}
ifmapsramszkB = 4096
filtersramszkB = 4096
ofmapsramszkB = 4096
IfmapOffset = 0
FilterOffset = 10000000
OfmapOffset = 20000000
Dataflow = {dataflow}
Bandwidth = 10
ReadRequestBuffer = 32
WriteRequestBuffer = 32

[layout]
IfmapCustomLayout = False
IfmapSRAMBankBandwidth = 10
IfmapSRAMBankNum = 10
IfmapSRAMBankPort = 2
FilterCustomLayout = False
FilterSRAMBankBandwidth = 10
FilterSRAMBankNum = 10
FilterSRAMBankPort = 2

[sparsity]
SparsitySupport = false
SparseRep = ellpack_block
OptimizedMapping = false
BlockSize = 8
RandomNumberGeneratorSeed = 40

[run_presets]
InterfaceBandwidth = CALC
UseRamulatorTrace = False
"""


def run_case(case: dict[str, Any], work: Path) -> list[list[int]]:
    """One array and dataflow, every shape as one layer of a GEMM topology (M, N, K)."""
    config = work / "scale.cfg"
    config.write_text(CONFIG.format(**case))
    topology = work / "gemm.csv"
    rows = [f"g{i}, {m}, {n}, {k}," for i, (m, n, k) in enumerate(case["shapes"])]
    topology.write_text("Layer, M, N, K,\n" + "\n".join(rows) + "\n")
    layout = work / "layout.csv"  # no custom layout: the header alone
    layout.write_text("Layer,\n")
    with contextlib.redirect_stdout(io.StringIO()):  # its progress lines would corrupt stdout
        sim = scalesim(
            save_disk_space=True,
            verbose=False,
            config=str(config),
            topology=str(topology),
            layout=str(layout),
            input_type_gemm=True,
        )
        sim.run_scale(top_path=str(work))
    with (work / "gemm" / "COMPUTE_REPORT.csv").open() as report:
        lines = list(csv.reader(report))[1:]
    return [[int(line[2]), int(line[3])] for line in lines]


def main() -> None:
    cases = json.load(sys.stdin)
    results = []
    for case in cases:
        with tempfile.TemporaryDirectory() as work:
            results.append(run_case(case, Path(work)))
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
