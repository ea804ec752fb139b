"""Timeline excerpts for a sweep's report: one Perfetto timeline per dataflow.

For each dataflow of the grid, the smallest configuration (shortest N, then smallest d) runs
once more with the replayer recording a steady-state window, written to
``DIR/timelines/<dataflow>.json``; the report draws them as a Gantt excerpt.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from tlm_models.replay.replayer import TimelineWindow
from tlm_models.run.config import RunConfig
from tlm_models.run.cost import estimate_cost
from tlm_models.run.execute import run_one
from tlm_models.run.progress import SimulationProgress
from tlm_models.run.resolve import ResolvedRun, resolve_run
from tlm_models.run.worker import run_in_worker
from tlm_models.study.plots import TIMELINE_DIR
from tlm_models.terminal.phase import is_terminal

#: Past the start-up of every dataflow on the reference platform (first Q block loaded).
EXCERPT = TimelineWindow(start_ns=50_000.0, end_ns=60_000.0, max_entries=100_000)


def excerpt_configs(configs: Sequence[RunConfig]) -> list[RunConfig]:
    """Per dataflow (in grid order), its smallest configuration."""
    chosen: dict[str, RunConfig] = {}
    for config in configs:
        best = chosen.get(config.dataflow)
        if best is None or (config.seq_len, config.head_dim) < (best.seq_len, best.head_dim):
            chosen[config.dataflow] = config
    return list(chosen.values())


def write_timelines(configs: Sequence[RunConfig], out_dir: Path) -> list[Path]:
    """Writes the missing timeline excerpts; returns every excerpt file of the grid."""
    directory = out_dir / TIMELINE_DIR
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    chosen = excerpt_configs(configs)
    for index, config in enumerate(chosen):
        path = directory / f"{config.dataflow}.json"
        if not path.exists():
            label = f"timeline {index + 1}/{len(chosen)} ({config.dataflow})"
            run = resolve_run(config)
            progress = SimulationProgress(label, *_expected(run))
            try:
                run_in_worker(run_one, run, str(path), EXCERPT, progress=progress)
            finally:
                progress.close()
        paths.append(path)
    return paths


def _expected(run: ResolvedRun) -> tuple[int, float]:
    """Predicted operations and roofline time for the progress bar (0 when unknown)."""
    if not is_terminal(sys.stderr):
        return 0, 0.0  # nobody sees the bar: skip the estimate
    cost = estimate_cost(run)
    return cost.ops, cost.roofline_ns
