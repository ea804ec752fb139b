"""Entry point of the ``attn-tlm`` console script.

Each command group lives in its own module exposing ``register(subparsers)``; a command's
handler takes the parsed arguments and returns the exit code. A ``UserError`` anywhere becomes
one message on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
