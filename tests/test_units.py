"""Quantities: exact parsing with decimal vs binary prefixes, strict units, display."""

from __future__ import annotations

import pytest

from tlm_models.units import (
    UnitError,
    format_address,
    format_bandwidth,
    format_frequency,
    format_size,
    format_time,
    parse_address,
    parse_bandwidth,
    parse_frequency,
    parse_size,
    parse_time,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("128 GB/s", 128e9),
        ("8 GiB/s", 8 * 2**30),
        ("100 MB/s", 100e6),
        ("1 TB/s", 1e12),
        ("41.875 GB/s", 41.875e9),
        ("12.8GB/s", 12.8e9),
    ],
)
def test_bandwidth(text: str, expected: float) -> None:
    assert parse_bandwidth(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("512 KiB", 524288),
        ("64 B", 64),
        ("1 MB", 1_000_000),
        ("8 GiB", 8 * 2**30),
        ("512KiB", 524288),
        ("1.5 KiB", 1536),
        ("80 GB", 80_000_000_000),
        ("1_024 B", 1024),
    ],
)
def test_size_is_exact(text: str, expected: int) -> None:
    result = parse_size(text)
    assert result == expected
    assert isinstance(result, int)


def test_frequency_and_time() -> None:
    assert parse_frequency("1 GHz") == 1e9
    assert parse_frequency("800 MHz") == 800e6
    assert parse_frequency("1.83 GHz") == 1.83e9
    assert parse_time("20 ns") == 20_000
    assert parse_time("1.5 us") == 1_500_000
    assert parse_time("0 ns") == 0
    assert parse_time("1 ps") == 1
    assert isinstance(parse_time("1.5 us"), int)


@pytest.mark.parametrize("value", [512, "512", 3.5, "  7  "])
def test_bare_number_is_an_error(value: object) -> None:
    with pytest.raises(UnitError, match="bare number"):
        parse_size(value)
    with pytest.raises(UnitError, match="bare number"):
        parse_time(value)


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (parse_size, "512 kib", "did you mean 'KiB'"),
        (parse_bandwidth, "1 Gb/s", "bits are not accepted"),
        (parse_bandwidth, "8 GHz", "unknown unit 'GHz'"),
        (parse_size, "0.5 B", "not a whole number of bytes"),
        (parse_time, "0.5 ps", "not a whole number of picoseconds"),
        (parse_size, "many B", "expected a size"),
        (parse_size, True, "boolean true"),
        (parse_size, None, "null"),
        (parse_frequency, "1 GHz extra", "unknown unit"),
    ],
)
def test_malformed(parse: object, text: object, message: str) -> None:
    with pytest.raises(UnitError, match=message):
        parse(text)  # type: ignore[operator]


def test_address_forms() -> None:
    assert parse_address(0x1000) == 0x1000
    assert parse_address("0x1_0000_0000") == 2**32
    assert parse_address("4 GiB") == 2**32
    assert parse_address("4096") == 4096
    with pytest.raises(UnitError, match="expected an address"):
        parse_address("somewhere")
    with pytest.raises(UnitError, match="expected an address"):
        parse_address(True)


def test_formatting_round_trips() -> None:
    assert format_size(524288) == "512 KiB"
    assert format_size(1_000_000) == "1 MB"
    assert format_size(1536) == "1536 B"
    assert format_size(64) == "64 B"
    assert format_bandwidth(128e9) == "128 GB/s"
    assert format_bandwidth(12.8e9) == "12.8 GB/s"
    assert format_frequency(1e9) == "1 GHz"
    assert format_frequency(800e6) == "800 MHz"
    assert format_time(20_000) == "20 ns"
    assert format_time(1_500_000) == "1.5 us"
    assert format_time(0) == "0 ns"
    assert format_address(2**32) == "0x1_0000_0000"
    for text in ("512 KiB", "8 GiB", "64 B", "1 MB"):
        assert parse_size(format_size(parse_size(text))) == parse_size(text)
    for text in ("20 ns", "1.5 us", "1 ps", "3 ms"):
        assert parse_time(format_time(parse_time(text))) == parse_time(text)
