"""DIR/report.md from a sweep's results.jsonl: a table per (N, d), an approximate-attention
section when approx ran (traffic growth in N, time and accuracy trade-off), and the failed
configurations.

Every column carries its unit; speedups compare each dataflow with Standard on the same
variant (platform, overrides, heads, workload kind); a sweep with several kinds of workload
(causal and not, prefill and decode) also gets them side by side (``workload_report``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tlm_models.errors import UserError
from tlm_models.files.output_file import check_output, write_output
from tlm_models.study.approx_study import (
    SlopeSeries,
    approx_records,
    slope_series,
    tradeoff_rows,
)
from tlm_models.study.design_space import METRICS, Axis, design_heading, swept_axes
from tlm_models.study.energy_report import energy_heading, energy_section
from tlm_models.study.explain import (
    BOUND_NAMES,
    STALL_CAUSES,
    TIME_PARTS,
    shape_summary,
    stall_shares,
    stall_words,
    time_shares,
    time_words,
    why_lines,
)
from tlm_models.study.markdown_table import table_head
from tlm_models.study.report_html import HTML_FILE, markdown_to_html
from tlm_models.study.store import ResultStore
from tlm_models.study.table import sort_records
from tlm_models.study.tile_report import TILE_HEADING, tile_section
from tlm_models.study.variants import (
    Variant,
    approx_heading,
    format_tokens,
    group_variants,
    label_of,
    labels_in,
    metric,
    shape_words,
)
from tlm_models.study.workload_report import workload_section
from tlm_models.units import format_bytes, format_ns

__all__ = ["REPORT_FILE", "load_results", "render_report", "write_report"]

REPORT_FILE = "report.md"
_MIB = 2**20
_GIB = 2**30

_COLUMNS = (
    "Dataflow",
    "Time",
    "Speedup over {baseline} (×)",
    "Off-chip",
    "Closed form",
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
    """Writes ``directory``/report.md, its HTML version report.html (plots inline) and the
    plots, unless ``plots`` is False."""
    records = load_results(directory)
    check_output(directory / REPORT_FILE, "report")  # before the plots, which take seconds
    check_output(directory / HTML_FILE, "report")
    figures: dict[str, list[tuple[str, str]]] = {}
    if plots:
        from tlm_models.study.plots import write_plots  # matplotlib loads only when needed

        figures = write_plots(directory, records)
    path = directory / REPORT_FILE
    text = render_report(records, figures)
    write_output(path, text, "report")
    page = markdown_to_html(text, f"Attention study — {directory.name}")
    write_output(directory / HTML_FILE, page, "report")
    return path


def _head(records: Sequence[dict[str, Any]], variants: Sequence[Variant]) -> list[str]:
    """The title, the count of finished and failed runs, and the executive summary."""
    failed = [record for record in records if "error" in record]
    lines = [
        "# Attention study",
        "",
        f"{len(records)} configurations: {len(records) - len(failed)} finished, "
        f"{len(failed)} failed. Times are simulated time; off-chip traffic counts bytes read "
        "plus written.",
        "",
    ]
    return lines + _executive_summary(variants, len(variants) > 1)


def render_summary(records: Sequence[dict[str, Any]]) -> str:
    """The report's head alone: what `make demo` prints at its end (the report has the rest)."""
    return "\n".join(_head(records, group_variants(records))).rstrip() + "\n"


def render_report(
    records: Sequence[dict[str, Any]], figures: Mapping[str, Sequence[tuple[str, str]]] = {}
) -> str:
    """The Markdown text. ``figures`` maps a section title to (caption, file) pairs: a variant's
    title, its ``approx_heading``, or "" for figures of the whole sweep."""
    failed = [record for record in records if "error" in record]
    variants = group_variants(records)
    titled = len(variants) > 1
    lines = _head(records, variants)
    for variant in variants:
        lines += _variant_section(variant, titled, figures.get(variant.title(), ()))
        heading = energy_heading(variant, titled)
        lines += energy_section(variant, heading, figures.get(heading, ()))
        if approx_records(variant.records) or _side_shapes(variant):
            heading = approx_heading(variant, titled)
            lines += _approx_section(variant, heading, figures.get(heading, ()))
    lines += workload_section(records)
    lines += tile_section(records, figures.get(TILE_HEADING, ()))
    for axis in swept_axes(records):
        lines += _design_section(axis, figures.get(design_heading(axis), ()))
    whole = figures.get("", ())
    if whole:
        lines += ["## Timeline excerpts", ""]
        lines += [
            "Each panel is one run's recorded window of simulated time (named above it), one "
            "row per engine and off-chip memory channel; operations already running when the "
            "window opens are drawn from their start in the shaded lead-in.",
            "",
        ]
    for caption, filename in whole:
        lines += [f"![{caption}]({filename})", ""]
    if failed:
        lines += ["## Failed configurations", "", "| Configuration | Error |", "|---|---|"]
        for record in failed:
            error = " ".join(str(record["error"]).split()).replace("|", "\\|")
            lines.append(f"| `{record['key']}` | {error} |")
        lines.append("")
    return "\n".join(lines)


def _executive_summary(variants: Sequence[Variant], titled: bool) -> list[str]:
    lines = ["## Executive summary", ""]
    for variant in variants:
        main = variant.main_records()
        if titled:
            lines += [f"On {variant.title()}:", ""]
        for seq_len, head_dim in variant.main_shapes():
            rows = _rows_of(main, seq_len, head_dim)
            if rows:
                lines.append(f"- {shape_summary(seq_len, head_dim, rows)}")
        approx = [r for r in approx_records(variant.records) if metric(r, "sim_time_ns")]
        if approx:
            best = min(approx, key=lambda r: metric(r, "sim_time_ns") or 0.0)
            error = dict(best.get("approx_error") or {}).get("max_rel")
            lines.append(
                f"- Approximate attention (its own section below): the fastest run is "
                f"{label_of(best)} at N = {format_tokens(int(best['seq_len']))}, "
                f"d = {best['head_dim']} ({format_ns(metric(best, 'sim_time_ns') or 0.0)}"
                + (f", max relative error {error:.1e}" if error is not None else "")
                + ")."
            )
        lines.append("")
    return lines


def _rows_of(
    records: Sequence[dict[str, Any]], seq_len: int, head_dim: int
) -> list[dict[str, Any]]:
    return [r for r in records if int(r["seq_len"]) == seq_len and int(r["head_dim"]) == head_dim]


def _variant_section(
    variant: Variant, titled: bool, figures: Sequence[tuple[str, str]]
) -> list[str]:
    lines = [f"## {variant.title()}", ""] if titled else [f"## Platform: {variant.title()}", ""]
    main = variant.main_records()
    for seq_len, head_dim in variant.main_shapes():
        rows = _rows_of(main, seq_len, head_dim)
        lines += [f"### {shape_words(rows, seq_len)}, d = {head_dim}", ""]
        if not rows:
            lines += ["All configurations of this shape failed.", ""]
            continue
        lines += _shape_table(rows)
        why = why_lines(rows)
        if why:
            lines += ["Why:", "", *why, ""]
    lines += _stall_section(main)
    for caption, filename in figures:
        lines += [f"![{caption}]({filename})", ""]
    return lines


def _stall_section(records: Sequence[dict[str, Any]]) -> list[str]:
    """What each dataflow's PE array and Exp unit waited for, at each d's largest N."""
    largest: dict[int, int] = {}
    for r in records:
        d, n = int(r["head_dim"]), int(r["seq_len"])
        largest[d] = max(largest.get(d, n), n)
    chosen = [r for r in records if int(r["seq_len"]) == largest[int(r["head_dim"])]]
    if not chosen or not any(r.get("stalls") for r in chosen):
        return []
    if all(time_shares(r, "pe") is not None for r in chosen):
        return _time_section(chosen)
    causes = [c for c in STALL_CAUSES if any(
        stall_shares(r, e).get(c, 0.0) >= 0.0005 for r in chosen for e in ("pe", "exp")
    )]  # fmt: skip
    lines = [
        "### Stall causes",
        "",
        "Share of simulated time each compute engine sat idle with work queued, by what it "
        "waited for (docs/replayer.md), at the largest N of each head dim. Busy is the share "
        "it executed operations.",
        "",
        "| Dataflow | N | d | Engine | Busy (%) | "
        + " | ".join(f"{stall_words(c)} (%)" for c in causes)
        + " |",
        "|---|---:|---:|---|---:|" + "---:|" * len(causes),
    ]
    for r in chosen:
        for engine in ("pe", "exp"):
            shares = stall_shares(r, engine)
            busy = metric(r, f"{engine}.busy_fraction")
            cells = [_fmt(shares.get(c), 100.0, 1) for c in causes]
            lines.append(
                f"| {label_of(r)} | {format_tokens(int(r['seq_len']))} | {r['head_dim']} | "
                f"{'PE array' if engine == 'pe' else 'Exp unit'} | {_fmt(busy, 100.0, 1)} | "
                + " | ".join(cells)
                + " |"
            )
    lines.append("")
    return lines


def _time_section(chosen: Sequence[dict[str, Any]]) -> list[str]:
    """Where each dataflow's PE array and Exp unit spent the simulated time (``pe.time``)."""
    shares = {(id(r), e): time_shares(r, e) or {} for r in chosen for e in ("pe", "exp")}
    parts = [p for p in TIME_PARTS if any(s.get(p, 0.0) >= 0.0005 for s in shares.values())]
    lines = [
        "### Where the compute engines' time went",
        "",
        "Share of simulated time each compute engine spent issuing each kind of work, only "
        'draining its pipeline, and idle by what it waited for (docs/study.md, "Diagnosis '
        'after a run"), at the largest N of each head dim. Each row sums to 100 %.',
        "",
        *table_head(
            ["Dataflow", "N", "d", "Engine", *(f"{time_words(p)} (%)" for p in parts)],
            "lrrl" + "r" * len(parts),
        ),
    ]
    for r in chosen:
        for engine in ("pe", "exp"):
            cells = [_fmt(shares[(id(r), engine)].get(p), 100.0, 1) for p in parts]
            lines.append(
                f"| {label_of(r)} | {format_tokens(int(r['seq_len']))} | {r['head_dim']} | "
                f"{'PE array' if engine == 'pe' else 'Exp unit'} | " + " | ".join(cells) + " |"
            )
    lines.append("")
    return lines


def _shape_table(rows: list[dict[str, Any]], baseline_label: str = "standard") -> list[str]:
    labels = labels_in(rows)
    if baseline_label not in labels:
        baseline_label = labels[0]
    header = [column.format(baseline=baseline_label) for column in _COLUMNS]
    baseline = next((metric(r, "sim_time_ns") for r in rows if label_of(r) == baseline_label), None)
    by_label = {label_of(r): r for r in rows}
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" + "---:|" * (len(header) - 1)]
    for label in labels:
        record = by_label[label]
        time_ns = metric(record, "sim_time_ns")
        speedup = baseline / time_ns if baseline and time_ns else None
        offchip = metric(record, "offchip_bytes.total")
        closed = metric(record, "bounds.closed_form")
        cells = [
            label,
            "–" if time_ns is None else format_ns(time_ns),
            "–" if speedup is None else f"{speedup:.2f}",
            "–" if offchip is None else format_bytes(offchip),
            "–" if closed is None else format_bytes(closed),
            _fmt(metric(record, "pe.mac_utilization"), 100.0, 1),
            _fmt(metric(record, "exp.lane_utilization"), 100.0, 1),
            _fmt(metric(record, "memory_stall_fraction"), 100.0, 1),
            _fmt(metric(record, "overlap_efficiency"), 100.0, 1),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    bounds = _bounds(rows)
    if bounds:
        listed = "; ".join(
            f"{BOUND_NAMES.get(name, name)} {format_bytes(v)}" for name, v in bounds.items()
        )
        lines += [f"Closed-form off-chip bounds: {listed}.", ""]
        lines += _below_mmm(rows, bounds.get("mmm_lower_bound"))
    return lines


def _below_mmm(rows: list[dict[str, Any]], bound: float | None) -> list[str]:
    """Why a dataflow may move less than the tall-and-skinny MMM "lower bound"."""
    below = [
        label_of(r)
        for r in rows
        if bound is not None and (metric(r, "offchip_bytes.total") or bound) < bound
    ]
    if not below:
        return []
    return [
        f"{', '.join(below)} {'moves' if len(below) == 1 else 'move'} less than the "
        "tall-and-skinny MMM lower bound: that bound is for computing S = QKᵀ as a matrix "
        "product whose N × N result leaves the chip (its N² term) and is read back for the "
        "second product, as Standard does. A fused dataflow keeps each score tile on chip "
        "and never moves S, so it is bounded only by the exact-attention order N²d²/M and "
        "the compulsory traffic (docs/dataflows.md).",
        "",
    ]


def _bounds(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The lower bounds reported with the rows (same workload, so the first wins); each
    dataflow's own closed form is a column of the table instead."""
    bounds: dict[str, float] = {}
    for record in rows:
        for name, value in dict(record.get("bounds") or {}).items():
            if name == "closed_form":
                continue
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                bounds.setdefault(str(name), float(value))
    return bounds


def _approx_section(
    variant: Variant, heading: str, figures: Sequence[tuple[str, str]]
) -> list[str]:
    """Growth of off-chip bytes in N per dataflow, and time, traffic and error per (g, d)."""
    records = variant.ok_records()
    lines = [f"## {heading}", ""]
    for seq_len, head_dim in _side_shapes(variant):
        shape_rows = _rows_of(records, seq_len, head_dim)
        if shape_rows:
            lines += [f"### N = {format_tokens(seq_len)} tokens, d = {head_dim}", ""]
            lines += _shape_table(shape_rows, baseline_label="attenio")
    series = slope_series(records)
    if series:
        dims = sorted({s.head_dim for s in series})
        slopes = {(s.label, s.head_dim): s for s in series}
        lines += [
            "Growth of off-chip traffic with N: the least-squares slope p of log(bytes) "
            "against log(N), i.e. bytes ~ N^p (2 = quadratic, 1 = linear), over the N listed.",
            "",
            "| Dataflow | " + " | ".join(f"d = {d}" for d in dims) + " |",
            "|---|" + "---:|" * len(dims),
        ]
        for label in labels_in(records):
            cells = [_slope_cell(slopes.get((label, d))) for d in dims]
            if any(cell != "–" for cell in cells):
                lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    rows = tradeoff_rows(records)
    bounds = sorted({row.bound for row in rows})
    lines += [
        "Time and accuracy: simulated time and off-chip traffic of each approx run, and the "
        "error of its polynomial against softmax attention on fixed random inputs with "
        f"|q·k|/√d ≤ B (B = {', '.join(f'{b:g}' for b in bounds)}): max relative error "
        "max|O_poly − O| / max|O|, mean relative error mean|O_poly − O| / mean|O|. "
        "The error depends on g, d and B only, not on the platform.",
        "",
        "| d | g | B | N (tokens) | Time | Off-chip | Speedup over attenio (×) "
        "| Max rel. error | Mean rel. error |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        speedup = row.attenio_time_ns / row.time_ns if row.attenio_time_ns and row.time_ns else None
        cells = [
            str(row.head_dim),
            str(row.degree),
            f"{row.bound:g}",
            format_tokens(row.seq_len),
            "–" if row.time_ns is None else format_ns(row.time_ns),
            "–" if row.offchip_bytes is None else format_bytes(row.offchip_bytes),
            "–" if speedup is None else f"{speedup:.3g}",
            f"{row.max_rel:.2e}",
            f"{row.mean_rel:.2e}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for caption, filename in figures:
        lines += [f"![{caption}]({filename})", ""]
    return lines


def _side_shapes(variant: Variant) -> list[tuple[int, int]]:
    """Shapes outside the exact-attention study (an approximate-attention side study's)."""
    main = set(variant.main_shapes())
    return [shape for shape in variant.shapes() if shape not in main]


def _slope_cell(series: SlopeSeries | None) -> str:
    if series is None:
        return "–"
    ns = [n for n, _ in series.points]
    return f"{series.slope:.2f} (N {format_tokens(ns[0])}–{format_tokens(ns[-1])})"


def _fmt(value: float | None, scale: float, digits: int) -> str:
    return "–" if value is None else f"{value * scale:,.{digits}f}"


def _design_section(axis: Axis, figures: Sequence[tuple[str, str]]) -> list[str]:
    """Simulated time and off-chip traffic of every workload against one swept parameter."""
    lines = [f"## {design_heading(axis)}", ""]
    header = "| Dataflow | N | d | " + " | ".join(axis.values) + " |"
    rule = "|---|---:|---:|" + "---:|" * len(axis.values)
    for caption, unit, value in METRICS:
        lines += [f"{caption} ({unit}) against `{axis.key}`:", "", header, rule]
        for series in axis.series:
            by_value = dict(series.points)
            cells = [f"{value(by_value[v]):,.3f}" if v in by_value else "–" for v in axis.values]
            lines.append(
                f"| {series.label} | {format_tokens(series.seq_len)} | {series.head_dim} | "
                + " | ".join(cells)
                + " |"
            )
        lines.append("")
    for caption, filename in figures:
        lines += [f"![{caption}]({filename})", ""]
    return lines
