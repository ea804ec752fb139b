"""`attn-tlm platform check|show`: validate a platform file, or print what it describes.

`check` exits 0 when the file (with its overrides) is valid and 2 with every problem otherwise;
`show` prints the component tree with units, the address map with its routes, the bindings and
the derived peak figures, or with `--json` the same as stable JSON (sorted keys, SI numbers).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from tlm_models.cli.commands import add_command
from tlm_models.cli.platform_args import add_override_arg
from tlm_models.platform import load_platform
from tlm_models.platform.schema import PlatformConfig
from tlm_models.run.config import resolve_platform
from tlm_models.units import format_address, format_bandwidth, format_size


def register(subparsers: Any) -> None:
    """Adds the `platform` command group."""
    parser = add_command(subparsers, "platform")
    sub = parser.add_subparsers(dest="platform_command", metavar="ACTION")
    sub.required = True
    for name, helptext, handler in (
        ("check", "validate a platform file (exit 0 valid, 2 invalid)", _check),
        ("show", "print components, address map, bindings and peak figures", _show),
    ):
        action = sub.add_parser(name, help=helptext)
        action.add_argument(
            "file",
            metavar="FILE",
            help="platform YAML file, found as `run --platform` finds it (working directory, "
            "then the package's platforms/; or a shipped platform's name, e.g. attenio-x4)",
        )
        add_override_arg(action)
        if name == "show":
            action.add_argument("--json", action="store_true", help="print JSON")
        action.set_defaults(func=handler)


def _check(args: argparse.Namespace) -> int:
    config = load_platform(resolve_platform(args.file), args.overrides)
    if _has_compute(config):
        # A platform with compute engines is meant to run dataflows: hold it to what `run`
        # requires of one (one element width, one scratchpad and KV buffer), so that check
        # never says ok to a file `run` refuses.
        config.info()
    print(
        f"{args.file}: ok: platform '{config.name}', {len(config.components)} components, "
        f"{len(config.bindings)} bindings, {len(config.engines)} engines"
    )
    return 0


def _has_compute(config: PlatformConfig) -> bool:
    types = {c.type for c in config.components.values()}
    return "pe_array" in types or "exp_unit" in types


def _show(args: argparse.Namespace) -> int:
    config = load_platform(resolve_platform(args.file), args.overrides)
    if args.json:
        print(json.dumps(config.to_dict(), sort_keys=True, indent=2))
    else:
        print(render_text(config))
    return 0


def render_text(config: PlatformConfig) -> str:
    """The human-readable view of `platform show`."""
    lines = [f"platform {config.name}"]
    if config.description:
        lines.append(f"  {config.description}")
    lines.append("components:")
    for comp in config.components.values():
        spec = comp.spec
        role = f", role {comp.role}" if comp.role else ""
        lines.append(f"  {comp.name}: {comp.type} ({spec.qualified_class}{role})")
        width = max(len(p.name) for p in spec.params)
        lines.extend(f"    {p.name:<{width}}  {comp.display(p.name)}" for p in spec.params)
        if comp.energy is not None:
            entries = ", ".join(f"{a} {text}" for a, text in comp.energy.to_dict().items())
            lines.append(f"    {'energy':<{width}}  {entries}")
    lines.append("bindings:")
    lines.extend(f"  {b}" for b in config.bindings)
    lines.append("address map:")
    for entry in config.address_map:
        routes = [
            f"{r.interconnect}.out[{r.out_index}]"
            for r in config.routes
            if r.base == entry.base and r.target == entry.target
        ]
        via = f"  routed by {', '.join(routes)}" if routes else ""
        lines.append(
            f"  {format_address(entry.base)} .. {format_address(entry.end - 1)}  "
            f"{format_size(entry.size):>9}  {entry.target}{via}"
        )
    lines.append("engines:")
    lines.extend(f"  {e.name:<6} {e.path} ({e.kind})" for e in config.engines.values())
    figures = config.derived()
    lines.append("derived peak figures:")
    lines.append(f"  PE array         {figures.pe_flops / 1e12:.4g} TFLOP/s")
    lines.append(f"  Exp unit         {figures.exp_per_s / 1e9:.4g} G exp/s")
    lines.append(f"  off-chip         {format_bandwidth(figures.offchip_bandwidth)}")
    if figures.machine_balance is not None:
        lines.append(f"  machine balance  {figures.machine_balance:.4g} FLOP/B")
    elements = (
        f" = {figures.onchip_elements:,} elements" if figures.onchip_elements is not None else ""
    )
    lines.append(f"  on-chip          {format_size(figures.onchip_bytes)}{elements}")
    return "\n".join(lines)
