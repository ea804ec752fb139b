"""The points an exploration may visit: dataflow parameters x platform overrides.

``--vary KEY=SPEC`` names one axis. A dotted key (``pe.rows``, ``sram.capacity``) is a platform
parameter, set like ``--set``; a plain key (``stage``, ``br``) or ``DATAFLOW.key`` is a dataflow
``--param`` switch (``dataflows/variants.py``). SPEC is a list ``4,8,16`` or a range
``LO..HI`` that doubles from LO up to HI (``16..128`` is 16, 32, 64, 128; ``128KiB..4MiB`` is
128 KiB to 4 MiB), HI kept when the doubling steps over it.

``--space`` names a preset of dataflow parameters (``tiling_points``, ``variant_points``);
``--vary`` axes multiply it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tlm_models.dataflows.attenio import attenio_rows
from tlm_models.dataflows.variants import SWITCHES
from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo
from tlm_models.run.config import DATAFLOWS, parse_key_value
from tlm_models.units import UnitError, parse_count, parse_size
from tlm_models.workload.spec import Workload

__all__ = [
    "EXPLORED_DATAFLOWS",
    "PUBLISHED",
    "SPACES",
    "Axis",
    "ParamPoint",
    "combine",
    "parse_vary",
    "space_points",
    "tiling_points",
    "variant_points",
]

#: Dataflows with closed-form bytes and bounds (``prune.py``); approx's are of another kind.
EXPLORED_DATAFLOWS = tuple(name for name in DATAFLOWS if name != "approx")
#: ``--space`` presets: tiling (tile sizes), variants (the other switches), both, or neither.
SPACES = ("none", "tiling", "variants", "all")
#: Doubling a range this many times at the most (16..128 takes 3): a longer range is a typo.
MAX_RANGE_STEPS = 40
#: Switches that are not design choices (``scores`` names where lazy's counts come from).
_NOT_EXPLORED = {"scores"}
#: Switches the tiling preset sets (the variants preset leaves them).
_TILING_SWITCHES = {"attenio": {"rows", "stage"}, "flash2": {"tiling", "br", "bc"}}

#: A dataflow's ``--param`` values at one point, as (name, value) pairs in a fixed order.
ParamPoint = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Axis:
    """One ``--vary`` axis: a platform override (``platform``) or a dataflow switch, which
    ``dataflow`` limits to one dataflow ("" = every explored dataflow that has it)."""

    key: str
    values: tuple[str, ...]
    platform: bool
    dataflow: str = ""


def parse_vary(text: str, dataflows: Sequence[str]) -> Axis:
    """Parses one ``--vary`` value; UserError naming it for a bad key, range or list."""
    key, spec = parse_key_value(text, what="--vary axis")
    values = _values(key, spec, text)
    scope, dot, name = key.partition(".")
    if dot and scope in DATAFLOWS:
        _check_switch(scope, name, text)
        return Axis(name, values, platform=False, dataflow=scope)
    if dot:
        return Axis(key, values, platform=True)
    owners = [df for df in dataflows if any(s.name == key for s in SWITCHES.get(df, ()))]
    if not owners:
        known = sorted({s.name for df in dataflows for s in SWITCHES.get(df, ())} - _NOT_EXPLORED)
        raise UserError(
            f"--vary {text}: '{key}' is no --param of {', '.join(dataflows)} (they take "
            f"{', '.join(known) or 'none'}) and no platform parameter (component.parameter)"
        )
    return Axis(key, values, platform=False)


def _check_switch(dataflow: str, name: str, text: str) -> None:
    names = [s.name for s in SWITCHES.get(dataflow, ())]
    if name not in names:
        raise UserError(
            f"--vary {text}: {dataflow} has no --param '{name}' (it takes "
            f"{', '.join(names) or 'none'})"
        )


def _values(key: str, spec: str, text: str) -> tuple[str, ...]:
    lo, dots, hi = spec.partition("..")
    if dots:
        values = _doubling(lo.strip(), hi.strip(), text)
    else:
        values = tuple(v.strip() for v in spec.split(","))
        if any(not v for v in values):
            raise UserError(f"--vary {text}: an empty value in the list '{spec}'")
    if len(set(values)) != len(values):
        raise UserError(f"--vary {text}: a value is listed twice")
    return values


def _doubling(lo: str, hi: str, text: str) -> tuple[str, ...]:
    """LO, 2 LO, 4 LO, ... up to HI (HI itself last when the doubling steps over it)."""
    low, high, unit = _range_end(lo, text), _range_end(hi, text), _unit(lo)
    if unit != _unit(hi) and (unit == "") != (_unit(hi) == ""):
        raise UserError(f"--vary {text}: both ends need a unit, or neither ({lo!r}, {hi!r})")
    if low < 1 or high < low:
        raise UserError(f"--vary {text}: expected LO..HI with 0 < LO <= HI, found {lo}..{hi}")
    numbers = [low]
    while numbers[-1] * 2 <= high and len(numbers) <= MAX_RANGE_STEPS:
        numbers.append(numbers[-1] * 2)
    if len(numbers) > MAX_RANGE_STEPS:
        raise UserError(f"--vary {text}: more than {MAX_RANGE_STEPS} doublings from LO to HI")
    if numbers[-1] != high:
        numbers.append(high)
    return tuple(_format_size(n) if unit else str(n) for n in numbers)


def _unit(text: str) -> str:
    return text.lstrip("0123456789. ").strip()


def _range_end(text: str, whole: str) -> int:
    try:
        return parse_size(text) if _unit(text) else parse_count(text, "range end")
    except (UserError, UnitError) as exc:
        raise UserError(f"--vary {whole}: {exc}") from None


def _format_size(nbytes: int) -> str:
    """The largest binary unit that states ``nbytes`` exactly (``4MiB``, ``384KiB``)."""
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes % factor == 0:
            return f"{nbytes // factor}{unit}"
    return f"{nbytes}B"


#: The tiling preset's grids: AttenIO's a in steps of this many rows (one pass of a 64-row
#: array's broadcast score matmul per step at d = 64), its staging depths, and FA2's Br and
#: Bc as powers of two between these ends.
ATTENIO_ROW_STEP = 64
ATTENIO_STAGES = (1, 2, 4, 8)
FLASH2_BR = (16, 2048)
FLASH2_BC = (16, 4096)


def _powers(lo: int, hi: int) -> list[int]:
    return [1 << k for k in range(lo.bit_length() - 1, hi.bit_length()) if lo <= 1 << k <= hi]


def tiling_points(dataflow: str, w: Workload, p: PlatformInfo) -> list[ParamPoint]:
    """Tile sizes worth comparing. AttenIO: every staging depth of ``ATTENIO_STAGES`` with the
    analytic a (``rows=auto``, the most that fit) and with a = 64, 128, ... below the most
    that fit at stage 1 (b = 1 is the dataflow itself: larger K/V tiles are FA2's Bc).
    FlashAttention-2: the paper's and the fitted tiles (``tiling=paper``, ``fit``) and every
    power-of-two Br x Bc of ``FLASH2_BR`` x ``FLASH2_BC`` (points that do not fit are
    dropped by the closed forms). Other dataflows size their tiles from M alone: no points."""
    if dataflow == "attenio":
        m = p.capacity_elements(w.elem_bytes)
        widest = attenio_rows(w, m, 1)
        rows = ["auto", *(str(a) for a in range(ATTENIO_ROW_STEP, widest, ATTENIO_ROW_STEP))]
        return [(("stage", str(s)), ("rows", r)) for s in ATTENIO_STAGES for r in rows]
    if dataflow == "flash2":
        named: list[ParamPoint] = [(("tiling", "paper"),), (("tiling", "fit"),)]
        heights = _powers(*FLASH2_BR)
        widths = _powers(*FLASH2_BC)
        return named + [(("br", str(br)), ("bc", str(bc))) for br in heights for bc in widths]
    return []


def variant_points(dataflow: str) -> list[ParamPoint]:
    """Every combination of the dataflow's named choices (overlap, rescale, spill, ...), the
    tile switches left to the tiling preset."""
    switches = [
        s
        for s in SWITCHES.get(dataflow, ())
        if s.choices
        and s.name not in _NOT_EXPLORED
        and s.name not in _TILING_SWITCHES.get(dataflow, set())
    ]
    return [
        tuple(zip((s.name for s in switches), combo, strict=True))
        for combo in itertools.product(*(s.choices for s in switches))
    ]


def space_points(space: str, dataflow: str, w: Workload, p: PlatformInfo) -> list[ParamPoint]:
    """The preset's points of ``dataflow`` (one empty point when it sets nothing)."""
    tiles = tiling_points(dataflow, w, p) if space in ("tiling", "all") else []
    variants = variant_points(dataflow) if space in ("variants", "all") else []
    if tiles and variants:
        return [t + v for t in tiles for v in variants]
    return tiles or variants or [()]


def combine(dataflow: str, preset: Iterable[ParamPoint], axes: Sequence[Axis]) -> list[ParamPoint]:
    """The preset's points times the ``--vary`` switch axes that apply to ``dataflow``; an axis
    naming a switch the preset sets replaces the preset's value."""
    mine = [
        a
        for a in axes
        if not a.platform
        and (a.dataflow == dataflow or not a.dataflow)
        and any(s.name == a.key for s in SWITCHES.get(dataflow, ()))
    ]
    out: dict[ParamPoint, None] = {}
    for base in preset:
        kept = tuple((k, v) for k, v in base if all(a.key != k for a in mine))
        for combo in itertools.product(*(a.values for a in mine)):
            point = kept + tuple((a.key, v) for a, v in zip(mine, combo, strict=True))
            out[point] = None
    return list(out)


#: The published tilings a tiling study compares against: AttenIO's analytic a (b = 1) at the
#: model's default staging depth, and the FA2 tiles the AttenIO paper used.
PUBLISHED: dict[str, dict[str, str]] = {
    "attenio": {"stage": "2", "rows": "auto"},
    "flash2": {"tiling": "paper"},
}
