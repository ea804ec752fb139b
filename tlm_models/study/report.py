"""DIR/report.md from a sweep's results.jsonl: a table per (N, d) and the failed configurations.

Every column carries its unit; speedups compare each dataflow with Standard on the same
variant (platform, overrides, heads).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tlm_models.errors import UserError
from tlm_models.study.store import ResultStore
from tlm_models.study.table import sort_records
from tlm_models.study.variants import (
    Variant,
    format_tokens,
    group_variants,
    label_of,
    labels_in,
    metric,
)

__all__ = ["REPORT_FILE", "load_results", "render_report", "write_report"]

REPORT_FILE = "report.md"
_MIB = 2**20
_GIB = 2**30

_COLUMNS = (
    "Dataflow",
    "Time (ms)",
    "Speedup over standard (×)",
    "Off-chip {unit}",
    "PE MAC util. (%)",
    "Exp lane util. (%)",
    "Memory stall (%)",
    "Overlap efficiency (%)",
)


def load_results(directory: Path) -> list[dict[str, Any]]:
    """The latest record of each configuration in ``directory``/results.jsonl."""
    store = ResultStore(directory)
    if not store.path.exists():
        raise UserError(f"{directory} has no {store.path.name}: run 'attn-tlm sweep --out DIR'")
    records = list(store.latest().values())
    if not records:
        raise UserError(f"{store.path} holds no results yet")
    return sort_records(records)


def write_report(directory: Path, plots: bool = True) -> Path:
    """Writes ``directory``/report.md (and the plots, unless ``plots`` is False)."""
    records = load_results(directory)
    figures: dict[str, list[tuple[str, str]]] = {}
    if plots:
        from tlm_models.study.plots import write_plots  # matplotlib loads only when needed

        figures = write_plots(directory, records)
    path = directory / REPORT_FILE
    path.write_text(render_report(records, figures), encoding="utf-8")
    return path


def render_report(
    records: Sequence[dict[str, Any]], figures: Mapping[str, Sequence[tuple[str, str]]] = {}
) -> str:
    """The Markdown text. ``figures`` maps a variant title ("" for all) to (caption, file)."""
    failed = [record for record in records if "error" in record]
    variants = group_variants(records)
    lines = [
        "# Attention study",
        "",
        f"{len(records)} configurations: {len(records) - len(failed)} finished, "
        f"{len(failed)} failed. Times are simulated time; off-chip traffic counts bytes read "
        "plus written.",
        "",
    ]
    for variant in variants:
        lines += _variant_section(variant, len(variants) > 1, figures.get(variant.title(), ()))
    for caption, filename in figures.get("", ()):
        lines += [f"![{caption}]({filename})", ""]
    if failed:
        lines += ["## Failed configurations", "", "| Configuration | Error |", "|---|---|"]
        for record in failed:
            error = " ".join(str(record["error"]).split()).replace("|", "\\|")
            lines.append(f"| `{record['key']}` | {error} |")
        lines.append("")
    return "\n".join(lines)


def _variant_section(
    variant: Variant, titled: bool, figures: Sequence[tuple[str, str]]
) -> list[str]:
    lines = [f"## {variant.title()}", ""] if titled else [f"Platform: {variant.title()}", ""]
    for seq_len, head_dim in variant.shapes():
        rows = [
            r
            for r in variant.ok_records()
            if int(r["seq_len"]) == seq_len and int(r["head_dim"]) == head_dim
        ]
        lines += [f"### N = {format_tokens(seq_len)} tokens, d = {head_dim}", ""]
        if not rows:
            lines += ["All configurations of this shape failed.", ""]
            continue
        lines += _shape_table(rows)
    for caption, filename in figures:
        lines += [f"![{caption}]({filename})", ""]
    return lines


def _shape_table(rows: list[dict[str, Any]]) -> list[str]:
    totals = [metric(r, "offchip_bytes.total") or 0.0 for r in rows]
    scale, unit, digits = (_GIB, "GiB", 3) if max(totals) >= _GIB else (_MIB, "MiB", 2)
    header = [column.format(unit=f"({unit})") for column in _COLUMNS]
    baseline = next((metric(r, "sim_time_ns") for r in rows if label_of(r) == "standard"), None)
    by_label = {label_of(r): r for r in rows}
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" + "---:|" * (len(header) - 1)]
    for label in labels_in(rows):
        record = by_label[label]
        time_ns = metric(record, "sim_time_ns")
        speedup = baseline / time_ns if baseline and time_ns else None
        offchip = metric(record, "offchip_bytes.total")
        cells = [
            label,
            _fmt(time_ns, 1e-6, 3),
            _fmt(speedup, 1.0, 2),
            _fmt(offchip, 1.0 / scale, digits),
            _fmt(metric(record, "pe.mac_utilization"), 100.0, 1),
            _fmt(metric(record, "exp.lane_utilization"), 100.0, 1),
            _fmt(metric(record, "memory_stall_fraction"), 100.0, 1),
            _fmt(metric(record, "overlap_efficiency"), 100.0, 1),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    bounds = _bounds(rows)
    if bounds:
        listed = ", ".join(f"{name} {v / scale:,.{digits}f} {unit}" for name, v in bounds.items())
        lines += [f"Closed-form off-chip bounds: {listed}.", ""]
    return lines


def _bounds(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The closed-form bounds reported with the rows (same workload, so the first wins)."""
    bounds: dict[str, float] = {}
    for record in rows:
        for name, value in dict(record.get("bounds") or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                bounds.setdefault(str(name), float(value))
    return bounds


def _fmt(value: float | None, scale: float, digits: int) -> str:
    return "–" if value is None else f"{value * scale:,.{digits}f}"
