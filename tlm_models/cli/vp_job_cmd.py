"""``attn-tlm vp-job``: a dataflow's command stream, input tensors and C header for the
accelerator inside a virtual prototype (tlm_models/run/vp_job.py, docs/integration.md)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from tlm_models.cli.commands import add_command
from tlm_models.cli.run_args import add_dataflow_args, single_config


def _address(text: str) -> int:
    try:
        value = int(text.replace("_", ""), 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an address (e.g. 0x8000_0000)") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}' is negative")
    return value


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = add_command(subparsers, "vp-job")
    add_dataflow_args(p, param_help="dataflow parameter (repeatable)")

    def address(flag: str, text: str, **how: Any) -> None:
        p.add_argument(flag, type=_address, metavar="ADDR", help=text, **how)

    address(
        "--base", "bus address of the accelerator's registers in the VP (ATTN_BASE)", required=True
    )
    address(
        "--tensors-at",
        "VP address of the platform's off-chip address 0: where the tensors go (default 0)",
        default=0,
    )
    address(
        "--commands-at",
        "VP address of the command stream (default: the 4 KiB boundary after the tensors)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the input tensors' values")
    p.add_argument("--out", required=True, metavar="DIR", help="directory to write into")
    p.set_defaults(func=_vp_job)


def _vp_job(args: argparse.Namespace) -> int:
    from tlm_models.run.resolve import resolve_run
    from tlm_models.run.vp_job import build_vp_job, write_vp_job

    job = build_vp_job(resolve_run(single_config(args)), args.tensors_at, args.commands_at)
    command = (
        shlex.join(["attn-tlm", *sys.argv[1:]])
        if sys.argv[1:2] == ["vp-job"]
        else "attn-tlm vp-job"
    )
    written = write_vp_job(job, Path(args.out), args.base, command, args.seed)
    print(
        f"{len(job.records)} commands at {job.command_base:#x}, window {job.window}; "
        f"{job.bytes_read} B read, {job.bytes_written} B written"
    )
    for path in written:
        print(f"  {path}")
    return 0
