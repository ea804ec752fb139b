"""The report's words: which dataflow wins each configuration and why, and what each
dataflow's engines wait for. Every sentence is computed from the result records' metrics
(and the diagnosis each run stored, ``tlm_models.run.diagnosis``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tlm_models.run.diagnosis import STALL_WORDS, WORK_WORDS
from tlm_models.study.variants import format_tokens, label_of, labels_in, metric
from tlm_models.units import format_bytes, format_ns

__all__ = ["BOUND_NAMES", "STALL_CAUSES", "shape_summary", "stall_shares", "why_lines"]

#: The closed-form bounds of the result JSON, as the report names them.
BOUND_NAMES = {
    "mmm_lower_bound": "tall-and-skinny MMM lower bound",
    "attention_order_bound": "exact-attention order N²d²/M",
    "approx_lower_bound": "approx lower bound (Q, K, V read and O written once)",
}

#: Idle causes of the compute engines, in the order the report lists them.
STALL_CAUSES = ("load_data", "store_done", "buffer_free", "pe_result", "exp_result", "lookahead")


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100.0 * value:.0f} %"


def _time(record: dict[str, Any]) -> float:
    return metric(record, "sim_time_ns") or float("inf")


def _traffic(record: dict[str, Any]) -> float:
    return metric(record, "offchip_bytes.total") or float("inf")


def _reason(record: dict[str, Any]) -> str:
    """Why a run took its time, in a clause: the resource that limits it and how well used."""
    pe_busy = metric(record, "pe.busy_fraction") or 0.0
    macs = metric(record, "pe.mac_utilization")
    stall = metric(record, "memory_stall_fraction") or 0.0
    if stall >= 0.5:
        return f"its compute waits on off-chip memory {_percent(stall)} of the time"
    if pe_busy >= 0.7:
        return (
            f"it keeps the PE array busy {_percent(pe_busy)} with {_percent(macs)} of its "
            "MACs in use"
        )
    return (
        f"its PE array is busy {_percent(pe_busy)} ({_percent(macs)} of MACs) and compute "
        f"waits on memory {_percent(stall)} of the time"
    )


def shape_summary(seq_len: int, head_dim: int, rows: Sequence[dict[str, Any]]) -> str:
    """One executive-summary sentence for the runs of one (N, d): the winner, by how much
    and why, and the dataflow with the least traffic when that is another one."""
    ranked = sorted(rows, key=_time)
    winner = ranked[0]
    text = (
        f"N = {format_tokens(seq_len)}, d = {head_dim}: **{label_of(winner)}** is fastest "
        f"({format_ns(_time(winner))}"
    )
    if len(ranked) > 1:
        runner = ranked[1]
        text += f", {_time(runner) / _time(winner):.2f}× ahead of {label_of(runner)}"
    text += f"): {_reason(winner)}."
    least = min(rows, key=_traffic)
    if least is not winner:
        text += (
            # Both amounts, not a rounded ratio ("1x less" when fitted tiles come close).
            f" {label_of(least)} moves the least off-chip data ({format_bytes(_traffic(least))} "
            f"against {label_of(winner)}'s {format_bytes(_traffic(winner))}) but "
            f"takes {_time(least) / _time(winner):.2f}× as long: {_reason(least)}."
        )
    return text


def why_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Each run's bottleneck sentence and hints, as Markdown list items, in report order."""
    lines: list[str] = []
    by_label = {label_of(r): r for r in rows}
    for label in labels_in(rows):
        diagnosis = by_label[label].get("diagnosis")
        if not diagnosis:
            continue
        lines.append(f"- **{label}**: {diagnosis['bottleneck']}")
        lines += [f"    - Hint: {hint}" for hint in diagnosis.get("hints", [])]
    return lines


def stall_shares(record: dict[str, Any], engine: str) -> dict[str, float]:
    """The share of simulated time ``engine`` sat idle with work queued, per cause."""
    sim = metric(record, "sim_time_ns") or 0.0
    causes = dict(dict(record.get("stalls") or {}).get(engine) or {})
    if sim <= 0:
        return {}
    return {cause: float(causes.get(cause, 0.0)) / sim for cause in STALL_CAUSES}


def stall_words(cause: str) -> str:
    """``waiting for off-chip loads`` for ``load_data``."""
    return STALL_WORDS.get(cause, cause)


#: The parts of a compute engine's time (``pe.time``, ``exp.time``) in the order tables and
#: plots show them: busy by kind of work, drain, idle by cause, idle with nothing left.
TIME_PARTS = (
    *("mac", "elementwise", "row", "rescale", "move", "exp", "drain"),
    *(f"idle.{cause}" for cause in STALL_CAUSES),
    "idle_no_work",
)


def time_shares(record: dict[str, Any], engine: str) -> dict[str, float] | None:
    """Each part of ``engine``'s time as a share of simulated time (they sum to 1), or None
    for a result without the breakdown."""
    sim = metric(record, "sim_time_ns") or 0.0
    breakdown = dict(record.get(engine) or {}).get("time")
    if not breakdown or sim <= 0:
        return None
    shares = {kind: float(ns) / sim for kind, ns in breakdown["busy"].items()}
    shares |= {f"idle.{cause}": float(ns) / sim for cause, ns in breakdown["idle"].items()}
    shares["idle_no_work"] = float(breakdown["idle_no_work"]) / sim
    return shares


def time_words(part: str) -> str:
    """``rescaling`` for ``rescale``, ``idle waiting for off-chip loads`` for
    ``idle.load_data``."""
    if part.startswith("idle."):
        return f"idle {stall_words(part.removeprefix('idle.'))}"
    if part == "idle_no_work":
        return "idle, nothing left to do"
    return WORK_WORDS.get(part, part)
