"""Resolve once, in the caller: a run request becomes one typed, validated ``ResolvedRun``.

Everything a user can get wrong is checked here, before any worker starts: the platform file
and its ``--set`` overrides (a typo comes back with a did-you-mean in well under a second), the
element width the PE array and Exp unit agree on, the workload against that width, the
dataflow's parameters, and whether its tiling fits on chip. The derived figures (element width,
on-chip capacity M) are computed here once; workers only elaborate and replay.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tlm_models.dataflows import check_dataflow_params
from tlm_models.dataflows.approx import approx_params, check_feature_count
from tlm_models.dataflows.io_formulas import TRAFFIC, approx_traffic, tiled_block_count
from tlm_models.dataflows.partition import check_tiled
from tlm_models.errors import UserError
from tlm_models.platform import load_platform
from tlm_models.platform.info import PlatformInfo
from tlm_models.platform.schema import PlatformConfig
from tlm_models.run.config import RunConfig
from tlm_models.workload.spec import Workload, check_element_width, check_supported

__all__ = ["ResolvedRun", "resolve_run", "resolve_runs"]


@dataclass(frozen=True)
class ResolvedRun:
    """One run, resolved: the request (``config``, its identity) and everything derived from it.

    Plain data (picklable), so it crosses into a worker process as is.
    """

    config: RunConfig
    platform: PlatformConfig  # validated, overrides applied
    info: PlatformInfo
    workload: Workload  # its element width is the platform's
    params: dict[str, str] = field(default_factory=dict)  # dataflow parameters

    @property
    def elem_bytes(self) -> int:
        """Bytes per element: one width for tiling, off-chip bytes and the engines."""
        return self.workload.elem_bytes

    @property
    def capacity_elements(self) -> int:
        """On-chip capacity M in elements at that width."""
        return self.info.capacity_elements(self.elem_bytes)


def _check_plan(
    dataflow: str, workload: Workload, info: PlatformInfo, params: Mapping[str, str]
) -> None:
    """Computes the dataflow's tiling (closed form): a plan that does not fit fails here."""
    if dataflow in TRAFFIC:
        TRAFFIC[dataflow](workload, info, params)
    elif dataflow == "approx":
        # A run plans and emits every feature: too many are refused before any plan is built.
        check_feature_count(workload.head_dim, approx_params(params).degree)
        approx_traffic(workload, info, params)


def resolve_run(
    config: RunConfig,
    *,
    elem_bytes: int | None = None,
    platform: PlatformConfig | None = None,
) -> ResolvedRun:
    """Validates ``config`` and derives what the worker needs; raises ``UserError`` naming the
    first problem. ``elem_bytes`` is the workload's element width (default: the platform's; a
    different one is refused). ``platform`` skips loading when the caller has it already."""
    if platform is None:
        platform = load_platform(config.platform_path(), config.overrides)
    info = platform.info()
    workload = config.workload.at_width(info.elem_bytes if elem_bytes is None else elem_bytes)
    check_element_width(workload, info)
    check_supported(config.dataflow, workload)
    params = dict(config.extra)
    check_dataflow_params(config.dataflow, params)
    _check_plan(config.dataflow, workload, info, params)
    if platform.tiles is not None:
        by_rows = workload.dense or config.dataflow == "approx"  # approx: whole K/V groups
        blocks = None if by_rows else tiled_block_count(config.dataflow, workload, info, params)
        check_tiled(config.dataflow, workload, platform.tile_count, blocks)
    return ResolvedRun(
        config=config, platform=platform, info=info, workload=workload, params=params
    )


def resolve_runs(configs: Iterable[RunConfig]) -> list[ResolvedRun]:
    """Resolves every configuration of a sweep (each platform/override set loaded once); the
    first bad one raises ``UserError`` naming its configuration, so nothing runs."""
    platforms: dict[tuple[str, tuple[str, ...]], PlatformConfig] = {}
    resolved: list[ResolvedRun] = []
    for config in configs:
        key = (config.platform, config.overrides)
        try:
            if key not in platforms:
                platforms[key] = load_platform(config.platform_path(), config.overrides)
            resolved.append(resolve_run(config, platform=platforms[key]))
        except UserError as exc:
            raise UserError(f"{exc}\n  in configuration: {config.key()}") from None
    return resolved
