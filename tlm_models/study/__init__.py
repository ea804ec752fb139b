"""Attention studies: configurations, grids, resumable sweeps (local or Dask), reports, plots.

``RunConfig`` names one run; ``expand_grid`` builds a sweep's configurations; ``run_sweep``
runs them into a directory; ``write_report`` turns the directory into report.md and plots.
"""

from __future__ import annotations

from tlm_models.run.config import DATAFLOWS, DEFAULT_PLATFORM, RunConfig
from tlm_models.study.grid import GridSpec, SweptSetting, expand_grid
from tlm_models.study.report import write_report
from tlm_models.study.sweep import SweepSummary, run_sweep

__all__ = [
    "DATAFLOWS",
    "DEFAULT_PLATFORM",
    "GridSpec",
    "RunConfig",
    "SweepSummary",
    "SweptSetting",
    "expand_grid",
    "run_sweep",
    "write_report",
]
