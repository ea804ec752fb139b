"""The sweep report's energy section: per (N, d) the energy of each dataflow, split into
dynamic and static, average power, energy-delay product, pJ per attention FLOP, and the
energy of every component (docs/energy.md).

Attention FLOPs are those of exact attention, 4 N^2 d per head (S = QK^T and O = PV, two
FLOPs a MAC): one yardstick for every dataflow, so pJ/FLOP compares their energy directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tlm_models.study.config import record_workload
from tlm_models.study.variants import (
    Variant,
    label_of,
    labels_in,
    metric,
    shape_words,
)

__all__ = [
    "attention_flops",
    "component_energy_mj",
    "energy_heading",
    "energy_records",
    "energy_section",
    "pj_per_flop",
]


def attention_flops(record: dict[str, Any]) -> float:
    """FLOPs of exact attention for the record's workload: 4 d per visible (query, key) pair
    per head (4 N^2 d per head of dense self-attention; masked pairs are no useful work)."""
    w = record_workload(record)
    return 4.0 * w.visible_pairs() * w.head_dim * w.head_count


def pj_per_flop(record: dict[str, Any]) -> float | None:
    total = metric(record, "energy.total_j")
    return None if total is None else total * 1e12 / attention_flops(record)


def energy_records(variant: Variant) -> list[dict[str, Any]]:
    """The finished records that carry an energy section with some energy in it."""
    return [r for r in variant.ok_records() if (metric(r, "energy.total_j") or 0.0) > 0.0]


def component_energy_mj(records: Sequence[dict[str, Any]]) -> dict[str, list[float]]:
    """Each component that spent energy in any record -> its mJ per record (records' order)."""
    names: dict[str, None] = {}
    for r in records:
        for name, comp in r["energy"]["by_component"].items():
            if comp["total_j"]:
                names.setdefault(name)
    return {
        name: [1e3 * float(r["energy"]["by_component"].get(name, {}).get("total_j", 0.0))
               for r in records]
        for name in names
    }  # fmt: skip


def energy_heading(variant: Variant, titled: bool) -> str:
    """The title of a variant's energy section (and the key of its figures)."""
    return f"Energy — {variant.title()}" if titled else "Energy"


def energy_section(variant: Variant, heading: str, figures: Sequence[tuple[str, str]]) -> list[str]:
    records = energy_records(variant)
    if not records:
        return []
    lines = [
        f"## {heading}",
        "",
        "Energy = action counts x the platform's `energy:` entries (dynamic) + static power x "
        "simulated time; components without a table count actions but add no energy. pJ/FLOP "
        "divides by exact attention's 4·d FLOPs per visible (query, key) pair per head "
        "(4·N²·d without a mask).",
        "",
    ]
    if not any(metric(r, "energy.static_j") for r in records):
        lines += [
            "Static energy is not modelled: no component's table has a `leak` entry and the "
            "platform states no `technology:` for the area model's leakage "
            "(docs/models/area.md), so the tables have no static column.",
            "",
        ]
    shapes = sorted(
        {(int(r["seq_len"]), int(r["head_dim"])) for r in records}, key=lambda s: (s[1], s[0])
    )
    for seq_len, head_dim in shapes:
        rows = [
            r for r in records if (int(r["seq_len"]), int(r["head_dim"])) == (seq_len, head_dim)
        ]
        by_label = {label_of(r): r for r in rows}
        ordered = [by_label[label] for label in labels_in(rows)]
        parts = component_energy_mj(ordered)
        # Static energy is leak power x time: without a `leak` entry anywhere it is not
        # modelled, and a column of zeros would read as a measurement.
        static = any(metric(r, "energy.static_j") for r in ordered)
        header = [
            "Dataflow", "Energy (mJ)", "Dynamic (mJ)", *(["Static (mJ)"] if static else []),
            "Avg. power (W)", "EDP (mJ·ms)", "pJ / attention FLOP",
            *(f"{name} (mJ)" for name in parts),
        ]  # fmt: skip
        lines += [
            f"### {shape_words(rows, seq_len)}, d = {head_dim}",
            "",
            "| " + " | ".join(header) + " |",
            "|---|" + "---:|" * (len(header) - 1),
        ]
        for index, record in enumerate(ordered):
            edp = metric(record, "energy.edp_js")
            cells = [
                label_of(record),
                _fmt(metric(record, "energy.total_j"), 1e3, 3),
                _fmt(metric(record, "energy.dynamic_j"), 1e3, 3),
                *([_fmt(metric(record, "energy.static_j"), 1e3, 3)] if static else []),
                _fmt(metric(record, "energy.average_power_w"), 1.0, 3),
                _fmt(edp, 1e6, 3),
                _fmt(pj_per_flop(record), 1.0, 3),
                *(f"{values[index]:,.3f}" for values in parts.values()),
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    for caption, filename in figures:
        lines += [f"![{caption}]({filename})", ""]
    return lines


def _fmt(value: float | None, scale: float, digits: int) -> str:
    return "–" if value is None else f"{value * scale:,.{digits}f}"
