"""``attn-tlm explore``: search dataflow parameters and platforms for the best attention under
limits (docs/explore.md)."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tlm_models.cli.commands import add_command
from tlm_models.cli.platform_args import add_platform_args
from tlm_models.cli.study_cmd import executor_of
from tlm_models.cli.workload_args import add_workload_args, workload_grid
from tlm_models.errors import UserError
from tlm_models.explore.area_model import area_available
from tlm_models.explore.pareto import OBJECTIVES, parse_constraints, parse_objectives
from tlm_models.explore.prune import platform_of
from tlm_models.explore.report import summary_lines, table, write_outputs
from tlm_models.explore.search import explore
from tlm_models.explore.space import (
    EXPLORED_DATAFLOWS,
    PUBLISHED,
    SPACES,
    Axis,
    combine,
    parse_vary,
    space_points,
)
from tlm_models.run.config import RunConfig, parse_dataflows
from tlm_models.run.cost import predicted_run_s
from tlm_models.study.grid import MAX_GRID_CONFIGS, workload_fields
from tlm_models.study.job import DEFAULT_JOB, load_job
from tlm_models.study.store import ResultStore
from tlm_models.study.sweep import run_sweep


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = add_command(subparsers, "explore")
    p.add_argument("--dataflow", required=True, metavar="LIST",
                   help=f"comma-separated: {', '.join(EXPLORED_DATAFLOWS)}")  # fmt: skip
    add_workload_args(p)
    add_platform_args(p)
    p.add_argument("--space", choices=SPACES, default="none",
                   help="dataflow parameter preset: tiling (AttenIO a and staging, FA2 Br x Bc "
                   "and its published tiles), variants (overlap, rescale, ...), all, or none "
                   "(default)")  # fmt: skip
    p.add_argument("--vary", action="append", default=[], metavar="KEY=LO..HI|V,V,...",
                   help="an axis: component.parameter (platform, e.g. pe.rows=16..128, "
                   "sram.capacity=128KiB..4MiB, hbm.channels=4,8,16) or a dataflow --param "
                   "(stage=1..8, attenio.rows=512,1024); LO..HI doubles (repeatable)")  # fmt: skip
    p.add_argument("--objective", default="time", metavar="LIST",
                   help=f"what to minimize, comma-separated ({', '.join(OBJECTIVES)}); several "
                   "give a Pareto front (default time)")  # fmt: skip
    p.add_argument("--max-area", metavar="AREA", help="area limit, e.g. 4mm2")
    p.add_argument("--max-power", metavar="POWER", help="power limit, e.g. 5W")
    p.add_argument("--max-time", metavar="TIME", help="simulated-time limit, e.g. 200ms")
    p.add_argument("--max-bytes", metavar="SIZE", help="off-chip traffic limit, e.g. 1GiB")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="exploration directory: results.jsonl (resumable), front.md, "
                   "explore.json, front.png")  # fmt: skip
    p.add_argument("--enumerate", action="store_true",
                   help="simulate every point that fits (to check the search against)")  # fmt: skip
    p.add_argument("--jobs", "-j", type=int, metavar="J",
                   help="simulations at a time on this machine (default 1: the search "
                   "simulates fewest points one at a time)")  # fmt: skip
    p.add_argument("--per-round", type=int, metavar="K",
                   help="points simulated per round of the search (default --jobs, else 1; "
                   "on Dask, the number of simulations the cluster runs at once)")  # fmt: skip
    p.add_argument("--executor", choices=("local", "dask"), default="local",
                   help="where simulations run (dask needs --scheduler)")  # fmt: skip
    p.add_argument("--scheduler", metavar="ADDR", help="Dask scheduler address")
    p.add_argument("--exact", action="store_true",
                   help="simulate every loop iteration (no steady-state fast-forward)")  # fmt: skip
    p.add_argument("--retry-failed", action="store_true",
                   help="simulate recorded failures again (finished results are kept)")  # fmt: skip
    p.add_argument("--no-plot", action="store_true", help="skip front.png")
    p.add_argument("--json", action="store_true", help="print explore.json instead of the table")
    p.add_argument("--job", default=DEFAULT_JOB, help=argparse.SUPPRESS)  # tests' stand-in
    p.set_defaults(func=run)


def _dataflows(text: str) -> tuple[str, ...]:
    names = parse_dataflows(text)
    for name in names:
        if name not in EXPLORED_DATAFLOWS:
            raise UserError(
                f"--dataflow: {name} has no closed-form bounds to explore with (expected "
                f"{', '.join(EXPLORED_DATAFLOWS)})"
            )
    return names


def configs_of(args: argparse.Namespace) -> tuple[list[RunConfig], list[str]]:
    """Every point of the space the options name, and the keys of the reference points (the
    published tilings, when the tiling preset runs on one platform)."""
    dataflows = _dataflows(args.dataflow)
    axes = [parse_vary(text, dataflows) for text in args.vary]
    keys = [a.key if a.platform or not a.dataflow else f"{a.dataflow}.{a.key}" for a in axes]
    for key in keys:
        if keys.count(key) > 1:
            raise UserError(f"--vary {key}=... is given twice; list its values once")
    fields = workload_fields(workload_grid(args))[0]
    fixed = tuple(args.overrides)
    base = platform_of(args.platform, fixed)  # a bad --set or platform file fails here
    info = base.info()
    platform_axes: list[Axis] = [a for a in axes if a.platform]
    for axis in platform_axes:  # one bad --vary platform key or value: one error, up front
        for value in axis.values:
            try:
                platform_of(args.platform, (*fixed, f"{axis.key}={value}"))
            except UserError as exc:
                why = str(exc).strip().splitlines()[-1].strip()
                why = why.partition(": ")[2] if why.startswith("--set ") else why
                raise UserError(f"--vary {axis.key}={value}: {why}") from None
    probe = RunConfig.of(dataflow=dataflows[0], platform=args.platform, **fields)
    workload = probe.workload.at_width(info.elem_bytes)
    configs: list[RunConfig] = []
    references: list[str] = []
    for combo in itertools.product(*([f"{a.key}={v}" for v in a.values] for a in platform_axes)):
        for dataflow in dataflows:
            preset = space_points(args.space, dataflow, workload, info)
            for point in combine(dataflow, preset, axes):
                config = RunConfig.of(
                    dataflow=dataflow,
                    platform=args.platform,
                    overrides=fixed + combo,
                    extra=point,
                    exact=args.exact,
                    **fields,
                )
                configs.append(config)
                if not platform_axes and _is_published(dataflow, point):
                    references.append(config.key())
        if len(configs) > MAX_GRID_CONFIGS:
            raise UserError(
                f"the space has more than {MAX_GRID_CONFIGS:,} points; narrow --vary or --space"
            )
    return configs, references


def _is_published(dataflow: str, point: Sequence[tuple[str, str]]) -> bool:
    published = PUBLISHED.get(dataflow)
    return published is not None and dict(point) == published


def run(args: argparse.Namespace) -> int:
    objectives = parse_objectives(args.objective)
    constraints = parse_constraints(args.max_area, args.max_power, args.max_time, args.max_bytes)
    with_area = constraints.needs_area or "area" in objectives
    if with_area and not area_available():
        raise UserError(
            "--max-area, --max-power and the area objective need the area model "
            "(tlm_models.platform.area), which this installation does not have"
        )
    if args.per_round is not None and args.per_round < 1:
        raise UserError(f"--per-round must be at least 1, found {args.per_round}")
    if args.jobs is None and args.executor == "local":
        args.jobs = 1
    executor = executor_of(args)
    batch = args.per_round or args.jobs or 1
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} exists and is not a directory")
    configs, references = configs_of(args)
    # The default job gets each run resolved once, in this process (run_sweep resolves it).
    job = None if args.job == DEFAULT_JOB else load_job(args.job)
    interrupted = False

    def simulate(batch: Sequence[RunConfig]) -> tuple[Mapping[str, dict[str, Any]], bool]:
        nonlocal interrupted
        summary = run_sweep(
            batch,
            out,
            job=job,
            executor=executor,
            retry_failed=args.retry_failed,
            cost_of=predicted_run_s if args.job == DEFAULT_JOB else None,
        )
        latest = ResultStore(out).latest()
        interrupted = summary.interrupted
        return {c.key(): latest[c.key()] for c in batch if c.key() in latest}, interrupted

    stored = ResultStore(out).latest() if out.is_dir() else {}
    if args.retry_failed:
        stored = {key: record for key, record in stored.items() if "error" not in record}
    outcome = explore(
        configs,
        objectives,
        constraints,
        simulate,
        stored=stored,
        batch=batch,
        enumerate_all=args.enumerate,
        must_run=references,
        with_area=with_area,
    )
    paths = write_outputs(outcome, out, constraints, references, with_plot=not args.no_plot)
    if args.json:
        print(paths["json"].read_text(encoding="utf-8"), end="")
    else:
        print("\n".join(summary_lines(outcome)))
        print()
        print(table(outcome), end="")
        print("\n" + "  ".join(f"{name}: {path}" for name, path in paths.items()))
    if interrupted:
        print("attn-tlm: interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    if not outcome.measured:
        print(
            "attn-tlm: no point meets every limit ("
            + json.dumps({"dropped": len(outcome.dropped), "rejected": len(outcome.rejected)})
            + ")",
            file=sys.stderr,
        )
        return 1
    return 0
