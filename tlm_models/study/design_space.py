"""Design-space view of a sweep: how each workload responds to one swept platform parameter.

A sweep with ``--set sram.capacity=64KiB,128KiB,...`` produces one variant per value; this
module lines the variants up along that parameter so the report can show simulated time and
off-chip bytes against it, per dataflow and workload shape.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from tlm_models.errors import UserError
from tlm_models.run.config import record_workload_words
from tlm_models.study.variants import label_of
from tlm_models.units import (
    UnitError,
    parse_bandwidth,
    parse_frequency,
    parse_size,
    parse_time,
)

__all__ = [
    "METRICS",
    "Axis",
    "SweptSeries",
    "axis_position",
    "design_heading",
    "swept_axes",
]

_PARSERS: tuple[Callable[[object], float], ...] = (
    parse_size,
    parse_bandwidth,
    parse_frequency,
    parse_time,
)


def _numeric(value: str) -> float | None:
    """The value as a number when it is one (with or without a unit), else None."""
    for parse in _PARSERS:
        try:
            return float(parse(value))
        except (UserError, UnitError):  # a bare count such as tiles.count=4 has no unit
            continue
    try:
        return float(value)
    except ValueError:
        return None


@dataclass(frozen=True)
class SweptSeries:
    """One (dataflow, N, d) line: its records in the order of the parameter's values."""

    label: str
    seq_len: int
    head_dim: int
    points: tuple[tuple[str, dict[str, Any]], ...]  # (parameter value, record)


@dataclass(frozen=True)
class Axis:
    """A platform parameter swept with everything else held fixed, and the series along it."""

    key: str
    platform: str
    heads: int
    values: tuple[str, ...]  # in increasing numeric order when numeric, else as first seen
    numeric: bool
    series: tuple[SweptSeries, ...]
    workload: tuple[str, ...] = ()  # the workload kind's words (record_workload_words)

    def title(self) -> str:
        return (
            f"{self.key} on {self.platform}"
            + (f", {self.heads} heads" if self.heads != 1 else "")
            + "".join(f", {word}" for word in self.workload)
        )


def _overrides(record: dict[str, Any]) -> dict[str, str]:
    pairs = (str(item).partition("=") for item in record.get("overrides", []))
    return {key: value for key, _, value in pairs}


def swept_axes(records: Iterable[dict[str, Any]]) -> list[Axis]:
    """Every parameter that takes at least two values while the other overrides stay equal."""
    ok = [r for r in records if "error" not in r]
    keys = sorted({key for r in ok for key in _overrides(r)})
    axes: list[Axis] = []
    for key in keys:
        groups: dict[tuple[Any, ...], list[tuple[str, dict[str, Any]]]] = {}
        for r in ok:
            overrides = _overrides(r)
            if key not in overrides:
                continue
            rest = tuple(sorted((k, v) for k, v in overrides.items() if k != key))
            platform = str(r.get("config", {}).get("platform", r.get("platform", "")))
            ident = (platform, int(r.get("heads", 1)), rest, tuple(record_workload_words(r)))
            groups.setdefault(ident, []).append((overrides[key], r))
        for (platform, heads, _rest, workload), points in groups.items():
            values = list(dict.fromkeys(value for value, _ in points))
            if len(values) < 2:
                continue
            numbers = [_numeric(v) for v in values]
            numeric = all(n is not None for n in numbers)
            if numeric:
                values = [v for _, v in sorted(zip(numbers, values, strict=True))]
            order = {value: i for i, value in enumerate(values)}
            lines: dict[tuple[str, int, int], list[tuple[str, dict[str, Any]]]] = {}
            for value, r in points:
                ident_line = (label_of(r), int(r["seq_len"]), int(r["head_dim"]))
                lines.setdefault(ident_line, []).append((value, r))
            series = tuple(
                SweptSeries(label, n, d, tuple(sorted(pts, key=lambda p: order[p[0]])))
                for (label, n, d), pts in sorted(lines.items(), key=lambda kv: (kv[0][2], kv[0][1]))
            )
            axes.append(Axis(key, platform, heads, tuple(values), numeric, series, workload))
    return axes


def time_ms(record: dict[str, Any]) -> float:
    return float(record["sim_time_ns"]) / 1e6


def offchip_mib(record: dict[str, Any]) -> float:
    return float(record["offchip_bytes"]["total"]) / 2**20


#: What the design-space table and plot show against the swept parameter: (name, unit, value).
METRICS: tuple[tuple[str, str, Callable[[dict[str, Any]], float]], ...] = (
    ("Simulated time", "ms", time_ms),
    ("Off-chip traffic", "MiB", offchip_mib),
)


def design_heading(axis: Axis) -> str:
    """The title of a swept parameter's report section (and the key of its figures)."""
    return f"Design space: {axis.title()}"


def axis_position(axis: Axis, value: str) -> float:
    """Where a value sits on the plot's x axis: its number, or its index for categories."""
    number = _numeric(value) if axis.numeric else None
    return number if number is not None else float(axis.values.index(value))
