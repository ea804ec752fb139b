"""The tile-scaling study (docs/models/tiles.md): N = 8K, d = 64, 96 heads (GPT-3-like) for
FlashAttention-2 and AttenIO on 1, 4 and 16 AttenIO tiles; one JSON line per run.

    python tools/tile_study.py OUT.jsonl [--heads 96] [--seq-len 8K] [--dataflows flash2,attenio]
        [--machines 0,1,2,3]
"""

from __future__ import annotations

import argparse
import json
import time

from tlm_models.api import Workload, simulate
from tlm_models.dataflows.workload import parse_count

#: (label, platform, overrides): the paper's tile alone on its own crossbar path, four tiles on
#: one stack, sixteen on one stack and sixteen on two stacks.
MACHINES = (
    ("1 tile, 1 stack", "platforms/attenio-x4.yaml", ("tiles.count=1",)),
    ("4 tiles, 1 stack", "platforms/attenio-x4.yaml", ()),
    ("16 tiles, 1 stack", "platforms/attenio-x4.yaml", ("tiles.count=16",)),
    ("16 tiles, 2 stacks", "platforms/attenio-x16.yaml", ()),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--heads", type=int, default=96)
    parser.add_argument("--seq-len", default="8K")
    parser.add_argument("--dataflows", default="flash2,attenio", help="comma-separated")
    parser.add_argument(
        "--machines", default="0,1,2,3", help="indices into MACHINES, comma-separated"
    )
    args = parser.parse_args()
    machines = [MACHINES[int(i)] for i in args.machines.split(",")]
    workload = Workload(parse_count(args.seq_len), 64, heads=args.heads)
    with open(args.out, "a", encoding="utf-8") as out:
        for dataflow in args.dataflows.split(","):
            for label, platform, overrides in machines:
                started = time.perf_counter()
                result = simulate(dataflow, workload, platform, overrides=overrides).to_dict()
                tiles = result.get("tiles") or result.get("sections", {}).get("tiles", {})
                row = {
                    "dataflow": dataflow,
                    "machine": label,
                    "tiles": tiles.get("count"),
                    "heads": args.heads,
                    "seq_len": workload.seq_len,
                    "sim_time_ns": result["sim_time_ns"],
                    "imbalance": tiles.get("imbalance"),
                    "memory_utilization": tiles.get("memory_utilization"),
                    "link_utilization": {
                        k: v for k, v in tiles.get("link_utilization", {}).items()
                        if not k.startswith("tile")
                    },
                    "offchip_bytes": result["offchip_bytes"]["total"],
                    "closed_form": result["bounds"]["closed_form"],
                    "memory_stall_fraction": result["memory_stall_fraction"],
                    "pe_busy_fraction": result["pe"]["busy_fraction"],
                    "ops": result["ops"],
                    "replay_wall_s": result["replay_wall_s"],
                    "ops_per_s": result["ops_per_s"],
                    "wall_s": time.perf_counter() - started,
                }  # fmt: skip
                out.write(json.dumps(row) + "\n")
                out.flush()
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
