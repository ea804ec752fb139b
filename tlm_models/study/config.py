"""One study configuration (``RunConfig``) and the parsers for its command-line spellings.

A configuration names everything that determines a result, so its ``key()`` identifies the
result in a sweep directory and lets a re-run skip work that is already done.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tlm_models.dataflows.workload import parse_count
from tlm_models.errors import UserError

__all__ = [
    "DATAFLOWS",
    "DEFAULT_PLATFORM",
    "RunConfig",
    "parse_dataflows",
    "parse_int_list",
    "parse_key_value",
    "parse_seq_len",
    "resolve_platform",
]

#: Dataflows a study can run, in the order reports list them (the baseline first).
DATAFLOWS: tuple[str, ...] = ("standard", "flat", "flash2", "attenio", "approx")

#: The paper's machine; relative paths are looked up in the working directory, then the repository.
DEFAULT_PLATFORM = "platforms/attenio.yaml"

_REPOSITORY = Path(__file__).resolve().parent.parent.parent
_KEY_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_\[\]]+)*$")


@dataclass(frozen=True)
class RunConfig:
    """One attention workload on one platform with one dataflow: the unit of a sweep.

    ``overrides`` are platform parameter overrides ``"key.path=value"`` applied in order;
    ``extra`` are dataflow parameters as ``(name, value)`` pairs (e.g. ``("degree", "2")``).
    """

    dataflow: str
    seq_len: int
    head_dim: int
    heads: int = 1
    platform: str = DEFAULT_PLATFORM
    overrides: tuple[str, ...] = ()
    extra: tuple[tuple[str, str], ...] = ()
    #: Simulate every iteration (no steady-state fast-forward, DESIGN decision 14).
    exact: bool = False

    def __post_init__(self) -> None:
        if self.dataflow not in DATAFLOWS:
            raise UserError(_unknown_dataflow(self.dataflow))
        for name, value in (
            ("seq_len", self.seq_len),
            ("head_dim", self.head_dim),
            ("heads", self.heads),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UserError(f"{name} must be a positive integer, found {value!r}")
        for item in self.overrides:
            parse_key_value(item, what="platform override")
        for pair in self.extra:
            if len(pair) != 2 or not _KEY_NAME.match(str(pair[0])):
                raise UserError(f"dataflow parameter must be a (name, value) pair, found {pair!r}")

    def key(self) -> str:
        """A stable text identifying this configuration (same fields, same key, any process)."""
        parts = [
            f"dataflow={self.dataflow}",
            f"N={self.seq_len}",
            f"d={self.head_dim}",
            f"heads={self.heads}",
            f"platform={self.platform}",
        ]
        parts += [f"set:{item}" for item in self.overrides]
        parts += [f"param:{name}={value}" for name, value in self.extra]
        if self.exact:
            parts.append("exact")
        return " ".join(parts)

    def label(self) -> str:
        """The dataflow with its parameters, as reports name it (``approx degree=2``)."""
        params = " ".join(f"{name}={value}" for name, value in self.extra)
        return f"{self.dataflow} {params}" if params else self.dataflow

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data; ``from_dict`` reverses it."""
        data: dict[str, Any] = {
            "dataflow": self.dataflow,
            "seq_len": self.seq_len,
            "head_dim": self.head_dim,
            "heads": self.heads,
            "platform": self.platform,
            "overrides": list(self.overrides),
            "extra": {name: value for name, value in self.extra},
        }
        if self.exact:
            data["exact"] = True
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        """Rebuilds a configuration from ``as_dict`` output (e.g. a results.jsonl line)."""
        try:
            return cls(
                dataflow=str(data["dataflow"]),
                seq_len=int(data["seq_len"]),
                head_dim=int(data["head_dim"]),
                heads=int(data.get("heads", 1)),
                platform=str(data.get("platform", DEFAULT_PLATFORM)),
                overrides=tuple(str(item) for item in data.get("overrides", ())),
                extra=tuple((str(k), str(v)) for k, v in dict(data.get("extra", {})).items()),
                exact=bool(data.get("exact", False)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"not a study configuration: {data!r} ({exc})") from None

    def platform_path(self) -> Path:
        """The platform file this configuration runs on (see ``resolve_platform``)."""
        return resolve_platform(self.platform)


def resolve_platform(path: str) -> Path:
    """Finds a platform file: absolute, else relative to the working directory, else the repo.

    The fallback lets the default ``platforms/attenio.yaml`` work from any directory.
    """
    candidate = Path(path).expanduser()
    local = candidate.is_absolute() or candidate.exists()
    found = candidate if local else _REPOSITORY / candidate
    if not found.is_file():
        tried = [candidate] if candidate.is_absolute() else [Path.cwd() / candidate, found]
        places = " and ".join(str(p) for p in dict.fromkeys(tried))
        known = sorted(p.name for p in (_REPOSITORY / "platforms").glob("*.yaml"))
        close = difflib.get_close_matches(candidate.name, known, n=1)
        hint = f"; did you mean platforms/{close[0]}?" if close else ""
        raise UserError(f"platform file '{path}' not found (looked for {places}){hint}")
    return found


def parse_seq_len(text: str) -> int:
    """Parses a sequence length: ``8192``, ``8K`` or ``1M`` (K = 1024 tokens); the same parser
    as every other command's sizes (``tlm_models.units.parse_count``)."""
    return parse_count(text, "sequence length")


def parse_int_list(text: str, what: str = "sequence length") -> tuple[int, ...]:
    """Parses ``"8K,16K"`` or ``"64,128"``: comma-separated, K = 1024, no duplicates."""
    items = [item.strip() for item in text.split(",")]
    if not text.strip() or any(not item for item in items):
        raise UserError(
            f"expected a comma-separated list of {what}s such as '8K,16K', found '{text}'"
        )
    values: list[int] = []
    for item in items:
        try:
            value = parse_seq_len(item)
        except UserError:
            raise UserError(
                f"expected a comma-separated list of {what}s such as '8K,16K' or '64,128' "
                f"(K = 1024, M = 1024 K), found '{item}' in '{text}'"
            ) from None
        if value in values:
            raise UserError(f"{what} {value} is listed twice in '{text}'")
        values.append(value)
    return tuple(values)


def parse_dataflows(text: str) -> tuple[str, ...]:
    """Parses ``"standard,flash2,attenio"`` (or ``all``) into validated dataflow names."""
    if text.strip() == "all":
        return DATAFLOWS
    names = [name.strip() for name in text.split(",")]
    if not text.strip() or any(not name for name in names):
        raise UserError(
            f"expected a comma-separated list of dataflows ({', '.join(DATAFLOWS)} or all), "
            f"found '{text}'"
        )
    for name in names:
        if name not in DATAFLOWS:
            raise UserError(_unknown_dataflow(name))
        if names.count(name) > 1:
            raise UserError(f"dataflow '{name}' is listed twice in '{text}'")
    return tuple(names)


def parse_key_value(text: str, what: str = "setting") -> tuple[str, str]:
    """Splits ``"sram.capacity=64KiB"`` into a dotted key and its (non-empty) value text."""
    key, sep, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or not _KEY_NAME.match(key) or not value:
        raise UserError(
            f"expected a {what} as key.path=value (e.g. 'sram.capacity=64KiB'), found '{text}'"
        )
    return key, value


def _unknown_dataflow(name: str) -> str:
    close = difflib.get_close_matches(name, DATAFLOWS, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return f"unknown dataflow '{name}' (expected one of {', '.join(DATAFLOWS)}){hint}"
