"""``attn-tlm sweep`` and ``attn-tlm report``: run a grid of attention studies and report it."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from tlm_models.cli.commands import add_command
from tlm_models.cli.run_args import add_exact_arg, add_jobs_arg
from tlm_models.cli.workload_args import add_workload_args, workload_grid
from tlm_models.errors import UserError
from tlm_models.run.config import DATAFLOWS, DEFAULT_PLATFORM, parse_dataflows, resolve_platform
from tlm_models.run.cost import predicted_run_s
from tlm_models.run.resolve import resolve_runs
from tlm_models.study.grid import GridSpec, expand_grid, parse_swept_setting
from tlm_models.study.job import DEFAULT_JOB, load_job
from tlm_models.study.report import write_report
from tlm_models.study.report_html import HTML_FILE
from tlm_models.study.sweep import SweepExecutor, run_sweep
from tlm_models.terminal.phase import phase


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sweep = add_command(subparsers, "sweep")
    sweep.add_argument(
        "--platform",
        action="append",
        metavar="FILE",
        help=f"platform YAML; repeat to sweep platforms (default {DEFAULT_PLATFORM})",
    )
    sweep.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=V[,V...]",
        dest="settings",
        help="platform parameter override; a list of values sweeps it "
        "(e.g. sram.capacity=256KiB,512KiB); several --set form a cartesian product",
    )
    sweep.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="[DATAFLOW.]NAME=V[,V...]",
        dest="params",
        help="dataflow parameter, swept like --set; prefix a dataflow to limit it to that "
        "dataflow (e.g. approx.degree=1,2)",
    )
    sweep.add_argument(
        "--dataflows",
        required=True,
        metavar="LIST",
        help=f"comma-separated: {', '.join(DATAFLOWS)}, or all",
    )
    add_workload_args(sweep, lists=True)
    add_jobs_arg(sweep)
    sweep.add_argument(
        "--executor",
        choices=("local", "dask"),
        default="local",
        help="where simulations run: this machine, or a Dask cluster (needs --scheduler)",
    )
    sweep.add_argument(
        "--scheduler", metavar="ADDR", help="Dask scheduler address, e.g. tcp://10.0.0.5:8786"
    )
    sweep.add_argument(
        "--retry-failed",
        action="store_true",
        help="run recorded failures again (finished results are always kept)",
    )
    sweep.add_argument("--no-report", action="store_true", help="skip report.md and plots")
    sweep.add_argument(
        "--timelines",
        action="store_true",
        help="also record a Perfetto timeline excerpt per dataflow (DIR/timelines/) "
        "for the report's Gantt picture",
    )
    sweep.add_argument("--out", required=True, metavar="DIR", help="sweep directory")
    add_exact_arg(sweep)
    # The simulation function, replaceable for testing the sweep machinery on its own.
    sweep.add_argument("--job", default=DEFAULT_JOB, help=argparse.SUPPRESS)
    sweep.set_defaults(func=_sweep)

    report = add_command(subparsers, "report")
    report.add_argument("dir", metavar="DIR", help="sweep directory (holds results.jsonl)")
    report.add_argument("--no-plots", action="store_true", help="write report.md only")
    report.add_argument(
        "--open", action="store_true", help="open report.html in the web browser afterwards"
    )
    report.set_defaults(func=_report)


def grid_of(args: argparse.Namespace) -> GridSpec:
    """The sweep grid named by the command-line arguments."""
    return replace(
        workload_grid(args, lists=True),
        dataflows=parse_dataflows(args.dataflows),
        platforms=tuple(args.platform or (DEFAULT_PLATFORM,)),
        settings=tuple(parse_swept_setting(text, "--set") for text in args.settings),
        params=tuple(parse_swept_setting(text, "--param") for text in args.params),
        exact=args.exact,
    )


def executor_of(args: argparse.Namespace) -> SweepExecutor:
    if args.jobs is not None and args.jobs < 1:
        raise UserError(f"--jobs must be at least 1, found {args.jobs}")
    if args.executor == "dask":
        if not args.scheduler:
            raise UserError("--executor dask needs --scheduler ADDR (e.g. tcp://127.0.0.1:8786)")
        if args.jobs is not None:
            raise UserError(
                "--jobs applies to --executor local; on Dask, each worker's --nthreads sets "
                "how many simulations it runs at a time"
            )
        from tlm_models.study.executor_dask import DaskExecutor

        return DaskExecutor(args.scheduler)
    if args.scheduler:
        raise UserError("--scheduler is only used with --executor dask")
    from tlm_models.study.executor_local import LocalExecutor

    return LocalExecutor(args.jobs)


def _sweep(args: argparse.Namespace) -> int:
    configs = expand_grid(grid_of(args))
    runs = None
    if args.job == DEFAULT_JOB:
        # Every user error (a --set typo, a plan that does not fit) first; the runs resolved
        # here are the ones the workers receive.
        with phase(f"checking {len(configs):,} configurations", sys.stderr):
            runs = resolve_runs(configs)
    else:  # a stand-in job (tests) makes its own sense of the configuration
        for platform in dict.fromkeys(config.platform for config in configs):
            resolve_platform(platform)
    executor = executor_of(args)
    job = None if args.job == DEFAULT_JOB else load_job(args.job)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} exists and is not a directory")
    summary = run_sweep(
        configs,
        out,
        job=job,
        executor=executor,
        retry_failed=args.retry_failed,
        cost_of=predicted_run_s if args.job == DEFAULT_JOB else None,
        resolved=runs,
    )
    if args.timelines and not summary.interrupted:
        from tlm_models.study.timelines import write_timelines

        write_timelines(configs, out)
    if not args.no_report and not summary.interrupted:
        with phase("writing the report and its plots"):
            report = write_report(out)
        print(f"report: {report}", file=sys.stderr)
    if summary.failed:
        print(
            f"attn-tlm: {summary.failed} of {summary.total} configurations failed "
            f"(errors in {out / 'results.jsonl'}; rerun with --retry-failed to try again)",
            file=sys.stderr,
        )
    return summary.exit_code


def _report(args: argparse.Namespace) -> int:
    directory = Path(args.dir)
    if not directory.is_dir():
        raise UserError(f"{directory} is not a directory")
    with phase("writing the report" + ("" if args.no_plots else " and its plots")):
        report = write_report(directory, plots=not args.no_plots)
    print(report)
    page = directory / HTML_FILE
    print(page)
    if args.open:
        import webbrowser

        if not webbrowser.open(page.resolve().as_uri()):
            raise UserError(f"no web browser found to open {page}; open it by hand")
    return 0
