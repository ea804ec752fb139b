"""Objectives, constraints and Pareto dominance (every objective is minimized)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, SupportsFloat

from tlm_models.errors import UserError
from tlm_models.units import UnitError, parse_power, parse_size, parse_time

__all__ = [
    "OBJECTIVES",
    "Constraints",
    "Measured",
    "dominates",
    "front",
    "parse_area",
    "parse_constraints",
    "parse_objectives",
]

#: Objective name -> (unit shown, description). All are minimized.
OBJECTIVES: dict[str, tuple[str, str]] = {
    "time": ("ms", "simulated time"),
    "energy": ("mJ", "dynamic energy + leakage x time"),
    "edp": ("mJ ms", "energy x time"),
    "area": ("mm^2", "the platform's area"),
    "bytes": ("MiB", "off-chip bytes"),
}


@dataclass(frozen=True)
class Measured:
    """One simulated point's figures in SI units (seconds, joules, watts, mm^2, bytes)."""

    time_s: float
    energy_j: float
    power_w: float
    bytes: int
    area_mm2: float | None

    def value(self, objective: str) -> float:
        return objective_value(objective, self.time_s, self.energy_j, self.bytes, self.area_mm2)

    @classmethod
    def of_record(
        cls, record: dict[str, Any], area_mm2: float | None, leakage_w: float | None
    ) -> Measured:
        """A result record's figures; with the area model's leakage, energy is the run's
        dynamic energy plus that leakage over the simulated time (the energy tables' own static
        part is left out so leakage is never counted twice)."""
        time_s = float(record["sim_time_ns"]) * 1e-9
        energy = record.get("energy") or {}
        if leakage_w is None:
            joules = float(energy.get("total_j", 0.0))
        else:
            joules = float(energy.get("dynamic_j", 0.0)) + leakage_w * time_s
        power = joules / time_s if time_s > 0 else 0.0
        return cls(time_s, joules, power, int(record["offchip_bytes"]["total"]), area_mm2)


def objective_value(
    objective: str, time_s: float, energy_j: float, nbytes: float, area_mm2: float | None
) -> float:
    """The objective from its parts (the bounds of ``prune.py`` go through here too)."""
    if objective == "time":
        return time_s
    if objective == "energy":
        return energy_j
    if objective == "edp":
        return energy_j * time_s
    if objective == "bytes":
        return float(nbytes)
    if area_mm2 is None:
        raise UserError("objective area needs the area model")
    return area_mm2


def parse_objectives(text: str) -> tuple[str, ...]:
    """``time`` or ``time,energy``: known, distinct names (several give a Pareto front)."""
    names = tuple(n.strip() for n in text.split(","))
    for name in names:
        if name not in OBJECTIVES:
            raise UserError(
                f"--objective: unknown objective {name!r} (expected a comma-separated list of "
                f"{', '.join(OBJECTIVES)})"
            )
    if len(set(names)) != len(names):
        raise UserError(f"--objective: an objective is listed twice in {text!r}")
    return names


_AREA = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(mm2|mm\^2|mm²|um2|um\^2|µm2)\s*$")


def parse_area(text: str) -> float:
    """mm^2 from ``4mm2``, ``4 mm^2``, ``3.5 mm²`` or ``500000 um2``."""
    match = _AREA.match(text)
    if match is None or float(match.group(1)) <= 0:
        raise UserError(
            f"--max-area: expected a positive area such as 4mm2 or 4 mm^2, found {text!r}"
        )
    scale = 1.0 if match.group(2).startswith("mm") else 1e-6
    return float(match.group(1)) * scale


@dataclass(frozen=True)
class Constraints:
    """Upper limits (None: none): area mm^2, power W, time s, off-chip bytes."""

    max_area_mm2: float | None = None
    max_power_w: float | None = None
    max_time_s: float | None = None
    max_bytes: int | None = None

    @property
    def needs_area(self) -> bool:
        return self.max_area_mm2 is not None or self.max_power_w is not None

    def violated(self, m: Measured) -> str:
        """Which limit a simulated point breaks ("" when none)."""
        checks: list[tuple[float | None, float | None, str, Callable[[float], str]]] = [
            (self.max_area_mm2, m.area_mm2, "area", lambda v: f"{v:.3f} mm^2"),
            (self.max_power_w, m.power_w, "power", lambda v: f"{v:.3f} W"),
            (self.max_time_s, m.time_s, "time", lambda v: f"{v * 1e3:.3f} ms"),
            (self.max_bytes, float(m.bytes), "bytes", lambda v: f"{v / 2**20:.1f} MiB"),
        ]
        for limit, value, what, show in checks:
            if limit is not None and value is not None and value > limit:
                return f"{what} {show(value)} > {show(limit)}"
        return ""


def _parse_with(
    flag: str, text: str | None, parse: Callable[[str], SupportsFloat], example: str
) -> float | None:
    if text is None:
        return None
    try:
        value = float(parse(text))
    except (UserError, UnitError):
        raise UserError(f"{flag}: expected {example}, found {text!r}") from None
    if value <= 0:
        raise UserError(f"{flag}: expected a positive limit such as {example}, found {text!r}")
    return value


def parse_constraints(
    area: str | None, power: str | None, time: str | None, nbytes: str | None
) -> Constraints:
    """The ``--max-*`` options; each bad one is a one-line error naming its flag."""
    max_bytes = _parse_with("--max-bytes", nbytes, parse_size, "a size such as 512MiB")
    return Constraints(
        max_area_mm2=None if area is None else parse_area(area),
        max_power_w=_parse_with("--max-power", power, parse_power, "a power such as 5W or 500mW"),
        max_time_s=_parse_with(
            "--max-time", time, lambda t: parse_time(t) * 1e-12, "a time such as 200ms or 1.5s"
        ),
        max_bytes=None if max_bytes is None else int(max_bytes),
    )


def dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    """``a`` is no worse than ``b`` in every objective and better in one."""
    return all(x <= y for x, y in zip(a, b, strict=True)) and any(
        x < y for x, y in zip(a, b, strict=True)
    )


def weakly_dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    """``a`` is no worse than ``b`` in every objective (``b`` cannot improve on ``a``)."""
    return all(x <= y for x, y in zip(a, b, strict=True))


def front(points: Sequence[tuple[str, Sequence[float]]]) -> list[str]:
    """The keys of the points no other point dominates (equal vectors: the first), in the
    order of the first objective."""
    kept: list[tuple[str, Sequence[float]]] = []
    for key, vec in sorted(points, key=lambda p: tuple(p[1])):
        if any(weakly_dominates(other, vec) for _, other in kept):
            continue
        kept.append((key, vec))
    return [key for key, _ in kept]
