"""HBM3 bank-level DRAM against Ramulator 2's HBM3 model, pattern by pattern.

DRAMSys 5.0 (validate.py) has no HBM3; Ramulator 2 (CMU-SAFARI/ramulator2) has one (its HBM3
DRAM specification, JESD238 timing preset HBM3_6400Mbps, and its HBM34 controller). This
builds it outside the project tree (build_ramulator.sh), plays single-channel traces of
one-burst requests into it through ramulator_driver.cpp, and plays the same traces into this
project's `hbm` set to the reference's part through --set overrides: its timing preset (clocks x
tCK), organisation (HBM3_4Gb: 16 banks in 4 groups per pseudo-channel, 1 KiB rows, one stack
ID), address bits (its ChRaBaRoCo mapper: pseudo-channel, bank group, bank, row, column from
the top; the traces stay in pseudo-channel 0, the project's one channel), FR-FCFS with row hits
never preempted (its FRFCFS-RowHit scheduler: no cap on younger hits), open page, its write
mode (entered above 80 % of its 32-entry write buffer or with no read queued, left below 20 %
with a read queued), all-bank refresh, the split command buses. Prints a Markdown table:
simulated time, bandwidth, row-hit rate, command counts and latency, with the project's
deviation.

How requests enter: the reference's trace front ends offer the next request once per memory
tick (half a clock) and retry it until the controller takes it, so the controller holds what
its buffers allow (32 reads, 32 writes, plus requests whose ACT has issued). The project plays
each trace immediate (each request answered when called: decisions in call order) and queued
with 32 and 64 requests in flight (the reference's read buffer, and its read and write buffers:
decisions in time order).

    make validate-hbm3                 # or:
    python tools/dram_reference/validate_ramulator.py [--requests 50000] [--outstanding 32,64]

Environment: RAMULATOR_SOURCE, RAMULATOR_REV, RAMULATOR_WORK as for build_ramulator.sh.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from validate import (  # noqa: E402
    PATTERNS,
    build_reference,
    pattern,
    run_project,
    table_row,
    write_stl,
)

ORG_PRESET = "HBM3_4Gb"
TIMING_PRESET = "HBM3_6400Mbps"
READ_BUFFER = 32  # the HBM34 controller's default read and write buffer sizes
COUNTED = ("ACT", "PREpb", "PREab", "REFab", "RD", "WR")

# Runs in the reference's own Python package (its configuration language): writes the
# configuration the driver loads and prints the part's resolved figures.
CONFIGURE = """
import json, sys
import ramulator as r
args = json.loads(sys.argv[1])
dram = r.dram.HBM3(org_preset=args["org"], timing_preset=args["timing"])
ctrl = r.controller.HBM34(
    dram=dram, scheduler=r.scheduler.FRFCFSRowHit(), refresh_manager=r.refresh_manager.AllBank(),
    row_policy=r.row_policy.Open(), addr_mapper=r.addr_mapper.ChRaBaRoCo(),
    controller_plugins=[r.controller_plugin.CommandCounter(
        commands_to_count=args["counted"], path=args["counts"])])
mem = r.memory_system.GenericDRAM(
    clock_ratio=1, controllers=[ctrl], channel_mapper=r.channel_mapper.CacheLineInterleave())
frontend = r.frontend.External(clock_ratio=1)
config = {"frontend": frontend.to_config(), "memory_system": mem.to_config()}
with open(args["config"], "w") as f:
    json.dump(config, f)
spec = type(dram)
d = config["memory_system"]["controllers"][0]
print(json.dumps({
    "levels": list(spec.levels), "counts": d["dram"]["org"]["count"],
    "ticks": dict(zip(spec.timing_params, d["dram"]["timing"])),
    "tick_multiplier": spec.tick_multiplier, "prefetch": spec.internal_prefetch_size,
    "tck_ps": spec.timing_presets[args["timing"]]["tCK_ps"],
    "channel_width": d["dram"]["channel_width"],
    "read_buffer": d["read_buffer_size"], "write_buffer": d["write_buffer_size"],
    "wr_high": d["wr_high_watermark"], "wr_low": d["wr_low_watermark"],
}))
"""


def work_root() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return Path(os.environ.get("RAMULATOR_WORK", cache / "attn-tlm" / "ref"))


def configure(config: Path, counts: Path) -> dict[str, Any]:
    """The reference's configuration for one run (written to `config`) and its part's figures."""
    root = work_root()
    args = {"org": ORG_PRESET, "timing": TIMING_PRESET, "counted": list(COUNTED)}
    args |= {"counts": str(counts), "config": str(config)}
    out = subprocess.run(
        [str(root / "ramulator2-venv" / "bin" / "python"), "-c", CONFIGURE, json.dumps(args)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root / "ramulator2" / "python")},
    ).stdout
    part: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return part


def clocks(part: dict[str, Any], name: str) -> float:
    """A timing of the part in clocks (the reference keeps them in ticks of 1/multiplier)."""
    return float(part["ticks"][name]) / part["tick_multiplier"]


def burst_bytes(part: dict[str, Any]) -> int:
    return int(part["prefetch"] * part["channel_width"] // 8)


def level_bits(part: dict[str, Any]) -> dict[str, int]:
    """Address bits of each level below the channel (the column counts bursts: the reference's
    column level counts prefetch-sized columns)."""
    sizes = zip(part["levels"], part["counts"], strict=True)
    bits = {level: int(n).bit_length() - 1 for level, n in sizes}
    bits["Column"] -= int(part["prefetch"]).bit_length() - 1
    del bits["Channel"]
    return bits


def mapping_bits(part: dict[str, Any]) -> dict[str, list[int]]:
    """The ChRaBaRoCo layout of pseudo-channel 0 as validate.py's bit lists (byte offset and
    column at the bottom, then row, bank, bank group; stack ID and pseudo-channel above)."""
    bits = level_bits(part)
    if bits["Sid"]:
        raise SystemExit(f"{ORG_PRESET}: stack IDs have no counterpart in the project's hbm")
    order = (("BYTE_BIT", burst_bytes(part).bit_length() - 1), ("COLUMN_BIT", bits["Column"]))
    order += (("ROW_BIT", bits["Row"]), ("BANK_BIT", bits["Bank"]))
    order += (("BANKGROUP_BIT", bits["BankGroup"]),)
    out: dict[str, list[int]] = {}
    low = 0
    for key, n in order:
        out[key] = list(range(low, low + n))
        low += n
    return out


def overrides_for(part: dict[str, Any]) -> tuple[str, ...]:
    """The project's hbm set to the reference's part (timings: its clocks x tCK, whole
    picoseconds; JEDEC start-of-command times, as the reference's presets give them)."""
    ck_ps = float(part["tck_ps"])
    burst = burst_bytes(part)

    def ps(name: str) -> str:
        return f"{round(clocks(part, name) * ck_ps)}ps"

    bits = level_bits(part)
    mapping = f"bankgroup:{bits['BankGroup']} bank:{bits['Bank']} row:{bits['Row']} "
    mapping += f"column:{bits['Column'] + burst.bit_length() - 1}"
    write_buffer = int(part["write_buffer"])
    fields: dict[str, Any] = {
        "channels": 1,
        # One pseudo-channel carries the traces: its sibling's share of the command buses is idle.
        "pseudo_channels": 1,
        "channel_bandwidth": f"{burst / (clocks(part, 'nBL') * ck_ps * 1e-12):.0f}B/s",
        "burst_bytes": f"{burst}B",
        "banks": 2 ** (bits["BankGroup"] + bits["Bank"]),
        "bank_groups": 2 ** bits["BankGroup"],
        "row_size": f"{burst << bits['Column']}B",
        "address_mapping": mapping,
        "latency": "0ns",
        # A bank queue as deep as the reference's whole read buffer: its buffers are shared by
        # all banks, so one bank may hold all of them.
        "queue_depth": int(part["read_buffer"]),
        "scheduler": "frfcfs",
        "frfcfs_cap": 1 << 30,  # FRFCFS-RowHit: a row hit is never preempted (no cap)
        "page_policy": "open",
        # Write mode above wr_high of the write buffer (or no read queued), left below wr_low
        # with a read queued: > 25.6 -> 26 writes, < 6.4 -> 6.
        "write_drain": "watermark",
        "write_high_watermark": int(np.floor(part["wr_high"] * write_buffer)) + 1,
        "write_low_watermark": int(np.ceil(part["wr_low"] * write_buffer)) - 1,
        "refresh": "all_bank",
        "command_bus": "split",
        "t_ck": f"{round(ck_ps)}ps",
        # ACT holds the row bus 1.5 clocks and may start on a rising edge only: two clocks
        # between ACTs; PRE, REF and column commands one clock each.
        "act_cycles": 2,
        "row_cycles": 1,
        "column_cycles": 1,
    }
    timing = {"t_rcd": "nRCDRD", "t_rcd_wr": "nRCDWR", "t_rp": "nRP", "t_ras": "nRAS"}
    timing |= {"t_rc": "nRC", "t_rrd_s": "nRRDS", "t_rrd_l": "nRRDL", "t_faw": "nFAW"}
    timing |= {"t_ccd_s": "nCCDS", "t_ccd_l": "nCCDL", "t_cl": "nCL", "t_cwl": "nCWL"}
    timing |= {"t_wr": "nWR", "t_wtr_s": "nWTRS", "t_wtr_l": "nWTRL", "t_rtw": "nRTW"}
    timing |= {"t_rtp": "nRTP", "t_refi": "nREFI", "t_rfc": "nRFC", "t_rfc_pb": "nRFCpb"}
    fields |= {ours: ps(theirs) for ours, theirs in timing.items()}
    return tuple(f"hbm.{k}={v}" for k, v in fields.items())


def run_reference(
    driver: Path, work: Path, stem: str, addr: np.ndarray, writes: np.ndarray
) -> dict[str, float]:
    """Plays the requests in the reference; its figures from the driver's per-request ticks and
    the reference's command counter."""
    config, counts = work / f"{stem}.ramulator.json", work / f"{stem}.counts.csv"
    part = configure(config, counts)
    trace, out = work / f"{stem}.ramulator.trace", work / f"{stem}.ticks"
    lines = np.char.add(np.where(writes, "1 ", "0 "), np.char.mod("%x", addr))
    trace.write_text("\n".join(lines.tolist()) + "\n")
    subprocess.run([str(driver), str(config), str(trace), str(out)], check=True,
                   capture_output=True, text=True)  # fmt: skip
    ticks = np.loadtxt(out, dtype=np.int64, ndmin=2)
    accepted, done = ticks[:, 0], ticks[:, 1].copy()
    # A write is answered when its WR issues; its data ends nCWL + nBL later.
    done[writes] += part["ticks"]["nCWL"] + part["ticks"]["nBL"]
    tick_ns = part["tck_ps"] / part["tick_multiplier"] / 1e3
    counted = {}
    for row in counts.read_text().splitlines():
        name, value = row.split(",")
        counted[name.strip()] = int(value)
    lat = (done - accepted) * tick_ns
    end = float(done.max()) * tick_ns
    columns = counted["RD"] + counted["WR"]
    return {
        "time_ns": end,
        "bandwidth_GBps": len(addr) * burst_bytes(part) / end,
        "mean_ns": float(lat.mean()),
        "p50_ns": float(np.percentile(lat, 50)),
        "p99_ns": float(np.percentile(lat, 99)),
        "row_hit_rate": 1 - counted["ACT"] / columns if columns else 0.0,
        "ACT": counted["ACT"],
        "PRE": counted["PREpb"] + counted["PREab"],
        "REF": counted["REFab"],
    }


COUNTS = ("ACT", "PRE", "REF")
SHOWN = ("time_ns", "bandwidth_GBps", "row_hit_rate", "ACT", "PRE", "REF", "mean_ns", "p99_ns")


def in_flight(figures: dict[str, float], requests: int) -> float:
    """Mean requests in flight over the run (Little's law: summed latency / time)."""
    return figures["mean_ns"] * requests / figures["time_ns"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50_000)
    parser.add_argument("--driver", help="a built ramulator_driver (skips the build)")
    parser.add_argument(
        "--outstanding",
        default=f"{READ_BUFFER},{2 * READ_BUFFER}",
        help="also replay queued with these many requests in flight (comma-separated; "
        "0: immediate mode only); default: the reference's read buffer, and read + write buffers",
    )
    parser.add_argument("--patterns", default=";".join(PATTERNS), help="';'-separated")
    args = parser.parse_args()
    driver = Path(args.driver or build_reference("build_ramulator.sh"))
    work = work_root() / "validate" / "hbm3-ramulator"
    work.mkdir(parents=True, exist_ok=True)
    part = configure(work / "part.json", work / "part.counts.csv")
    overrides = overrides_for(part)
    mapping = mapping_bits(part)
    burst = burst_bytes(part)
    windows = [0] + [int(w) for w in args.outstanding.split(",") if int(w)]
    print(f"\n### hbm3 ({ORG_PRESET}, {TIMING_PRESET}), {args.requests:,} requests of {burst} B\n")
    print("project overrides: " + " ".join(overrides) + "\n")
    print("| pattern | requests | " + " | ".join(SHOWN) + " | in flight |")
    print("|---|---|" + "---|" * (len(SHOWN) + 1))
    worst: dict[str, tuple[float, str]] = {}
    for p in args.patterns.split(";"):
        if p not in PATTERNS:
            raise SystemExit(f"--patterns: unknown pattern {p!r}; expected one of {PATTERNS}")
        stem = p.replace(" ", "_").replace("/", "_").replace(",", "")
        addr, writes = pattern(p, args.requests, burst, mapping)
        trace = work / f"{stem}.stl"
        write_stl(trace, addr, writes, burst)
        ref = run_reference(driver, work, stem, addr, writes)
        for outstanding in windows:
            ours = run_project(trace, overrides, outstanding)
            flight = f"{in_flight(ours, len(addr)):.1f} / {in_flight(ref, len(addr)):.1f}"
            mode, off = table_row(p, outstanding, ours, ref, SHOWN, COUNTS, (flight,))
            worst[mode] = max(worst.get(mode, (0.0, "")), (off, p))
    print()
    for mode, (off, p) in worst.items():
        print(f"hbm3, {mode}: largest time deviation {off * 100:.1f} % ({p})")


if __name__ == "__main__":
    main()
