"""Timeline pictures for docs/dataflows.md: a few microseconds of each dataflow on each engine.

Runs every dataflow at N = 8K, d = 64 on platforms/attenio.yaml with the replayer recording a
steady-state window, keeps the Perfetto JSON under results/doc-timelines/ and draws one PNG per
dataflow into docs/img/.

    .venv/bin/python tools/dataflow_timelines.py
"""

from __future__ import annotations

from pathlib import Path

from tlm_models.replay.replayer import TimelineWindow
from tlm_models.run.config import RunConfig
from tlm_models.run.execute import run_one
from tlm_models.run.worker import run_in_worker
from tlm_models.study.plots import plot_timelines

ROOT = Path(__file__).resolve().parent.parent
DATAFLOWS = ("standard", "flat", "flash2", "attenio")
WINDOW = TimelineWindow(start_ns=50_000.0, end_ns=55_000.0, max_entries=50_000)


def main() -> None:
    traces = ROOT / "results" / "doc-timelines"
    images = ROOT / "docs" / "img"
    traces.mkdir(parents=True, exist_ok=True)
    images.mkdir(parents=True, exist_ok=True)
    for dataflow in DATAFLOWS:
        trace = traces / f"{dataflow}.json"
        run_in_worker(run_one, RunConfig.of(dataflow, 8192, 64), str(trace), WINDOW)
        png = images / f"timeline-{dataflow}.png"
        plot_timelines([trace], png)
        png.with_suffix(".svg").unlink()  # the docs use the PNG
        print(png.relative_to(ROOT))


if __name__ == "__main__":
    main()
