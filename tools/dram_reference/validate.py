"""Bank-level DRAM against a cycle-accurate reference simulator (DRAMSys), pattern by pattern.

Builds the reference outside the project tree (build_dramsys.sh), then for each memory part
the reference ships a memspec for (HBM2, DDR4-2400, LPDDR4-3200) plays the same single-channel
traces (requests of one burst, all issued at time 0) into both: the reference with FR-FCFS,
open page, bank-wise buffers of 8, all-bank refresh, and this project's `hbm` set to the same
timings, address bits, buffer depth, scheduler and refresh through --set overrides. The project
plays each trace twice: answering each request at once (request_mode immediate, what dataflow
runs use: decisions in call order) and with the reference front end's 128 transactions in
flight queued in the controller (decisions in time order). Prints a Markdown table per part:
simulated time, bandwidth, mean, p50 and p99 latency, row-hit rate and command counts, with
the project's deviation.

HBM2 has two pseudo-channels per channel, which the reference addresses with its PSEUDOCHANNEL
bit and whose row and column command buses its checker shares; the project plays them as two
channels with `pseudo_channels` 2 (shared buses) and, on the patterns that use both, also 1
(buses of their own), so the table shows what sharing changes.

HBM3 is not compared here: DRAMSys 5.0 has no HBM3 memspec, checker or DRAM model, and later
public releases build HBM3 only from their non-public extensions. validate_ramulator.py compares
it with Ramulator 2.

    make validate                      # or:
    python tools/dram_reference/validate.py [--requests 50000] [--parts hbm2,ddr4,lpddr4]
        [--outstanding 128] [--patterns "random reads, both PCs,..."]

Environment: DRAMSYS_SOURCE, DRAMSYS_TAG, DRAMSYS_WORK as for build_dramsys.sh.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PLATFORM = str(ROOT / "platforms" / "attenio.yaml")


@dataclass(frozen=True)
class Part:
    """A reference memspec and address mapping, and how its derived timings read in ns."""

    name: str
    memspec: str
    mapping: str


PARTS = {
    "hbm2": Part("hbm2", "HBM2.json", "am_hbm2_8Gb_pc_brc.json"),
    "ddr4": Part("ddr4", "JEDEC_4Gb_DDR4-2400_8bit_A.json", "am_ddr4_8x4Gbx8_dimm_p1KB_brc.json"),
    "lpddr4": Part("lpddr4", "JEDEC_8Gb_LPDDR4-3200_16bit.json", "am_lpddr4_8Gbx16_brc.json"),
}

MCCONFIG = {
    "mcconfig": {
        "PagePolicy": "Open",
        "Scheduler": "FrFcfs",
        "SchedulerBuffer": "Bankwise",
        "RequestBufferSize": 8,
        "CmdMux": "Oldest",
        "RespQueue": "Fifo",
        "RefreshPolicy": "AllBank",
        "RefreshMaxPostponed": 0,
        "RefreshMaxPulledin": 0,
        "PowerDownPolicy": "NoPowerDown",
        "Arbiter": "Simple",
        "MaxActiveTransactions": 128,
        "RefreshManagement": False,
    }
}


def overrides_for(part: Part, spec: dict[str, Any], mapping: dict[str, Any]) -> tuple[str, ...]:
    """The project's hbm set to the reference's part: timings (cycles x tCK, with the derived
    turnarounds of its checkers), organisation, one channel, the same address bits."""
    arch, t = spec["memarchitecturespec"], spec["memtimingspec"]
    ck = 1e3 / t["clkMhz"]  # ns
    burst_cycles = arch["burstLength"] / arch["dataRate"]
    burst_bytes = arch["burstLength"] * arch["width"] * arch.get("nbrOfDevices", 1) // 8
    bandwidth = burst_bytes / (burst_cycles * ck) * 1e9
    banks = arch["nbrOfBanks"]
    groups = arch.get("nbrOfBankGroups", 1)

    def ns(cycles: float) -> str:  # whole picoseconds, the resolution of both simulators
        return f"{round(cycles * ck * 1000)}ps"

    # HBM2: both pseudo-channels of the reference's channel, as two channels sharing their
    # command buses (its checker's one row and one column bus per channel).
    pcs = arch.get("nbrOfPseudoChannels", 1)
    common = {
        "channels": pcs,
        "pseudo_channels": pcs,
        "channel_bandwidth": f"{bandwidth:.0f}B/s",
        "burst_bytes": f"{burst_bytes}B",
        "banks": banks,
        "bank_groups": groups,
        "latency": "0ns",
        "queue_depth": 8,
        "scheduler": "frfcfs",
        "page_policy": "open",
        "write_drain": "none",
        "refresh": "all_bank",
        "t_ck": ns(1),
    }
    keys = TIMING_KEYS[part.name]
    timing: dict[str, Any] = {ours: ns(t[theirs]) for ours, theirs in keys.items()}
    if part.name == "hbm2":
        timing.update(command_bus="split", act_cycles=2, row_cycles=1, column_cycles=1)
    elif part.name == "ddr4":
        # Read to write: RL + burst + 1 tCK - WL + write preamble (JESD79-4).
        timing["t_rtw"] = ns(t["RL"] + burst_cycles + 1 - t["WL"] + t["WPRE"])
        timing.update(command_bus="shared", act_cycles=1, row_cycles=1, column_cycles=1)
    else:  # lpddr4: write data one tCK after WL, two more before PRE (JESD209-4)
        timing["t_cwl"] = ns(t["WL"] + 1)
        timing["t_wr"] = ns(t["WR"] + 2)
        timing["t_rtw"] = ns(t["RL"] + t["DQSCK"] + burst_cycles - t["WL"] + t["WPRE"] + t["RPST"])
        timing.update(command_bus="shared", act_cycles=4, row_cycles=2, column_cycles=4)
    fields = {**common, **timing, "address_mapping": bit_mapping(mapping, burst_bytes)}
    fields["row_size"] = f"{2 ** column_bits(mapping)}B"
    return tuple(f"hbm.{k}={v}" for k, v in fields.items())


# The project's timing parameters and the reference memspec entries (in clocks) they take.
_COMMON_KEYS = {"t_ras": "RAS", "t_faw": "FAW", "t_cl": "RL", "t_cwl": "WL", "t_wr": "WR"}
_COMMON_KEYS |= {"t_rtp": "RTP", "t_refi": "REFI"}
TIMING_KEYS: dict[str, dict[str, str]] = {
    "hbm2": _COMMON_KEYS
    | {"t_rcd": "RCDRD", "t_rcd_wr": "RCDWR", "t_rp": "RP", "t_rc": "RC"}
    | {"t_rrd_s": "RRDS", "t_rrd_l": "RRDL"}
    | {"t_ccd_s": "CCDS", "t_ccd_l": "CCDL", "t_wtr_s": "WTRS", "t_wtr_l": "WTRL"}
    | {"t_rtw": "RTW", "t_rfc": "RFC"},
    "ddr4": _COMMON_KEYS
    | {"t_rcd": "RCD", "t_rp": "RP", "t_rc": "RC", "t_rrd_s": "RRD_S", "t_rrd_l": "RRD_L"}
    | {"t_ccd_s": "CCD_S", "t_ccd_l": "CCD_L", "t_wtr_s": "WTR_S", "t_wtr_l": "WTR_L"}
    | {"t_rfc": "RFC"},
    "lpddr4": _COMMON_KEYS
    | {"t_rcd": "RCD", "t_rp": "RPPB", "t_rc": "RCPB", "t_rrd_s": "RRD", "t_rrd_l": "RRD"}
    | {"t_ccd_s": "CCD", "t_ccd_l": "CCD", "t_wtr_s": "WTR", "t_wtr_l": "WTR"}
    | {"t_rfc": "RFCAB"},
}

FIELDS = {
    "BYTE_BIT": "column",
    "COLUMN_BIT": "column",
    "ROW_BIT": "row",
    "BANK_BIT": "bank",
    "BANKGROUP_BIT": "bankgroup",
    "PSEUDOCHANNEL_BIT": "pseudochannel",
}


def _bit_fields(mapping: dict[str, Any]) -> dict[int, str]:
    bits: dict[int, str] = {}
    for key, field in FIELDS.items():
        for b in mapping.get(key, []):
            bits[int(b)] = field
    return bits


def column_bits(mapping: dict[str, Any]) -> int:
    return sum(1 for f in _bit_fields(mapping).values() if f == "column")


def total_bits(mapping: dict[str, Any]) -> int:
    """Address bits of one pseudo-channel (the whole channel when it has none)."""
    return sum(1 for f in _bit_fields(mapping).values() if f != "pseudochannel")


def pseudo_channel_bit(mapping: dict[str, Any]) -> int | None:
    """The address bit that selects the pseudo-channel (HBM2), if the mapping has one."""
    bits = [b for b, f in _bit_fields(mapping).items() if f == "pseudochannel"]
    return bits[0] if len(bits) == 1 else None


def bit_mapping(mapping: dict[str, Any], burst_bytes: int) -> str:
    """The reference's bit lists as the project's `field:bits` string, most significant first
    (its pseudo-channel bit included; channel and rank bits are left out: one channel)."""
    bits = _bit_fields(mapping)
    if sorted(bits) != list(range(len(bits))):
        raise SystemExit("reference mapping: channel/rank bits inside the address are unsupported")
    segments: list[list[Any]] = []
    for b in range(len(bits) - 1, -1, -1):
        if segments and segments[-1][0] == bits[b]:
            segments[-1][1] += 1
        else:
            segments.append([bits[b], 1])
    del burst_bytes
    return " ".join(f"{f}:{n}" for f, n in segments)


PATTERNS = (
    "sequential",
    "random reads",
    "random mixed",
    "read/write alternating",
    "stride 4 KiB",
    "stride 16 KiB",
    "four bank streams",
    "one bank, two rows",
    # Both pseudo-channels of the HBM2 channel (request i to pseudo-channel i % 2), where the
    # shared command buses matter.
    "sequential, both PCs",
    "random reads, both PCs",
    "random mixed, both PCs",
)
BOTH = ", both PCs"


def pattern(
    name: str, n: int, burst: int, mapping: dict[str, Any]
) -> tuple[np.ndarray, np.ndarray]:
    """Addresses and write flags of `n` one-burst requests."""
    if name.endswith(BOTH):
        pc = pseudo_channel_bit(mapping)
        assert pc is not None
        one, one_writes = pattern(name.removesuffix(BOTH), n, burst, mapping)
        # Each pseudo-channel walks the pattern from its start (sequential: both stream), or
        # takes every other request of it (random: independent addresses).
        k = np.arange(n) if name.startswith("random") else np.arange(n) // 2
        side = (np.arange(n, dtype=np.uint64) % np.uint64(2)) << np.uint64(pc)
        return one[k] | side, one_writes[k]
    i = np.arange(n, dtype=np.uint64)
    space = np.uint64(2 ** total_bits(mapping))
    bits = _bit_fields(mapping)
    row_low = min(b for b, f in bits.items() if f == "row")
    bank_low = min(b for b, f in bits.items() if f in ("bank", "bankgroup"))
    writes = np.zeros(n, dtype=bool)
    rng = np.random.default_rng(1)
    if name == "sequential":
        addr = i * np.uint64(burst)
    elif name in ("random reads", "random mixed"):
        addr = rng.integers(0, int(space) // burst, n, dtype=np.uint64) * np.uint64(burst)
        if name == "random mixed":
            writes = rng.random(n) < 0.5
    elif name == "read/write alternating":
        addr = i * np.uint64(burst)
        writes = (i % np.uint64(2)) == 1
    elif name.startswith("stride"):
        addr = i * np.uint64(4096 if "4" in name else 16384)
    elif name == "four bank streams":  # banks 0-3, each walking its rows from column 0
        stream, k = i % np.uint64(4), i // np.uint64(4)
        addr = stream * np.uint64(1 << bank_low) + (k * np.uint64(burst)) % np.uint64(1 << bank_low)
    else:  # one bank, two rows: alternating between rows 0 and 1 of bank 0, columns walking
        row, k = i % np.uint64(2), i // np.uint64(2)
        cols = np.uint64(2 ** column_bits(mapping) // burst)
        addr = row * np.uint64(1 << row_low) + (k % cols) * np.uint64(burst)
    return addr % space, writes


def write_stl(path: Path, addr: np.ndarray, writes: np.ndarray, burst: int) -> None:
    """All requests at time 0, each `burst` bytes (given explicitly: the two players' default
    lengths differ)."""
    ops = np.where(writes, f": ({burst}) write 0x", f": ({burst}) read 0x")
    lines = np.char.add(np.char.add(np.zeros(len(addr), dtype=np.uint64).astype(str), ops),
                        np.char.mod("%x", addr))  # fmt: skip
    path.write_text("\n".join(lines.tolist()) + "\n")


def run_reference(
    binary: Path, configs: Path, work: Path, part: Part, trace: Path
) -> dict[str, float]:
    """Plays the trace in the reference; its figures from the recorded database."""
    sim = {
        "simulation": {
            "addressmapping": str(configs / "addressmapping" / part.mapping),
            "mcconfig": MCCONFIG["mcconfig"],
            "memspec": str(configs / "memspec" / part.memspec),
            "simconfig": {
                "AddressOffset": 0, "CheckTLM2Protocol": False, "DatabaseRecording": True,
                "Debug": False, "EnableWindowing": False, "PowerAnalysis": False,
                "SimulationName": trace.stem, "SimulationProgressBar": False,
                "StoreMode": "NoStorage", "UseMalloc": False, "WindowSize": 1000,
            },
            "simulationid": trace.stem,
            "tracesetup": [{"clkMhz": 1000, "name": str(trace)}],
        }
    }  # fmt: skip
    cfg = work / f"{trace.stem}.json"
    cfg.write_text(json.dumps(sim, indent=1))
    for old in work.glob(f"{trace.stem}*.tdb"):
        old.unlink()
    subprocess.run([str(binary), str(cfg)], cwd=work, check=True, capture_output=True)
    db = max(work.glob(f"*{trace.stem}*.tdb"), key=lambda p: p.stat().st_mtime)
    with sqlite3.connect(db) as con:
        phases = con.execute("SELECT PhaseName, COUNT(*) FROM Phases GROUP BY PhaseName").fetchall()
        counts = dict(phases)
        lat = np.array(
            [
                r[0]
                for r in con.execute(
                    "SELECT resp.PhaseBegin - req.PhaseBegin FROM Phases req JOIN Phases resp "
                    "ON req.Transact = resp.Transact WHERE req.PhaseName = 'REQ' "
                    "AND resp.PhaseName = 'RESP'"
                )
            ],
            dtype=np.float64,
        )
        end = con.execute(
            "SELECT MAX(DataStrobeEnd) FROM Phases WHERE PhaseName IN ('RD','WR','RDA','WRA')"
        ).fetchone()[0]
        size = con.execute("SELECT SUM(DataLength) FROM Transactions").fetchone()[0]
    columns = sum(counts.get(k, 0) for k in ("RD", "WR", "RDA", "WRA"))
    acts = counts.get("ACT", 0)
    return {
        "time_ns": end / 1e3,
        "bandwidth_GBps": size / (end / 1e12) / 1e9,
        "mean_ns": float(lat.mean()) / 1e3,
        "p50_ns": float(np.percentile(lat, 50)) / 1e3,
        "p99_ns": float(np.percentile(lat, 99)) / 1e3,
        "row_hit_rate": 1 - acts / columns if columns else 0.0,
        "ACT": acts,
        "PRE": sum(counts.get(k, 0) for k in ("PRE", "PREPB", "PREAB", "PREA")),
        "REF": sum(counts.get(k, 0) for k in ("REF", "REFAB", "REFA")),
    }


def run_project(trace: Path, overrides: tuple[str, ...], outstanding: int) -> dict[str, float]:
    """Plays the trace into the project's bank-level hbm, in a fresh process (one simulation per
    process): each request answered at once (immediate, outstanding 0) or `outstanding` requests
    in flight queued in the controller (queued mode)."""
    out = subprocess.run(
        [sys.executable, __file__, "child", str(trace), str(outstanding), *overrides],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ).stdout
    figures: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return figures


def _child(trace: str, outstanding: int, overrides: list[str]) -> None:
    from tlm_models.replay.stl_in import replay_stl_file

    r = replay_stl_file(
        trace,
        PLATFORM,
        ("hbm.fidelity=bank", *overrides),
        with_latencies=True,
        outstanding=outstanding or None,
    )
    hbm = next(c for c in r["memory_stats"]["children"] if c["name"] == "hbm")["stats"]
    lat = np.asarray(r["latencies_ns"], dtype=np.float64)
    columns = hbm["read_bursts"]["value"] + hbm["write_bursts"]["value"]
    acts = hbm["activates"]["value"]
    figures = {
        "time_ns": r["last_completion_ns"],
        "bandwidth_GBps": r["achieved_bandwidth_Bps"] / 1e9,
        "mean_ns": float(lat.mean()),
        "p50_ns": float(np.percentile(lat, 50)),
        "p99_ns": float(np.percentile(lat, 99)),
        "row_hit_rate": 1 - acts / columns if columns else 0.0,
        "ACT": acts,
        "PRE": hbm["precharges"]["value"],
        "REF": hbm["refreshes"]["value"],
        "wall_s": r["replay_wall_s"],
    }
    print(json.dumps(figures))


def deviation(ours: float, ref: float) -> str:
    return f"{(ours - ref) / ref * 100:+.1f} %" if ref else "-"


def build_reference(script: str) -> str:
    """Runs a reference's build script (beside this file) and returns the path it prints last;
    a failed build (no network for the clone, a missing package) ends the run with one line
    naming the step and the script's own last words, not a traceback."""
    proc = subprocess.run(["sh", str(HERE / script)], capture_output=True, text=True, check=False)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        said = [line for line in proc.stderr.splitlines() if line.strip()]
        why = said[-1].strip() if said else f"exit status {proc.returncode}"
        sys.exit(f"validate: building the reference with {script} failed: {why}")
    return lines[-1]


def table_row(
    name: str,
    outstanding: int,
    ours: dict[str, float],
    ref: dict[str, float],
    metrics: tuple[str, ...],
    whole: tuple[str, ...] = (),
    extra: tuple[str, ...] = (),
    suffix: str = "",
) -> tuple[str, float]:
    """Prints one pattern's Markdown row, `ours / reference (deviation)` per metric (those in
    `whole` as whole numbers, the rest to four significant digits), then the `extra` cells;
    returns the row's mode (with `suffix`) and its relative time deviation."""

    def fmt(value: float, metric: str) -> str:
        return f"{value:,.0f}" if metric in whole else f"{value:,.4g}"

    cells = [
        f"{fmt(ours[m], m)} / {fmt(ref[m], m)} ({deviation(ours[m], ref[m])})" for m in metrics
    ]
    mode = (f"{outstanding} in flight" if outstanding else "immediate") + suffix
    print(f"| {name} | {mode} | " + " | ".join([*cells, *extra]) + " |", flush=True)
    return mode, abs(ours["time_ns"] - ref["time_ns"]) / ref["time_ns"]


METRICS = (
    "time_ns",
    "bandwidth_GBps",
    "mean_ns",
    "p50_ns",
    "p99_ns",
    "row_hit_rate",
    "ACT",
    "PRE",
    "REF",
)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "child":
        _child(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50_000)
    parser.add_argument("--parts", default="hbm2,ddr4,lpddr4")
    parser.add_argument("--binary", help="a built reference simulator (skips the build)")
    parser.add_argument(
        "--patterns",
        help="the patterns to run, separated by ';' (their names hold commas; default: all)",
    )
    parser.add_argument(
        "--outstanding",
        type=int,
        default=MCCONFIG["mcconfig"]["MaxActiveTransactions"],
        help="also replay with this many requests in flight, queued (0: immediate mode only); "
        "default: the reference front end's MaxActiveTransactions",
    )
    args = parser.parse_args()
    binary = args.binary or build_reference("build_dramsys.sh")
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    work_root = Path(os.environ.get("DRAMSYS_WORK", cache / "attn-tlm" / "ref"))
    configs = work_root / "DRAMSys" / "configs"
    for name in args.parts.split(","):
        part = PARTS[name]
        spec = json.loads((configs / "memspec" / part.memspec).read_text())["memspec"]
        mapping = json.loads((configs / "addressmapping" / part.mapping).read_text())[
            "addressmapping"
        ]
        overrides = overrides_for(part, spec, mapping)
        arch = spec["memarchitecturespec"]
        burst = arch["burstLength"] * arch["width"] * arch.get("nbrOfDevices", 1) // 8
        work = work_root / "validate" / name
        work.mkdir(parents=True, exist_ok=True)
        print(f"\n### {name} ({part.memspec}), {args.requests:,} requests of {burst} B at once\n")
        print("| pattern | requests | " + " | ".join(METRICS) + " |")
        print("|---|---|" + "---|" * len(METRICS))
        worst: dict[str, tuple[float, str]] = {}
        chosen = args.patterns.split(";") if args.patterns else PATTERNS
        for p in chosen:
            if p not in PATTERNS:
                raise SystemExit(f"--patterns: unknown pattern {p!r}; known: {'; '.join(PATTERNS)}")
            both = p.endswith(BOTH)
            if both and pseudo_channel_bit(mapping) is None:
                continue  # the part has no pseudo-channels
            trace = work / (p.replace(" ", "_").replace("/", "_").replace(",", "") + ".stl")
            write_stl(trace, *pattern(p, args.requests, burst, mapping), burst)
            ref = run_reference(Path(binary), configs, work, part, trace)
            # With both pseudo-channels busy, also with command buses of their own.
            for buses, extra in (("", ()), (", own buses", ("hbm.pseudo_channels=1",)))[
                : 2 if both else 1
            ]:
                for outstanding in (0, args.outstanding) if args.outstanding else (0,):
                    ours = run_project(trace, (*overrides, *extra), outstanding)
                    mode, off = table_row(p, outstanding, ours, ref, METRICS, suffix=buses)
                    worst[mode] = max(worst.get(mode, (0.0, "")), (off, p))
        print()
        for mode, (off, p) in worst.items():
            print(f"{name}, {mode}: largest time deviation {off * 100:.1f} % ({p})")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
