"""Energy plots of a sweep variant: energy per dataflow stacked by component for every (N, d),
and energy and pJ per attention FLOP against N (docs/energy.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tlm_models.study.energy_report import component_energy_mj, energy_records, pj_per_flop
from tlm_models.study.plots import _PALETTE, _grid, _save
from tlm_models.study.variants import Variant, format_tokens, label_of, labels_in, metric


def _total_mj(record: dict[str, Any]) -> float:
    return (metric(record, "energy.total_j") or 0.0) * 1e3


def _pj_per_flop(record: dict[str, Any]) -> float:
    return pj_per_flop(record) or 0.0


#: Panels a row in the stacked energy grid (each 4.2 in wide: 12.6 in, 1,386 px at 110 dpi).
PANELS_PER_ROW = 3


def _figure_legend(fig: Figure, panels: list[Axes]) -> None:
    """One legend under the figure with every series of every panel, each once: the legend
    of one panel left out the dataflows that had no point there (Standard and FLAT)."""
    handles: dict[str, Any] = {}
    for ax in panels:
        for handle, name in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(name, handle)
    fig.legend(
        list(handles.values()), list(handles), loc="outside lower center", fontsize=8,
        ncol=min(len(handles), 4),
    )  # fmt: skip


def plot_energy(variant: Variant, directory: Path, suffix: str = "") -> list[tuple[str, str]]:
    """Writes energy-stacked{suffix}.png and energy-vs-n{suffix}.png; (caption, file) pairs."""
    records = energy_records(variant)
    if not records:
        return []
    shapes = sorted(
        {(int(r["seq_len"]), int(r["head_dim"])) for r in records}, key=lambda s: (s[1], s[0])
    )
    components = list(component_energy_mj(records))
    colors = {name: _PALETTE(i % 10) for i, name in enumerate(components)}
    # A grid of at most PANELS_PER_ROW panels a row: one row of every (N, d) was a strip
    # 5,082 pixels wide whose tick labels ran into each other.
    cols = min(PANELS_PER_ROW, len(shapes))
    grid_rows = -(-len(shapes) // cols)
    fig, axes = _grid(grid_rows, cols, width=4.2, height=3.4)
    panels = [ax for row in axes for ax in row]
    for ax in panels[len(shapes) :]:
        ax.set_visible(False)
    for ax, (n, d) in zip(panels, shapes, strict=False):
        rows = [r for r in records if (int(r["seq_len"]), int(r["head_dim"])) == (n, d)]
        by_label = {label_of(r): r for r in rows}
        ordered = [by_label[label] for label in labels_in(rows)]
        parts = component_energy_mj(ordered)
        bottom = [0.0] * len(ordered)
        for name in components:
            heights = parts.get(name, [0.0] * len(ordered))
            ax.bar(range(len(ordered)), heights, bottom=bottom, color=colors[name], label=name)
            bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
        ax.set_xticks(range(len(ordered)), [label_of(r) for r in ordered], rotation=30, ha="right")
        ax.set_ylabel("Energy (mJ)")
        ax.set_title(f"N = {format_tokens(n)}, d = {d}")
        ax.grid(axis="y", alpha=0.3)
    _figure_legend(fig, panels)
    fig.suptitle(f"Energy by component — {variant.title()}", fontsize=11)
    stacked = f"energy-stacked{suffix}.png"
    _save(fig, directory / stacked)

    head_dims = sorted({d for _, d in shapes})
    labels = labels_in(records)
    line_colors = {label: _PALETTE(i % 10) for i, label in enumerate(labels)}
    fig, axes = _grid(2, len(head_dims))
    for col, d in enumerate(head_dims):
        for row, (ylabel, value) in enumerate(
            (("Energy (mJ, log scale)", _total_mj), ("pJ per attention FLOP", _pj_per_flop))
        ):
            ax = axes[row][col]
            for label in labels:
                points = sorted(
                    (int(r["seq_len"]), value(r))
                    for r in records
                    if label_of(r) == label and int(r["head_dim"]) == d
                )
                if points:
                    ax.plot(*zip(*points, strict=True), marker="o", label=label,
                            color=line_colors[label])  # fmt: skip
            seq_lens = sorted({int(r["seq_len"]) for r in records if int(r["head_dim"]) == d})
            ax.set_xscale("log", base=2)
            if row == 0:
                ax.set_yscale("log")
            ax.set_xticks(seq_lens, [format_tokens(n) for n in seq_lens])
            ax.minorticks_off()
            ax.set_xlabel("Sequence length N (tokens)")
            ax.set_ylabel(ylabel)
            ax.set_title(f"d = {d}")
            ax.grid(alpha=0.3)
    _figure_legend(fig, [ax for row in axes for ax in row])  # every dataflow, any panel
    fig.suptitle(f"Energy against N — {variant.title()}", fontsize=11)
    against_n = f"energy-vs-n{suffix}.png"
    _save(fig, directory / against_n)
    return [("Energy by component", stacked), ("Energy and pJ per FLOP against N", against_n)]
