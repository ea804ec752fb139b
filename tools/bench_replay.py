"""Replay speed and memory, end to end, on platforms/attenio.yaml; prints the numbers.

- Replay speed of an AttenIO trace of >= 10 M operations read from a binary file (chunks handed
  to the C++ replayer by pointer), with and without the PE/Exp SRAM operand traffic.
- Replay speed of 16 tiles (platforms/attenio-x16.yaml, one AttenIO head each), the traces
  emitted before the replay so that the figure is the replay's.
- Peak resident memory (ru_maxrss) of a process replaying a 50 M-operation trace streamed from
  the emitter.
- STL replay speed in requests/s against the HBM.

Each replay runs in a fresh process (``python tools/bench_replay.py child ...``) so that its
peak RSS is its own; the figures are the replayer's wall time (kernel loading excluded).

    .venv/bin/python tools/bench_replay.py [--ops 10000000] [--big-ops 50000000]
        [--stl-requests 2000000] [--skip-big]
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from bench_child import run_child

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = str(ROOT / "platforms" / "attenio.yaml")
NO_SRAM_TRAFFIC = ("pe.sram_traffic=false", "exp.sram_traffic=false")
SEQ_LEN, HEAD_DIM = 8192, 64
# 16 tiles, one head of AttenIO each (docs/models/tiles.md); N = 4K keeps the traces in memory.
TILED_PLATFORM = str(ROOT / "platforms" / "attenio-x16.yaml")
TILED_SEQ_LEN, TILED_HEADS = 4096, 16


def _workload(ops: int) -> Any:
    from tlm_models.workload.spec import Workload

    per_head = _ops_per_head()
    return Workload(seq_len=SEQ_LEN, head_dim=HEAD_DIM, heads=max(1, math.ceil(ops / per_head)))


def _ops_per_head() -> int:
    from tlm_models.dataflows import emit
    from tlm_models.platform import load_platform
    from tlm_models.workload.spec import Workload

    info = load_platform(PLATFORM).info()
    emitted = emit("attenio", Workload(seq_len=SEQ_LEN, head_dim=HEAD_DIM), info)
    return sum(len(c) for c in emitted.chunks)


def tile_traces(platform: Any, seq_len: int, heads: int) -> list[tuple[Any, list[Any]]]:
    """Each tile's AttenIO trace (d = 64, ``heads`` dealt over the tiles), emitted in full."""
    from tlm_models.dataflows import emit
    from tlm_models.workload.spec import Workload

    workload = Workload(seq_len=seq_len, head_dim=HEAD_DIM, heads=heads)
    traces = []
    for tile in range(platform.tile_count):
        emitted = emit("attenio", workload, platform.tile_info(tile))
        traces.append((emitted.header, list(emitted.chunks)))
    return traces


def _child(argv: list[str]) -> None:
    """Runs one replay in this process and prints its figures as JSON."""
    kind, source, *overrides = argv
    started = time.perf_counter()
    if kind == "stl":
        from tlm_models.replay.stl_in import replay_stl_file

        r = replay_stl_file(source, PLATFORM, tuple(overrides))
        figures = {"requests": r["requests"], "replay_wall_s": r["replay_wall_s"]}
    elif kind == "file":
        from tlm_models.run.trace_job import replay_trace_file

        cpu = time.process_time()
        r = replay_trace_file(source, PLATFORM, tuple(overrides), check=False)
        figures = {
            "ops": r["ops"],
            "replay_wall_s": r["replay_wall_s"],
            "replay_cpu_s": time.process_time() - cpu,
            "sim_time_ns": r["sim_time_ns"],
        }
    elif kind == "tiles":  # every tile's trace emitted first, then replayed together
        from tlm_models.platform import load_platform
        from tlm_models.replay.tiles import replay_tiles_in_this_process

        platform = load_platform(TILED_PLATFORM, overrides)
        traces = tile_traces(platform, TILED_SEQ_LEN, int(source))
        cpu = time.process_time()
        out_tiles = replay_tiles_in_this_process(platform, traces)
        figures = {
            "ops": out_tiles.ops,
            "replay_wall_s": out_tiles.wall_s,
            "replay_cpu_s": time.process_time() - cpu,
        }
    else:  # "emit": stream from the emitter, no file
        from tlm_models.dataflows import emit
        from tlm_models.platform import load_platform
        from tlm_models.replay.replayer import replay_in_this_process

        platform = load_platform(PLATFORM, overrides)
        emitted = emit("attenio", _workload(int(source)), platform.info())
        out = replay_in_this_process(platform, emitted.header, emitted.chunks)
        figures = {"ops": out.ops, "replay_wall_s": out.wall_s}
    figures["process_wall_s"] = time.perf_counter() - started
    figures["max_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(figures))
    sys.stdout.flush()


def _write_trace(path: Path, ops: int) -> int:
    from tlm_models.dataflows import emit
    from tlm_models.platform import load_platform
    from tlm_models.trace.io import write_trace

    emitted = emit("attenio", _workload(ops), load_platform(PLATFORM).info())
    return write_trace(path, emitted.header, emitted.chunks, "binary")


def _write_stl(path: Path, requests: int) -> None:
    # Sequential 64 B reads over 1 GiB, one every 0.5 ns (128 GB/s offered): a streaming load.
    i = np.arange(requests, dtype=np.uint64)
    lines = np.char.add(
        np.char.add((i // np.uint64(2)).astype(str), ": read 0x"),
        np.char.mod("%x", (i * np.uint64(64)) % np.uint64(1 << 30)),
    )
    path.write_text("\n".join(lines.tolist()) + "\n")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        _child(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10_000_000)
    parser.add_argument("--big-ops", type=int, default=50_000_000)
    parser.add_argument("--stl-requests", type=int, default=2_000_000)
    parser.add_argument("--skip-big", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "attenio.bin"
        started = time.perf_counter()
        count = _write_trace(trace, args.ops)
        print(
            f"trace: AttenIO N={SEQ_LEN} d={HEAD_DIM}, {count:,} ops, "
            f"{trace.stat().st_size / 2**20:,.0f} MiB, written in "
            f"{time.perf_counter() - started:.1f} s"
        )
        for label, overrides in (
            ("with SRAM traffic", ()),
            ("without PE/Exp SRAM traffic", NO_SRAM_TRAFFIC),
        ):
            r = run_child(__file__, "file", str(trace), *overrides)
            rate = r["ops"] / r["replay_wall_s"] / 1e6
            per_cpu = r["ops"] / r["replay_cpu_s"] / 1e6
            goal = (
                f"; goal >= 5 M ops/s: {'met' if rate >= 5 else 'NOT met'}" if not overrides else ""
            )
            print(
                f"replay {label:<28} {r['ops']:,} ops in {r['replay_wall_s']:.2f} s = "
                f"{rate:.2f} M ops/s ({per_cpu:.2f} M per CPU second); peak RSS "
                f"{r['max_rss_mib']:,.0f} MiB; sim time {r['sim_time_ns'] / 1e6:,.3f} ms{goal}"
            )
        trace.unlink()
        r = run_child(__file__, "tiles", str(TILED_HEADS))
        rate = r["ops"] / r["replay_wall_s"] / 1e6
        print(
            f"replay 16 tiles (attenio-x16)        {r['ops']:,} ops in "
            f"{r['replay_wall_s']:.2f} s = {rate:.2f} M ops/s "
            f"({r['ops'] / r['replay_cpu_s'] / 1e6:.2f} M per CPU second; AttenIO "
            f"N={TILED_SEQ_LEN} d={HEAD_DIM}, {TILED_HEADS} heads, SRAM traffic on); peak RSS "
            f"{r['max_rss_mib']:,.0f} MiB; "
            f"goal >= 3 M ops/s: {'met' if rate >= 3 else 'NOT met'}"
        )
        if not args.skip_big:
            r = run_child(__file__, "emit", str(args.big_ops), *NO_SRAM_TRAFFIC)
            print(
                f"replay streamed from the emitter  {r['ops']:,} ops in "
                f"{r['replay_wall_s']:.2f} s = {r['ops'] / r['replay_wall_s'] / 1e6:.2f} M ops/s "
                f"(emission included); peak RSS {r['max_rss_mib']:,.0f} MiB"
            )
        stl = Path(tmp) / "stream.stl"
        _write_stl(stl, args.stl_requests)
        r = run_child(__file__, "stl", str(stl))
        print(
            f"STL replay                        {r['requests']:,} requests in "
            f"{r['replay_wall_s']:.2f} s = {r['requests'] / r['replay_wall_s'] / 1e6:.2f} M "
            f"requests/s; peak RSS {r['max_rss_mib']:,.0f} MiB"
        )


if __name__ == "__main__":
    main()
