"""The typed result of one run: ``RunResult`` and its parts, with ``to_dict`` / ``from_dict``.

These dataclasses are the one declaration of the result JSON (schema ``attn-tlm.result/1``,
docs/study.md): the JSON Schema file shipped with the package
(``tlm_models/schemas/result.schema.json``) is generated from them
(``tlm_models.result_schema``), and a test keeps the file and the classes equal.

Identity fields (dataflow, workload, platform, element width) are stored once, at the top level.
Adding a section (e.g. ``energy``) is one typed field with a default of ``None`` on
``RunResult`` (a dataclass of its own when it has structure), then regenerating the schema file;
a section this version does not declare is kept in ``sections`` and written back unchanged.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Union

from tlm_models.energy.figures import EnergyFigures
from tlm_models.errors import UserError
from tlm_models.result import SCHEMA

__all__ = [
    "ExpFigures",
    "OffchipBytes",
    "PeFigures",
    "RunResult",
    "TensorBytes",
]


@dataclass(frozen=True)
class OffchipBytes:
    """Bytes moved between off-chip memory and the chip."""

    read: int
    write: int
    total: int


@dataclass(frozen=True)
class TensorBytes:
    """Off-chip bytes of one tensor (Q, K, V, O, S/P, statistics)."""

    read: int
    write: int


@dataclass(frozen=True)
class PeFigures:
    """PE array use: busy time / sim time; MACs done / (MACs per cycle x cycles)."""

    busy_fraction: float
    mac_utilization: float | None
    macs: int
    #: busy ns by kind of work, idle ns by cause, idle_no_work ns (result.time_breakdown)
    time: dict[str, Any] | None = field(default=None, metadata={"omit_if_none": True})


@dataclass(frozen=True)
class ExpFigures:
    """Exp unit use: busy time / sim time; exps done / (lanes x cycles)."""

    busy_fraction: float
    lane_utilization: float | None
    exps: int
    #: busy ns by kind of work, idle ns by cause, idle_no_work ns (result.time_breakdown)
    time: dict[str, Any] | None = field(default=None, metadata={"omit_if_none": True})


#: Field metadata of a section present only on some results: ``None`` here, absent from the JSON.
_SECTION = {"omit_if_none": True}


@dataclass(frozen=True)
class RunResult:
    """One simulated run. Times in ns (``*_ns``) or host seconds (``*_s``), bytes, fractions."""

    schema: str
    dataflow: str
    platform: str  # the platform file (or label) as given
    platform_name: str
    overrides: list[str]
    tiling: dict[str, Any]  # the dataflow's tile parameters (numbers, names, lists)
    sim_time_ns: float
    offchip_bytes: OffchipBytes
    offchip_bytes_per_tensor: dict[str, TensorBytes]
    pe: PeFigures
    exp: ExpFigures
    memory_stall_fraction: float | None
    overlap_efficiency: float | None
    exposed_io_ns: float
    io_active_ns: float
    compute_active_ns: float
    stalls: dict[str, dict[str, float]]  # engine -> cause -> ns
    ops: int
    wall_s: float
    ops_per_s: float | None
    # The workload and derived figures of an emitted run (a replayed trace file has its own).
    seq_len: int | None = field(default=None, metadata=_SECTION)
    head_dim: int | None = field(default=None, metadata=_SECTION)
    heads: int | None = field(default=None, metadata=_SECTION)  # query heads Hq per sequence
    batch: int | None = field(default=None, metadata=_SECTION)  # sequences B
    kv_heads: int | None = field(default=None, metadata=_SECTION)  # K/V heads Hkv per sequence
    kv_len: int | None = field(default=None, metadata=_SECTION)  # keys Nk per sequence
    mask: str | None = field(default=None, metadata=_SECTION)  # none, causal or sliding
    window: int | None = field(default=None, metadata=_SECTION)  # sliding window, keys
    phase: str | None = field(default=None, metadata=_SECTION)  # prefill or decode
    model: str | None = field(default=None, metadata=_SECTION)  # preset or config.json
    layers: int | None = field(default=None, metadata=_SECTION)  # layers L of the model run
    all_layers: dict[str, float] | None = field(
        default=None, metadata=_SECTION
    )  # L layers back to back, one simulated: time (ns), bytes, MACs, exps, energy (J) x L
    elem_bytes: int | None = field(default=None, metadata=_SECTION)  # bytes per element
    capacity_elements: int | None = field(
        default=None, metadata=_SECTION
    )  # on-chip capacity M in elements
    bounds: dict[str, float] | None = field(
        default=None, metadata=_SECTION
    )  # closed form and lower bounds, bytes
    params: dict[str, str] | None = field(
        default=None, metadata=_SECTION
    )  # every dataflow --param in effect, given or default (dataflows/variants.py)
    approx_error: dict[str, float] | None = field(
        default=None, metadata=_SECTION
    )  # approx runs: error vs softmax
    replay_wall_s: float | None = field(default=None, metadata=_SECTION)
    fast_forward: dict[str, Any] | None = field(
        default=None, metadata=_SECTION
    )  # loop iterations extrapolated rather than simulated (docs/runtime.md)
    peaks: dict[str, float] | None = field(
        default=None, metadata=_SECTION
    )  # the platform's peak MAC/s, exp/s and off-chip bytes/s (tlm_models.diagnosis)
    resources: dict[str, dict[str, Any]] | None = field(
        default=None, metadata=_SECTION
    )  # each resource's busiest component and its use of capacity (tlm_models.resource_use)
    diagnosis: dict[str, Any] | None = field(
        default=None, metadata=_SECTION
    )  # verdict, bottleneck sentence, hints, roofline point (tlm_models.diagnosis)
    trace: str | None = field(default=None, metadata=_SECTION)  # a replayed trace file
    trace_format: str | None = field(default=None, metadata=_SECTION)
    energy: EnergyFigures | None = field(default=None, metadata=_SECTION)  # docs/energy.md
    #: Chip area (mm^2) at the platform's `technology:`; null without one (docs/models/area.md).
    area_mm2: float | None = field(default=None, metadata=_SECTION)
    tiles: dict[str, Any] | None = field(
        default=None, metadata=_SECTION
    )  # tiled platforms: chip and per-tile figures (docs/models/tiles.md)
    #: Sections this version does not declare, kept as they came.
    sections: dict[str, Any] = field(default_factory=dict, metadata={"spread": True})

    def to_dict(self) -> dict[str, Any]:
        """The result JSON (the same keys ``attn-tlm run --json`` prints)."""
        out = _to_json(self)
        assert isinstance(out, dict)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunResult:
        """Reads a result JSON (e.g. a results.jsonl line); ``UserError`` says what is wrong."""
        if data.get("schema") != SCHEMA:
            raise UserError(f"not a {SCHEMA} result (schema: {data.get('schema')!r})")
        result: RunResult = _from_json(cls, data, "result")
        return result


def _to_json(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if f.metadata.get("spread"):
                out.update(item)
            elif not (item is None and f.metadata.get("omit_if_none")):
                out[f.name] = _to_json(item)
        return out
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    return value


def _is_union(tp: object) -> bool:
    return typing.get_origin(tp) in (Union, types.UnionType)


def _matches(tp: Any, value: object) -> bool:
    if tp is type(None):
        return value is None
    if tp is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp in (str, bool):
        return isinstance(value, tp)
    return isinstance(value, typing.get_origin(tp) or tp) or dataclasses.is_dataclass(tp)


def _from_json(tp: Any, value: Any, where: str) -> Any:
    """``value`` read as type ``tp`` (dataclasses, dicts, lists, unions of scalars)."""
    if tp is Any:
        return value
    if _is_union(tp):
        for option in typing.get_args(tp):
            if _matches(option, value):
                return _from_json(option, value, where)
        raise UserError(f"{where}: expected {tp}, found {value!r}")
    origin = typing.get_origin(tp)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise UserError(f"{where}: expected an object, found {value!r}")
        hints = typing.get_type_hints(tp)
        kwargs: dict[str, Any] = {}
        known = set()
        for f in dataclasses.fields(tp):
            known.add(f.name)
            if f.metadata.get("spread"):
                continue
            if f.name in value:
                kwargs[f.name] = _from_json(hints[f.name], value[f.name], f"{where}.{f.name}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise UserError(f"{where}: missing key '{f.name}'")
        spread = [f.name for f in dataclasses.fields(tp) if f.metadata.get("spread")]
        if spread:
            kwargs[spread[0]] = {k: v for k, v in value.items() if k not in known}
        return tp(**kwargs)
    if origin is dict:
        if not isinstance(value, dict):
            raise UserError(f"{where}: expected an object, found {value!r}")
        item_type = typing.get_args(tp)[1]
        return {k: _from_json(item_type, v, f"{where}.{k}") for k, v in value.items()}
    if origin is list:
        if not isinstance(value, list):
            raise UserError(f"{where}: expected a list, found {value!r}")
        item_type = typing.get_args(tp)[0]
        return [_from_json(item_type, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if not _matches(tp, value):
        raise UserError(f"{where}: expected {tp.__name__}, found {value!r}")
    return float(value) if tp is float else value
