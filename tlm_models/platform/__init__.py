"""Platforms from YAML: load, validate, override, inspect and elaborate.

`load_platform("platforms/attenio.yaml", overrides=["sram.capacity=256KiB"])` returns a
validated `PlatformConfig`, or raises `PlatformError` (a `UserError`) listing every problem.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from tlm_models.platform.loader import Diagnostic, Location, PlatformError, load_tree
from tlm_models.platform.overrides import apply_overrides
from tlm_models.platform.registry import (
    ComponentType,
    ExecutorSpec,
    ParamSpec,
    SocketSpec,
    register_component_type,
)
from tlm_models.platform.schema import ComponentConfig, PlatformConfig
from tlm_models.platform.validate import validate

__all__ = [
    "ComponentConfig",
    "ComponentType",
    "Diagnostic",
    "ExecutorSpec",
    "Location",
    "ParamSpec",
    "PlatformConfig",
    "PlatformError",
    "SocketSpec",
    "load_platform",
    "register_component_type",
]


def load_platform(path: str | os.PathLike[str], overrides: Iterable[str] = ()) -> PlatformConfig:
    """Reads, overrides (`component.param=value`) and validates a platform file."""
    tree = load_tree(path)
    if tree.root is None:
        raise PlatformError(tree.diagnostics)
    root, override_problems = apply_overrides(tree.root, overrides)
    return validate(root, os.fspath(path), [*tree.diagnostics, *override_problems])
