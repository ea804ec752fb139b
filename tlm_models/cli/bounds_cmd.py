"""``attn-tlm bounds``: closed-form off-chip traffic of every dataflow beside the lower bounds."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from functools import partial
from typing import Any

from tlm_models.cli.commands import add_command
from tlm_models.cli.platform_args import add_platform_args
from tlm_models.cli.workload_args import add_workload_args, workload_grid
from tlm_models.dataflows.approx import DEFAULT_DEGREE, approx_params
from tlm_models.dataflows.io_formulas import (
    TRAFFIC,
    Traffic,
    approx_lower_bound,
    approx_tiled_order,
    approx_traffic,
    attention_order_bound,
    mmm_lower_bound,
)
from tlm_models.dataflows.polynomial import feature_count
from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo
from tlm_models.run.config import WORKLOAD_FIELDS, resolve_platform
from tlm_models.study.grid import workload_fields
from tlm_models.workload.spec import Workload, check_supported


def register(subparsers: Any) -> None:
    p = add_command(subparsers, "bounds")
    add_workload_args(p)
    add_platform_args(p)
    p.add_argument(
        "--degree",
        type=int,
        default=DEFAULT_DEGREE,
        help=f"polynomial degree g of the approx dataflow (default {DEFAULT_DEGREE})",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def _platform(path: str, overrides: list[str]) -> PlatformInfo:
    from tlm_models.platform import load_platform

    return load_platform(resolve_platform(path), overrides).info()


def _traffic_row(formula: Callable[[], Traffic]) -> dict[str, Any]:
    try:
        t = formula()
    except UserError as exc:
        return {"error": str(exc)}
    return {
        "elements": t.total_elements,
        "bytes": t.total_bytes,
        "per_tensor_elements": t.elements,
        "tile": t.tile,
    }


def _dense_bounds(workload: Workload, m: int, degree: int) -> dict[str, Any]:
    """The lower bounds of dense self-attention (N x N scores, one head per K/V head)."""
    n, d, eb, heads = workload.seq_len, workload.head_dim, workload.elem_bytes, workload.head_count
    mmm = mmm_lower_bound(n, d, m) * heads
    order = attention_order_bound(n, d, m) * heads
    r = feature_count(d, degree)
    approx_low = approx_lower_bound(n, d) * heads
    bounds: dict[str, Any] = {
        "mmm_lower_bound": {
            "elements": mmm,
            "bytes": mmm * eb,
            "expression": "Nd + N^2 d(d+1)/(M-d) + N^2",
        },
        "attention_order_bound": {
            "elements": order,
            "bytes": order * eb,
            "expression": "Theta(N^2 d^2 / M), constant 1",
        },
        "approx_lower_bound": {
            "elements": approx_low,
            "bytes": approx_low * eb,
            "expression": "4Nd: read Q, K, V and write O once (Case I, Omega(Nd))",
        },
    }
    if r * (d + 1) > m:  # H does not fit: the tiled regime
        tiled = approx_tiled_order(n, d, r, m) * heads
        bounds["approx_tiled_order"] = {
            "elements": tiled,
            "bytes": tiled * eb,
            "expression": f"N d r(d+1)/M, r = C(d+g, g) = {r}, g = {degree} "
            "(order of growth, constant 1)",
        }
    return bounds


def bounds_report(
    workload: Workload, platform: PlatformInfo, degree: int = DEFAULT_DEGREE, layers: int = 1
) -> dict[str, Any]:
    """Every dataflow's traffic (elements and bytes, approx at ``degree``; a dataflow that
    cannot run the workload says why), the compulsory floor and, for dense self-attention,
    the lower bounds. Figures are per layer; ``layers`` is reported beside them."""
    eb = workload.elem_bytes
    m = platform.capacity_elements(eb)
    approx_params({"degree": degree})  # a bad degree is the user's error, not a table row
    formulas: dict[str, Callable[[], Traffic]] = {
        name: partial(f, workload, platform) for name, f in TRAFFIC.items()
    }
    formulas["approx"] = partial(approx_traffic, workload, platform, {"degree": degree})
    dataflows: dict[str, Any] = {}
    for name, formula in formulas.items():
        try:
            check_supported(name, workload)
        except UserError as exc:
            dataflows[name] = {"unsupported": str(exc)}
            continue
        dataflows[name] = _traffic_row(formula)
    floor = workload.compulsory_elements()
    bounds: dict[str, Any] = {
        "compulsory": {
            "elements": sum(floor.values()),
            "bytes": sum(floor.values()) * eb,
            "per_tensor_elements": floor,
            "expression": "Q and O once per query head, the K and V rows some query sees "
            "once per K/V head",
        }
    }
    if workload.dense:
        bounds.update(_dense_bounds(workload, m, degree))
    return {
        **{name: getattr(workload, name) for name in WORKLOAD_FIELDS},
        "layers": layers,
        "workload": workload.describe(),
        "elem_bytes": eb,
        "platform": platform.name,
        "capacity_elements": m,
        "dataflows": dataflows,
        "bounds": bounds,
    }


def workload_of_args(args: argparse.Namespace, elem_bytes: int) -> tuple[Workload, int, str]:
    """The workload the options name at ``elem_bytes``, its layer count and model label."""
    fields = workload_fields(workload_grid(args))[0]
    layers, model = int(fields.pop("layers")), str(fields.pop("model"))
    return Workload(**fields, elem_bytes=elem_bytes), layers, model


def run(args: argparse.Namespace) -> int:
    platform = _platform(args.platform, args.overrides)
    workload, layers, model = workload_of_args(args, platform.elem_bytes)
    report = bounds_report(workload, platform, args.degree, layers)
    if model:
        report["model"] = model
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"{report['workload']}{f' ({model})' if model else ''}; "
        f"M = {report['capacity_elements']} elements ({report['platform']})"
    )
    total = f"{'x ' + str(layers) + ' layers':>16}" if layers > 1 else ""
    print(f"{'dataflow':<12} {'elements':>16} {'MiB':>12} {'x floor':>8}{total}  tile")
    floor = report["bounds"]["compulsory"]["bytes"]
    for name, row in report["dataflows"].items():
        if "unsupported" in row:
            why = row["unsupported"].rpartition(" (")[0] or row["unsupported"]
            print(f"{name:<12} {'not supported':>16}  {why}")
        elif "error" in row:
            print(f"{name:<12} {'does not fit':>16}  {row['error']}")
        else:
            tile = ", ".join(f"{k}={v}" for k, v in row["tile"].items())
            all_layers = f"{row['bytes'] * layers / 2**20:>12.1f} MiB" if layers > 1 else ""
            print(
                f"{name:<12} {row['elements']:>16,} {row['bytes'] / 2**20:>12.1f} "
                f"{row['bytes'] / floor:>8.2f}{all_layers}  {tile}"
            )
    for key, label in (
        ("compulsory", "compulsory floor"),
        ("mmm_lower_bound", "MMM lower bound"),
        ("attention_order_bound", "order of growth"),
        ("approx_lower_bound", "approx lower"),
        ("approx_tiled_order", "approx tiled"),
    ):
        if key not in report["bounds"]:
            continue
        b = report["bounds"][key]
        print(f"{label:<16} {b['elements']:>12,.0f} {b['bytes'] / 2**20:>12.1f}  {b['expression']}")
    if not workload.dense:
        print("(the MMM and order-of-growth bounds are stated for dense self-attention only)")
    return 0
