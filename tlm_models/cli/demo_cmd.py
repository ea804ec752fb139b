"""``attn-tlm demo``: the AttenIO paper's study on the default platform, with its summary table.

The full grid is Standard, FLAT, FlashAttention-2 and AttenIO for N in {8K..128K} and
d in {64, 128}; the default demo runs the subset N <= 32K (documented in README.md with both
run times). A small approximate-attention study rides along: approx at degrees 1-3 and
d in {16, 32, 64} beside FlashAttention-2 and AttenIO at the same shapes, for the report's
traffic-growth slopes and time/accuracy trade-off. Results land in one sweep directory, so
an interrupted demo resumes.

Two model workloads close the demo (``model_configs``): one GPT-3 175B prefill layer at
N = 8K (96 heads, d = 128, causal) and a Llama-3 8B decode batch (8 sequences, 32 query heads
sharing 8 K/V heads, one query row each against an 8K KV cache), on FlashAttention-2 and
AttenIO (and Standard for the decode batch). A dataflow that does not implement a feature
yet (``FEATURES``) runs the nearest workload it supports, and the demo says which.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from tlm_models.cli.commands import add_command
from tlm_models.cli.run_args import add_exact_arg, add_jobs_arg
from tlm_models.errors import UserError
from tlm_models.run.config import DEFAULT_PLATFORM, RunConfig
from tlm_models.run.cost import predicted_run_s
from tlm_models.study.grid import GridSpec, SweptSetting, expand_grid
from tlm_models.study.report import load_results, render_summary, write_report
from tlm_models.study.report_html import HTML_FILE
from tlm_models.study.sweep import run_sweep
from tlm_models.terminal.phase import phase
from tlm_models.workload.spec import FEATURES, Workload, check_supported

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


#: The model workloads: (preset, workload, layers of the model, dataflows). The dense GPT-3
#: layer sits beside the causal one in the report's side-by-side section. Standard runs the
#: decode batch only: at 96 heads of N = 8K its fast-forwarded replay is not byte-exact.
PREFILL_DATAFLOWS = ("flash2", "attenio")
DECODE_DATAFLOWS = ("standard", "flash2", "attenio")
GPT3_PREFILL = Workload(seq_len=8192, head_dim=128, heads=96, mask="causal")
LLAMA3_DECODE = Workload(
    seq_len=1, head_dim=128, heads=32, kv_heads=8, kv_len=8192, batch=8, phase="decode"
)
MODEL_WORKLOADS = (
    ("gpt3-175b", GPT3_PREFILL, 96, PREFILL_DATAFLOWS),
    ("gpt3-175b", replace(GPT3_PREFILL, mask="none"), 96, PREFILL_DATAFLOWS),
    ("llama3-8b", LLAMA3_DECODE, 32, DECODE_DATAFLOWS),
)


def _nearest(dataflow: str, workload: Workload) -> tuple[Workload | None, list[str]]:
    """``workload``, or the nearest one ``dataflow`` implements (no mask instead of a mask,
    MHA instead of GQA; None when it cannot run Nk != Nq, i.e. decode), and what changed."""
    have = FEATURES.get(dataflow, frozenset())
    if workload.kv_len != workload.seq_len and "cross" not in have:
        return None, [f"Nk = {workload.kv_len} != Nq = {workload.seq_len} is not implemented"]
    changed = []
    if workload.mask != "none" and "mask" not in have:
        changed.append(f"mask none instead of {workload.mask}")
        workload = replace(workload, mask="none", window=0)
    if workload.group > 1 and "gqa" not in have:
        changed.append(f"Hkv = {workload.heads} instead of {workload.kv_heads}")
        workload = replace(workload, kv_heads=workload.heads)
    check_supported(dataflow, workload)
    return workload, changed


def model_configs() -> tuple[list[RunConfig], list[str]]:
    """The model workloads' configurations, and a note for each one run as a nearer workload
    (or not at all) because its dataflow does not implement a feature yet."""
    configs: dict[str, RunConfig] = {}
    notes: list[str] = []
    for model, wanted, layers, dataflows in MODEL_WORKLOADS:
        for dataflow in dataflows:
            try:
                workload, changed = _nearest(dataflow, wanted)
            except UserError as exc:
                workload, changed = None, [str(exc)]
            if changed:
                done = "not run:" if workload is None else "ran with"
                notes.append(f"{model} {wanted.phase} on {dataflow}: {done} {'; '.join(changed)}")
            if workload is not None:
                config = RunConfig(
                    dataflow, workload, platform=DEFAULT_PLATFORM, layers=layers, model=model
                )
                configs.setdefault(config.key(), config)
    return list(configs.values()), notes


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = add_command(subparsers, "demo")
    demo.add_argument("--full", action="store_true", help="the whole 40-configuration grid")
    demo.add_argument("--out", type=Path, default=Path("results/demo"), help="results directory")
    add_jobs_arg(demo)
    add_exact_arg(demo)
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
    models, notes = model_configs()
    everything = slow + configs + [c for c in side if not _is_slow(c) and c.key() not in keys]
    everything += models
    if args.exact:
        everything = [replace(config, exact=True) for config in everything]
        configs = [replace(config, exact=True) for config in configs]
    print(
        f"attn-tlm demo: {len(configs)} configurations of the paper's study, "
        f"{len(everything) - len(configs) - len(models)} of the approximate-attention study "
        f"and {len(models)} model layers into {args.out}/"
    )
    for note in notes:
        print(f"  note: {note}")
    from tlm_models.study.executor_local import LocalExecutor

    summary = run_sweep(
        everything,
        args.out,
        executor=LocalExecutor(args.jobs),
        cost_of=predicted_run_s,
    )
    if summary.interrupted:
        return 130
    from tlm_models.study.timelines import write_timelines  # matplotlib: only when needed

    write_timelines(configs, args.out)
    with phase("writing the report and its plots"):
        report = write_report(args.out)
    print(render_summary(load_results(args.out)))
    html = report.parent / HTML_FILE
    print(f"the whole report and its plots: {report}, {html} (attn-tlm report {args.out} --open)")
    return summary.exit_code
