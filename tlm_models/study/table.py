"""results.csv: result records flattened to dotted columns in a stable order.

Nested objects become dotted columns (``offchip_bytes.read``, ``stalls.pe.load``); lists become
JSON text. Well-known columns come first in a fixed order, the rest follow alphabetically, so
the same records always give the same file.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tlm_models.files.output_file import write_output
from tlm_models.run.config import DATAFLOWS
from tlm_models.workload.spec import MASKS, PHASES

__all__ = ["CSV_FILE", "flatten", "sort_records", "workload_rank", "write_csv"]

CSV_FILE = "results.csv"

_LEADING_COLUMNS = (
    "key",
    "dataflow",
    "platform",
    "seq_len",
    "kv_len",
    "head_dim",
    "heads",
    "kv_heads",
    "batch",
    "mask",
    "window",
    "phase",
    "layers",
    "model",
    "overrides",
    "error",
    "sim_time_ns",
    "offchip_bytes.read",
    "offchip_bytes.write",
    "offchip_bytes.total",
    "pe.busy_fraction",
    "pe.mac_utilization",
    "exp.busy_fraction",
    "exp.lane_utilization",
    "memory_stall_fraction",
    "overlap_efficiency",
    "exposed_io_ns",
    "ops",
    "wall_s",
    "ops_per_s",
)


def flatten(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts to one level with dotted names; lists to JSON text; scalars unchanged."""
    flat: dict[str, Any] = {}
    for name, value in record.items():
        column = f"{prefix}{name}"
        if isinstance(value, dict):
            flat.update(flatten(value, prefix=f"{column}."))
        elif isinstance(value, (list, tuple)):
            flat[column] = json.dumps(list(value))
        else:
            flat[column] = value
    return flat


def _row(record: dict[str, Any]) -> dict[str, Any]:
    """One CSV row: the flattened result, the dataflow parameters as ``extra.<name>``."""
    row = flatten({name: value for name, value in record.items() if name != "config"})
    extra = record.get("config", {}).get("extra", {})
    row.update({f"extra.{name}": value for name, value in extra.items()})
    return row


def workload_rank(record: dict[str, Any]) -> tuple[int, int]:
    """Prefill before decode, then no mask, causal, sliding: the order reports list them."""
    phase, mask = record.get("phase") or "prefill", record.get("mask") or "none"
    return (
        PHASES.index(phase) if phase in PHASES else len(PHASES),
        MASKS.index(mask) if mask in MASKS else len(MASKS),
    )


def sort_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records in a canonical order (platform, overrides, dataflow, N, d, ...), not run order."""

    def order(record: dict[str, Any]) -> tuple[Any, ...]:
        config = record.get("config", {})
        dataflow = str(record.get("dataflow", ""))
        rank = DATAFLOWS.index(dataflow) if dataflow in DATAFLOWS else len(DATAFLOWS)
        return (
            str(record.get("platform", "")),
            json.dumps(record.get("overrides", [])),
            rank,
            json.dumps(config.get("extra", {}), sort_keys=True),
            *workload_rank(record),
            int(record.get("seq_len", 0)),
            int(record.get("kv_len") or record.get("seq_len", 0)),
            int(record.get("head_dim", 0)),
            int(record.get("heads", 0)),
            str(record.get("key", "")),
        )

    return sorted(records, key=order)


def write_csv(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Writes the records as CSV (replacing the file atomically, so readers never see half)."""
    rows = [_row(record) for record in sort_records(records)]
    present = {column for row in rows for column in row}
    columns = [c for c in _LEADING_COLUMNS if c in present]
    columns += sorted(present - set(columns))
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(row)
    write_output(path, text.getvalue(), "results table")
