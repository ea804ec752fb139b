"""The ``--platform FILE`` and ``--set KEY=VALUE`` options, declared once for every command."""

from __future__ import annotations

import argparse

from tlm_models.run.config import DEFAULT_PLATFORM

__all__ = ["add_override_arg", "add_platform_args"]


def add_platform_args(
    parser: argparse.ArgumentParser,
    *,
    default: str | None = DEFAULT_PLATFORM,
    platform_help: str | None = None,
) -> None:
    """Adds ``--platform`` (into ``args.platform``) and repeatable ``--set`` (into
    ``args.overrides``); ``default=None`` makes the platform optional (no default file)."""
    parser.add_argument(
        "--platform",
        metavar="FILE",
        default=default,
        help=platform_help or f"platform YAML (default {default})",
    )
    add_override_arg(parser)


def add_override_arg(parser: argparse.ArgumentParser) -> None:
    """Adds repeatable ``--set KEY=VALUE`` (into ``args.overrides``)."""
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a platform parameter, e.g. --set sram.capacity=256KiB (repeatable; "
        "checked before anything runs)",
    )
