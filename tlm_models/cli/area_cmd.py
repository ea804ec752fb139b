"""``attn-tlm area PLATFORM``: each component's area and leakage at the platform's technology,
with its source, and the totals (docs/models/area.md)."""

from __future__ import annotations

import argparse
import json

from tlm_models.cli.platform_args import add_override_arg
from tlm_models.study.config import DEFAULT_PLATFORM


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    area = subparsers.add_parser(
        "area", help="area and leakage of every component of a platform, with sources"
    )
    area.add_argument(
        "platform", nargs="?", default=DEFAULT_PLATFORM, metavar="PLATFORM",
        help=f"platform YAML (default {DEFAULT_PLATFORM})",
    )  # fmt: skip
    add_override_arg(area)
    area.add_argument("--json", action="store_true", help="print JSON")
    area.set_defaults(func=_area)


def _area(args: argparse.Namespace) -> int:
    from tlm_models.platform import load_platform
    from tlm_models.platform.area.estimate import platform_area
    from tlm_models.study.config import resolve_platform

    config = load_platform(resolve_platform(args.platform), args.overrides)
    report = platform_area(config)
    if args.json:
        print(json.dumps({"platform": config.name, **report.to_dict()}, indent=2))
    else:
        print(f"{config.name}: " + "\n".join(report.lines()))
    return 0
