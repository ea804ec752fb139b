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
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tlm_models.errors import UserError
from tlm_models.files.bounded_input import decode_utf8, loads_json, open_regular
from tlm_models.files.output_file import file_kind, os_error
from tlm_models.run.config import RunConfig
from tlm_models.run.result import SCHEMA

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
RESULT_SCHEMA = SCHEMA  # declared once, in tlm_models.run.result
#: The longest line read back: a result record is a few KiB (a tiled run's tens of KiB).
MAX_LINE_BYTES = 16 << 20


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

    def _check_regular(self) -> bool:
        """True if results.jsonl exists (as a regular file); UserError if it is anything else
        (a directory, or a link to a device: /dev/zero would be read forever)."""
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            if os.path.islink(self.path):
                raise UserError(f"{self.path}: is a symbolic link to a missing file") from None
            return False
        except OSError as exc:
            raise os_error(self.path, "read the results", exc) from None
        if not stat.S_ISREG(info.st_mode):
            raise UserError(
                f"{self.path}: is {file_kind(info.st_mode)}, not a results file (a regular file)"
            )
        return True

    def append(self, record: dict[str, Any]) -> None:
        """Appends one record as a line and forces it to disk before returning. A failed
        write (a full disk) is a UserError; a partial line it left is set aside by the next
        sweep (set_aside_torn_tail), which runs the configuration again."""
        line = (json.dumps(record, sort_keys=True, allow_nan=True) + "\n").encode("utf-8")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._check_regular()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
            try:
                view = memoryview(line)
                while view:  # os.write may write less than asked
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise UserError(
                f"{self.path}: cannot append a result: {exc.strerror or exc}; the results "
                "before it are kept, and the same command resumes"
            ) from None

    def set_aside_torn_tail(self) -> int:
        """Moves a torn last line (bytes after the last newline) to TORN_FILE and cuts it off
        results.jsonl; returns its length in bytes (0 when the file ends cleanly)."""
        if not self._check_regular():
            return 0
        try:
            return self._set_aside_torn_tail()
        except OSError as exc:
            raise os_error(self.path, "set aside its torn last line", exc) from None

    def _set_aside_torn_tail(self) -> int:
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
        """All records in file order. A torn last line (killed mid-write, so without its
        newline) is ignored. Read through the bounded reader: a regular file only, each line
        at most MAX_LINE_BYTES, UTF-8, JSON within its nesting and integer caps."""
        if not self._check_regular():
            return []
        records: list[dict[str, Any]] = []
        with open_regular(self.path, "results file") as stream:
            for number, raw in enumerate(iter(lambda: stream.readline(MAX_LINE_BYTES + 1), b""), 1):
                torn = not raw.endswith(b"\n")
                if len(raw) > MAX_LINE_BYTES:
                    raise UserError(
                        f"{self.path}:{number}: a line longer than {MAX_LINE_BYTES:,} B "
                        "(not a result record)"
                    )
                where = f"{self.path}:{number}"
                try:
                    line = decode_utf8(raw, where, "result record")
                    if not line.strip():
                        continue
                    record = loads_json(line, where, "result record")
                except UserError:
                    if torn:
                        break
                    raise
                if not isinstance(record, dict) or "key" not in record:
                    raise UserError(f"{where}: not a result record (no 'key')")
                records.append(record)
        return records

    def latest(self) -> dict[str, dict[str, Any]]:
        """The last record of each key, in order of first appearance."""
        latest: dict[str, dict[str, Any]] = {}
        for record in self.records():
            latest[str(record["key"])] = record
        return latest
