"""One study configuration (``RunConfig``) and the parsers for its command-line spellings.

A configuration names everything that determines a result, so its ``key()`` identifies the
result in a sweep directory and lets a re-run skip work that is already done.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

from tlm_models.errors import UserError
from tlm_models.platform.paths import DEFAULT_PLATFORM, resolve_platform
from tlm_models.workload.spec import Workload, parse_count

__all__ = [
    "DATAFLOWS",
    "DEFAULT_PLATFORM",
    "WORKLOAD_FIELDS",
    "RunConfig",
    "format_tokens",
    "mask_text",
    "parse_dataflows",
    "parse_int_list",
    "parse_key_value",
    "parse_seq_len",
    "record_workload",
    "record_workload_words",
    "resolve_platform",
    "workload_words",
]

#: Dataflows a study can run, in the order reports list them (the baseline first).
DATAFLOWS: tuple[str, ...] = ("standard", "flat", "flash2", "attenio", "fusemax", "approx")

#: What a bank-level fast-forward does when its estimates cannot meet the bound
#: (``RunConfig.ff_policy``, ``--ff-policy``).
FF_POLICIES = ("bound", "estimate")

#: The fields RunConfig shares with ``Workload``, by the same names (all but elem_bytes, which
#: is the platform's).
WORKLOAD_FIELDS = (
    *("seq_len", "head_dim", "heads", "batch", "kv_heads", "kv_len", "mask", "window", "phase"),
)

T = TypeVar("T")

_KEY_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_\[\]]+)*$")


class _WorkloadField(Generic[T]):
    """A read-only attribute of a ``RunConfig`` that is its workload's field of that name (not
    a dataclass field: a class attribute without an annotation)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, config: RunConfig | None, owner: type | None = None) -> T:
        if config is None:  # on the class: there is no workload to read
            raise AttributeError(f"RunConfig.{self.name} is its workload's field")
        value: T = getattr(config.workload, self.name)
        return value


@dataclass(frozen=True)
class RunConfig:
    """One attention workload on one platform with one dataflow: the unit of a sweep.

    ``workload`` is the attention problem (``Workload``, tlm_models/workload/spec.py: Nq, Nk,
    Hq, Hkv, batch, mask with its window, phase), validated once when it was built; its element
    width is the platform's business (``resolve_run`` gives it the platform's). The workload's
    fields read through as properties (``config.seq_len``). ``layers`` identical layers run
    back to back: one is simulated and the result's ``all_layers`` section multiplies it
    (docs/workloads.md). ``model`` names the preset or config.json the workload came from (a
    label only). ``RunConfig.of`` builds one from the workload's fields by name.

    ``overrides`` are platform parameter overrides ``"key.path=value"`` applied in order;
    ``extra`` are dataflow parameters as ``(name, value)`` pairs (e.g. ``("degree", "2")``).
    """

    dataflow: str
    workload: Workload
    platform: str = DEFAULT_PLATFORM
    overrides: tuple[str, ...] = ()
    extra: tuple[tuple[str, str], ...] = ()
    #: Simulate every iteration (no steady-state fast-forward, DESIGN decision 14).
    exact: bool = False
    layers: int = 1
    model: str = ""
    #: Fast-forward on a bank-level memory (fast_forward/statistical.py): the bound each
    #: extrapolated statistic's estimated error should meet, relative to the statistic ...
    ff_error_bound: float = 1e-3
    #: ... and the fraction of the loop that may be simulated to meet it.
    ff_max_fraction: float = 0.2
    #: ... and what a loop that cannot meet it does: ``bound`` runs exactly, ``estimate``
    #: skips and reports the estimated errors (statistical_period.StatisticalSettings.policy).
    ff_policy: str = "bound"

    def __post_init__(self) -> None:
        if self.dataflow not in DATAFLOWS:
            raise UserError(_unknown_dataflow(self.dataflow))
        if not isinstance(self.workload, Workload):
            raise UserError(f"a run's workload must be a Workload, found {self.workload!r}")
        if not (self.ff_error_bound > 0 and 0 < self.ff_max_fraction <= 1):
            raise UserError(
                f"fast-forward accuracy: the error bound must be > 0 and the simulated "
                f"fraction in (0, 1], found {self.ff_error_bound!r} and {self.ff_max_fraction!r}"
            )
        if self.ff_policy not in FF_POLICIES:
            raise UserError(
                f"fast-forward policy: expected one of {', '.join(FF_POLICIES)}, "
                f"found {self.ff_policy!r}"
            )
        if isinstance(self.layers, bool) or not isinstance(self.layers, int) or self.layers < 1:
            raise UserError(f"layers must be a positive integer, found {self.layers!r}")
        for item in self.overrides:
            parse_key_value(item, what="platform override")
        for pair in self.extra:
            if len(pair) != 2 or not _KEY_NAME.match(str(pair[0])):
                raise UserError(f"dataflow parameter must be a (name, value) pair, found {pair!r}")

    @classmethod
    def of(
        cls,
        dataflow: str,
        seq_len: int,
        head_dim: int,
        heads: int = 1,
        platform: str = DEFAULT_PLATFORM,
        overrides: tuple[str, ...] = (),
        extra: tuple[tuple[str, str], ...] = (),
        exact: bool = False,
        batch: int = 1,
        kv_heads: int = 0,
        kv_len: int = 0,
        mask: str = "none",
        window: int = 0,
        phase: str = "prefill",
        **fields: Any,
    ) -> RunConfig:
        """The configuration of the workload with these fields (``kv_heads`` and ``kv_len``
        given as 0 are ``heads`` and ``seq_len``); ``fields`` are the other RunConfig fields."""
        workload = Workload(
            seq_len=seq_len,
            head_dim=head_dim,
            heads=heads,
            batch=batch,
            kv_heads=kv_heads,
            kv_len=kv_len,
            mask=mask,
            window=window,
            phase=phase,
        )
        return cls(
            dataflow,
            workload,
            platform=platform,
            overrides=overrides,
            extra=extra,
            exact=exact,
            **fields,
        )

    def with_workload(self, **changes: Any) -> RunConfig:
        """This configuration with some of its workload's fields changed."""
        return replace(self, workload=replace(self.workload, **changes))

    # The workload's fields, read through (reports, keys and tables name them directly).
    seq_len = _WorkloadField[int]("seq_len")
    head_dim = _WorkloadField[int]("head_dim")
    heads = _WorkloadField[int]("heads")
    batch = _WorkloadField[int]("batch")
    kv_heads = _WorkloadField[int]("kv_heads")
    kv_len = _WorkloadField[int]("kv_len")
    mask = _WorkloadField[str]("mask")
    window = _WorkloadField[int]("window")
    phase = _WorkloadField[str]("phase")

    def workload_fields(self) -> dict[str, Any]:
        """The workload fields by ``Workload``'s names (the result JSON's too)."""
        return {name: getattr(self.workload, name) for name in WORKLOAD_FIELDS}

    def workload_parts(self) -> list[str]:
        """What sets this workload apart from one dense head of self-attention, as words
        (``causal``, ``GQA 32/8``, ``decode``, ``Nk = 8K``, ``B = 8``): empty by default.
        Heads, d and N are named by the caller (reports print them in their own columns)."""
        return workload_words(
            batch=self.batch,
            heads=self.heads,
            kv_heads=self.kv_heads,
            seq_len=self.seq_len,
            kv_len=self.kv_len,
            mask=self.mask,
            window=self.window,
            phase=self.phase,
            layers=self.layers,
            model=self.model,
        )

    def key(self) -> str:
        """A stable text identifying this configuration (same fields, same key, any process).
        Workload fields at their defaults are left out, so keys of older sweeps still match."""
        parts = [
            f"dataflow={self.dataflow}",
            f"N={self.seq_len}",
            f"d={self.head_dim}",
            f"heads={self.heads}",
            f"platform={self.platform}",
        ]
        if self.batch != 1:
            parts.append(f"batch={self.batch}")
        if self.kv_heads != self.heads:
            parts.append(f"kv_heads={self.kv_heads}")
        if self.kv_len != self.seq_len:
            parts.append(f"kv_len={self.kv_len}")
        if self.mask != "none":
            parts.append(f"mask={mask_text(self.mask, self.window)}")
        if self.phase != "prefill":
            parts.append(f"phase={self.phase}")
        if self.layers != 1:
            parts.append(f"layers={self.layers}")
        if self.model:
            parts.append(f"model={self.model}")
        parts += [f"set:{item}" for item in self.overrides]
        parts += [f"param:{name}={value}" for name, value in self.extra]
        if self.exact:
            parts.append("exact")
        parts += [f"{k}={v:g}" for k, v in self._ff_accuracy().items()]
        if self.ff_policy != RunConfig.ff_policy:
            parts.append(f"ff_policy={self.ff_policy}")
        return " ".join(parts)

    def _ff_accuracy(self) -> dict[str, float]:
        """The fast-forward accuracy fields that differ from their defaults."""
        return {
            name: getattr(self, name)
            for name in ("ff_error_bound", "ff_max_fraction")
            if getattr(self, name) != getattr(RunConfig, name)
        }

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
            "batch": self.batch,
            "kv_heads": self.kv_heads,
            "kv_len": self.kv_len,
            "mask": self.mask,
            "window": self.window,
            "phase": self.phase,
            "layers": self.layers,
        }
        if self.model:
            data["model"] = self.model
        if self.exact:
            data["exact"] = True
        if self.ff_policy != RunConfig.ff_policy:
            data["ff_policy"] = self.ff_policy
        return data | self._ff_accuracy()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        """Rebuilds a configuration from ``as_dict`` output (e.g. a results.jsonl line); a
        record written before the workload fields existed reads as their defaults."""
        try:
            return cls.of(
                dataflow=str(data["dataflow"]),
                seq_len=int(data["seq_len"]),
                head_dim=int(data["head_dim"]),
                heads=int(data.get("heads", 1)),
                platform=str(data.get("platform", DEFAULT_PLATFORM)),
                overrides=tuple(str(item) for item in data.get("overrides", ())),
                extra=tuple((str(k), str(v)) for k, v in dict(data.get("extra", {})).items()),
                exact=bool(data.get("exact", False)),
                batch=int(data.get("batch", 1)),
                kv_heads=int(data.get("kv_heads", 0)),
                kv_len=int(data.get("kv_len", 0)),
                mask=str(data.get("mask", "none")),
                window=int(data.get("window", 0)),
                phase=str(data.get("phase", "prefill")),
                layers=int(data.get("layers", 1)),
                model=str(data.get("model", "")),
                ff_error_bound=float(data.get("ff_error_bound", cls.ff_error_bound)),
                ff_max_fraction=float(data.get("ff_max_fraction", cls.ff_max_fraction)),
                ff_policy=str(data.get("ff_policy", cls.ff_policy)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"not a study configuration: {data!r} ({exc})") from None

    def platform_path(self) -> Path:
        """The platform file this configuration runs on (see ``resolve_platform``)."""
        return resolve_platform(self.platform)


def mask_text(mask: str, window: int) -> str:
    """The command-line spelling of a mask: ``none``, ``causal`` or ``sliding:4096``."""
    return f"sliding:{window}" if mask == "sliding" else mask


def workload_words(
    *,
    batch: int,
    heads: int,
    kv_heads: int,
    seq_len: int,
    kv_len: int,
    mask: str,
    window: int,
    phase: str,
    layers: int,
    model: str,
) -> list[str]:
    """The non-default workload fields as short words, in a fixed order, for run names,
    report titles and tables: ``llama3-8b``, ``decode``, ``causal``, ``GQA 32/8``,
    ``Nk = 8K``, ``B = 8``, ``32 layers``."""
    words = [model] if model else []
    if phase != "prefill":
        words.append(phase)
    if mask != "none":
        words.append(mask_text(mask, window))
    if kv_heads != heads:
        words.append(f"{'MQA' if kv_heads == 1 else 'GQA'} {heads}/{kv_heads}")
    if kv_len != seq_len:
        words.append(f"Nk = {format_tokens(kv_len)}")
    if batch != 1:
        words.append(f"B = {batch}")
    if layers != 1:
        words.append(f"{layers} layers")
    return words


def _record_fields(record: Mapping[str, Any]) -> dict[str, Any]:
    """A result record's workload fields (older records: the defaults)."""
    heads = int(record.get("heads") or 1)
    seq_len = int(record.get("seq_len") or 1)
    return {
        "batch": int(record.get("batch") or 1),
        "heads": heads,
        "kv_heads": int(record.get("kv_heads") or heads),
        "seq_len": seq_len,
        "kv_len": int(record.get("kv_len") or seq_len),
        "mask": str(record.get("mask") or "none"),
        "window": int(record.get("window") or 0),
        "phase": str(record.get("phase") or "prefill"),
    }


def record_workload_words(record: Mapping[str, Any]) -> list[str]:
    """``workload_words`` of a result record (older records: the defaults)."""
    return workload_words(
        **_record_fields(record),
        layers=int(record.get("layers") or 1),
        model=str(record.get("model") or ""),
    )


def record_workload(record: Mapping[str, Any]) -> Workload:
    """The workload a result record ran (older records: dense self-attention)."""
    return Workload(head_dim=int(record["head_dim"]), **_record_fields(record))


def format_tokens(n: int) -> str:
    """8192 -> ``8K``; other lengths as plain numbers."""
    return f"{n // 1024}K" if n % 1024 == 0 else str(n)


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
