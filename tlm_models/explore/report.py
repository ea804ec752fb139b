"""An exploration's outputs: the front as a table (front.md), JSON (explore.json) and a plot
(front.png), each point with the ``attn-tlm run`` command that reproduces it."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tlm_models.explore.pareto import OBJECTIVES, Constraints
from tlm_models.explore.search import Outcome
from tlm_models.run.config import DEFAULT_PLATFORM, RunConfig, mask_text

__all__ = [
    "JSON_FILE",
    "PLOT_FILE",
    "TABLE_FILE",
    "outcome_json",
    "run_command",
    "table",
    "write_outputs",
]

JSON_FILE = "explore.json"
TABLE_FILE = "front.md"
PLOT_FILE = "front.png"


def run_command(config: RunConfig) -> str:
    """The ``attn-tlm run`` command line that simulates ``config``."""
    words = ["attn-tlm", "run", "--dataflow", config.dataflow]
    words += ["--seq-len", str(config.seq_len), "--head-dim", str(config.head_dim)]
    optional = [
        ("--heads", config.heads, 1),
        ("--kv-heads", config.kv_heads, config.heads),
        ("--kv-len", config.kv_len, config.seq_len),
        ("--batch", config.batch, 1),
        ("--mask", mask_text(config.mask, config.window), "none"),
        ("--phase", config.phase, "prefill"),
        ("--layers", config.layers, 1),
    ]
    for flag, value, default in optional:
        if value != default:
            words += [flag, str(value)]
    if config.platform != DEFAULT_PLATFORM:
        words += ["--platform", config.platform]
    for item in config.overrides:
        words += ["--set", item]
    for name, value in config.extra:
        words += ["--param", f"{name}={value}"]
    if config.exact:
        words.append("--exact")
    return shlex.join(words)


def _point(out: Outcome, key: str) -> dict[str, Any]:
    cand = out.candidate(key)
    m = out.measured[key]
    return {
        "dataflow": cand.config.dataflow,
        "params": dict(cand.config.extra),
        "overrides": list(cand.config.overrides),
        "tile": dict(cand.estimate.tile),
        "time_ms": m.time_s * 1e3,
        "energy_mj": m.energy_j * 1e3,
        "power_w": m.power_w,
        "edp_mj_ms": m.energy_j * m.time_s * 1e6,
        "bytes": m.bytes,
        "area_mm2": m.area_mm2,
        "bounds": dict(zip(out.objectives, cand.bound(out.objectives), strict=True)),
        "command": run_command(cand.config),
    }


def outcome_json(
    out: Outcome, constraints: Constraints, references: Sequence[str] = ()
) -> dict[str, Any]:
    """Everything the exploration found: counts, the front, every simulated point, and how
    each reference point compares with the best (bytes over every fitting point, exact)."""
    fitting = len(out.candidates)
    data: dict[str, Any] = {
        "objectives": list(out.objectives),
        "constraints": {k: v for k, v in vars(constraints).items() if v is not None},
        "counts": {
            "space": out.space_size,
            "fit_and_within_limits": fitting,
            "dropped_closed_form": len(out.dropped),
            "simulated": out.simulated,
            "ran_now": out.ran,
            "from_store": out.reused,
            "rejected_after_simulation": len(out.rejected),
            "failed": len(out.failed),
            "fraction_of_enumeration": out.simulated / fitting if fitting else 0.0,
        },
        "front": [_point(out, key) for key in out.front()],
        "simulated": [_point(out, key) for key in out.measured],
        "rejected": out.rejected,
        "failed": out.failed,
        "bound_violations": out.bound_violations,
        "interrupted": out.interrupted,
    }
    if out.candidates:
        least = min(out.candidates, key=lambda c: c.estimate.bytes)
        data["least_bytes"] = {
            "bytes": least.estimate.bytes,
            "params": dict(least.config.extra),
            "overrides": list(least.config.overrides),
            "points_with_least_bytes": sum(
                1 for c in out.candidates if c.estimate.bytes == least.estimate.bytes
            ),
        }
    data["references"] = [_reference(out, key) for key in references if key in out.measured]
    return data


def _reference(out: Outcome, key: str) -> dict[str, Any]:
    """A reference point beside the optimum of each objective it was searched for."""
    point = _point(out, key)
    least_bytes = min(c.estimate.bytes for c in out.candidates)
    point["least_bytes"] = point["bytes"] == least_bytes
    point["bytes_over_least"] = point["bytes"] / least_bytes
    best = out.front()
    for objective in out.objectives:
        top = min(out.measured[k].value(objective) for k in best)
        mine = out.measured[key].value(objective)
        point[f"{objective}_over_best"] = mine / top if top else 1.0
    return point


def _cell(value: float | None, scale: float, digits: int) -> str:
    return "—" if value is None else f"{value * scale:.{digits}f}"


def table(out: Outcome) -> str:
    """The front as a Markdown table, one row per point, its command below the table."""
    header = (
        "| # | dataflow | params | overrides | time ms | energy mJ | power W | area mm^2 | MiB |"
    )
    lines = [header, "|" + "---|" * 9]
    commands = []
    for i, key in enumerate(out.front(), 1):
        cand, m = out.candidate(key), out.measured[key]
        params = " ".join(f"{k}={v}" for k, v in cand.config.extra) or "defaults"
        overrides = " ".join(cand.config.overrides) or "—"
        lines.append(
            f"| {i} | {cand.config.dataflow} | {params} | {overrides} | "
            f"{m.time_s * 1e3:.3f} | {m.energy_j * 1e3:.2f} | {m.power_w:.3f} | "
            f"{_cell(m.area_mm2, 1, 3)} | {m.bytes / 2**20:.1f} |"
        )
        commands.append(f"{i}. `{run_command(cand.config)}`")
    return "\n".join([*lines, "", *commands]) + "\n"


def summary_lines(out: Outcome) -> list[str]:
    """How much the search simulated against a full enumeration."""
    fitting = len(out.candidates)
    share = f"{100 * out.simulated / fitting:.1f} %" if fitting else "—"
    lines = [
        f"space: {out.space_size} points, {fitting} fit and pass the closed-form limits "
        f"({len(out.dropped)} dropped without simulating)",
        f"simulated: {out.simulated} of {fitting} ({share} of a full enumeration; "
        f"{out.ran} run now, {out.reused} from the store)",
    ]
    if out.rejected:
        lines.append(f"{len(out.rejected)} simulated points broke a limit (power or time)")
    if out.failed:
        lines.append(f"{len(out.failed)} simulations failed (errors in results.jsonl)")
    for violation in out.bound_violations:
        lines.append(f"warning: a lower bound was not met: {violation}")
    return lines


def plot(out: Outcome, path: Path) -> None:
    """Simulated points and the front on the first two objectives (one objective: against
    off-chip bytes, or time when the objective is bytes); the bounds of points never
    simulated as hollow markers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    axes_names = list(out.objectives[:2])
    if len(axes_names) == 1:
        axes_names.append("time" if axes_names[0] == "bytes" else "bytes")
    scale = {"time": 1e3, "energy": 1e3, "edp": 1e6, "area": 1.0, "bytes": 1 / 2**20}

    def coords(values: Sequence[float]) -> tuple[float, float]:
        return values[0] * scale[axes_names[0]], values[1] * scale[axes_names[1]]

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    skipped = [c for c in out.candidates if c.key not in out.measured and c.key not in out.rejected]
    if skipped:
        xs, ys = zip(*(coords(c.bound(axes_names)) for c in skipped), strict=True)
        ax.scatter(xs, ys, facecolors="none", edgecolors="0.6", s=18, label="bound, not simulated")
    keys = list(out.measured)
    if keys:
        pts = [coords([out.measured[k].value(o) for o in axes_names]) for k in keys]
        ax.scatter([x for x, _ in pts], [y for _, y in pts], c="tab:blue", s=18, label="simulated")
    best = out.front()
    if best:
        pts = sorted(coords([out.measured[k].value(o) for o in axes_names]) for k in best)
        ax.plot(
            *zip(*pts, strict=True),
            "o-",
            c="tab:red",
            ms=5,
            label="front" if len(out.objectives) > 1 else "best",
        )
    ax.set_xlabel(f"{OBJECTIVES[axes_names[0]][1]} ({_unit(axes_names[0])})")
    ax.set_ylabel(f"{OBJECTIVES[axes_names[1]][1]} ({_unit(axes_names[1])})")
    _log_when_wide(ax)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


#: An axis whose values span more than this ratio is drawn logarithmic.
LOG_SPAN = 20.0


def _log_when_wide(ax: Any) -> None:
    """Log axes where the points span more than LOG_SPAN (bounds of tiny tiles reach far)."""
    offsets = [xy for coll in ax.collections for xy in coll.get_offsets()]
    offsets += [xy for line in ax.lines for xy in line.get_xydata()]
    for index, setter in ((0, ax.set_xscale), (1, ax.set_yscale)):
        values = [float(xy[index]) for xy in offsets if float(xy[index]) > 0]
        if values and max(values) / min(values) > LOG_SPAN:
            setter("log")


def _unit(objective: str) -> str:
    return {"time": "ms", "energy": "mJ", "edp": "mJ·ms", "area": "mm²", "bytes": "MiB"}[objective]


def write_outputs(
    out: Outcome,
    directory: Path,
    constraints: Constraints,
    references: Sequence[str] = (),
    *,
    with_plot: bool = True,
) -> dict[str, Path]:
    """Writes explore.json, front.md and (unless ``with_plot`` is off) front.png."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {"json": directory / JSON_FILE, "table": directory / TABLE_FILE}
    paths["json"].write_text(
        json.dumps(outcome_json(out, constraints, references), indent=2) + "\n", encoding="utf-8"
    )
    paths["table"].write_text("\n".join(summary_lines(out)) + "\n\n" + table(out), encoding="utf-8")
    if with_plot and out.measured:
        paths["plot"] = directory / PLOT_FILE
        plot(out, paths["plot"])
    return paths
