"""Bank-level HBM speed and behaviour through the STL replayer; prints the numbers recorded in
docs/models/hbm.md ("Measured").

Three STL traces of 64 B reads on platforms/attenio.yaml's memory (16 channels x 8 GB/s):
sequential (one request every 0.5 ns, 128 GB/s offered), random addresses over 1 GiB, and two
interleaved sequential streams to two rows of one bank of each channel (256 KiB apart, the
default mapping's row stride), the last two issued at time 0. Each runs at the bandwidth level
and at the bank level (FR-FCFS and FCFS), the bank level both with requests served at once in
call order (request_mode immediate) and with `--outstanding` requests in flight queued in the
controllers (request_mode queued); each replay in a fresh process; requests/s is the replayer's
wall time (kernel loading excluded).

    .venv/bin/python tools/bench_hbm_bank.py [--requests 2000000] [--outstanding 64]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
from bench_child import run_child

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = str(ROOT / "platforms" / "attenio.yaml")
BANK = ("hbm.fidelity=bank", "hbm.latency=0ns")
# level: (queued, overrides)
LEVELS: dict[str, tuple[bool, tuple[str, ...]]] = {
    "bandwidth": (False, ()),
    "bank FR-FCFS": (False, BANK),
    "bank FCFS": (False, (*BANK, "hbm.scheduler=fcfs")),
    "bank FR-FCFS queued": (True, BANK),
    "bank FCFS queued": (True, (*BANK, "hbm.scheduler=fcfs")),
}


def _child(argv: list[str]) -> None:
    from tlm_models.replay.stl_in import replay_stl_file

    source, outstanding, *overrides = argv
    window = int(outstanding) or None
    r = replay_stl_file(source, PLATFORM, tuple(overrides), outstanding=window)
    hbm = next(c for c in r["memory_stats"]["children"] if c["name"] == "hbm")["stats"]
    accesses = sum(hbm.get(k, {"value": 0})["value"] for k in ("row_hits", "row_misses"))
    accesses += hbm.get("row_conflicts", {"value": 0})["value"]
    figures = {
        "requests": r["requests"],
        "replay_wall_s": r["replay_wall_s"],
        "bandwidth": r["achieved_bandwidth_Bps"],
        "latency_mean_ns": r["latency_ns"]["mean"],
        "row_hit_rate": hbm["row_hits"]["value"] / accesses if accesses else None,
    }
    print(json.dumps(figures))


def _write_stl(path: Path, requests: int, pattern: str) -> None:
    i = np.arange(requests, dtype=np.uint64)
    if pattern == "sequential":
        times = (i // np.uint64(2)).astype(str)
        addresses = (i * np.uint64(64)) % np.uint64(1 << 30)
    elif pattern == "two rows":
        times = np.zeros(requests, dtype=np.uint64).astype(str)
        # Even requests walk row r, odd ones row r + 1 of the same bank (256 KiB higher).
        stream = (i // np.uint64(2)) * np.uint64(64)
        addresses = ((i % np.uint64(2)) * np.uint64(256 << 10) + stream) % np.uint64(1 << 30)
    else:
        times = np.zeros(requests, dtype=np.uint64).astype(str)
        rng = np.random.default_rng(1)
        addresses = rng.integers(0, (1 << 30) // 64, requests, dtype=np.uint64) * np.uint64(64)
    lines = np.char.add(np.char.add(times, ": read 0x"), np.char.mod("%x", addresses))
    path.write_text("\n".join(lines.tolist()) + "\n")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        _child(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2_000_000)
    parser.add_argument("--outstanding", type=int, default=64)
    args = parser.parse_args()
    print("| trace | level | M requests/s | achieved GB/s | mean latency ns | row-hit rate |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for pattern in ("sequential", "random", "two rows"):
            stl = Path(tmp) / f"{pattern.replace(' ', '_')}.stl"
            _write_stl(stl, args.requests, pattern)
            for level, (queued, overrides) in LEVELS.items():
                window = str(args.outstanding if queued else 0)
                r = run_child(__file__, str(stl), window, *overrides)
                hits = r["row_hit_rate"]
                print(
                    f"| {pattern} | {level} | {r['requests'] / r['replay_wall_s'] / 1e6:.2f} | "
                    f"{r['bandwidth'] / 1e9:.2f} | {r['latency_mean_ns']:,.1f} | "
                    f"{'-' if hits is None else f'{hits:.3f}'} |"
                )


if __name__ == "__main__":
    main()
