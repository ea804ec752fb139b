"""``attn-tlm demo``: the AttenIO paper's study on the default platform, with its summary table.

The full grid is Standard, FLAT, FlashAttention-2 and AttenIO for N in {8K..128K} and
d in {64, 128}; the default demo runs the subset N <= 32K (documented in README.md with both
run times). Results land in a sweep directory, so an interrupted demo resumes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tlm_models.study.config import DEFAULT_PLATFORM
from tlm_models.study.grid import GridSpec, expand_grid
from tlm_models.study.job import load_job
from tlm_models.study.report import load_results, render_report, write_report
from tlm_models.study.sweep import run_sweep
from tlm_models.study.timelines import write_timelines

DEMO_DATAFLOWS = ("standard", "flat", "flash2", "attenio")
FULL_SEQ_LENS = (8192, 16384, 32768, 65536, 131072)
QUICK_SEQ_LENS = (8192, 16384, 32768)
HEAD_DIMS = (64, 128)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = subparsers.add_parser(
        "demo",
        help="run the AttenIO paper's study on the default platform and print its summary",
        description="Standard, FLAT, FlashAttention-2 and AttenIO on platforms/attenio.yaml; "
        "N in {8K, 16K, 32K} and d in {64, 128} (--full adds 64K and 128K).",
    )
    demo.add_argument("--full", action="store_true", help="the whole 40-configuration grid")
    demo.add_argument("--out", type=Path, default=Path("results/demo"), help="results directory")
    demo.add_argument("--jobs", "-j", type=int, help="simulations at a time (default: cores)")
    demo.set_defaults(func=_demo)


def _demo(args: argparse.Namespace) -> int:
    spec = GridSpec(
        dataflows=DEMO_DATAFLOWS,
        seq_lens=FULL_SEQ_LENS if args.full else QUICK_SEQ_LENS,
        head_dims=HEAD_DIMS,
        platforms=(DEFAULT_PLATFORM,),
    )
    configs = expand_grid(spec)
    print(f"attn-tlm demo: {len(configs)} configurations into {args.out}/")
    from tlm_models.study.executor_local import LocalExecutor

    summary = run_sweep(configs, args.out, job=load_job(), executor=LocalExecutor(args.jobs))
    if summary.interrupted:
        return 130
    write_timelines(configs, args.out)
    report = write_report(args.out)
    print(render_report(load_results(args.out)))
    print(f"report and plots: {report}")
    return summary.exit_code
