"""Entry point of the ``attn-tlm`` console script.

Each command group lives in its own module exposing ``register(subparsers)``; a command's
handler takes the parsed arguments and returns the exit code. A ``UserError`` anywhere becomes
one message on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from tlm_models.errors import SimulationError, UserError

# Every command: the module that registers it and its one-line help. A module is imported only
# when its command runs, so `attn-tlm --help` lists the commands without loading numpy, the
# dataflows or matplotlib; tests/test_cli_main.py checks each help against the module's own.
COMMANDS: dict[str, tuple[str, str]] = {
    "config": (
        "tlm_models.cli.config_cmd",
        "compiler flags and package directories for C++ builds that use the models",
    ),
    "demo": (
        "tlm_models.cli.demo_cmd",
        "run the AttenIO paper's study on the default platform and print its summary",
    ),
    "run": (
        "tlm_models.cli.run_cmd",
        "simulate one dataflow on one platform and report where the time goes",
    ),
    "bounds": (
        "tlm_models.cli.bounds_cmd",
        "closed-form off-chip traffic per dataflow and the I/O lower bounds",
    ),
    "platform": ("tlm_models.cli.platform_cmd", "check or show a platform file"),
    "trace": ("tlm_models.cli.trace_cmd", "check, convert and summarise trace files"),
    "sweep": (
        "tlm_models.cli.study_cmd",
        "run a grid of attention studies into a directory (resumable)",
    ),
    "report": ("tlm_models.cli.study_cmd", "write DIR/report.md and plots from a sweep's results"),
    "replay": (
        "tlm_models.cli.replay_cmd",
        "replay a trace on a platform and report where the time goes",
    ),
    "energy": ("tlm_models.cli.energy_cmd", "export action counts, import an Accelergy ERT"),
    "vp-job": (
        "tlm_models.cli.vp_job_cmd",
        "write a dataflow's command stream, tensors and C header for a virtual prototype",
    ),
    "reproduce": (
        "tlm_models.cli.reproduce_cmd",
        "run a published study as a preset (resumable), with its report",
    ),
}


class SuggestingParser(argparse.ArgumentParser):
    """argparse with a did-you-mean for mistyped options and choices (``--seqlen``)."""

    def error(self, message: str) -> NoReturn:
        super().error(message + suggestion(self, message))


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string of ``parser`` and of its sub-commands."""
    found: set[str] = set()
    for action in parser._actions:
        found.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _option_strings(sub)
    return found


def suggestion(
    parser: argparse.ArgumentParser, message: str, argv: Sequence[str] | None = None
) -> str:
    """``; did you mean: --seqlen -> --seq-len?`` for an argparse error message, or "".

    Mistyped options surface as "unrecognized arguments" or, when the mistyped one was
    required, as "the following arguments are required": then the command line (``argv``,
    default ``sys.argv``) names the typo."""
    options = sorted(_option_strings(parser))
    words: list[str] = []
    unknown = re.match(r"unrecognized arguments: (.*)", message)
    if unknown:
        words = unknown.group(1).split()
    elif message.startswith("the following arguments are required"):
        words = list(sys.argv[1:] if argv is None else argv)
    guesses = [
        f"{word} -> {close[0]}"
        for word in dict.fromkeys(w.split("=")[0] for w in words)
        if word.startswith("-")
        and word not in options
        and (close := difflib.get_close_matches(word, options, n=1, cutoff=0.6))
    ]
    if guesses:
        return f"; did you mean: {', '.join(guesses)}?"
    choice = re.match(r"argument [^:]+: invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if choice:
        choices = [c.strip().strip("'") for c in choice.group(2).split(",")]
        close = difflib.get_close_matches(choice.group(1), choices, n=1)
        return f"; did you mean '{close[0]}'?" if close else ""
    return ""


def _command_of(argv: Sequence[str]) -> str | None:
    """The command word of a command line (the first argument not an option), if any."""
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with ``command`` fully registered (every command when None); the other
    commands get a placeholder carrying their help line."""
    parser = SuggestingParser(
        prog="attn-tlm",
        description="SystemC TLM-2.0 models of attention accelerators: "
        "platforms, traces, replay and design-space sweeps.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    wanted = (
        {m for m, _ in COMMANDS.values()}
        if command is None
        else {COMMANDS[command][0]}
        if command in COMMANDS
        else set()
    )
    registered: set[str] = set()
    for name, (module, helptext) in COMMANDS.items():
        if module in wanted and module not in registered:
            importlib.import_module(module).register(sub)
            registered.add(module)
        elif module not in wanted:
            sub.add_parser(name, help=helptext)
    return parser


#: numpy's OpenBLAS starts a thread per core when it is imported, and they spin for a while:
#: 0.1 s of CPU per process (a quarter of a first result's), taken from the other simulation
#: on a 2-core machine. The simulations do no linear algebra; a user's own setting wins.
BLAS_THREADS = {"OPENBLAS_NUM_THREADS": "1"}


def main(argv: Sequence[str] | None = None) -> int:
    for name, value in BLAS_THREADS.items():
        os.environ.setdefault(name, value)  # before numpy is imported, here and in the workers
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command_of(arguments) or "")
    args = parser.parse_args(arguments)
    try:
        code: int = args.func(args)
    except UserError as exc:
        print(f"attn-tlm: error: {exc}", file=sys.stderr)
        return UserError.exit_code
    except SimulationError as exc:
        print(f"attn-tlm: simulation failed: {exc}", file=sys.stderr)
        return SimulationError.exit_code
    except KeyboardInterrupt:
        print("attn-tlm: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): not an error of ours. Point stdout at /dev/null
        # so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    return code


if __name__ == "__main__":
    sys.exit(main())
