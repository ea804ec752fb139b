"""The report's tile section (docs/models/tiles.md): how far each dataflow scales with tiles.

Tiled runs (records with a ``tiles`` section) are grouped into series: the same dataflow,
workload, dataflow parameters and platform overrides other than ``tiles.count``, and the same
number of off-chip memories (HBM stacks). A series' speedup is over its group's one-tile run
(``tiles.count=1``; without one, over the group's fewest tiles, said in the heading). The
bandwidth roofline of a series is the speedup at which its off-chip traffic would keep every
memory busy: T_1 x B / bytes (T_1 the baseline time, B the memories' peak bytes/s, bytes the
run's traffic); past it the dataflow is memory-bound, and C* = that speedup is the tile count
where a perfectly scaling dataflow would reach it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tlm_models.files.output_file import save_figure
from tlm_models.run.tile_result import tile_cells
from tlm_models.units import format_bytes, format_ns

__all__ = ["TILE_HEADING", "TileSeries", "plot_tile_scaling", "tile_section", "tile_series"]

TILE_HEADING = "Tiles: scaling with the number of tiles"
_WORKLOAD = ("seq_len", "head_dim", "heads", "batch", "kv_heads", "kv_len", "mask", "window",
             "phase")  # fmt: skip


@dataclass(frozen=True)
class TileSeries:
    """Runs of one dataflow and workload on 1, 2, ... tiles over ``memories`` off-chip
    memories, ``base`` the run the speedups are over (tile order)."""

    label: str
    memories: int
    base: dict[str, Any]
    runs: tuple[dict[str, Any], ...]

    def speedup(self, record: Mapping[str, Any]) -> float:
        return float(self.base["sim_time_ns"]) / float(record["sim_time_ns"])

    def roofline(self) -> float | None:
        """The speedup at which the series' traffic keeps its memories' bandwidth busy (the
        peak of the run with the most tiles: every off-chip memory of its platform)."""
        run = self.runs[-1]
        peak = (run.get("peaks") or {}).get("offchip_bytes_per_s")
        total = run["offchip_bytes"]["total"]
        if not peak or not total:
            return None
        return float(self.base["sim_time_ns"]) * 1e-9 * float(peak) / float(total)


def _memories(record: Mapping[str, Any]) -> int:
    return max(1, len(record["tiles"]["memory_utilization"]))


def _group_key(record: Mapping[str, Any]) -> tuple[object, ...]:
    overrides = tuple(o for o in record.get("overrides", ()) if not o.startswith("tiles.count="))
    params = tuple(sorted((record.get("params") or {}).items()))
    return (record["dataflow"], *(record.get(k) for k in _WORKLOAD), overrides, repr(params))


def _describe(record: Mapping[str, Any]) -> str:
    text = f"{record['dataflow']}, N = {record['seq_len']}, d = {record['head_dim']}, "
    text += f"{record['heads'] * record.get('batch', 1)} heads"
    if record.get("kv_heads") not in (None, record["heads"]):
        text += f" / {record['kv_heads']} K/V"
    if record.get("mask", "none") != "none":
        text += f", {record['mask']}"
    if record.get("phase") == "decode":
        text += f", decode Nk = {record['kv_len']}"
    return text


def tile_series(records: Sequence[Mapping[str, Any]]) -> list[TileSeries]:
    """The series of the tiled runs among ``records`` (failed runs left out)."""
    groups: dict[tuple[object, ...], list[dict[str, Any]]] = {}
    for record in records:
        if "error" not in record and isinstance(record.get("tiles"), dict):
            groups.setdefault(_group_key(record), []).append(dict(record))
    out: list[TileSeries] = []
    for runs in groups.values():
        runs.sort(key=lambda r: (r["tiles"]["count"], _memories(r)))
        base = runs[0]
        for memories in sorted({_memories(r) for r in runs}):
            mine = [r for r in runs if _memories(r) == memories or r is base]
            if len(mine) < 2:
                continue
            stacks = f"{memories} off-chip memor{'ies' if memories > 1 else 'y'}"
            out.append(TileSeries(f"{_describe(base)}; {stacks}", memories, base, tuple(mine)))
    return out


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100.0 * value:.1f}"


def tile_section(
    records: Sequence[Mapping[str, Any]], figures: Sequence[tuple[str, str]] = ()
) -> list[str]:
    """Markdown: the scaling table of every series, its roofline, the plot, and each tiled
    run's per-tile figures. Empty when no run was tiled."""
    series = tile_series(records)
    if not series:
        return []
    lines = [
        f"## {TILE_HEADING}",
        "",
        "Speedup is over the same dataflow and workload on the fewest tiles run (normally one); "
        "imbalance is the slowest tile's time over the mean (work: MACs); memory utilization is "
        "the off-chip memories' busy share. A series becomes memory-bound near C* = T_1 x peak "
        "bandwidth / off-chip bytes (the roofline in the plot).",
        "",
        "| Series | Tiles | Time | Speedup (×) | Imbalance time / work | Memory util. (%) | "
        "Memory stall (%) | Off-chip | = closed form |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in series:
        for r in s.runs:
            t = r["tiles"]
            util = ", ".join(_pct(u) for u in t["memory_utilization"].values())
            closed = (r.get("bounds") or {}).get("closed_form")
            moved = r["offchip_bytes"]["total"]
            same = "—" if closed is None else ("yes" if moved == closed else "no")
            lines.append(
                f"| {s.label} | {t['count']} | {format_ns(r['sim_time_ns'])} | "
                f"{s.speedup(r):.2f} | {t['imbalance']:.4f} / {t.get('work_imbalance', 1.0):.4f} "
                f"| {util} | {_pct(r.get('memory_stall_fraction'))} | "
                f"{format_bytes(r['offchip_bytes']['total'])} | {same} |"
            )
    lines.append("")
    for s in series:
        roof = s.roofline()
        if roof is not None:
            base = s.base["tiles"]["count"]
            lines.append(
                f"- {s.label}: memory-bound from C* = {roof * base:.1f} tiles (speedup roof "
                f"{roof:.2f}× over {base} tile{'s' if base > 1 else ''})"
            )
    lines.append("")
    for caption, filename in figures:
        lines += [f"![{caption}]({filename})", ""]
    lines += _per_tile_tables(series)
    return lines


def _per_tile_tables(series: Sequence[TileSeries]) -> list[str]:
    lines = ["### Per-tile figures", ""]
    seen: set[int] = set()
    for s in series:
        for r in s.runs:
            if r["tiles"]["count"] < 2 or id(r) in seen:
                continue
            seen.add(id(r))
            t = r["tiles"]
            split = t.get("assignment", "split as in docs/models/tiles.md")
            lines += [
                f"{_describe(r)} on {t['count']} tiles ({split}):",
                "",
                "| Tile | Time | Off-chip | PE busy | Memory stall | Busiest own link |",
                "|---|---|---|---|---|---|",
            ]
            lines += ["| " + " | ".join(tile_cells(line)) + " |" for line in t["per_tile"]]
            lines.append("")
    return lines


def plot_tile_scaling(series: Sequence[TileSeries], png: Path, title: str = "") -> None:
    """Speedup against tiles (log-log), one line per series, its bandwidth roofline as a thin
    horizontal line of the same colour and style, and the ideal 1/C scaling dotted."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    colours = plt.get_cmap("tab10")
    dataflows = sorted({s.base["dataflow"] for s in series})
    styles = ("-", "--", "-.", ":")
    counts = [r["tiles"]["count"] for s in series for r in s.runs]
    for s in series:
        colour = colours(dataflows.index(s.base["dataflow"]) % 10)
        style = styles[(s.memories - 1) % len(styles)]
        points = [(r["tiles"]["count"], s.speedup(r)) for r in s.runs]
        ax.plot(*zip(*points, strict=True), style, marker="o", color=colour, label=s.label)
        roof = s.roofline()
        if roof is not None:
            ax.axhline(roof, color=colour, linestyle=style, linewidth=0.8, alpha=0.6)
    low, high = min(counts), max(counts)
    ax.plot([low, high], [1, high / low], ":", color="grey", label="ideal (1/C time)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("tiles")
    ax.set_ylabel("speedup over the fewest tiles (×)")
    ax.set_title(title or "Speedup against tiles; thin lines: off-chip bandwidth roofline")
    ax.legend(fontsize=6)
    save_figure(fig, png, dpi=120)
    save_figure(fig, png.with_suffix(".svg"))
    plt.close(fig)
