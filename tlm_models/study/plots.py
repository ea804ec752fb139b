"""Sweep plots (PNG + SVG): speedup, off-chip bytes beside their bounds, utilization, stalls
and overlap, a timeline excerpt of each dataflow from DIR/timelines/*.json, and, when approx
ran, off-chip bytes against N with fitted slopes and approx's time/traffic/error trade-off.

Timelines are Chrome trace JSON: ``{"traceEvents": [{"name", "ph": "X", "ts", "dur", "pid",
"tid"}, ...]}`` with times in microseconds; ``"M"`` events named ``thread_name`` /
``process_name`` label the rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from tlm_models.errors import UserError
from tlm_models.files.bounded_input import read_json
from tlm_models.files.output_file import save_figure
from tlm_models.run.config import DATAFLOWS
from tlm_models.study.approx_study import (
    TradeoffRow,
    approx_records,
    slope_series,
    tradeoff_rows,
)
from tlm_models.study.design_space import (
    METRICS,
    Axis,
    axis_position,
    design_heading,
    swept_axes,
)
from tlm_models.study.energy_report import energy_heading
from tlm_models.study.explain import BOUND_NAMES
from tlm_models.study.tile_report import TILE_HEADING, plot_tile_scaling, tile_series
from tlm_models.study.variants import (
    Variant,
    approx_heading,
    format_tokens,
    group_variants,
    label_of,
    labels_in,
    metric,
)

__all__ = [
    "TIMELINE_DIR",
    "plot_approx",
    "plot_design_axis",
    "plot_timelines",
    "plot_variant",
    "write_plots",
]

TIMELINE_DIR = "timelines"
_MIB = 2**20
_PALETTE = plt.get_cmap("tab10")
#: One colour for each part of an engine's time (explain.TIME_PARTS: 14).
_PARTS_PALETTE = plt.get_cmap("tab20")
#: Legends of many series go under their panel, clear of the lines.
_LEGEND_BELOW: dict[str, Any] = {
    "fontsize": 8,
    "loc": "upper center",
    "bbox_to_anchor": (0.5, -0.2),
    "ncol": 2,
}


def write_plots(
    directory: Path, records: Sequence[dict[str, Any]]
) -> dict[str, list[tuple[str, str]]]:
    """Writes every plot into ``directory``; maps section title to (caption, PNG) pairs: the
    variant's title, its ``approx_heading`` (when approx ran), "" for the whole sweep."""
    from tlm_models.study.energy_plots import plot_energy  # it draws with this module's helpers

    variants = group_variants(records)
    titled = len(variants) > 1
    figures: dict[str, list[tuple[str, str]]] = {}
    for index, variant in enumerate(variants):
        suffix = f"-{index + 1}" if titled else ""
        figures[variant.title()] = plot_variant(variant, directory, suffix)
        figures[energy_heading(variant, titled)] = plot_energy(variant, directory, suffix)
        if approx_records(variant.records):
            figures[approx_heading(variant, titled)] = plot_approx(variant, directory, suffix)
    for index, axis in enumerate(swept_axes(records)):
        png = f"design-{index + 1}.png"
        plot_design_axis(axis, directory / png)
        figures[design_heading(axis)] = [(f"Time and off-chip traffic against {axis.key}", png)]
    series = tile_series(records)
    if series:
        plot_tile_scaling(series, directory / "tile-scaling.png")
        figures[TILE_HEADING] = [("Speedup against tiles", "tile-scaling.png")]
    traces = sorted((directory / TIMELINE_DIR).glob("*.json"), key=_dataflow_order)
    if traces:
        plot_timelines(traces, directory / "timeline.png")
        figures[""] = [("Timeline excerpts", "timeline.png")]
    return figures


def plot_variant(variant: Variant, directory: Path, suffix: str = "") -> list[tuple[str, str]]:
    """The metric plots of one variant's exact-attention study (approx runs and a side
    study's shapes have their own section); returns (caption, PNG file name) pairs."""
    records = variant.main_records()
    if not records:
        return []
    head_dims = sorted({int(r["head_dim"]) for r in records})
    colors = {label: _PALETTE(i % 10) for i, label in enumerate(labels_in(records))}
    written: list[tuple[str, str]] = []

    def save(fig: Figure, stem: str, caption: str) -> None:
        fig.suptitle(f"{caption} — {variant.title()}", fontsize=11)
        _save(fig, directory / f"{stem}{suffix}.png")
        written.append((caption, f"{stem}{suffix}.png"))

    baseline_dims = sorted({int(r["head_dim"]) for r in records if label_of(r) == "standard"})
    if baseline_dims:
        fig, axes = _grid(1, len(baseline_dims))
        for ax, d in zip(axes[0], baseline_dims, strict=True):
            subset = [r for r in records if int(r["head_dim"]) == d]
            value = partial(_speedup, records=subset)
            _grouped_bars(ax, subset, colors, value, {"standard"})
            ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
            _log_when_wide(ax, [v for r in subset if (v := value(r))])
            ax.set_ylabel("Speedup over standard (×)")
            ax.set_title(f"d = {d}")
        _legend_below(fig, axes[0][0])
        save(fig, "speedup", "Speedup over Standard")

    fig, axes = _grid(1, len(head_dims), height=3.8)
    for ax, d in zip(axes[0], head_dims, strict=True):
        _offchip(ax, [r for r in records if int(r["head_dim"]) == d], colors)
        ax.set_title(f"d = {d}")
    _legend_below(fig, axes[0][0], ncol=4)
    save(fig, "offchip", "Off-chip traffic and closed-form bounds")

    for stem, caption, rows in (
        (
            "utilization",
            "PE and Exp utilization",
            (
                ("pe.mac_utilization", "PE MAC utilization (%)"),
                ("exp.lane_utilization", "Exp lane utilization (%)"),
            ),
        ),
        (
            "stall_overlap",
            "Memory stalls and overlap",
            (
                ("memory_stall_fraction", "Memory-stall time (%)"),
                ("overlap_efficiency", "Overlap efficiency (%)"),
            ),
        ),
    ):
        fig, axes = _grid(2, len(head_dims))
        for row, (path, ylabel) in enumerate(rows):
            for ax, d in zip(axes[row], head_dims, strict=True):
                subset = [r for r in records if int(r["head_dim"]) == d]
                _grouped_bars(ax, subset, colors, partial(_percent, path=path))
                ax.set_ylabel(ylabel)
                ax.set_ylim(0, 105)
                ax.set_title(f"d = {d}")
        _legend_below(fig, axes[0][0])
        save(fig, stem, caption)
    if any(r.get("stalls") for r in records):
        fig = plot_stalls(records)
        save(fig, "stalls", "Where the PE array's time goes: work, drain and what it waits for")
    if any(r.get("peaks") for r in records):
        fig = plot_roofline(records, colors)
        save(fig, "roofline", "Roofline: attained MAC rate against arithmetic intensity")
    return written


def _legend_below(fig: Figure, ax: Axes, ncol: int = 6) -> None:
    """One legend for the figure, under its panels, where it covers no data."""
    handles, names = ax.get_legend_handles_labels()
    if handles:
        fig.legend(
            handles, names, loc="outside lower center", fontsize=8, ncol=min(ncol, len(names))
        )


def _log_when_wide(ax: Axes, values: Sequence[float]) -> None:
    """Ratios spanning more than 10x go on a log axis, so no bar squashes the others."""
    positive = [v for v in values if v > 0]
    if positive and max(positive) / min(positive) > 10:
        ax.set_yscale("log")
        ax.set_ylabel(str(ax.get_ylabel()) + " (log scale)")


def plot_stalls(records: Sequence[dict[str, Any]]) -> Figure:
    """Per dataflow at each d's largest N: the PE array's time split into busy by kind of work
    (matmuls, element-wise, row reductions, rescaling, moves, drain) and idle by cause,
    stacked to 100 % of simulated time; results without that breakdown show busy as one."""
    from tlm_models.study.explain import (
        STALL_CAUSES,
        TIME_PARTS,
        stall_shares,
        stall_words,
        time_shares,
        time_words,
    )

    largest: dict[int, int] = {}
    for r in records:
        largest[int(r["head_dim"])] = max(largest.get(int(r["head_dim"]), 0), int(r["seq_len"]))
    dims = sorted(largest)
    fig, axes = _grid(1, len(dims), height=3.4)
    cause_colors = {cause: _PALETTE((i + 2) % 10) for i, cause in enumerate(STALL_CAUSES)}
    for ax, d in zip(axes[0], dims, strict=True):
        chosen = [r for r in records if int(r["head_dim"]) == d and int(r["seq_len"]) == largest[d]]
        labels = [label_of(r) for r in chosen]
        broken = [time_shares(r, "pe") for r in chosen]
        if all(b is not None for b in broken):
            left = [0.0] * len(chosen)
            for i, part in enumerate(TIME_PARTS):
                widths = [100.0 * (b or {}).get(part, 0.0) for b in broken]
                if max(widths, default=0.0) < 0.05:
                    continue
                ax.barh(labels, widths, left=left, color=_PARTS_PALETTE(i), label=time_words(part))
                left = [a + b for a, b in zip(left, widths, strict=True)]
            _finish_share_axes(ax, d, largest[d])
            continue
        left = [100.0 * (metric(r, "pe.busy_fraction") or 0.0) for r in chosen]
        ax.barh(labels, left, color="0.45", label="busy (executing)")
        for cause in STALL_CAUSES:
            widths = [100.0 * stall_shares(r, "pe").get(cause, 0.0) for r in chosen]
            if max(widths, default=0.0) < 0.05:
                continue
            ax.barh(labels, widths, left=left, color=cause_colors[cause], label=stall_words(cause))
            left = [a + b for a, b in zip(left, widths, strict=True)]
        _finish_share_axes(ax, d, largest[d])
    handles: dict[str, Any] = {}
    for ax in axes[0]:
        for handle, name in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(name, handle)
    fig.legend(
        list(handles.values()), list(handles), loc="outside lower center", fontsize=8, ncol=4
    )
    return fig


def _finish_share_axes(ax: Axes, d: int, n: int) -> None:
    ax.set_xlim(0, 100)
    ax.invert_yaxis()
    ax.set_xlabel("Share of simulated time (%)")
    ax.set_title(f"d = {d}, N = {format_tokens(n)}")
    ax.grid(axis="x", alpha=0.3)


def plot_roofline(records: Sequence[dict[str, Any]], colors: dict[str, Any]) -> Figure:
    """Attained MAC/s against MACs per off-chip byte for every run, under the platform's
    compute roof (MAC/s) and bandwidth roof (bytes/s x intensity)."""
    from tlm_models.run.diagnosis import roofline_point

    fig, axes = _grid(1, 1, width=7.5, height=4.6)
    ax = axes[0][0]
    markers = ["o", "s", "^", "D", "v", "P"]
    dims = sorted({int(r["head_dim"]) for r in records})
    points = [(r, p) for r in records if (p := roofline_point(r)) is not None]
    if not points:
        return fig
    peaks = points[0][0]["peaks"]
    xs = [p["intensity_macs_per_byte"] for _, p in points]
    lo, hi = min(xs) / 4, max(xs) * 4
    ridge = peaks["macs_per_s"] / peaks["offchip_bytes_per_s"]
    grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    ax.plot(
        grid,
        [min(peaks["macs_per_s"], x * peaks["offchip_bytes_per_s"]) for x in grid],
        color="black",
        linewidth=1.5,
        label="roof: min(peak MAC/s, intensity × bandwidth)",
    )
    ax.axvline(ridge, color="0.6", linestyle=":", linewidth=1, label=f"ridge {ridge:.1f} MAC/B")
    seen: set[str] = set()
    for record, point in points:
        label = label_of(record)
        marker = markers[dims.index(int(record["head_dim"])) % len(markers)]
        ax.scatter(
            point["intensity_macs_per_byte"],
            point["achieved_macs_per_s"],
            color=colors.get(label, "0.3"),
            marker=marker,
            s=36,
            zorder=3,
            label=label if label not in seen else None,
        )
        seen.add(label)
    for d, marker in zip(dims, markers, strict=False):
        ax.scatter([], [], color="0.5", marker=marker, label=f"d = {d}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Arithmetic intensity (MACs per off-chip byte, log scale)")
    ax.set_ylabel("Attained MAC rate (MAC/s, log scale)")
    ax.grid(alpha=0.3, which="major")
    _legend_below(fig, ax, ncol=4)
    return fig


def plot_approx(variant: Variant, directory: Path, suffix: str = "") -> list[tuple[str, str]]:
    """Off-chip bytes vs N with fitted slopes (one panel per d that has approx runs), and
    approx's error against time and traffic per token; returns (caption, PNG) pairs."""
    records = variant.ok_records()
    rows = tradeoff_rows(records)
    if not rows:
        return []
    colors = {label: _PALETTE(i % 10) for i, label in enumerate(labels_in(records))}
    written: list[tuple[str, str]] = []
    approx_dims = sorted({row.head_dim for row in rows})
    series = [s for s in slope_series(records) if s.head_dim in approx_dims]
    dims = sorted({s.head_dim for s in series})
    if dims:
        fig, axes = _grid(1, len(dims), height=4.2)
        for ax, d in zip(axes[0], dims, strict=True):
            at_d = [s for s in series if s.head_dim == d]
            for s in at_d:
                ns, values = zip(*s.points, strict=True)
                ax.plot(
                    ns,
                    [v / _MIB for v in values],
                    marker="o",
                    color=colors[s.label],
                    linestyle=":" if s.label.startswith("approx") else "-",
                    label=f"{s.label}: slope {s.slope:.2f}",
                )
            _traffic_axes(ax, sorted({n for s in at_d for n, _ in s.points}), "tokens, log scale")
            ax.set_title(f"d = {d}")
            ax.legend(title="fitted slope of log bytes vs log N", title_fontsize=8, **_LEGEND_BELOW)
        caption = "Off-chip traffic against N, exact and approximate, with fitted slopes"
        fig.suptitle(f"{caption} — {variant.title()}", fontsize=11)
        _save(fig, directory / f"approx_slopes{suffix}.png")
        written.append((caption, f"approx_slopes{suffix}.png"))

    # Per token, so runs at different N share one axis (approx cost is linear in N);
    # each (d, g, B) is shown at the largest N it ran.
    largest: dict[tuple[int, int, float], TradeoffRow] = {}
    for row in rows:
        if row.time_ns is None or row.offchip_bytes is None:
            continue
        ident = (row.head_dim, row.degree, row.bound)
        if ident not in largest or row.seq_len > largest[ident].seq_len:
            largest[ident] = row
    fig, axes = _grid(1, 2, height=4.2)
    dim_colors = {d: _PALETTE(i % 10) for i, d in enumerate(approx_dims)}
    for ax, cost, xlabel in (
        (axes[0][0], "time_ns", "Simulated time per token (ns/token, log scale)"),
        (axes[0][1], "offchip_bytes", "Off-chip traffic per token (bytes/token, log scale)"),
    ):
        for d in approx_dims:
            for bound in sorted({b for (dd, _, b) in largest if dd == d}):
                chosen = sorted(
                    (row for (dd, _, b), row in largest.items() if dd == d and b == bound),
                    key=lambda row: row.degree,
                )
                xs = [getattr(row, cost) / row.seq_len for row in chosen]
                ys = [row.max_rel for row in chosen]
                ax.plot(xs, ys, marker="o", color=dim_colors[d], label=f"d = {d}, B = {bound:g}")
                for row, x, y in zip(chosen, xs, ys, strict=True):
                    ax.annotate(
                        f"g={row.degree} ({format_tokens(row.seq_len)})",
                        (x, y),
                        textcoords="offset points",
                        # Alternate sides: neighbouring degrees can land on one spot.
                        xytext=(5, 4) if row.degree % 2 else (5, -10),
                        fontsize=7,
                    )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("Max relative error vs softmax (log scale)")
        ax.grid(alpha=0.3, which="both")
    _legend_below(fig, axes[0][0])
    caption = "Approximate attention: error against time and traffic by degree g"
    fig.suptitle(f"{caption} — {variant.title()}", fontsize=11)
    _save(fig, directory / f"approx_tradeoff{suffix}.png")
    written.append((caption, f"approx_tradeoff{suffix}.png"))
    return written


def plot_timelines(paths: Sequence[Path], png: Path) -> None:
    """A Gantt picture of each trace's recorded window, one panel per file, titled with its
    run (``otherData.run`` of the file, e.g. "flash2, N = 8K, d = 64") and window.
    Operations already running when the window opens are drawn from their start, up
    to half a window earlier, in a shaded lead-in, so the steady state shows what feeds it."""
    traces = [_read_trace(path) for path in paths]
    # A panel tall enough for its rows (engines plus every memory channel) to stay readable.
    most_rows = max((len(names) for names, _, _, _ in traces), default=1)
    fig, axes = _grid(len(paths), 1, width=10.0, height=1.2 + 0.2 * most_rows)
    categories: dict[str, Any] = {}
    lead_in = False
    for ax, path, (names, events, window, run) in zip(
        (row[0] for row in axes), paths, traces, strict=True
    ):
        rows = list(names)
        first = min((ev["ts"] for ev in events), default=0.0)
        w0, w1 = (
            window
            if window
            else (first, max((ev["ts"] + ev["dur"] for ev in events), default=first + 1.0))
        )
        start = max(first, w0 - 0.5 * (w1 - w0))
        for ev in events:
            if ev["ts"] >= w1 or ev["ts"] + ev["dur"] <= start:
                continue
            category = str(ev["name"]).split()[0].split("[")[0].lower() or "op"
            color = categories.setdefault(category, _PALETTE(len(categories) % 10))
            left = max(ev["ts"], start)
            ax.barh(
                rows.index(ev["row"]),
                min(ev["ts"] + ev["dur"], w1) - left,
                left=left,
                height=0.7,
                color=color,
                edgecolor="white",
                linewidth=0.3,
            )
        if start < w0:
            ax.axvspan(start, w0, color=_LEAD_IN, zorder=0)
            lead_in = True
        ax.set_yticks(range(len(rows)), list(names.values()))
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlim(start, w1)
        ax.set_title(
            f"{run or path.stem}: simulated {_us(w0)}–{_us(w1)} µs", fontsize=10, loc="left", pad=12
        )
        ax.set_xlabel("Simulated time (µs)")
    handles = [Patch(color=color, label=name) for name, color in categories.items()]
    if lead_in:
        handles.append(Patch(color=_LEAD_IN, label="lead-in: started before the window"))
    if handles:
        fig.legend(handles=handles, loc="outside lower center", fontsize=8, ncol=len(handles))
    fig.suptitle(
        "Timeline excerpts: a steady-state window of each dataflow's run",
        fontsize=11,
        x=0.02,
        ha="left",
    )
    _save(fig, png)


_LEAD_IN = "0.88"


def _us(value: float) -> str:
    return f"{value:g}"


def _dataflow_order(path: Path) -> tuple[int, str]:
    """Timeline files named after a dataflow come in report order, others after them."""
    stem = path.stem
    return (DATAFLOWS.index(stem) if stem in DATAFLOWS else len(DATAFLOWS), stem)


#: A timeline keeps at most 200,000 events per run (about 100 B each in JSON, replay/replayer.py); a
#: tiled run's file has one window per tile: 256 MiB is far above any the package writes.
MAX_TIMELINE_BYTES = 256 << 20


def _read_trace(
    path: Path,
) -> tuple[dict[tuple[Any, Any], str], list[dict[str, Any]], tuple[float, float] | None, str]:
    """The (pid, tid) rows with their names, in first-seen order, the complete events, the
    recorded window in µs and the run's name (``otherData.window_ns`` / ``run``, when the
    file says; else None and "")."""
    data = read_json(path, "Chrome trace JSON file", MAX_TIMELINE_BYTES)
    raw = data.get("traceEvents", []) if isinstance(data, dict) else data
    if not isinstance(raw, list):
        raise UserError(f"{path}: 'traceEvents' is not a list")
    processes: dict[Any, str] = {}
    threads: dict[tuple[Any, Any], str] = {}
    events: list[dict[str, Any]] = []
    rows: list[tuple[Any, Any]] = []
    for ev in raw:
        if not isinstance(ev, dict):
            continue
        row = (ev.get("pid", 0), ev.get("tid", 0))
        name = (ev.get("args") or {}).get("name")
        if ev.get("ph") == "M" and ev.get("name") == "thread_name" and name:
            threads[row] = str(name)
        elif ev.get("ph") == "M" and ev.get("name") == "process_name" and name:
            processes[row[0]] = str(name)
        elif ev.get("ph") == "X" and "ts" in ev:
            events.append(
                {
                    "name": ev.get("name", ""),
                    "ts": float(ev["ts"]),
                    "dur": float(ev.get("dur", 0.0)),
                    "row": row,
                }
            )
            if row not in rows:
                rows.append(row)
    names: dict[tuple[Any, Any], str] = {}
    for row in rows:
        thread = threads.get(row, f"tid {row[1]}")
        process = processes.get(row[0])
        names[row] = f"{process}/{thread}" if process else thread
    other = data.get("otherData") if isinstance(data, dict) else None
    other = other if isinstance(other, dict) else {}
    window = other.get("window_ns")
    run = str(other.get("run") or "")
    if isinstance(window, list) and len(window) == 2:
        return names, events, (float(window[0]) / 1e3, float(window[1]) / 1e3), run
    return names, events, None, run


def _grouped_bars(
    ax: Axes,
    records: list[dict[str, Any]],
    colors: dict[str, Any],
    value: Callable[[dict[str, Any]], float | None],
    skip: frozenset[str] | set[str] = frozenset(),
) -> None:
    """Bars grouped by N, one bar per dataflow label, in a fixed colour per label."""
    labels = [label for label in labels_in(records) if label not in skip]
    seq_lens = sorted({int(r["seq_len"]) for r in records if label_of(r) in labels})
    width = 0.8 / max(1, len(labels))
    for index, label in enumerate(labels):
        xs, ys = [], []
        for position, n in enumerate(seq_lens):
            match = [r for r in records if int(r["seq_len"]) == n and label_of(r) == label]
            number = value(match[0]) if match else None
            if number is not None:
                xs.append(position - 0.4 + width * (index + 0.5))
                ys.append(number)
        ax.bar(xs, ys, width=width, label=label, color=colors[label])
    ax.set_xticks(range(len(seq_lens)), [format_tokens(n) for n in seq_lens])
    ax.set_xlabel("Sequence length N (tokens)")
    ax.grid(axis="y", alpha=0.3)


def _offchip(ax: Axes, records: list[dict[str, Any]], colors: dict[str, Any]) -> None:
    """Off-chip MiB per dataflow (solid) and each closed-form bound (dashed), log scale."""
    seq_lens = sorted({int(r["seq_len"]) for r in records})
    for label in labels_in(records):
        points = sorted(
            (int(r["seq_len"]), value / _MIB)
            for r in records
            if label_of(r) == label and (value := metric(r, "offchip_bytes.total")) is not None
        )
        if points:
            ax.plot(*zip(*points, strict=True), marker="o", label=label, color=colors[label])
    # Each dataflow's closed form is its own (dotted, in its colour); lower bounds are shared.
    closed: dict[str, dict[int, float]] = {}
    bounds: dict[str, dict[int, float]] = {}
    for r in records:
        for name, value in dict(r.get("bounds") or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                group = closed.setdefault(label_of(r), {}) if name == "closed_form" else None
                by_n = bounds.setdefault(str(name), {}) if group is None else group
                by_n[int(r["seq_len"])] = float(value) / _MIB
    for label, by_n in closed.items():
        xs = sorted(by_n)
        ax.plot(xs, [by_n[n] for n in xs], linestyle=":", color=colors[label], linewidth=1.2)
    if closed:
        ax.plot([], [], linestyle=":", color="0.3", label="closed form (dotted, per dataflow)")
    for index, (name, by_n) in enumerate(sorted(bounds.items())):
        xs = sorted(by_n)
        style = _BOUND_STYLES[index % len(_BOUND_STYLES)]
        ax.plot(
            xs,
            [by_n[n] for n in xs],
            linestyle=style[0],
            color=style[1],
            marker=style[2],
            markersize=7,
            markerfacecolor="none",
            label=f"bound: {BOUND_NAMES.get(name, name)}",
        )
    _traffic_axes(ax, seq_lens, "tokens")


#: (line style, colour, marker) of each lower bound: distinct by all three, none a dataflow's.
_BOUND_STYLES = (("--", "black", "x"), ("-.", "saddlebrown", "s"), ((0, (1, 1)), "slategray", "^"))


def _speedup(record: dict[str, Any], records: list[dict[str, Any]]) -> float | None:
    time_ns = metric(record, "sim_time_ns")
    base = next(
        (
            metric(r, "sim_time_ns")
            for r in records
            if label_of(r) == "standard" and r["seq_len"] == record["seq_len"]
        ),
        None,
    )
    return base / time_ns if base and time_ns else None


def _percent(record: dict[str, Any], path: str) -> float | None:
    value = metric(record, path)
    return None if value is None else 100.0 * value


def _grid(rows: int, cols: int, width: float = 5.0, height: float = 3.6) -> tuple[Figure, Any]:
    per_row = height if height > 1 else 2.2
    fig, axes = plt.subplots(
        rows,
        cols,
        figsize=(max(width * cols, 6.0), per_row * rows + 0.8),
        squeeze=False,
        layout="constrained",
    )
    return fig, axes


def _save(fig: Figure, png: Path) -> None:
    save_figure(fig, png, dpi=110)
    save_figure(fig, png.with_suffix(".svg"))
    plt.close(fig)


def plot_design_axis(axis: Axis, png: Path) -> None:
    """Simulated time and off-chip bytes of each (dataflow, N, d) against a swept parameter."""
    fig, axes = _grid(1, 2, width=5.6, height=3.8)
    labels = list(dict.fromkeys(series.label for series in axis.series))
    colors = {label: _PALETTE(i % 10) for i, label in enumerate(labels)}
    shapes = list(dict.fromkeys((s.seq_len, s.head_dim) for s in axis.series))
    markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
    panels = [
        (ax, f"{name} ({unit}{', log scale' if log else ''})", value, log)
        for ax, (name, unit, value), log in zip(axes[0], METRICS, (False, True), strict=True)
    ]
    for ax, ylabel, value, log in panels:
        for series in axis.series:
            xs = [axis_position(axis, v) for v, _ in series.points]
            ys = [value(r) for _, r in series.points]
            marker = markers[shapes.index((series.seq_len, series.head_dim)) % len(markers)]
            ax.plot(
                xs, ys, marker=marker, color=colors[series.label],
                label=f"{series.label}, N = {format_tokens(series.seq_len)}, d = {series.head_dim}",
            )  # fmt: skip
        ticks = [axis_position(axis, v) for v in axis.values]
        if axis.numeric and min(ticks) > 0:
            ax.set_xscale("log", base=2)
        ax.set_xticks(ticks, list(axis.values))
        ax.minorticks_off()
        ax.set_xlabel(axis.key)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        if log:
            ax.set_yscale("log")
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", fontsize=8, ncol=min(len(names), 3))
    fig.suptitle(f"Design space: {axis.title()}", fontsize=11)
    _save(fig, png)


def _traffic_axes(ax: Any, seq_lens: list[int], n_unit: str) -> None:
    """Off-chip MiB over N, both on log scales, a tick at each N of the plot."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(seq_lens, [format_tokens(n) for n in seq_lens])
    ax.minorticks_off()
    ax.set_xlabel(f"Sequence length N ({n_unit})")
    ax.set_ylabel("Off-chip traffic (MiB, log scale)")
    ax.grid(alpha=0.3, which="major")
