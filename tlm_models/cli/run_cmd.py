"""``attn-tlm run``: simulate one attention configuration and print where the time goes.

The dataflow's trace streams from its emitter into the replayer inside one worker process;
the result is the study's result JSON (``--json`` prints only that).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from tlm_models.cli.commands import add_command
from tlm_models.cli.energy_cmd import ert_overrides_for
from tlm_models.cli.replay_cmd import parse_window
from tlm_models.cli.run_args import (
    add_dataflow_args,
    add_exact_arg,
    add_output_args,
    print_run_result,
    single_config,
)
from tlm_models.errors import UserError
from tlm_models.files.output_file import check_output
from tlm_models.platform.schema import PlatformConfig
from tlm_models.replay.replayer import TimelineWindow
from tlm_models.replay.stl_out import offchip_regions, stl_paths
from tlm_models.run.config import FF_POLICIES, RunConfig, record_workload_words
from tlm_models.run.cost import announce
from tlm_models.run.execute import run_one
from tlm_models.run.progress import SimulationProgress
from tlm_models.run.resolve import resolve_run
from tlm_models.run.worker import run_in_worker


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = add_command(subparsers, "run")
    add_dataflow_args(
        run, param_help="dataflow parameter, e.g. --param degree=3 for approx (repeatable)"
    )
    add_exact_arg(run)
    run.add_argument(
        "--ff-error-bound", type=float, default=1e-3, metavar="FRACTION",
        help="fast-forward on a bank-level HBM: skip only when every statistic's estimated "
        "error is within this fraction of itself, else run exactly (default 1e-3)",
    )  # fmt: skip
    run.add_argument(
        "--ff-max-fraction", type=float, default=0.2, metavar="FRACTION",
        help="fast-forward on a bank-level HBM: simulate up to this fraction of the loop to "
        "meet the bound before running exactly instead (default 0.2)",
    )  # fmt: skip
    run.add_argument(
        "--ff-policy", choices=FF_POLICIES, default="bound",
        help="fast-forward on a bank-level HBM when the bound cannot be met: 'bound' runs "
        "exactly, 'estimate' skips anyway and reports every statistic's estimated error "
        "(default bound)",
    )  # fmt: skip
    run.add_argument(
        "--ert", metavar="ERT.yaml",
        help="Accelergy energy reference table: its entries override the platform's energy",
    )  # fmt: skip
    add_output_args(run)
    run.add_argument(
        "--export-stl", metavar="OUT.stl",
        help="write the off-chip requests with their issue times in this run as an STL trace",
    )  # fmt: skip
    run.set_defaults(func=_run)


def config_of(args: argparse.Namespace) -> RunConfig:
    """The configuration named by the command line (validated)."""
    if args.timeline_window and not (args.timeline or args.vcd):
        raise UserError("--timeline-window needs --timeline OUT.json or --vcd OUT.vcd")
    ert = ert_overrides_for(args.ert, args.platform) if args.ert else []
    return replace(
        single_config(args, overrides=tuple(ert)),
        ff_error_bound=args.ff_error_bound,
        ff_max_fraction=args.ff_max_fraction,
        ff_policy=args.ff_policy,
    )


def check_outputs(args: argparse.Namespace, platform: PlatformConfig) -> None:
    """Every file the run will write can be written (UserError naming the first that cannot)."""
    check_output(args.timeline, "timeline")
    check_output(args.vcd, "waveform")
    if args.export_stl:
        memories = [r.name for r in offchip_regions(platform)]
        for stl in stl_paths(Path(args.export_stl), memories).values():
            check_output(stl, "STL export")


def _title(r: dict[str, Any]) -> str:
    words = record_workload_words(r)
    shape = f"N = {r['seq_len']:,}, d = {r['head_dim']}, heads = {r['heads']}"
    return (
        f"{r['dataflow']}: {', '.join([shape, *words])} on platform {r['platform_name']} "
        f"({r['ops']:,} ops)"
    )


def _run(args: argparse.Namespace) -> int:
    run = resolve_run(config_of(args))  # every user error surfaces here, before a worker starts
    window = parse_window(args.timeline_window) if args.timeline_window else TimelineWindow()
    if args.stl_clock <= 0:
        raise UserError(f"--stl-clock must be positive, got {args.stl_clock} Hz")
    check_outputs(args, run.platform)  # a bad output path is refused before simulating
    progress = None
    if not args.json:
        cost = announce(run, sys.stderr)
        progress = SimulationProgress(run.config.dataflow, cost.ops, cost.roofline_ns)
    try:
        result = run_in_worker(
            run_one,
            run,
            args.timeline,
            window,
            args.vcd,
            args.export_stl,
            args.stl_clock,
            progress=progress,
        )
    finally:
        if progress is not None:
            progress.close()
    print_run_result(args, result, _title(result))
    if args.export_stl and not args.json:
        memories = [r.name for r in offchip_regions(run.platform)]
        for memory, stl in stl_paths(Path(args.export_stl), memories).items():
            print(f"off-chip requests of {memory} (STL): {stl}")
    return 0
