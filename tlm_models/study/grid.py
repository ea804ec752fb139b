"""Grid expansion: platforms x swept settings x dataflows x sequence lengths x head dims.

``--set sram.capacity=64KiB,128KiB`` sweeps one platform parameter over its values; several
``--set`` keys form a cartesian product. ``--param approx.degree=1,2`` sweeps a dataflow
parameter for the named dataflow only (an unscoped ``--param degree=2`` applies to all).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from tlm_models.errors import UserError
from tlm_models.study.config import (
    DATAFLOWS,
    DEFAULT_PLATFORM,
    RunConfig,
    parse_key_value,
)

__all__ = ["GridSpec", "SweptSetting", "expand_grid", "parse_swept_setting"]


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
    """What a sweep covers; ``expand_grid`` turns it into configurations."""

    dataflows: tuple[str, ...]
    seq_lens: tuple[int, ...]
    head_dims: tuple[int, ...]
    heads: int = 1
    platforms: tuple[str, ...] = (DEFAULT_PLATFORM,)
    settings: tuple[SweptSetting, ...] = ()
    params: tuple[SweptSetting, ...] = ()
    exact: bool = False  # no steady-state fast-forward


def expand_grid(spec: GridSpec) -> list[RunConfig]:
    """All configurations of ``spec`` in a fixed order (platforms outermost, head dims inner)."""
    for what, items in (
        ("dataflow", spec.dataflows),
        ("sequence length", spec.seq_lens),
        ("head dim", spec.head_dims),
        ("platform", spec.platforms),
    ):
        if not items:
            raise UserError(f"a sweep needs at least one {what}")
    _check_unique("--set", [setting.key for setting in spec.settings])
    _check_unique("--param", [param.key for param in spec.params])
    params_by_dataflow = {df: _params_for(df, spec.params) for df in spec.dataflows}

    setting_values = [[f"{s.key}={value}" for value in s.values] for s in spec.settings]
    configs: list[RunConfig] = []
    for platform in spec.platforms:
        for overrides in itertools.product(*setting_values):
            for dataflow in spec.dataflows:
                for extra in params_by_dataflow[dataflow]:
                    for seq_len in spec.seq_lens:
                        for head_dim in spec.head_dims:
                            configs.append(
                                RunConfig(
                                    dataflow=dataflow,
                                    seq_len=seq_len,
                                    head_dim=head_dim,
                                    heads=spec.heads,
                                    platform=platform,
                                    overrides=tuple(overrides),
                                    extra=extra,
                                    exact=spec.exact,
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
