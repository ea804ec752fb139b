"""Groups result records for reports and plots: one variant per platform, overrides, heads
and workload kind (mask, K/V heads, phase, batch, key length, layers, model: the words of
``record_workload_words``).

Speedups and tables compare dataflows only within a variant, i.e. on the same hardware and
the same kind of workload; ``workload_report`` sets the kinds side by side.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tlm_models.run.config import DATAFLOWS, format_tokens, record_workload_words
from tlm_models.study.table import sort_records

__all__ = [
    "Variant",
    "approx_heading",
    "format_tokens",
    "group_variants",
    "label_of",
    "labels_in",
    "metric",
    "shape_words",
]


@dataclass(frozen=True)
class Variant:
    """Records run on the same platform with the same overrides, head count and workload kind
    (``workload``: e.g. ``("decode", "GQA 32/8", "Nk = 8K")``; empty for dense attention)."""

    platform: str
    overrides: tuple[str, ...]
    heads: int
    records: tuple[dict[str, Any], ...]
    workload: tuple[str, ...] = ()

    def title(self) -> str:
        parts = [self.platform, *self.overrides]
        if self.heads != 1:
            parts.append(f"{self.heads} heads")
        # The tables and plots under this title show one layer (``all_layers`` has the L):
        # "96 layers" alone read as if the figures were the model's.
        parts += [
            f"per layer of {w.removesuffix(' layers')}" if w.endswith(" layers") else w
            for w in self.workload
        ]
        return ", ".join(parts)

    def ok_records(self) -> list[dict[str, Any]]:
        return [record for record in self.records if "error" not in record]

    def shapes(self) -> list[tuple[int, int]]:
        """The (N, d) pairs present, sorted by d then N."""
        pairs = {(int(r["seq_len"]), int(r["head_dim"])) for r in self.records}
        return sorted(pairs, key=lambda pair: (pair[1], pair[0]))

    def main_shapes(self) -> list[tuple[int, int]]:
        """The shapes of the exact-attention study: where Standard ran, when it ran anywhere
        (a side study's other shapes belong to its own section), else every shape with an
        exact dataflow."""
        exact = [r for r in self.records if r.get("dataflow") != "approx"]
        baseline = [r for r in exact if r.get("dataflow") == "standard"]
        pairs = {(int(r["seq_len"]), int(r["head_dim"])) for r in baseline or exact}
        return sorted(pairs, key=lambda pair: (pair[1], pair[0]))

    def main_records(self) -> list[dict[str, Any]]:
        """The finished exact-attention runs at ``main_shapes``."""
        shapes = set(self.main_shapes())
        return [
            r
            for r in self.ok_records()
            if r.get("dataflow") != "approx" and (int(r["seq_len"]), int(r["head_dim"])) in shapes
        ]


def approx_heading(variant: Variant, titled: bool) -> str:
    """The title of a variant's approximate-attention section (and the key of its figures)."""
    return f"Approximate attention — {variant.title()}" if titled else "Approximate attention"


def group_variants(records: Iterable[dict[str, Any]]) -> list[Variant]:
    """Splits records into variants, in canonical record order."""
    groups: dict[tuple[str, tuple[str, ...], int, tuple[str, ...]], list[dict[str, Any]]] = {}
    for record in sort_records(records):
        # The platform *file* as configured: results may name the platform differently.
        ident = (
            str(record.get("config", {}).get("platform", record.get("platform", ""))),
            tuple(str(item) for item in record.get("overrides", [])),
            int(record.get("heads", 1)),
            tuple(record_workload_words(record)),
        )
        groups.setdefault(ident, []).append(record)
    return [Variant(p, o, h, tuple(rs), w) for (p, o, h, w), rs in groups.items()]


def label_of(record: dict[str, Any]) -> str:
    """The dataflow and its parameters (``approx degree=2``)."""
    extra = record.get("config", {}).get("extra", {})
    params = " ".join(f"{name}={value}" for name, value in extra.items())
    dataflow = str(record.get("dataflow", "?"))
    return f"{dataflow} {params}" if params else dataflow


def labels_in(records: Iterable[dict[str, Any]]) -> list[str]:
    """Distinct labels, ordered as DATAFLOWS (baseline first)."""
    seen: dict[str, int] = {}
    for record in records:
        dataflow = str(record.get("dataflow", ""))
        rank = DATAFLOWS.index(dataflow) if dataflow in DATAFLOWS else len(DATAFLOWS)
        seen.setdefault(label_of(record), rank)
    return sorted(seen, key=lambda label: (seen[label], label))


def metric(record: dict[str, Any], path: str) -> float | None:
    """A numeric field by dotted path (``pe.mac_utilization``), or None when absent."""
    value: Any = record
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def shape_words(rows: Sequence[dict[str, Any]], seq_len: int) -> str:
    """``N = 8K tokens``, or ``Nq = 1, Nk = 8K tokens`` when the keys are not the queries
    (a variant holds one key length then: it is part of its title)."""
    kv_len = int(rows[0].get("kv_len") or seq_len) if rows else seq_len
    if kv_len == seq_len:
        return f"N = {format_tokens(seq_len)} tokens"
    return f"Nq = {format_tokens(seq_len)}, Nk = {format_tokens(kv_len)} tokens"
