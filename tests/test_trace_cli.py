"""`attn-tlm trace check|convert|stats` through the CLI entry point: output and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests import trace_samples as ts
from tlm_models.cli import main as cli
from tlm_models.trace.binary import read_binary, write_binary

SAMPLES = Path(__file__).resolve().parent.parent / "traces" / "samples"
PLATFORMS = Path(__file__).resolve().parent.parent / "platforms"


def run(*argv):
    return cli.main([str(a) for a in argv])


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "t.bin"
    write_binary(path, ts.header(), [ts.records(120)])
    return path


def test_check_ok(trace, capsys):
    assert run("trace", "check", trace) == 0
    assert "120 records ok" in capsys.readouterr().out


def test_check_reports_problems_with_exit_2(tmp_path, capsys):
    records = ts.records(120)
    records["kind"][17] = 9
    path = tmp_path / "bad.bin"
    write_binary(path, ts.header(), [records])
    assert run("trace", "check", path) == 2
    err = capsys.readouterr().err
    assert "record 17: kind 9" in err and "by rule: kind 1" in err


def test_check_against_platform_file(tmp_path, capsys):
    platform = PLATFORMS / "attenio.yaml"
    records = ts.records(120)
    path = tmp_path / "t.bin"
    write_binary(path, ts.header(), [records])
    assert run("trace", "check", path, "--platform", platform) == 0
    assert "ok against attenio" in capsys.readouterr().out
    records["dst"][6] = 0x10  # a load into off-chip memory
    write_binary(path, ts.header(), [records])
    assert run("trace", "check", path, "--platform", platform) == 2
    assert "record 6: load dst 0x10" in capsys.readouterr().err


def test_convert_both_ways_is_lossless(trace, tmp_path, capsys):
    text = tmp_path / "t.trace.txt"
    back = tmp_path / "back.attntrace"
    assert run("trace", "convert", trace, text) == 0
    assert run("trace", "convert", text, back) == 0
    assert np.array_equal(read_binary(back)[1], read_binary(trace)[1])
    assert "wrote 120 records (binary)" in capsys.readouterr().out


def test_stats_json(trace, capsys):
    assert run("trace", "stats", trace, "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["records"] == 120 and data["ops_by_kind"]["load"] == 40
    assert data["offchip_bytes_read"] == {"Q": 20 * 1024, "K": 20 * 1024}


def test_stats_table(trace, capsys):
    assert run("trace", "stats", trace) == 0
    out = capsys.readouterr().out
    assert "off-chip bytes written (stores)" in out and "20,480 B" in out


@pytest.mark.parametrize("sample", sorted(SAMPLES.glob("*.txt")), ids=lambda p: p.name)
def test_samples_check_clean(sample):
    assert run("trace", "check", sample) == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("trace", "check", "missing.bin"), "no such trace file"),
        (("trace", "convert", "{trace}", "out.xyz"), "cannot tell the trace format"),
        (("trace", "stats", "{stl}"), "DRAMSys memory trace"),
        (("trace", "check", "{garbage}"), "cannot tell the trace format"),
    ],
)
def test_user_errors_exit_2_without_traceback(trace, tmp_path, capsys, argv, message):
    stl = tmp_path / "m.stl"
    stl.write_text("0: read 0x0\n")
    garbage = tmp_path / "g.dat"
    garbage.write_bytes(b"\x00" * 10)
    argv = [a.format(trace=trace, stl=stl, garbage=garbage) for a in argv]
    assert run(*argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("attn-tlm: error: ") and message in err and "Traceback" not in err
