"""A platform's area and leakage, from the area model (``tlm_models.platform.area``).

The area model's entry point is ``estimate.platform_area(platform) -> AreaReport`` with
``total_mm2``, ``leakage_w`` and ``components``; it is imported when first needed, so an
exploration that asks for neither area nor power runs without it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from tlm_models.errors import UserError
from tlm_models.platform import PlatformConfig

__all__ = ["AREA_MODULE", "AreaFigures", "area_available", "area_of"]

AREA_MODULE = "tlm_models.platform.area.estimate"


@dataclass(frozen=True)
class AreaFigures:
    """What the exploration uses of an area report."""

    total_mm2: float
    leakage_w: float


def _estimator() -> Any:
    try:
        module = importlib.import_module(AREA_MODULE)
    except ImportError:
        return None
    return getattr(module, "platform_area", None)


def area_available() -> bool:
    """True when the area model is installed in this tree."""
    return _estimator() is not None


def area_of(platform: PlatformConfig) -> AreaFigures:
    """The platform's total area (mm^2) and leakage (W); UserError when there is no model."""
    estimator = _estimator()
    if estimator is None:
        raise UserError(
            f"area and power need the area model ({AREA_MODULE}.platform_area), which this "
            "installation does not have"
        )
    report = estimator(platform)
    return AreaFigures(float(report.total_mm2), float(report.leakage_w))
