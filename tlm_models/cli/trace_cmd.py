"""``attn-tlm trace check|convert|stats``: inspect and convert trace files."""

from __future__ import annotations

import argparse
import json
import sys

from tlm_models.cli.commands import add_command
from tlm_models.cli.platform_args import add_platform_args
from tlm_models.errors import UserError
from tlm_models.files.output_file import check_output
from tlm_models.platform.info import PlatformInfo
from tlm_models.trace.io import OpenedTrace, format_for_name, open_trace, write_trace
from tlm_models.trace.stats import TraceStats, trace_stats
from tlm_models.trace.validate import check_trace


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = add_command(subparsers, "trace")
    sub = parser.add_subparsers(dest="trace_command", metavar="SUBCOMMAND")
    sub.required = True

    check = sub.add_parser("check", help="check a trace's structure (exit 0 ok, 2 problems)")
    check.add_argument("trace", help="trace file (.bin, .attntrace, .trace.txt, .txt)")
    add_platform_args(
        check, default=None, platform_help="also check engines and addresses against a platform"
    )
    check.add_argument(
        "--max-problems", type=int, default=10, metavar="N", help="list at most N (default 10)"
    )
    check.set_defaults(func=_check)

    convert = sub.add_parser("convert", help="convert between binary and text forms")
    convert.add_argument("input", help="trace to read")
    convert.add_argument("output", help="trace to write; the format follows the extension")
    convert.set_defaults(func=_convert)

    stats = sub.add_parser("stats", help="operation counts, off-chip bytes, FLOPs")
    stats.add_argument("trace", help="trace file")
    stats.add_argument("--json", action="store_true", help="print JSON instead of a table")
    stats.set_defaults(func=_stats)


def _open_operation_trace(path: str) -> OpenedTrace:
    trace = open_trace(path)
    if trace.is_memory_trace:
        raise UserError(
            f"{path}: is a DRAMSys memory trace ({trace.format}); this command takes an "
            "operation trace (binary or text)"
        )
    return trace


def _platform_info(path: str, overrides: list[str]) -> PlatformInfo:
    from tlm_models.platform import load_platform  # heavy; only when asked for

    return load_platform(path, overrides).info()


def _check(args: argparse.Namespace) -> int:
    trace = _open_operation_trace(args.trace)
    if args.overrides and not args.platform:
        raise UserError("--set changes a platform: give it with --platform FILE")
    platform = _platform_info(args.platform, args.overrides) if args.platform else None
    report = check_trace(trace.header, trace.chunks(), platform, max(1, args.max_problems))
    if report.ok:
        against = f" against {platform.name}" if platform else ""
        print(f"{args.trace}: {report.records} records ok{against}")
        return 0
    print(
        f"{args.trace}: {report.problem_count} problem(s) in {report.records} records",
        file=sys.stderr,
    )
    for problem in report.problems:
        print(f"{args.trace}: {problem}", file=sys.stderr)
    rules = ", ".join(f"{rule} {count}" for rule, count in sorted(report.counts.items()))
    print(f"{args.trace}: by rule: {rules}", file=sys.stderr)
    return UserError.exit_code


def _convert(args: argparse.Namespace) -> int:
    fmt = format_for_name(args.output)
    check_output(args.output, "trace")
    trace = _open_operation_trace(args.input)
    count = write_trace(args.output, trace.header, trace.chunks(), fmt)
    print(f"{args.output}: wrote {count} records ({fmt})")
    return 0


def _stats(args: argparse.Namespace) -> int:
    trace = _open_operation_trace(args.trace)
    stats = trace_stats(trace.header, trace.chunks())
    if args.json:
        print(json.dumps({"trace": args.trace, **stats.to_dict()}, indent=2))
    else:
        print(_table(args.trace, trace, stats))
    return 0


def _table(path: str, trace: OpenedTrace, s: TraceStats) -> str:
    lines = [f"{path}: {trace.header.dataflow}, {s.records} records"]

    def section(title: str, values: dict[str, int], unit: str) -> None:
        if values:
            lines.append(title)
            lines.extend(f"  {name:<12} {value:>20,} {unit}" for name, value in values.items())

    section("operations by kind", s.ops_by_kind, "ops")
    section("operations by engine", s.ops_by_engine, "ops")
    section("off-chip bytes read (loads)", s.bytes_read, "B")
    section("off-chip bytes written (stores)", s.bytes_written, "B")
    section("FLOPs", s.flops, "FLOP")
    if s.onchip_low is not None and s.onchip_high is not None:
        more = "+" if s.onchip_buffers_capped else ""
        lines.append(
            f"on-chip span touched by DMA: [{s.onchip_low:#x}, {s.onchip_high:#x}) = "
            f"{s.onchip_high - s.onchip_low:,} B; {len(s.onchip_buffers)}{more} distinct load "
            "destinations"
        )
    return "\n".join(lines)
