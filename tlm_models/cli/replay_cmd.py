"""``attn-tlm replay TRACE``: replay an operation trace or a DRAMSys STL memory trace on a platform.

Operation traces (binary or text) are checked against the platform, then replayed in a worker
process that opens the file itself and streams it chunk by chunk into the C++ replayer, so no
large array crosses a process boundary. STL traces go to ``tlm_models.replay.stl_in``. The result is
the same JSON contract as a study run (``tlm_models.run.result.compose_result``).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from tlm_models.cli.commands import add_command
from tlm_models.cli.platform_args import add_platform_args
from tlm_models.cli.run_args import add_output_args, print_run_result
from tlm_models.errors import UserError
from tlm_models.files.output_file import check_output
from tlm_models.replay.replayer import TimelineWindow
from tlm_models.run.config import resolve_platform
from tlm_models.run.progress import SimulationProgress
from tlm_models.trace.io import detect_format


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = add_command(subparsers, "replay")
    parser.add_argument("trace", help="trace file")
    add_platform_args(parser)
    add_output_args(parser)
    parser.add_argument(
        "--latencies",
        metavar="OUT.csv",
        help="STL traces: write every request's latency (trace order) as CSV",
    )
    parser.add_argument(
        "--outstanding",
        metavar="N",
        type=int,
        help="STL traces: keep N requests in flight, queued in a bank-level hbm's controller "
        "(request_mode queued) so that its scheduler can reorder them",
    )
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=float,
        help="give up on a replay that takes longer than this (wall clock)",
    )
    parser.set_defaults(func=_replay)


def parse_window(text: str) -> TimelineWindow:
    """``START_NS:END_NS`` (non-negative, START < END) as a timeline window."""
    start_text, colon, end_text = text.partition(":")
    try:
        if not colon:
            raise ValueError
        start, end = float(start_text), float(end_text)
    except ValueError:
        raise UserError(
            f"--timeline-window: expected START_NS:END_NS such as 0:50000, found '{text}'"
        ) from None
    if not (math.isfinite(start) and math.isfinite(end)) or start < 0 or end <= start:
        raise UserError(
            f"--timeline-window: expected 0 <= START_NS < END_NS (finite), found '{text}'"
        )
    return TimelineWindow(start_ns=start, end_ns=end)


def _op_count(args: argparse.Namespace) -> int:
    """The operation count a binary trace's header states (0 = unknown: text, streamed)."""
    from tlm_models.trace.binary import is_binary_trace, read_header

    if not is_binary_trace(args.trace):
        return 0
    try:
        return read_header(Path(args.trace))[2]
    except UserError:
        return 0  # the replay reports what is wrong with the file


def _replay(args: argparse.Namespace) -> int:
    from tlm_models.run.trace_job import replay_trace_file
    from tlm_models.run.worker import run_in_worker

    platform_path = str(resolve_platform(args.platform))
    window = parse_window(args.timeline_window) if args.timeline_window else None
    if window is not None and not (args.timeline or args.vcd):
        raise UserError("--timeline-window needs --timeline OUT.json or --vcd OUT.vcd")
    if not Path(args.trace).is_file():
        raise UserError(f"{args.trace}: no such trace file")
    check_output(args.timeline, "timeline")
    check_output(args.vcd, "waveform")
    check_output(args.latencies, "latencies")
    fmt = detect_format(args.trace)
    if args.latencies and fmt not in ("stl", "rstl"):
        raise UserError("--latencies applies to STL memory traces (.stl, .rstl)")
    if args.outstanding is not None and fmt != "stl":
        raise UserError("--outstanding applies to absolute STL memory traces (.stl)")
    if fmt in ("stl", "rstl"):
        from tlm_models.replay.stl_in import (
            format_stl_summary,
            replay_stl_file,
            write_latencies,
        )

        if args.timeline or args.vcd:
            raise UserError(
                "--timeline and --vcd apply to operation traces, not to STL memory traces"
            )
        if not (math.isfinite(args.stl_clock) and args.stl_clock > 0):
            raise UserError(f"--stl-clock must be a positive frequency in Hz, not {args.stl_clock}")
        result = run_in_worker(
            replay_stl_file,
            args.trace,
            platform_path,
            tuple(args.overrides),
            args.stl_clock,
            bool(args.latencies),
            args.outstanding,
            timeout=args.timeout,
        )
        if args.latencies:
            write_latencies(Path(args.latencies), result.pop("latencies_ns"))
        print(json.dumps(result, indent=2) if args.json else format_stl_summary(result))
        return 0
    progress = None if args.json else SimulationProgress(Path(args.trace).name, _op_count(args))
    try:
        result = run_in_worker(
            replay_trace_file,
            args.trace,
            platform_path,
            tuple(args.overrides),
            args.timeline,
            window,
            True,
            args.vcd,
            timeout=args.timeout,
            progress=progress,
        )
    finally:
        if progress is not None:
            progress.close()
    print_run_result(args, result, _title(result))
    return 0


def _title(r: dict[str, Any]) -> str:
    return (
        f"{r['trace']}: {r['dataflow']} trace ({r['trace_format']}), {r['ops']:,} ops on "
        f"platform {r['platform_name']}"
    )
