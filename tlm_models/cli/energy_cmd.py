"""``attn-tlm energy``: Accelergy interchange (docs/energy.md).

``energy export RESULT.json`` prints a run's action counts as Accelergy ``action_counts`` YAML;
``energy ert ERT.yaml`` prints the ``--set`` overrides an energy reference table stands for
(``run --ert`` applies them directly).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tlm_models.cli.commands import add_command
from tlm_models.files.bounded_input import read_json
from tlm_models.files.output_file import write_output
from tlm_models.run.config import DEFAULT_PLATFORM, resolve_platform


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    energy = add_command(subparsers, "energy")
    sub = energy.add_subparsers(dest="energy_command", metavar="SUBCOMMAND")
    sub.required = True
    export = sub.add_parser("export", help="a result's action counts as Accelergy YAML")
    export.add_argument("result", metavar="RESULT.json", help="the JSON of `attn-tlm run --json`")
    export.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    export.set_defaults(func=_export)
    ert = sub.add_parser("ert", help="the --set overrides of an Accelergy energy table")
    ert.add_argument("ert", metavar="ERT.yaml")
    ert.add_argument(
        "--platform", default=DEFAULT_PLATFORM, metavar="FILE",
        help=f"platform whose components the tables name (default {DEFAULT_PLATFORM})",
    )  # fmt: skip
    ert.set_defaults(func=_ert)


#: A result JSON is tens of KiB (a tiled run's per-tile statistics included); 64 MiB is far above.
MAX_RESULT_BYTES = 64 << 20


def _export(args: argparse.Namespace) -> int:
    from tlm_models.platform.energy.accelergy import action_counts_yaml

    result = read_json(Path(args.result), "result JSON", MAX_RESULT_BYTES)
    text = action_counts_yaml(result)
    if args.out:
        write_output(args.out, text, "action counts")
    else:
        print(text, end="")
    return 0


def ert_overrides_for(ert: str, platform: str) -> list[str]:
    """The overrides an ERT file stands for on `platform` (a path as --platform takes it)."""
    from tlm_models.platform import load_platform
    from tlm_models.platform.energy.accelergy import ert_overrides

    return ert_overrides(ert, load_platform(resolve_platform(platform)))


def _ert(args: argparse.Namespace) -> int:
    for override in ert_overrides_for(args.ert, args.platform):
        print(f"--set '{override}'")
    return 0
