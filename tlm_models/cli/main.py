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

# Command-group modules, imported lazily so `attn-tlm --help` stays fast.
COMMAND_MODULES = (
    "tlm_models.cli.config_cmd",
    "tlm_models.cli.demo_cmd",
    "tlm_models.cli.run_cmd",
    "tlm_models.cli.bounds_cmd",
    "tlm_models.cli.platform_cmd",
    "tlm_models.cli.trace_cmd",
    "tlm_models.cli.study_cmd",
    "tlm_models.cli.replay_cmd",
    "tlm_models.cli.energy_cmd",
    "tlm_models.cli.reproduce_cmd",
)


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


def build_parser() -> argparse.ArgumentParser:
    parser = SuggestingParser(
        prog="attn-tlm",
        description="SystemC TLM-2.0 models of attention accelerators: "
        "platforms, traces, replay and design-space sweeps.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
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
