"""Quantities with units: strict parsing of `128 GB/s`, `512 KiB`, `1 GHz`, `20 ns`, exact display
for files, and readable display for people.

Parsing is exact: numbers are read as decimals, so `1.5 KiB` is 1536 bytes and `1.5 us` is
1,500,000 ps. A bare number where a unit is required is an error, because `512` could mean
bytes or KiB and a silent guess is the worst kind of bug in a performance model. Decimal
prefixes (K, M, G, T = 10^3k) and binary prefixes (Ki, Mi, Gi, Ti = 2^10k) are distinct.

The readable forms (``format_ns``, ``format_bytes``, ``format_count``, ``format_rate``,
``format_duration``) print numbers as a person reads them: ``37.88 ms`` rather than
``37,878,968.000 ns``, ``2.00 GiB``, ``5.5 M`` operations, ``3 min 05 s``. Every figure the
command line and the report print for people goes through them; the result JSON keeps exact SI
values.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from tlm_models.errors import shorten

__all__ = [
    "UnitError",
    "format_address",
    "format_bandwidth",
    "format_bytes",
    "format_count",
    "format_duration",
    "format_frequency",
    "format_ns",
    "format_rate",
    "format_size",
    "format_time",
    "parse_address",
    "parse_bandwidth",
    "parse_count",
    "parse_energy",
    "parse_frequency",
    "parse_power",
    "parse_size",
    "parse_time",
]


class UnitError(ValueError):
    """A quantity that does not parse; the message says what was expected and what was found."""


_SIZE_UNITS: dict[str, int] = {
    "B": 1,
    "KB": 10**3,
    "kB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
}
_BANDWIDTH_UNITS: dict[str, int] = {f"{unit}/s": factor for unit, factor in _SIZE_UNITS.items()}
_FREQUENCY_UNITS: dict[str, int] = {"Hz": 1, "kHz": 10**3, "MHz": 10**6, "GHz": 10**9}
_TIME_UNITS_PS: dict[str, int] = {
    "ps": 1,
    "ns": 10**3,
    "us": 10**6,
    "µs": 10**6,
    "ms": 10**9,
    "s": 10**12,
}

#: Numbers in quantities: far beyond any hardware figure in either direction, yet small enough
#: that exact arithmetic on them is instant.
_MAX_EXPONENT = 30
_MAX_DIGITS = 40

_ENERGY_FJ: dict[str, int] = {"fJ": 1, "pJ": 10**3, "nJ": 10**6, "uJ": 10**9, "mJ": 10**12}
#: Energy per action ("pJ", "pJ/access", "pJ/op") or per byte ("pJ/B", "pJ/bit" = 8 pJ/B), in fJ.
_ENERGY_PER_ACTION: dict[str, int] = {
    f"{unit}{per}": factor for unit, factor in _ENERGY_FJ.items() for per in ("", "/access", "/op")
}
_ENERGY_PER_BYTE: dict[str, int] = {
    **{f"{unit}/B": factor for unit, factor in _ENERGY_FJ.items()},
    **{f"{unit}/bit": 8 * factor for unit, factor in _ENERGY_FJ.items()},
}
_POWER_NW: dict[str, int] = {"nW": 1, "uW": 10**3, "mW": 10**6, "W": 10**9}

_QUANTITY = re.compile(
    r"^\s*([+-]?(?:\d[\d_]*)?(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*([^\s\d.+-].*?)?\s*$"
)


def _split(text: object, what: str, example: str, units: dict[str, int]) -> tuple[Fraction, int]:
    """Splits `text` into an exact number and the factor of its unit, or raises UnitError."""
    allowed = ", ".join(units)
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise UnitError(f"expected a {what} such as '{example}', found {_describe(text)}")
    if not isinstance(text, str):
        raise UnitError(
            f"expected a {what} with a unit such as '{example}', found bare number {text!r} "
            f"(units: {allowed})"
        )
    match = _QUANTITY.match(text)
    if match is None or not match.group(1) or match.group(1) in "+-.":
        raise UnitError(f"expected a {what} such as '{example}', found '{text}'")
    number_text, unit = match.group(1), match.group(2)
    if unit is None:
        raise UnitError(
            f"expected a {what} with a unit such as '{example}', found bare number '{text}' "
            f"(units: {allowed})"
        )
    if unit not in units:
        hint = _unit_hint(unit, units)
        raise UnitError(
            f"expected a {what} such as '{example}', found unknown unit '{unit}' in '{text}' "
            f"(units: {allowed}){hint}"
        )
    try:
        decimal = Decimal(number_text.replace("_", ""))
    except (InvalidOperation, ValueError):
        raise UnitError(f"expected a {what} such as '{example}', found '{text}'") from None
    # Range first: turning 1e999999999 into an exact fraction would take forever.
    digits = len(decimal.as_tuple().digits)
    if decimal and not (-_MAX_EXPONENT <= decimal.adjusted() <= _MAX_EXPONENT):
        raise UnitError(
            f"{what} '{text}' is out of range (the number must lie within "
            f"1e-{_MAX_EXPONENT} .. 1e{_MAX_EXPONENT})"
        )
    if digits > _MAX_DIGITS:
        raise UnitError(f"{what} '{text}' has more than {_MAX_DIGITS} significant digits")
    return Fraction(decimal), units[unit]


def _unit_hint(unit: str, units: dict[str, int]) -> str:
    """A hint for the usual slips: bits instead of bytes, wrong case."""
    bits = {"b", "bps", "Kb", "kb", "Mb", "Gb", "Tb", "Kib", "Mib", "Gib", "Tib"}
    if unit.removesuffix("/s") in bits:
        return "; bits are not accepted: write bytes ('B')"
    for known in units:
        if known.lower() == unit.lower():
            return f"; did you mean '{known}'?"
    return ""


def _describe(value: object) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return repr(value)


def _whole(value: Fraction, what: str, text: object, unit_name: str) -> int:
    if value.denominator != 1:
        raise UnitError(f"{what} '{text}' is not a whole number of {unit_name}")
    return int(value)


def parse_size(text: object) -> int:
    """Bytes from `512 KiB`, `64 B`, `1 MB`; exact, and a fraction of a byte is an error."""
    number, factor = _split(text, "size", "512 KiB", _SIZE_UNITS)
    return _whole(number * factor, "size", text, "bytes")


def parse_bandwidth(text: object) -> float:
    """Bytes per second from `128 GB/s`, `8 GiB/s`, `100 MB/s`."""
    number, factor = _split(text, "bandwidth", "128 GB/s", _BANDWIDTH_UNITS)
    return float(number * factor)


def parse_frequency(text: object) -> float:
    """Hertz from `1 GHz`, `800 MHz`."""
    number, factor = _split(text, "frequency", "1 GHz", _FREQUENCY_UNITS)
    return float(number * factor)


def parse_time(text: object) -> int:
    """Integer picoseconds (SystemC's usual resolution) from `20 ns`, `1.5 us`, `0 ns`."""
    number, factor = _split(text, "time", "20 ns", _TIME_UNITS_PS)
    return _whole(number * factor, "time", text, "picoseconds")


#: At most 15 digits (10^15 tokens): longer text is refused before int() can take long.
_COUNT = re.compile(r"^\s*(\d{1,15})\s*([kKmM]?)\s*$")


def parse_count(text: object, what: str = "count") -> int:
    """A positive count such as ``8192``, ``8K`` or ``1M`` (binary multiples: K = 1024).

    The one parser of token counts and dimensions on every command (``--seq-len``, lists).
    """
    match = _COUNT.match(text) if isinstance(text, str) else None
    if match is None or int(match.group(1)) < 1:
        raise UnitError(
            f"expected a positive {what} such as 8192, 8K or 1M (K = 1024, M = 1024 K), "
            f"found {shorten(text) if isinstance(text, str) else text!r}"
        )
    return int(match.group(1)) << {"": 0, "K": 10, "M": 20}[match.group(2).upper()]


def parse_energy(text: object) -> tuple[Fraction, str]:
    """Exact joules and what they are per: `1.26 pJ` -> per "action", `3.9 pJ/bit` -> per "byte"
    (8 bits to the byte). Energies stay fractions so sums of count x energy are exact."""
    per_byte = isinstance(text, str) and text.rstrip().endswith(("/B", "/bit"))
    units = _ENERGY_PER_BYTE if per_byte else {**_ENERGY_PER_ACTION, **_ENERGY_PER_BYTE}
    number, factor = _split(text, "per-action or per-byte energy", "1.2 pJ", units)
    if number < 0:
        raise UnitError(f"an energy cannot be negative, found '{text}'")
    return number * factor / 10**15, "byte" if per_byte else "action"


def parse_power(text: object) -> Fraction:
    """Exact watts from `120 mW`, `1.5 W`, `800 uW` (static power)."""
    number, factor = _split(text, "power", "120 mW", _POWER_NW)
    if number < 0:
        raise UnitError(f"a power cannot be negative, found '{text}'")
    return number * factor / 10**9


def parse_address(value: object) -> int:
    """An address or extent: an integer, a hex string `0x1_0000_0000`, or a size `4 GiB`."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and len(value) <= _MAX_DIGITS:
        stripped = value.strip().replace("_", "")
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", stripped):
            return int(stripped, 16)
        if re.fullmatch(r"\d+", stripped):
            return int(stripped)
        try:
            return parse_size(value)
        except UnitError:
            pass
    raise UnitError(
        "expected an address: an integer, a hex string such as '0x1000_0000' or a size such "
        f"as '4 GiB', found {_describe(value) if not isinstance(value, str) else shorten(value)}"
    )


def _format(value: Fraction, units: dict[str, int], suffix: str = "", zero: str = "") -> str:
    """The largest unit in which `value` is at least 1, with up to 4 significant digits."""
    if value == 0 and zero:
        return f"0 {zero}{suffix}"
    best_unit, best_factor = min(units.items(), key=lambda item: item[1])
    for unit, factor in units.items():
        if factor <= abs(value) and factor > best_factor:
            best_unit, best_factor = unit, factor
    scaled = value / best_factor
    text = str(scaled.numerator) if scaled.denominator == 1 else f"{float(scaled):.4g}"
    return f"{text} {best_unit}{suffix}"


_BINARY_SIZE = {u: f for u, f in _SIZE_UNITS.items() if u == "B" or u.endswith("iB")}
_DECIMAL_SIZE = {u: f for u, f in _SIZE_UNITS.items() if u in {"B", "KB", "MB", "GB", "TB"}}


def format_size(nbytes: int) -> str:
    """`524288` -> `512 KiB`; binary prefixes when exact, else decimal when exact, else bytes."""
    for units in (_BINARY_SIZE, _DECIMAL_SIZE):
        text = _format(Fraction(nbytes), units)
        if "." not in text and "e" not in text:
            return text
    return f"{nbytes} B"


def format_bandwidth(bytes_per_s: float) -> str:
    """`1.28e11` -> `128 GB/s` (decimal prefixes, as bandwidths are quoted)."""
    return _format(Fraction(bytes_per_s), _DECIMAL_SIZE, "/s")


def format_frequency(hz: float) -> str:
    """`1e9` -> `1 GHz`."""
    return _format(Fraction(hz), _FREQUENCY_UNITS)


def format_time(ps: int) -> str:
    """`20000` -> `20 ns`."""
    units = {u: f for u, f in _TIME_UNITS_PS.items() if u != "µs"}
    return _format(Fraction(ps), units, zero="ns")


def format_address(addr: int) -> str:
    """`0x1_0000_0000`: hex with a separator every 4 digits, as in the platform files."""
    digits = f"{addr:x}"
    groups = []
    while digits:
        groups.append(digits[-4:])
        digits = digits[:-4]
    return "0x" + "_".join(reversed(groups))


# Readable display for people.

_TIME_UNITS = (("s", 1e9), ("ms", 1e6), ("µs", 1e3), ("ns", 1.0))
_BYTE_UNITS = (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))


def _three_figures(value: float) -> str:
    """Three significant figures without exponent: 1.23, 12.3, 123, 1234."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    digits = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:,.{digits}f}"


def format_ns(ns: float) -> str:
    """A simulated duration in nanoseconds in the largest unit that keeps it >= 1."""
    for unit, scale in _TIME_UNITS:
        if abs(ns) >= scale:
            return f"{_three_figures(ns / scale)} {unit}"
    return f"{_three_figures(ns)} ns"


def format_bytes(nbytes: float) -> str:
    """Bytes in binary units: ``2.00 GiB``, ``512 KiB``, ``96 B``."""
    for unit, scale in _BYTE_UNITS:
        if abs(nbytes) >= scale:
            return f"{_three_figures(nbytes / scale)} {unit}"
    return f"{nbytes:,.0f} B"


def format_count(count: float) -> str:
    """A large count: ``950``, ``12.3 k``, ``5.49 M``, ``1.20 G``."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(count) >= scale:
            return f"{_three_figures(count / scale)} {unit}"
    return f"{count:,.0f}"


def format_rate(per_s: float, what: str) -> str:
    """``1.32 M ops/s``."""
    return f"{format_count(per_s)} {what}/s".replace("  ", " ")


def format_duration(seconds: float) -> str:
    """A wall-clock duration: ``42 s``, ``3 min 05 s``, ``2 h 07 min``."""
    seconds = max(0.0, seconds)
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
