"""The tile-scaling study (docs/models/tiles.md): N = 8K, d = 64, 96 heads (GPT-3-like) for
FlashAttention-2 and AttenIO on 1, 4 and 16 AttenIO tiles; one JSON line per run.

    python tools/tile_study.py OUT.jsonl [--heads 96] [--seq-len 8K] [--dataflows flash2,attenio]
        [--machines 0,1,2,3]
    python tools/tile_study.py OUT.jsonl --report PLOT.png   # markdown table + scaling plot

The tile count at which a dataflow becomes memory-bound on S stacks is where the tiles' demand
reaches the stacks' bandwidth: C* = T_1 x S x 128 GB/s / bytes (T_1 = its one-tile time).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from tlm_models.api import Workload, simulate
from tlm_models.workload.spec import parse_count

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
    parser.add_argument("--report", metavar="PLOT.png", help="report OUT.jsonl instead of running")
    args = parser.parse_args()
    if args.report:
        report(Path(args.out), Path(args.report))
        return
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


#: One stack's bandwidth (parts/hbm-spec.yaml): 16 channels x 8 GB/s.
STACK_BYTES_PER_S = 128e9


def _stacks(row: dict[str, Any]) -> int:
    return len(row["memory_utilization"])


def report(results: Path, plot: Path) -> None:
    """Prints the markdown table of the study and draws speedup against tiles."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    print(
        "| dataflow | tiles | HBM stacks | time (ms) | speedup | imbalance (max/mean) | "
        "HBM utilization | memory stall | off-chip bytes (= closed form) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    fig, ax = plt.subplots(figsize=(6, 4))
    bound: list[str] = []
    for dataflow, colour in (("flash2", "tab:red"), ("attenio", "tab:blue")):
        mine = [r for r in rows if r["dataflow"] == dataflow]
        base = next(r for r in mine if r["tiles"] == 1)
        for r in mine:
            util = ", ".join(f"{100 * u:.1f} %" for u in r["memory_utilization"].values())
            same = "yes" if r["offchip_bytes"] == r["closed_form"] else "NO"
            print(
                f"| {dataflow} | {r['tiles']} | {_stacks(r)} | {r['sim_time_ns'] / 1e6:.2f} | "
                f"{base['sim_time_ns'] / r['sim_time_ns']:.2f} | {r['imbalance']:.5f} | {util} | "
                f"{100 * r['memory_stall_fraction']:.1f} % | {r['offchip_bytes']:,} ({same}) |"
            )
        for stacks, style in ((1, "-"), (2, "--")):
            points = sorted(
                (r["tiles"], base["sim_time_ns"] / r["sim_time_ns"])
                for r in mine
                if _stacks(r) == stacks or r["tiles"] == 1
            )
            ax.plot(
                *zip(*points, strict=True),
                style,
                marker="o",
                color=colour,
                label=f"{dataflow}, {stacks} stack{'s' if stacks > 1 else ''}",
            )
            roof = base["sim_time_ns"] * 1e-9 * stacks * STACK_BYTES_PER_S / base["offchip_bytes"]
            ax.axhline(roof, color=colour, linestyle=style, linewidth=0.8, alpha=0.6)
            bound.append(
                f"{dataflow}: memory-bound from C* = {roof:.1f} tiles on {stacks} stack(s)"
            )
    print("\n" + "\n".join(bound))
    ax.plot([1, 16], [1, 16], ":", color="grey", label="ideal (compute-bound)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("tiles")
    ax.set_ylabel("speedup over one tile")
    ax.set_title("N = 8K, d = 64, 96 heads; thin lines: HBM bandwidth roofline")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(plot, dpi=120)


if __name__ == "__main__":
    main()
