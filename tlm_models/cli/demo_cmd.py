"""``attn-tlm demo``: the AttenIO paper's study on the default platform, with its summary table.

The full grid is Standard, FLAT, FlashAttention-2 and AttenIO for N in {8K..128K} and
d in {64, 128}; the default demo runs the subset N <= 32K (documented in README.md with both
run times). A small approximate-attention study rides along: approx at degrees 1-3 and
d in {16, 32, 64} beside FlashAttention-2 and AttenIO at the same shapes, for the report's
traffic-growth slopes and time/accuracy trade-off. Results land in one sweep directory, so
an interrupted demo resumes.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from tlm_models.phase import phase
from tlm_models.study.config import DEFAULT_PLATFORM, RunConfig
from tlm_models.study.cost import predicted_ops
from tlm_models.study.grid import GridSpec, SweptSetting, expand_grid
from tlm_models.study.job import load_job
from tlm_models.study.report import load_results, render_report, write_report
from tlm_models.study.sweep import run_sweep

DEMO_DATAFLOWS = ("standard", "flat", "flash2", "attenio")
FULL_SEQ_LENS = (8192, 16384, 32768, 65536, 131072)
QUICK_SEQ_LENS = (8192, 16384, 32768)
HEAD_DIMS = (64, 128)

APPROX_DEGREES = ("1", "2", "3")
APPROX_HEAD_DIMS = (16, 32, 64)
APPROX_SEQ_LENS = (8192, 32768)
#: d = 64, g = 3 tiles H into 32 column blocks (r = 47,905 features): about 3.5 min of replay
#: at 32K and about 3 min at 16K on the development machine, so it runs at 4K and 8K.
SLOW_APPROX = (64, "3")
SLOW_APPROX_SEQ_LENS = (4096, 8192)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = subparsers.add_parser(
        "demo",
        help="run the AttenIO paper's study on the default platform and print its summary",
        description="Standard, FLAT, FlashAttention-2 and AttenIO on platforms/attenio.yaml; "
        "N in {8K, 16K, 32K} and d in {64, 128} (--full adds 64K and 128K). Also a small "
        "approximate-attention study: approx at degree 1-3 and d in {16, 32, 64} beside "
        "FlashAttention-2 and AttenIO, N in {8K, 32K} (8K, 16K for d = 64, degree 3).",
    )
    demo.add_argument("--full", action="store_true", help="the whole 40-configuration grid")
    demo.add_argument("--out", type=Path, default=Path("results/demo"), help="results directory")
    demo.add_argument("--jobs", "-j", type=int, help="simulations at a time (default: cores)")
    demo.add_argument(
        "--exact", action="store_true",
        help="simulate every loop iteration (no steady-state fast-forward)",
    )  # fmt: skip
    demo.set_defaults(func=_demo)


def approx_study_configs() -> list[RunConfig]:
    """The approximate-attention side study: approx runs, then the exact runs beside them."""
    exact = expand_grid(
        GridSpec(
            dataflows=("flash2", "attenio"),
            seq_lens=APPROX_SEQ_LENS,
            head_dims=APPROX_HEAD_DIMS,
            platforms=(DEFAULT_PLATFORM,),
        )
    )
    approx = [
        config
        for config in expand_grid(
            GridSpec(
                dataflows=("approx",),
                seq_lens=tuple(sorted({*APPROX_SEQ_LENS, *SLOW_APPROX_SEQ_LENS})),
                head_dims=APPROX_HEAD_DIMS,
                platforms=(DEFAULT_PLATFORM,),
                params=(SweptSetting("degree", APPROX_DEGREES),),
            )
        )
        if config.seq_len in (SLOW_APPROX_SEQ_LENS if _is_slow(config) else APPROX_SEQ_LENS)
    ]
    return approx + exact


def _is_slow(config: RunConfig) -> bool:
    return (config.head_dim, dict(config.extra).get("degree")) == SLOW_APPROX


def _demo(args: argparse.Namespace) -> int:
    spec = GridSpec(
        dataflows=DEMO_DATAFLOWS,
        seq_lens=FULL_SEQ_LENS if args.full else QUICK_SEQ_LENS,
        head_dims=HEAD_DIMS,
        platforms=(DEFAULT_PLATFORM,),
    )
    configs = expand_grid(spec)
    # The side study's longest runs go first so that they overlap the main grid.
    side = approx_study_configs()
    keys = {config.key() for config in configs}
    slow = [config for config in side if _is_slow(config)]
    everything = slow + configs + [c for c in side if not _is_slow(c) and c.key() not in keys]
    if args.exact:
        everything = [replace(config, exact=True) for config in everything]
        configs = [replace(config, exact=True) for config in configs]
    print(
        f"attn-tlm demo: {len(configs)} configurations of the paper's study and "
        f"{len(everything) - len(configs)} of the approximate-attention study into {args.out}/"
    )
    from tlm_models.study.executor_local import LocalExecutor

    summary = run_sweep(
        everything,
        args.out,
        job=load_job(),
        executor=LocalExecutor(args.jobs),
        cost_of=predicted_ops,
    )
    if summary.interrupted:
        return 130
    from tlm_models.study.timelines import write_timelines  # matplotlib: only when needed

    write_timelines(configs, args.out)
    with phase("writing the report and its plots"):
        report = write_report(args.out)
    print(render_report(load_results(args.out)))
    print(f"report and plots: {report}")
    return summary.exit_code
