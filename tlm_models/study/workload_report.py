"""The report's "Workloads side by side" section: the same dataflow on different kinds of
workload (causal vs non-causal, prefill vs decode, MHA vs GQA) in adjacent rows.

Shown when a sweep holds more than one kind of workload. Each row is one run at its own
shape; "× floor" is its off-chip traffic over the compulsory traffic of its workload (Q and O
once per query head, the K and V rows some query sees once per K/V head), so rows of
different shapes compare on the same footing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tlm_models.run.config import DATAFLOWS, format_tokens, record_workload_words
from tlm_models.study.table import workload_rank
from tlm_models.study.variants import label_of, metric
from tlm_models.units import format_bytes, format_ns

__all__ = ["WORKLOADS_HEADING", "workload_section"]

WORKLOADS_HEADING = "Workloads side by side"


def _kind(record: dict[str, Any]) -> str:
    """The workload's words without its batch, key length and layer count: what a row of the
    side-by-side table is compared by (``causal``, ``decode``, ``GQA 32/8``; ``dense``)."""
    words = [
        w
        for w in record_workload_words(record)
        if not w.startswith(("Nk = ", "B = ")) and not w.endswith(" layers")
    ]
    return ", ".join(words) or "dense"


def _place(record: dict[str, Any]) -> tuple[Any, ...]:
    return (
        str(record.get("platform", "")),
        str(record.get("overrides", [])),
        label_of(record),
        int(record.get("head_dim", 0)),
        int(record.get("kv_len") or record.get("seq_len", 0)),
    )


def _order(record: dict[str, Any]) -> tuple[Any, ...]:
    dataflow = str(record.get("dataflow", ""))
    return (
        str(record.get("platform", "")),
        str(record.get("overrides", [])),
        DATAFLOWS.index(dataflow) if dataflow in DATAFLOWS else len(DATAFLOWS),
        label_of(record),
        int(record.get("head_dim", 0)),
        int(record.get("kv_len") or record.get("seq_len", 0)),
        *workload_rank(record),
        int(record.get("seq_len", 0)),
    )


def workload_section(records: Sequence[dict[str, Any]]) -> list[str]:
    """The section's Markdown lines, or none when every run is the same kind of workload."""
    ok = [r for r in records if "error" not in r]
    if len({_kind(r) for r in ok}) < 2:
        return []
    # Dense runs are listed where they have a counterpart: a run of another kind with the
    # same dataflow, head dim and key length on the same platform (a sweep's plain grid
    # would otherwise fill the table).
    others = {_place(r) for r in ok if _kind(r) != "dense"}
    ok = [r for r in ok if _kind(r) != "dense" or _place(r) in others]
    lines = [
        f"## {WORKLOADS_HEADING}",
        "",
        "Every finished run of a kind other than dense self-attention, with the dense runs of "
        "the same dataflow, head dim and key length, the same dataflow's runs adjacent: "
        "causal beside non-causal, decode beside prefill, GQA beside MHA. Nq query rows "
        "against Nk keys per head; MACs and exps are those the PE array and Exp unit "
        "executed (a masked block that is skipped costs none). × floor: off-chip traffic "
        "over the workload's compulsory traffic. Per layer; the model's layers multiply "
        "time, bytes and energy.",
        "",
        "| Dataflow | Workload | Nq | Nk | d | Hq/Hkv | B | Time | Off-chip | × floor "
        "| MACs | Exps |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in sorted(ok, key=_order):
        time_ns = metric(r, "sim_time_ns")
        offchip = metric(r, "offchip_bytes.total")
        floor = metric(r, "bounds.compulsory")
        macs, exps = metric(r, "pe.macs"), metric(r, "exp.exps")
        heads = int(r.get("heads", 1))
        cells = [
            label_of(r),
            _kind(r),
            format_tokens(int(r["seq_len"])),
            format_tokens(int(r.get("kv_len") or r["seq_len"])),
            str(r["head_dim"]),
            f"{heads}/{int(r.get('kv_heads') or heads)}",
            str(int(r.get("batch") or 1)),
            "–" if time_ns is None else format_ns(time_ns),
            "–" if offchip is None else format_bytes(offchip),
            "–" if not (offchip and floor) else f"{offchip / floor:.2f}",
            "–" if macs is None else f"{macs:,.0f}",
            "–" if exps is None else f"{exps:,.0f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return lines
