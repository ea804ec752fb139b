"""Every ``attn-tlm`` command, declared once: the module that registers its options, its
one-line help and the description its own ``--help`` starts with.

A module is imported only when its command runs, so ``attn-tlm --help`` lists the commands
from this table without loading numpy, the dataflows or matplotlib; each module asks
``add_command`` for its parser, which takes the texts from here.
"""

from __future__ import annotations

import argparse
from typing import NamedTuple, TypeVar

__all__ = ["COMMANDS", "Command", "add_command"]

Parser = TypeVar("Parser", bound=argparse.ArgumentParser)


class Command(NamedTuple):
    module: str
    help: str
    description: str | None = None


COMMANDS: dict[str, Command] = {
    "config": Command(
        "tlm_models.cli.config_cmd",
        "compiler flags and package directories for C++ builds that use the models",
        "Print what a C++ build needs to use the header-only models (see docs/integration.md).",
    ),
    "demo": Command(
        "tlm_models.cli.demo_cmd",
        "run the AttenIO paper's study on the default platform and print its summary",
        "Standard, FLAT, FlashAttention-2 and AttenIO on platforms/attenio.yaml; "
        "N in {8K, 16K, 32K} and d in {64, 128} (--full adds 64K and 128K). Also a small "
        "approximate-attention study: approx at degree 1-3 and d in {16, 32, 64} beside "
        "FlashAttention-2 and AttenIO, N in {8K, 32K} (8K, 16K for d = 64, degree 3). Then "
        "a GPT-3 175B causal prefill layer at N = 8K and a Llama-3 8B decode batch (B = 8, "
        "8K KV cache) on FlashAttention-2 and AttenIO (and Standard for decode).",
    ),
    "run": Command(
        "tlm_models.cli.run_cmd",
        "simulate one dataflow on one platform and report where the time goes",
        "Emits the dataflow's trace for the workload and platform and replays it "
        "through the platform's engines.",
    ),
    "bounds": Command(
        "tlm_models.cli.bounds_cmd",
        "closed-form off-chip traffic per dataflow and the I/O lower bounds",
    ),
    "platform": Command("tlm_models.cli.platform_cmd", "check or show a platform file"),
    "trace": Command("tlm_models.cli.trace_cmd", "check, convert and summarise trace files"),
    "sweep": Command(
        "tlm_models.cli.study_cmd",
        "run a grid of attention studies into a directory (resumable)",
        "Runs every combination of platforms, --set values, dataflows and "
        "workloads (batch, heads, K/V heads, query and key lengths, head dims, masks), one "
        "simulation per process. Results are appended to "
        "DIR/results.jsonl as they finish; running the same command again resumes.",
    ),
    "report": Command(
        "tlm_models.cli.study_cmd", "write DIR/report.md and plots from a sweep's results"
    ),
    "replay": Command(
        "tlm_models.cli.replay_cmd",
        "replay a trace on a platform and report where the time goes",
        "Replays an operation trace (.bin, .attntrace, .trace.txt, .txt) through the "
        "platform's engines, or a DRAMSys memory trace (.stl absolute, .rstl relative) against "
        "the platform's off-chip memory.",
    ),
    "energy": Command("tlm_models.cli.energy_cmd", "export action counts, import an Accelergy ERT"),
    "explore": Command(
        "tlm_models.cli.explore_cmd",
        "search dataflow parameters and platforms for the best attention under limits",
        "Branch and bound over a space of dataflow parameters (--space, --vary "
        "NAME=...) and platform parameters (--vary component.parameter=...): closed-form bytes "
        "and lower bounds first, simulations (cached in DIR, resumable, local or Dask) only "
        "for points that can still beat the best. Writes DIR/front.md, explore.json, front.png.",
    ),
    "area": Command(
        "tlm_models.cli.area_cmd",
        "area and leakage of every component of a platform, with sources",
    ),
    "vp-job": Command(
        "tlm_models.cli.vp_job_cmd",
        "write a dataflow's command stream, tensors and C header for a virtual prototype",
        "Emits the dataflow's trace for the workload and an accelerator-shaped "
        "platform, renumbers its engines to the accelerator's, moves its tensors to the VP's "
        "address (--tensors-at) and writes OUT/commands.bin, one OUT/<tensor>.bin per input "
        "and OUT/job.h (register offsets, the job's addresses, the counters to expect).",
    ),
    "reproduce": Command(
        "tlm_models.cli.reproduce_cmd",
        "run a published study as a preset (resumable), with its report",
        "attenio: the AttenIO paper's evaluation on platforms/attenio.yaml under "
        "two settings (as published; strong baselines), a cache-size sweep, the crossover "
        "over HBM bandwidth x head dim, and what flips the verdict (one modelling assumption "
        "at a time). Running it again resumes.",
    ),
}


def add_command(subparsers: argparse._SubParsersAction[Parser], name: str) -> Parser:
    """The parser of command ``name``, with its help and description from ``COMMANDS``."""
    command = COMMANDS[name]
    return subparsers.add_parser(name, help=command.help, description=command.description)
