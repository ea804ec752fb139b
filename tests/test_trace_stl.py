"""DRAMSys STL traces: both length positions, clocks, relative delays, and malformed lines."""

from __future__ import annotations

import numpy as np
import pytest

from tlm_models.errors import UserError
from tlm_models.trace.stl import load_stl, read_stl

GOOD = """\
# DRAMSys-style trace
0: read 0x0
10:\t(32) write 0x40 0x00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff

25: read 1000 (128)
25: write 0XABC
"""


def write(tmp_path, text, name="t.stl"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_parses_times_commands_addresses_lengths(tmp_path):
    r = load_stl(write(tmp_path, GOOD), clock_hz=500e6, default_length=64)
    assert r["time_ps"].tolist() == [0, 20_000, 50_000, 50_000]
    assert r["is_write"].tolist() == [False, True, False, True]
    assert r["address"].tolist() == [0, 0x40, 0x1000, 0xABC]
    assert r["length"].tolist() == [64, 32, 128, 64]


def test_non_integer_clock_period_rounds_to_picoseconds(tmp_path):
    r = load_stl(write(tmp_path, "3: read 0x0\n"), clock_hz=3e9)
    assert r["time_ps"].tolist() == [1000]


def test_relative_trace_may_go_down_and_is_chosen_by_extension(tmp_path):
    r = load_stl(write(tmp_path, "10: read 0x0\n2: read 0x40\n", "t.rstl"))
    assert r["time_ps"].tolist() == [10_000, 2_000]


def test_small_blocks_keep_line_numbers_and_order(tmp_path):
    lines = [f"{i}: read {i * 64:x}" for i in range(500)] + ["499: read zz"]
    path = write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(UserError, match=r"t\.stl:501: address 'zz'"):
        list(read_stl(path, block_bytes=100))
    r = np.concatenate(list(read_stl(write(tmp_path, "\n".join(lines[:-1])), block_bytes=100)))
    assert r["address"].tolist() == [i * 64 for i in range(500)]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("5: Write 0x10", "unknown command 'Write', expected read or write (commands are lower"),
        ("5 read 0x10", "missing ':'"),
        ("5: read 0xfoo", "address '0xfoo' is not a hex number"),
        ("-5: read 0x10", "time must be a non-negative"),
        ("1.5: read 0x10", "not a whole number of clock cycles"),
        ("5: read", "missing address"),
        ("5:", "missing command"),
        ("5: (8) read 0x10 (8)", "length given twice"),
        ("5: read 0x10 (0)", "length (0) must be at least 1"),
        ("5: read 0x10 0xabcd", "a read carries no data"),
        ("5: (4) write 0x10 0xabcd", "two hex digits per byte"),
        ("99999999999999999999: read 0x0", "too large"),
        ("1: read 0x0\n0: read 0x0", "time goes backwards (0 ps after 1000 ps)"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path, line, message):
    path = write(tmp_path, "# header\n" + line + "\n")
    with pytest.raises(UserError) as exc:
        load_stl(path)
    text = str(exc.value)
    assert text.startswith(f"{path}:{1 + line.count(chr(10)) + 1}: ")
    assert message in text


def test_bad_clock(tmp_path):
    with pytest.raises(UserError, match="clock must be positive"):
        load_stl(write(tmp_path, "0: read 0\n"), clock_hz=0)
