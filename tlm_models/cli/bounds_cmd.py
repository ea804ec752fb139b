"""``attn-tlm bounds``: closed-form off-chip traffic of every dataflow beside the lower bounds."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from functools import partial
from typing import Any

from tlm_models.cli.platform_args import add_platform_args
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
from tlm_models.dataflows.workload import Workload, parse_count
from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo
from tlm_models.study.config import resolve_platform


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "bounds", help="closed-form off-chip traffic per dataflow and the I/O lower bounds"
    )
    p.add_argument("--seq-len", required=True, help="sequence length N (8192 or 8K)")
    p.add_argument("--head-dim", required=True, type=int, help="head dimension d")
    p.add_argument("--heads", type=int, default=1, help="attention heads (default 1)")
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


def bounds_report(
    workload: Workload, platform: PlatformInfo, degree: int = DEFAULT_DEGREE
) -> dict[str, Any]:
    """Every dataflow's traffic (elements and bytes, approx at ``degree``) and the bounds."""
    n, d, eb = workload.seq_len, workload.head_dim, workload.elem_bytes
    m = platform.capacity_elements(eb)
    heads = workload.head_count
    dataflows: dict[str, Any] = {}
    approx_params({"degree": degree})  # a bad degree is the user's error, not a table row
    formulas: dict[str, Callable[[], Traffic]] = {
        name: partial(f, workload, platform) for name, f in TRAFFIC.items()
    }
    formulas["approx"] = partial(approx_traffic, workload, platform, {"degree": degree})
    for name, formula in formulas.items():
        try:
            t = formula()
        except UserError as exc:
            dataflows[name] = {"error": str(exc)}
            continue
        dataflows[name] = {
            "elements": t.total_elements,
            "bytes": t.total_bytes,
            "per_tensor_elements": t.elements,
            "tile": t.tile,
        }
    mmm = mmm_lower_bound(n, d, m) * heads
    order = attention_order_bound(n, d, m) * heads
    r = feature_count(d, degree)
    approx_low = approx_lower_bound(n, d) * heads
    approx_tiled = approx_tiled_order(n, d, r, m) * heads
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
        bounds["approx_tiled_order"] = {
            "elements": approx_tiled,
            "bytes": approx_tiled * eb,
            "expression": f"N d r(d+1)/M, r = C(d+g, g) = {r}, g = {degree} "
            "(order of growth, constant 1)",
        }
    return {
        "seq_len": n,
        "head_dim": d,
        "heads": heads,
        "elem_bytes": eb,
        "platform": platform.name,
        "capacity_elements": m,
        "dataflows": dataflows,
        "bounds": bounds,
    }


def run(args: argparse.Namespace) -> int:
    platform = _platform(args.platform, args.overrides)
    workload = Workload(
        parse_count(args.seq_len), args.head_dim, heads=args.heads, elem_bytes=platform.elem_bytes
    )
    report = bounds_report(workload, platform, args.degree)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"N = {report['seq_len']}, d = {report['head_dim']}, heads = {report['heads']}, "
        f"M = {report['capacity_elements']} elements ({report['platform']})"
    )
    print(f"{'dataflow':<12} {'elements':>16} {'MiB':>12}  tile")
    for name, row in report["dataflows"].items():
        if "error" in row:
            print(f"{name:<12} {'does not fit':>16}  {row['error']}")
            continue
        tile = ", ".join(f"{k}={v}" for k, v in row["tile"].items())
        print(f"{name:<12} {row['elements']:>16,} {row['bytes'] / 2**20:>12.1f}  {tile}")
    for key, label in (
        ("mmm_lower_bound", "MMM lower bound"),
        ("attention_order_bound", "order of growth"),
        ("approx_lower_bound", "approx lower"),
        ("approx_tiled_order", "approx tiled"),
    ):
        if key not in report["bounds"]:
            continue
        b = report["bounds"][key]
        print(f"{label:<16} {b['elements']:>12,.0f} {b['bytes'] / 2**20:>12.1f}  {b['expression']}")
    return 0
