"""``attn-tlm replay TRACE``: replay an operation trace or a DRAMSys STL memory trace on a platform.

Operation traces (binary or text) are checked against the platform, then replayed in a worker
process that opens the file itself and streams it chunk by chunk into the C++ replayer, so no
large array crosses a process boundary. STL traces go to ``tlm_models.stl_replay``. The result is
the same JSON contract as a study run (``tlm_models.result.compose_result``).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tlm_models.cli.platform_args import add_platform_args
from tlm_models.errors import UserError
from tlm_models.output_file import check_output
from tlm_models.platform.schema import PlatformConfig
from tlm_models.replay import TimelineWindow
from tlm_models.sim_progress import SimulationProgress
from tlm_models.study.config import WORKLOAD_FIELDS, resolve_platform
from tlm_models.summary import format_summary
from tlm_models.trace.io import detect_format

#: Problems listed when a trace fails its check against the platform.
MAX_LISTED_PROBLEMS = 10


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="replay a trace on a platform and report where the time goes",
        description="Replays an operation trace (.bin, .attntrace, .trace.txt, .txt) through the "
        "platform's engines, or a DRAMSys memory trace (.stl absolute, .rstl relative) against "
        "the platform's off-chip memory.",
    )
    parser.add_argument("trace", help="trace file")
    add_platform_args(parser)
    parser.add_argument("--json", action="store_true", help="print the result JSON")
    parser.add_argument(
        "--timeline", metavar="OUT.json", help="write a Perfetto / Chrome-trace timeline"
    )
    parser.add_argument(
        "--vcd", metavar="OUT.vcd", help="write engine and HBM-channel busy signals (VCD)"
    )
    parser.add_argument(
        "--timeline-window",
        metavar="START_NS:END_NS",
        help="simulated time range kept in the timeline (default 0:50000)",
    )
    parser.add_argument(
        "--stl-clock",
        metavar="HZ",
        type=float,
        default=1e9,
        help="clock of the cycle counts in STL traces (default 1e9)",
    )
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


def replay_trace_file(
    trace_path: str,
    platform_path: str | PlatformConfig,
    overrides: Sequence[str] = (),
    timeline_path: str | None = None,
    window: TimelineWindow | None = None,
    check: bool = True,
    vcd_path: str | None = None,
) -> dict[str, Any]:
    """Worker job: open, check and replay an operation trace; the result JSON as a dict.

    Runs in a fresh simulation process (``run_in_worker``). ``check=False`` skips the check
    against the platform so the replayer's own error path can be exercised. The platform is a
    file (loaded here, with ``overrides``) or an already validated configuration.
    """
    from tlm_models.energy.model import energy_section
    from tlm_models.platform import load_platform
    from tlm_models.platform.area.estimate import run_area
    from tlm_models.replay import replay_in_this_process
    from tlm_models.result import compose_result
    from tlm_models.timeline import write_chrome_json
    from tlm_models.trace.io import open_trace
    from tlm_models.vcd import write_vcd

    started = time.perf_counter()
    if isinstance(platform_path, str):
        platform = load_platform(platform_path, overrides)
    else:
        platform, platform_path = platform_path, platform_path.source or platform_path.name
    info = platform.info()
    trace = open_trace(trace_path)
    if trace.is_memory_trace:
        raise UserError(f"{trace_path}: is a memory trace; replay it with the STL player")
    if check:
        _check_against_platform(trace_path, trace, info)
    out = replay_in_this_process(
        platform,
        trace.header,
        trace.chunks(),
        timeline=(window or TimelineWindow()) if timeline_path or vcd_path else None,
    )
    if timeline_path and out.timeline is not None:
        write_chrome_json(out.timeline, Path(timeline_path))
    if vcd_path and out.timeline is not None:
        write_vcd(out.timeline, Path(vcd_path))
    params = dict(trace.header.params)
    # An emitted trace's header names its workload: the result states it at the top level, as
    # a run's result does (docs/workloads.md), and the rest of the header is the tiling.
    workload = {name: params.pop(name) for name in WORKLOAD_FIELDS if name in params}
    identity = {
        "trace": trace_path,
        "trace_format": trace.format,
        "dataflow": trace.header.dataflow,
        "platform": platform_path,
        "platform_name": platform.name,
        "overrides": list(overrides),
        "tiling": params,
        **workload,
    }
    result = compose_result(out.replay, info, identity, out.wall_s)
    result["area_mm2"], leakage = run_area(platform)
    result["energy"] = energy_section(platform, out.platform, result, leakage)
    result["wall_s"] = time.perf_counter() - started
    result["replay_wall_s"] = out.wall_s
    return result


def _check_against_platform(path: str, trace: Any, info: Any) -> None:
    from tlm_models.trace.validate import check_trace

    missing = [name for name in trace.header.engines if name not in info.engines]
    if missing:
        raise UserError(
            f"{path}: the trace uses engine(s) {', '.join(repr(m) for m in missing)}, which "
            f"platform '{info.name}' does not have (it has: {', '.join(sorted(info.engines))})"
        )
    if trace.header.elem_bytes != info.elem_bytes:
        # The engines' operand traffic, the bounds and the tiling all count in the platform's
        # width: a trace of another width would replay to a silently wrong time.
        raise UserError(
            f"{path}: the trace has {trace.header.elem_bytes} B elements (its header's "
            f"elem_bytes) but platform '{info.name}' computes on {info.elem_bytes} B elements; "
            f"replay it on a platform of that width (e.g. --set pe.elem_bytes="
            f"{trace.header.elem_bytes}B --set exp.elem_bytes={trace.header.elem_bytes}B)"
        )
    report = check_trace(trace.header, trace.chunks(), info, MAX_LISTED_PROBLEMS)
    if report.ok:
        return
    lines = [
        f"{path}: {report.problem_count} problem(s) in {report.records} records against "
        f"platform '{info.name}':"
    ]
    lines.extend(f"  {path}: {problem}" for problem in report.problems)
    rules = ", ".join(f"{rule} {count}" for rule, count in sorted(report.counts.items()))
    lines.append(f"  by rule: {rules}")
    raise UserError("\n".join(lines))


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
    from tlm_models.worker import run_in_worker

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
        from tlm_models.stl_replay import format_stl_summary, replay_stl_file, write_latencies

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
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(format_summary(result, _title(result)))
        for label, path in (("timeline", args.timeline), ("waveform", args.vcd)):
            if path:
                print(f"{label}: {path}")
    return 0


def _title(r: dict[str, Any]) -> str:
    return (
        f"{r['trace']}: {r['dataflow']} trace ({r['trace_format']}), {r['ops']:,} ops on "
        f"platform {r['platform_name']}"
    )
