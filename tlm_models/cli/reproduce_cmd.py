"""``attn-tlm reproduce attenio``: the AttenIO paper's evaluation as a resumable study preset
(tlm_models/study/attenio_repro.py; docs/study.md, "Reproducing AttenIO")."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tlm_models.cli.commands import add_command
from tlm_models.cli.run_args import add_jobs_arg
from tlm_models.errors import UserError
from tlm_models.files.output_file import write_output
from tlm_models.study.job import DEFAULT_JOB, load_job

REPORT = "attenio-report.md"
FIGURE = "attenio-crossover.png"
SENSITIVITY_FIGURE = "attenio-sensitivity.png"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = add_command(subparsers, "reproduce")
    cmd.add_argument("study", choices=("attenio",))
    cmd.add_argument("--out", default="results/reproduce-attenio", metavar="DIR")
    cmd.add_argument(
        "--quick",
        action="store_true",
        help="N = 2K-4K (to 16K at d = 64), fewer points, sensitivity at 8K/64",
    )
    add_jobs_arg(cmd)
    cmd.add_argument("--job", default=DEFAULT_JOB, help=argparse.SUPPRESS)
    cmd.set_defaults(func=_reproduce)


def _reproduce(args: argparse.Namespace) -> int:
    from tlm_models.platform import load_platform
    from tlm_models.run.config import DEFAULT_PLATFORM, resolve_platform
    from tlm_models.run.resolve import resolve_run
    from tlm_models.study import attenio_repro as study
    from tlm_models.study.attenio_sensitivity import plot_tornado
    from tlm_models.study.executor_local import LocalExecutor
    from tlm_models.study.report import load_results
    from tlm_models.study.sweep import run_sweep

    if args.jobs is not None and args.jobs < 1:
        raise UserError(f"--jobs must be at least 1, found {args.jobs}")
    grid = study.QUICK if args.quick else study.FULL
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} exists and is not a directory")
    configs, unfit = [], []
    for config in study.study_configs(grid):
        try:
            resolve_run(config)
        except UserError as exc:  # e.g. the paper's FA2 tiles in a 64 KiB cache
            unfit.append((config, str(exc).splitlines()[0]))
            continue
        configs.append(config)
    summary = run_sweep(configs, out, job=load_job(args.job), executor=LocalExecutor(args.jobs))
    if summary.interrupted:
        return summary.exit_code
    info = load_platform(resolve_platform(DEFAULT_PLATFORM)).info()
    capacity = info.capacity_elements(2)
    macs_per_s = info.pe_rows * info.pe_cols * info.pe_clock_hz
    records = load_results(out)
    study.plot_crossover(records, grid, capacity, macs_per_s, out / FIGURE)
    index = {str(r["key"]): r for r in records}
    plot_tornado(index, grid.sensitivity, out / SENSITIVITY_FIGURE)
    report = out / REPORT
    text = study.render(records, grid, capacity, macs_per_s, FIGURE, SENSITIVITY_FIGURE)
    if unfit:
        text += "\n## Not run: the plan does not fit\n\n"
        text += "".join(f"- {c.label()} N = {c.seq_len}, d = {c.head_dim}, "
                        f"{' '.join(c.overrides)}: {why}\n" for c, why in unfit)  # fmt: skip
    write_output(report, text, "report")
    print(f"report: {report}", file=sys.stderr)
    return summary.exit_code
