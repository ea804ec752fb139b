"""Replaying an operation trace file as a run: the worker job behind ``attn-tlm replay`` and
``tlm_models.replay_trace`` (the API).

The trace is checked against the platform (engines, element width, every record), replayed in
the worker's process, and its result composed into the same JSON contract as a dataflow run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tlm_models.errors import UserError
from tlm_models.platform.schema import PlatformConfig
from tlm_models.replay.replayer import TimelineWindow
from tlm_models.run.config import WORKLOAD_FIELDS

#: Problems a failed trace check lists before it summarises by rule.
MAX_LISTED_PROBLEMS = 10


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
    from tlm_models.platform import load_platform
    from tlm_models.platform.area.estimate import run_area
    from tlm_models.platform.energy.model import energy_section
    from tlm_models.replay.replayer import replay_in_this_process
    from tlm_models.replay.timeline import write_chrome_json
    from tlm_models.replay.vcd import write_vcd
    from tlm_models.run.result import compose_result
    from tlm_models.run.run_result import checked
    from tlm_models.trace.io import open_trace

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
    return checked(result)


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
