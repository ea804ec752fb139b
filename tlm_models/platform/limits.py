"""What the C++ models can hold: the range of each parameter and the products that must fit.

A value the models cannot represent must be refused where the user wrote it (file:line), not
found later in a worker as a conversion error, a wrapped integer or a hang. Integer widths come
from the parameter declaration (`ParamSpec.cpp_type` / `cpp_max`: counts `unsigned`, sizes and
addresses `std::uint64_t`, times `sc_core::sc_time`, 64 bits of the 1 ps resolution);
frequencies become a clock period of whole picoseconds, bandwidths transfer times.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from tlm_models.platform.registry import KIND_UNITS, ParamSpec
from tlm_models.units import format_bandwidth, format_frequency, format_time

__all__ = [
    "ADDRESS_SPACE",
    "MAX_BANDWIDTH",
    "MAX_FREQUENCY",
    "MAX_TIME_PS",
    "MIN_BANDWIDTH",
    "MIN_FREQUENCY",
    "UINT32_MAX",
    "UINT64_MAX",
    "product_errors",
    "range_error",
]

UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1
#: Addresses are 64-bit: a window may end at 2^64 (its last byte at 2^64 - 1), not beyond.
ADDRESS_SPACE = 2**64
#: sc_time counts picoseconds (the resolution the kernel is set to) in 64 bits: ~213 days.
MAX_TIME_PS = UINT64_MAX
#: A clock period must be at least one picosecond to be representable, and fit in an sc_time.
MAX_FREQUENCY = 1e12
MIN_FREQUENCY = 1e12 / MAX_TIME_PS
#: Transfer times are whole picoseconds in 64 bits; 1 B/s moves a 4 KiB burst in ~68 min of
#: simulated time, and 10^18 B/s (1 EB/s) is far above any memory, so neither end is a limit a
#: real design meets, while both keep every transfer time finite and representable.
MIN_BANDWIDTH = 1.0
MAX_BANDWIDTH = 1e18


def range_error(spec: ParamSpec, value: object) -> str | None:
    """Why ``value`` (converted to the kind's unit) does not fit parameter ``spec``, or None."""
    kind = spec.kind
    if isinstance(value, bool):
        return None
    limit = spec.cpp_max
    if limit is not None and isinstance(value, int) and value > limit:
        unit = KIND_UNITS[kind]
        return f"{value} does not fit the model's {spec.cpp_type} (at most {limit} {unit})".strip()
    if kind == "frequency" and isinstance(value, float):
        if value > MAX_FREQUENCY:
            return (
                f"{format_frequency(value)} has a period below the 1 ps time resolution "
                f"(at most {format_frequency(MAX_FREQUENCY)})"
            )
        if value < MIN_FREQUENCY:
            return (
                f"{value:g} Hz has a period beyond the largest SystemC time "
                f"({format_time(MAX_TIME_PS)})"
            )
    if kind == "bandwidth" and isinstance(value, float):
        if value < MIN_BANDWIDTH:
            return f"{value:g} B/s is below {format_bandwidth(MIN_BANDWIDTH)}"
        if value > MAX_BANDWIDTH:
            return f"{format_bandwidth(value)} is above {format_bandwidth(MAX_BANDWIDTH)}"
    return None


#: Products of a component's parameters that the models compute in a fixed-width type:
#: (type, [factors], C++ type maximum, what the product is).
_PRODUCTS: tuple[tuple[str, tuple[str, ...], float, str], ...] = (
    ("hbm", ("channels", "channel_bandwidth"), MAX_BANDWIDTH, "the peak bandwidth"),
    ("hbm", ("channels", "interleave"), UINT64_MAX, "one interleave round (channels x interleave)"),
    ("hbm", ("banks", "row_size"), UINT64_MAX, "a channel's open rows (banks x row_size)"),
    ("sram", ("ports", "port_width"), UINT64_MAX, "the bytes all ports move per cycle"),
    ("pe_array", ("rows", "cols"), UINT32_MAX, "the MACs per cycle (a 32-bit count)"),
    ("traffic_generator", ("requests", "request_size"), UINT64_MAX, "the bytes requested"),
    ("dma", ("max_outstanding", "max_burst"), UINT64_MAX, "the bytes a channel has in flight"),
)


def product_errors(type_name: str, params: Mapping[str, object]) -> list[tuple[str, str]]:
    """(parameter to point at, message) for every product of ``params`` that overflows."""
    problems: list[tuple[str, str]] = []
    for ptype, factors, maximum, what in _PRODUCTS:
        if ptype != type_name:
            continue
        values = [params.get(f) for f in factors]
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(numbers) != len(factors):
            continue
        # Integers multiply exactly; a bandwidth makes the product a float.
        product = math.prod(numbers)
        if product > maximum:
            problems.append(
                (
                    factors[-1],
                    f"{' x '.join(factors)} = {float(product):.4g} overflows {what} (at most "
                    f"{float(maximum):.4g})",
                )
            )
    return problems
