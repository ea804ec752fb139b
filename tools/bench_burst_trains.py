"""Exact replays with DMA burst trains on (the default) and off (one call per burst): wall time,
replay speed, and a check that both give the same result; the figures of docs/runtime.md
("Burst trains").

Each configuration is one `attn-tlm run ... --exact --json` in a fresh process on
platforms/attenio.yaml at d = 64, trains on and off run back to back so that both see the same
load; the result's `wall_s` (emission and replay) and `replay_wall_s` are printed.

    .venv/bin/python tools/bench_burst_trains.py [--seq-lens 16384,32768]
        [--dataflows flat,standard]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ATTN_TLM = str(Path(sys.executable).parent / "attn-tlm")


def _run(dataflow: str, seq_len: int, trains: bool) -> dict[str, Any]:
    cmd = [
        ATTN_TLM, "run", "--dataflow", dataflow, "--seq-len", str(seq_len), "--head-dim", "64",
        "--exact", "--json", "--set", f"dma.burst_trains={'true' if trains else 'false'}",
    ]  # fmt: skip
    out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(out)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq-lens", default="16384,32768")
    parser.add_argument("--dataflows", default="flat,standard")
    args = parser.parse_args()
    print(
        "| dataflow | N | load | wall s, trains on / off | replay M ops/s, on / off | same result |"
    )
    print("|---|---|---|---|---|---|")
    faster = True
    for dataflow in args.dataflows.split(","):
        for seq_len in (int(n) for n in args.seq_lens.split(",")):
            load = os.getloadavg()[0]
            on, off = _run(dataflow, seq_len, True), _run(dataflow, seq_len, False)
            same = all(on[k] == off[k] for k in ("sim_time_ns", "offchip_bytes", "stalls", "pe"))
            faster = faster and same and on["wall_s"] < off["wall_s"]
            print(
                f"| {dataflow} | {seq_len} | {load:.1f} | {on['wall_s']:.2f} / {off['wall_s']:.2f} "
                f"| {on['ops_per_s'] / 1e6:.2f} / {off['ops_per_s'] / 1e6:.2f} | {same} |",
                flush=True,
            )
    verdict = "met" if faster else "not met"
    print(f"exact replays with burst trains: same results, less wall time (goal): {verdict}")


if __name__ == "__main__":
    main()
