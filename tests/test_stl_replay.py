"""``attn-tlm replay x.stl|x.rstl``: exact times against the platform's HBM (docs/models/hbm.md)
and clean errors (exit 2, file:line) for malformed or out-of-range STL traces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tlm_models.cli.main import main
from tlm_models.replay.stl_in import replay_stl_file
from tlm_models.run.worker import run_in_worker

ROOT = Path(__file__).resolve().parent.parent
ATTENIO = str(ROOT / "platforms" / "attenio.yaml")  # HBM 16 x 8 GB/s, 100 ns, 256 B interleave


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def _json(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    code, out, err = _cli(["replay", str(path), "--json", *extra], capsys)
    assert code == 0, err
    result: dict[str, Any] = json.loads(out)
    return result


def test_two_requests_to_one_channel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 0x0 and 0x1000 = 4096: (4096 / 256) % 16 = 0 -> both on channel 0, both arrive at 0.
    # first: 64 B / 8 GB/s = 8 ns, ready 8 + 100 = 108 ns; second: [8, 16], ready 116 ns.
    trace = tmp_path / "two.stl"
    trace.write_text("# two reads, one channel\n0: read 0x0\n0: (64) read 0x1000\n")
    r = _json(trace, capsys)
    assert r["sim_time_ns"] == 116.0
    assert r["requests"] == 2 and r["reads"] == 2 and r["writes"] == 0
    assert r["bytes_read"] == 128 and r["bytes_written"] == 0
    assert r["latency_ns"]["mean"] == 112.0
    assert r["latency_ns"]["max"] == 116.0
    assert r["latency_ns"]["histogram"] == {"ge_64ns": 2}
    assert r["achieved_bandwidth_Bps"] == pytest.approx(128 / 116e-9, rel=1e-12)
    assert r["memory"] == "hbm"


def test_other_channel_and_override(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 0x100 is channel 1: both finish at 108 ns. With 16 GB/s channels: 4 + 100 = 104 ns.
    trace = tmp_path / "two.stl"
    trace.write_text("0: read 0x0\n0: write 0x100 (64)\n")
    assert _json(trace, capsys)["sim_time_ns"] == 108.0
    fast = _json(trace, capsys, "--set", "hbm.channel_bandwidth=16GB/s")
    assert fast["sim_time_ns"] == 104.0
    assert fast["bytes_written"] == 64


def test_relative_trace_and_clock(tmp_path: Path) -> None:
    # .rstl at 500 MHz (2 ns a cycle): first at 10 cycles = 20 ns, done 128 ns; second 5 cycles
    # = 10 ns after that: issued 138 ns, 4 B take 0.5 ns, done 238.5 ns.
    trace = tmp_path / "delays.rstl"
    trace.write_text("10: read 0x0\n5: write 0x0 (4)\n")
    r = run_in_worker(replay_stl_file, str(trace), ATTENIO, (), 5e8, True, timeout=120)
    assert r["first_issue_ns"] == 20.0
    assert r["sim_time_ns"] == 238.5
    assert r["latencies_ns"] == [108.0, 100.5]


def test_summary_has_units(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "one.stl"
    trace.write_text("0: read 0x0\n")
    code, out, _ = _cli(["replay", str(trace)], capsys)
    assert code == 0
    assert "108.000 ns" in out and "GB/s" in out and "64 B" in out


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("0: read 0x0\n\n5: rd 0x40\n", 3, "unknown command"),
        ("0: read 0x0\n5 read 0x40\n", 2, "missing ':'"),
        ("10: read 0x0\n5: read 0x40\n", 2, "time goes backwards"),
        ("0: read 0x0\n# far\n5: read 0x200000000\n", 3, "outside the off-chip memory"),
        ("0: read 0x0\n1: write 0x0 (0)\n", 2, "at least 1 byte"),
        ("0: read 0xFFFFFFC0 (128)\n", 1, "outside the off-chip memory"),
    ],
    ids=["command", "colon", "backwards", "unmapped", "zero_length", "past_the_end"],
)
def test_malformed_stl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: int, what: str
) -> None:
    trace = tmp_path / "bad.stl"
    trace.write_text(text)
    code, _, err = _cli(["replay", str(trace)], capsys)
    assert code == 2
    assert f"{trace}:{line}:" in err
    assert what in err


@pytest.mark.parametrize(
    "extra", [["--timeline", "t.json"], ["--stl-clock", "0"], ["--stl-clock", "nan"]]
)
def test_bad_options_for_stl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    trace = tmp_path / "one.stl"
    trace.write_text("0: read 0x0\n")
    code, _, err = _cli(["replay", str(trace), *extra], capsys)
    assert code == 2
    assert err.startswith("attn-tlm: error:")


# One bank of channel 0 in the default bank-level mapping (row bits from 18, channel bits 8-11):
# A opens row 0 (ACT 0, RD 14, data to 32 ns); B to row 1 arrives at 20 ns, its PRE held by tRAS
# until 34; C, a hit to row 0, arrives at 25 ns. hbm defaults: tRCD = tCL = tRP = 14 ns, tRAS
# 34, tRC 48, tRTP 4, 32 B bursts of 4 ns; latency 0. With four requests outstanding the queued
# controller serves C at once under FR-FCFS (RD 25, data to 43) and B after it (PRE 34, ACT 48,
# RD 62, data to 80); FCFS serves B first and C then conflicts (PRE 82, ACT 96, RD 110, to 128).
HIT_AFTER_CONFLICT = "0: (32) read 0x0\n20: (32) read 0x40000\n25: (32) read 0x1000\n"
BANK = ["--set", "hbm.fidelity=bank", "--set", "hbm.latency=0ns"]


@pytest.mark.parametrize(
    ("scheduler", "latencies", "row_hits"),
    [("frfcfs", [32.0, 60.0, 18.0], 1), ("fcfs", [32.0, 60.0, 103.0], 0)],
)
def test_outstanding_requests_are_reordered_by_the_scheduler(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    scheduler: str,
    latencies: list[float],
    row_hits: int,
) -> None:
    trace = tmp_path / "mix.stl"
    trace.write_text(HIT_AFTER_CONFLICT)
    out = tmp_path / "lat.csv"
    r = _json(
        trace,
        capsys,
        *BANK,
        "--set",
        f"hbm.scheduler={scheduler}",
        "--outstanding",
        "4",
        "--latencies",
        str(out),
    )
    assert r["outstanding"] == 4
    assert [float(line.split(",")[1]) for line in out.read_text().splitlines()[1:]] == latencies
    hbm = next(c for c in r["memory_stats"]["children"] if c["name"] == "hbm")["stats"]
    assert hbm["row_hits"]["value"] == row_hits
    assert r["sim_time_ns"] == max(80.0, 25.0 + latencies[2])


@pytest.mark.parametrize(
    ("name", "extra", "what"),
    [
        ("one.stl", ["--outstanding", "4"], "needs a bank-level hbm memory"),
        ("one.stl", [*BANK, "--outstanding", "0"], "at least 1"),
        ("one.rstl", [*BANK, "--outstanding", "2"], "absolute STL memory traces"),
    ],
    ids=["bandwidth_level", "zero", "relative"],
)
def test_bad_outstanding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, extra: list[str], what: str
) -> None:
    trace = tmp_path / name
    trace.write_text("0: read 0x0\n")
    code, _, err = _cli(["replay", str(trace), *extra], capsys)
    assert code == 2
    assert what in err
