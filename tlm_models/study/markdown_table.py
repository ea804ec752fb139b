"""The head of a Markdown table in the reports: the column names and their alignment row."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["table_head"]


def table_head(columns: Sequence[str], aligns: str) -> list[str]:
    """Header and alignment rows; ``aligns`` holds one letter per column: ``l`` left-aligned
    (text), ``r`` right-aligned (numbers)."""
    assert len(aligns) == len(columns), (columns, aligns)
    rule = {"l": "---", "r": "---:"}
    return [
        "| " + " | ".join(columns) + " |",
        "|" + "".join(rule[a] + "|" for a in aligns),
    ]
