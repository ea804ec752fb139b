"""The options and the output that ``run``, ``replay``, ``vp-job``, ``sweep``, ``demo`` and
``reproduce`` share, declared once: one dataflow on one workload and platform
(``add_dataflow_args`` / ``single_config``), what a replay writes beside its result
(``add_output_args`` / ``print_run_result``), ``--exact`` and ``--jobs``."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from typing import Any

from tlm_models.cli.platform_args import add_platform_args
from tlm_models.cli.workload_args import add_workload_args, workload_grid
from tlm_models.run.config import DATAFLOWS, RunConfig, parse_key_value, resolve_platform
from tlm_models.run.summary import format_summary
from tlm_models.study.grid import expand_grid

__all__ = [
    "add_dataflow_args",
    "add_exact_arg",
    "add_jobs_arg",
    "add_output_args",
    "print_run_result",
    "single_config",
]


def add_dataflow_args(parser: argparse.ArgumentParser, *, param_help: str) -> None:
    """``--dataflow``, the workload options, ``--platform``/``--set`` and repeatable
    ``--param NAME=VALUE`` (into ``args.params``): one configuration (``single_config``)."""
    parser.add_argument("--dataflow", required=True, choices=DATAFLOWS)
    add_workload_args(parser)
    add_platform_args(parser)
    parser.add_argument(
        "--param", dest="params", action="append", default=[], metavar="NAME=VALUE",
        help=param_help,
    )  # fmt: skip


def single_config(args: argparse.Namespace, overrides: tuple[str, ...] = ()) -> RunConfig:
    """The one configuration named by ``add_dataflow_args`` options; ``overrides`` go before
    the command line's ``--set`` (which therefore win)."""
    resolve_platform(args.platform)
    spec = replace(
        workload_grid(args),
        dataflows=(args.dataflow,),
        platforms=(args.platform,),
        exact=getattr(args, "exact", False),
    )
    (config,) = expand_grid(spec)  # without lists, the workload options name one workload
    return replace(
        config,
        overrides=(*overrides, *args.overrides),
        extra=tuple(parse_key_value(p, what="--param") for p in args.params),
    )


def add_exact_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--exact", action="store_true",
        help="simulate every loop iteration (no steady-state fast-forward)",
    )  # fmt: skip


def add_jobs_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jobs", "-j", type=int, metavar="J",
        help="simulations at a time on this machine (default: one per CPU core)",
    )  # fmt: skip


def add_output_args(parser: argparse.ArgumentParser) -> None:
    """``--json``, ``--timeline``, ``--vcd``, ``--timeline-window`` and ``--stl-clock``."""
    parser.add_argument("--json", action="store_true", help="print only the result JSON")
    parser.add_argument(
        "--timeline", metavar="OUT.json", help="write a Perfetto / Chrome-trace timeline"
    )
    parser.add_argument(
        "--vcd", metavar="OUT.vcd", help="write engine and HBM-channel busy signals (VCD)"
    )
    parser.add_argument(
        "--timeline-window", metavar="START_NS:END_NS",
        help="simulated time range kept in the timeline (default 0:50000)",
    )  # fmt: skip
    parser.add_argument(
        "--stl-clock", type=float, default=1e9, metavar="HZ",
        help="clock whose cycles count the STL times (default 1e9)",
    )  # fmt: skip


def print_run_result(args: argparse.Namespace, result: dict[str, Any], title: str) -> None:
    """The result JSON (``--json``), else its summary and the files written beside it."""
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(format_summary(result, title))
    for label, path in (("timeline", args.timeline), ("waveform", args.vcd)):
        if path:
            print(f"{label}: {path}")
