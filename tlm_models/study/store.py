"""A sweep directory's results: one JSON line per finished configuration in results.jsonl.

Each line is appended and fsync'ed the moment its configuration finishes, so an interrupted
or crashed sweep keeps every finished result. A line with an ``"error"`` records a failure;
when a key appears more than once (a retried failure), the last line wins.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tlm_models.errors import UserError
from tlm_models.result import SCHEMA
from tlm_models.study.config import RunConfig

__all__ = ["RESULTS_FILE", "RESULT_SCHEMA", "ResultStore", "error_record", "result_record"]

RESULTS_FILE = "results.jsonl"
RESULT_SCHEMA = SCHEMA  # declared once, in tlm_models.result


def result_record(config: RunConfig, result: dict[str, Any]) -> dict[str, Any]:
    """The stored line for a finished run: the job's result plus the configuration and key."""
    record = dict(result)
    record.setdefault("schema", RESULT_SCHEMA)
    record["key"] = config.key()
    record["config"] = config.as_dict()
    return record


def error_record(config: RunConfig, message: str) -> dict[str, Any]:
    """The stored line for a failed run: the configuration's fields and the error message."""
    return {
        "schema": RESULT_SCHEMA,
        "key": config.key(),
        "config": config.as_dict(),
        "dataflow": config.dataflow,
        "platform": config.platform,
        "seq_len": config.seq_len,
        "head_dim": config.head_dim,
        "heads": config.heads,
        "overrides": list(config.overrides),
        "error": message,
    }


@dataclass
class ResultStore:
    """The results.jsonl of one sweep directory (created on first append)."""

    directory: Path

    @property
    def path(self) -> Path:
        return self.directory / RESULTS_FILE

    def append(self, record: dict[str, Any]) -> None:
        """Appends one record as a line and forces it to disk before returning."""
        self.directory.mkdir(parents=True, exist_ok=True)
        line = json.dumps(record, sort_keys=True, allow_nan=True) + "\n"
        with self.path.open("a", encoding="utf-8") as stream:
            stream.write(line)
            stream.flush()
            os.fsync(stream.fileno())

    def records(self) -> list[dict[str, Any]]:
        """All records in file order. A torn last line (killed mid-write) is ignored."""
        if not self.path.exists():
            return []
        records: list[dict[str, Any]] = []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                if number == len(lines):
                    break
                raise UserError(f"{self.path}:{number}: not a JSON line") from None
            if not isinstance(record, dict) or "key" not in record:
                raise UserError(f"{self.path}:{number}: not a result record (no 'key')")
            records.append(record)
        return records

    def latest(self) -> dict[str, dict[str, Any]]:
        """The last record of each key, in order of first appearance."""
        latest: dict[str, dict[str, Any]] = {}
        for record in self.records():
            latest[str(record["key"])] = record
        return latest
