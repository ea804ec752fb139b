"""Grid expansion: platforms x swept settings x dataflows x workloads.

The workload axes are batch sizes, query heads, K/V heads, query lengths Nq, key lengths Nk,
head dims and masks (docs/workloads.md); a model preset supplies the mask per Nk when none is
given (causal, or sliding within its window when the window is shorter than the keys).

``--set sram.capacity=64KiB,128KiB`` sweeps one platform parameter over its values; several
``--set`` keys form a cartesian product. ``--param approx.degree=1,2`` sweeps a dataflow
parameter for the named dataflow only (an unscoped ``--param degree=2`` applies to all).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tlm_models.errors import UserError
from tlm_models.run.config import (
    DATAFLOWS,
    DEFAULT_PLATFORM,
    RunConfig,
    parse_key_value,
)
from tlm_models.workload.spec import parse_mask

__all__ = [
    "GridSpec",
    "SweptSetting",
    "WorkloadFields",
    "expand_grid",
    "model_mask",
    "parse_swept_setting",
    "workload_fields",
]


@dataclass(frozen=True)
class SweptSetting:
    """One ``key=v1,v2,...`` sweep axis; ``key`` is a dotted parameter path."""

    key: str
    values: tuple[str, ...]


def parse_swept_setting(text: str, what: str = "--set") -> SweptSetting:
    """Parses ``"sram.capacity=64KiB,128KiB"`` into a key and its (distinct) values."""
    key, value_text = parse_key_value(text, what=f"{what} setting")
    values = tuple(value.strip() for value in value_text.split(","))
    if any(not value for value in values):
        raise UserError(f"{what} {text!r}: empty value in the list '{value_text}'")
    if len(set(values)) != len(values):
        raise UserError(f"{what} {text!r}: a value is listed twice")
    return SweptSetting(key, values)


@dataclass(frozen=True)
class GridSpec:
    """What a sweep covers; ``expand_grid`` turns it into configurations.

    ``heads`` is one query-head count or a tuple of them; ``kv_heads`` () means = heads,
    ``kv_lens`` () means = the query length; ``masks`` are texts (``none``, ``causal``,
    ``sliding:4096``), () meaning ``none`` or, with ``model_window`` >= 0 (a model preset),
    the model's mask for each Nk (``model_mask``).
    """

    dataflows: tuple[str, ...]
    seq_lens: tuple[int, ...]
    head_dims: tuple[int, ...]
    heads: int | tuple[int, ...] = 1
    platforms: tuple[str, ...] = (DEFAULT_PLATFORM,)
    settings: tuple[SweptSetting, ...] = ()
    params: tuple[SweptSetting, ...] = ()
    exact: bool = False  # no steady-state fast-forward
    batches: tuple[int, ...] = (1,)
    kv_heads: tuple[int, ...] = ()
    kv_lens: tuple[int, ...] = ()
    masks: tuple[str, ...] = ()
    phase: str = "prefill"
    layers: int = 1
    model: str = ""  # preset name or config.json label (a label in results)
    model_window: int = -1  # -1: no model; 0: a causal model; W: its sliding window


#: RunConfig's workload keyword arguments for one point of the grid.
WorkloadFields = dict[str, Any]


def model_mask(window: int, kv_len: int, seq_len: int) -> str:
    """A causal model's mask at ``seq_len`` queries against ``kv_len`` keys: ``sliding:W``
    when its window W is shorter than the keys, else ``causal`` (a window covering every key
    sees what causal sees), and ``none`` for one query row, the last, which sees every key."""
    if 0 < window < kv_len:
        return f"sliding:{window}"
    return "causal" if seq_len > 1 else "none"


def workload_fields(spec: GridSpec) -> list[WorkloadFields]:
    """Every workload of ``spec`` (batch, heads, K/V heads, Nq, Nk, d, mask: outer to inner),
    as RunConfig keyword arguments."""
    heads = (spec.heads,) if isinstance(spec.heads, int) else spec.heads
    for what, items in (("sequence length", spec.seq_lens), ("head dim", spec.head_dims)):
        if not items:
            raise UserError(f"a sweep needs at least one {what}")
    points: list[WorkloadFields] = []
    for batch, hq, hkv, nq, nk, d in itertools.product(
        spec.batches,
        heads,
        spec.kv_heads or (0,),
        spec.seq_lens,
        spec.kv_lens or (0,),
        spec.head_dims,
    ):
        keys = nk or nq
        if spec.masks:
            masks = spec.masks
        elif spec.model_window >= 0:
            masks = (model_mask(spec.model_window, keys, nq),)
        else:
            masks = ("none",)
        for text in masks:
            mask, window = parse_mask(text)
            points.append(
                {
                    "batch": batch,
                    "heads": hq,
                    "kv_heads": hkv,
                    "seq_len": nq,
                    "kv_len": nk,
                    "head_dim": d,
                    "mask": mask,
                    "window": window,
                    "phase": spec.phase,
                    "layers": spec.layers,
                    "model": spec.model,
                }
            )
    return points


#: The most configurations one sweep runs: each is a simulation in its own process (0.3 s at
#: the least, minutes for long sequences), so 100,000 are over 8 hours of one core even at
#: the least; a grid beyond it is almost always a mistyped list, and set-up alone (keys,
#: resume, CSV) would take minutes before the first result.
MAX_GRID_CONFIGS = 100_000


def expand_grid(spec: GridSpec) -> list[RunConfig]:
    """All configurations of ``spec`` in a fixed order (platforms outermost, then settings,
    dataflows, dataflow parameters, workloads); a bad workload is a UserError naming it."""
    for what, items in (("dataflow", spec.dataflows), ("platform", spec.platforms)):
        if not items:
            raise UserError(f"a sweep needs at least one {what}")
    points = workload_fields(spec)
    _check_unique("--set", [setting.key for setting in spec.settings])
    _check_unique("--param", [param.key for param in spec.params])
    params_by_dataflow = {df: _params_for(df, spec.params) for df in spec.dataflows}

    setting_values = [[f"{s.key}={value}" for value in s.values] for s in spec.settings]
    size = (
        len(spec.platforms)
        * math.prod(len(values) for values in setting_values)
        * sum(len(params_by_dataflow[dataflow]) for dataflow in spec.dataflows)
        * len(points)
    )
    if size > MAX_GRID_CONFIGS:
        raise UserError(
            f"the grid has {size:,} configurations, more than the {MAX_GRID_CONFIGS:,} one sweep "
            "may have; split it into several sweeps (several --out directories)"
        )
    configs: list[RunConfig] = []
    for platform in spec.platforms:
        for overrides in itertools.product(*setting_values):
            for dataflow in spec.dataflows:
                for extra in params_by_dataflow[dataflow]:
                    for point in points:
                        configs.append(
                            RunConfig.of(
                                dataflow=dataflow,
                                platform=platform,
                                overrides=tuple(overrides),
                                extra=extra,
                                exact=spec.exact,
                                **point,
                            )
                        )
    return configs


def _params_for(dataflow: str, params: Sequence[SweptSetting]) -> list[tuple[tuple[str, str], ...]]:
    """The dataflow-parameter combinations that apply to ``dataflow``."""
    axes: list[list[tuple[str, str]]] = []
    for param in params:
        scope, dot, name = param.key.partition(".")
        if dot and scope in DATAFLOWS:
            if scope != dataflow:
                continue
        else:
            name = param.key
        axes.append([(name, value) for value in param.values])
    return [tuple(combo) for combo in itertools.product(*axes)]


def _check_unique(option: str, keys: Sequence[str]) -> None:
    for key in keys:
        if keys.count(key) > 1:
            raise UserError(f"{option} {key}=... is given twice; list its values once: {key}=a,b,c")
