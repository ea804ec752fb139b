"""Replays AttenIO on every tile of a tiled platform, traces emitted first, and prints the
operations, the simulated time and the gate's handoffs: the workload behind the 16-tile
instruction counts of docs/runtime.md. Under callgrind, count only the simulation:

    valgrind --tool=callgrind --toggle-collect='sc_core::sc_start*' \
        --callgrind-out-file=build/cg_tiles.out .venv/bin/python tools/profile_tiles.py 1024
    callgrind_annotate build/cg_tiles.out | head -60

PROFILE_DEBUG_INFO=1 builds (once) and uses a library compiled with -g, for callgrind_annotate's
per-line view.

    .venv/bin/python tools/profile_tiles.py [seq_len=1024] [platform=platforms/attenio-x16.yaml]
        [heads=the platform's tile count]

A platform of one tile with `heads` = 16 replays the same operations as 16 tiles with one head
each: the one-tile side of a comparison whose difference is the number of tiles alone.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    if os.environ.get("PROFILE_DEBUG_INFO"):  # line-level annotation: a library built with -g
        from tlm_models.runtime import aot

        aot.CXX_FLAGS = (*aot.CXX_FLAGS, "-g")  # type: ignore[assignment]  # a fixed-length tuple
    from bench_replay import tile_traces

    from tlm_models.platform import load_platform
    from tlm_models.replay.tiles import replay_tiles_in_this_process

    seq_len = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    path = sys.argv[2] if len(sys.argv) > 2 else str(ROOT / "platforms" / "attenio-x16.yaml")
    platform = load_platform(path)
    heads = int(sys.argv[3]) if len(sys.argv) > 3 else platform.tile_count  # default: one a tile
    traces = tile_traces(platform, seq_len, heads)
    cpu = time.process_time()
    out = replay_tiles_in_this_process(platform, traces)
    cpu = time.process_time() - cpu
    last_done = max(t["stats"]["last_done"]["value"] for t in out.tiles)
    print(f"tiles {platform.tile_count}  ops {out.ops}  last_done_ns {last_done}")
    print(
        f"gate_handoffs {out.gate_handoffs}  replay_cpu_s {cpu:.3f}  "
        f"ops_per_cpu_s {out.ops / cpu / 1e6:.2f} M"
    )


if __name__ == "__main__":
    main()
