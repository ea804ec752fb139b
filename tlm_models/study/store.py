"""A sweep directory's results: one JSON line per finished configuration in results.jsonl.

Each line is appended and fsync'ed the moment its configuration finishes, so an interrupted
or crashed sweep keeps every finished result. A line with an ``"error"`` records a failure;
when a key appears more than once (a retried failure), the last line wins. A crash in the
middle of a write leaves a torn last line (no newline): the next sweep moves it to
results.jsonl.torn before it appends anything, so no record is ever glued onto a fragment,
and the configuration it belonged to runs again.
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

__all__ = [
    "RESULTS_FILE",
    "RESULT_SCHEMA",
    "TORN_FILE",
    "ResultStore",
    "error_record",
    "result_record",
]

RESULTS_FILE = "results.jsonl"
#: Where torn trailing lines are kept, one per line, for whoever wants to look at them.
TORN_FILE = "results.jsonl.torn"
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
        **config.workload_fields(),
        "layers": config.layers,
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

    def set_aside_torn_tail(self) -> int:
        """Moves a torn last line (bytes after the last newline) to TORN_FILE and cuts it off
        results.jsonl; returns its length in bytes (0 when the file ends cleanly)."""
        if not self.path.exists():
            return 0
        with self.path.open("rb+") as stream:
            size = stream.seek(0, os.SEEK_END)
            end = size
            # Scan back for the last newline in blocks: the file may be large, a line is not.
            while end > 0:
                start = max(0, end - 65536)
                stream.seek(start)
                block = stream.read(end - start)
                newline = block.rfind(b"\n")
                if newline >= 0:
                    end = start + newline + 1
                    break
                end = start
            if end == size:
                return 0
            stream.seek(end)
            fragment = stream.read()
            with (self.directory / TORN_FILE).open("ab") as side:
                side.write(fragment + b"\n")
                side.flush()
                os.fsync(side.fileno())
            stream.truncate(end)
            stream.flush()
            os.fsync(stream.fileno())
        return len(fragment)

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
