"""Entry point of the ``attn-tlm`` console script.

Each command group lives in its own module exposing ``register(subparsers)``; a command's
handler takes the parsed arguments and returns the exit code. A ``UserError`` anywhere becomes
one message on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import os
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO, cast

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
    "explore": (
        "tlm_models.cli.explore_cmd",
        "search dataflow parameters and platforms for the best attention under limits",
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
    "area": (
        "tlm_models.cli.area_cmd",
        "area and leakage of every component of a platform, with sources",
    ),
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
        alias = CHOICE_ALIASES.get(re.sub(r"[\s_-]", "", choice.group(1).lower()))
        if alias in choices:
            return f"; did you mean '{alias}'?"
        close = difflib.get_close_matches(choice.group(1), choices, n=1)
        return f"; did you mean '{close[0]}'?" if close else ""
    return ""


#: Names users give choices (dataflows as the papers and docs spell them, lower-case with
#: spaces, '-' and '_' removed) -> the choice: a full name is no typo of a short one, and
#: difflib would match ``flashattention2`` to ``attenio``.
CHOICE_ALIASES = {
    "flashattention2": "flash2",
    "flashattention": "flash2",
    "flash": "flash2",
    "fa2": "flash2",
    "fa": "flash2",
    "standardattention": "standard",
    "vanilla": "standard",
    "naive": "standard",
    "flatattention": "flat",
    "approximate": "approx",
    "approximateattention": "approx",
    "polynomial": "approx",
}


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


def _silence_stdout() -> None:
    """Points stdout at /dev/null so the interpreter's final flush does not fail again."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _error_line(text: str) -> None:
    from tlm_models.bounded_input import escape_controls  # the error path only

    with contextlib.suppress(OSError, ValueError):
        print(f"attn-tlm: {escape_controls(text)}", file=sys.stderr, flush=True)


class _NamedStdout:
    """Standard output whose write errors name it (a bare OSError names no file)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def _named(self, exc: OSError) -> OSError:
        if isinstance(exc, BrokenPipeError) or exc.filename is not None:
            return exc
        return OSError(exc.errno, exc.strerror, "standard output")

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise self._named(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise self._named(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one command; every way out is an exit code and at most one line on stderr (a
    Ctrl-C at any moment, from parsing to the last write, included)."""
    stdout = sys.stdout
    sys.stdout = cast(TextIO, _NamedStdout(stdout))
    try:
        return _main(argv)
    finally:
        sys.stdout = stdout


def _main(argv: Sequence[str] | None) -> int:
    try:
        for name, value in BLAS_THREADS.items():
            os.environ.setdefault(name, value)  # before numpy is imported, here and in workers
        arguments = sys.argv[1:] if argv is None else list(argv)
        parser = build_parser(_command_of(arguments) or "")
        args = parser.parse_args(arguments)
        code: int = args.func(args)
        # Written here, inside the handlers: stdout on a full disk or a closed pipe fails on
        # this flush, not silently at the interpreter's exit.
        sys.stdout.flush()
    except UserError as exc:
        _error_line(f"error: {exc}")
        return UserError.exit_code
    except SimulationError as exc:
        _error_line(f"simulation failed: {exc}")
        return SimulationError.exit_code
    except KeyboardInterrupt:
        _error_line("interrupted")
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): not an error of ours.
        _silence_stdout()
        return 141
    except OSError as exc:
        # A file-system error no check foresaw (a disk filling up while writing, stdout on
        # /dev/full): one line naming the file, never a traceback.
        where = f"{exc.filename}: " if exc.filename is not None else ""
        _silence_stdout()
        _error_line(f"error: {where}{exc.strerror or exc}")
        return UserError.exit_code
    return code


if __name__ == "__main__":
    sys.exit(main())
