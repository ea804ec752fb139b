"""The ``--param`` switches of the exact dataflows: the design as its source describes it and
the alternatives a study may select (docs/dataflows.md, "Variants").

Each dataflow declares its parameters once here, with the choices and the default; the
default is the best the hardware allows. Emitters and closed forms read the resolved values,
and the trace header records every one in effect (``params["variant"]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tlm_models.errors import UserError


@dataclass(frozen=True)
class Switch:
    """One parameter: a choice among names, or a positive integer when ``choices`` is empty
    (or ``auto`` when that is the default)."""

    name: str
    default: str
    choices: tuple[str, ...] = ()
    meaning: str = ""
    #: besides ``choices``, the path of an existing file with this suffix
    file_suffix: str = ""


OVERLAP = Switch(
    "overlap",
    "split",
    ("none", "split", "double"),
    "none: loads wait for the buffer's last reader and compute for the loads; split: single "
    "buffers, K loads during P V and V during Q K^T; double: double-buffered tiles",
)


def rescale_switch(default: str) -> Switch:
    """The O rescale of an online softmax (docs/dataflows.md, "The O rescale")."""
    return Switch(
        "rescale",
        default,
        ("fused", "separate", "lazy"),
        "fused: O = diag(alpha) O + P V in one matmul (free on a scale-accumulate PE, "
        "pe.scale_accumulate); separate: O *= alpha, every row, then O += P V; lazy: only the "
        "rows whose running max rose (exact; counts from `scores`)",
    )


SCORES = Switch(
    "scores",
    "iid",
    ("iid",),
    "where rescale=lazy's rows come from: iid (exchangeable scores, the expected count) or a "
    ".npz of the run's Q and K (the counted rises)",
    file_suffix=".npz",
)

SWITCHES: dict[str, tuple[Switch, ...]] = {
    "attenio": (
        rescale_switch("fused"),
        Switch("stage", "2", (), "K and V rows staged ahead in the cache (>= 1)"),
        Switch(
            "rows",
            "auto",
            (),
            "a, Q rows per block; auto: the analytic floor((M - 2 stage d)/(2d + 4)), the most "
            "that fit (a smaller a is accepted, a larger one does not fit)",
        ),
        SCORES,
    ),
    "flash2": (
        Switch(
            "tiling",
            "fit",
            ("paper", "fit"),
            "paper: Br = min(ceil(M/4d), d), Bc = ceil(M/4d); fit: the largest Bc that fits "
            "the overlap's buffers",
        ),
        Switch("br", "auto", (), "Br, query rows per block; auto: the tiling rule's"),
        Switch(
            "bc",
            "auto",
            (),
            "Bc, keys per K/V tile; auto: the tiling rule's, or with br given the widest that "
            "fits beside it",
        ),
        OVERLAP,
        Switch(
            "split",
            "auto",
            (),
            "split-K on tiles (dataflows/split_k.py): S slices of each block's keys on S tiles "
            "and a combine; auto: 1 with as many blocks as tiles, else tiles / gcd(blocks, tiles)",
        ),
        rescale_switch("separate"),
        SCORES,
    ),
    "fusemax": (
        Switch(
            "rows",
            "divisor",
            ("divisor", "fit"),
            "resident query rows when not all fit: divisor: the largest multiple of P0 dividing "
            "Nq (the artifact's mappings); fit: the largest multiple of P0 that fits",
        ),
        Switch(
            "pipeline",
            "skew",
            ("skew", "none"),
            "skew: the 2-D array computes the next sub-block's scores while the 1-D array runs "
            "this one's softmax (two score buffers); none: one sub-block at a time",
        ),
        Switch("subblock", "auto", (), "P0, query rows per sub-block; auto: the PE array's rows"),
        Switch("keys", "auto", (), "M0, keys per K/V tile; auto: the PE array's columns"),
    ),
    "standard": (Switch("overlap", "double", ("none", "double"), OVERLAP.meaning),),
    "flat": (
        Switch("overlap", "double", ("none", "double"), OVERLAP.meaning),
        Switch(
            "spill",
            "auto",
            ("auto", "never"),
            "auto: spill the later score tiles of more query rows when that moves fewer bytes "
            "(unmasked workloads); never: whole score rows on chip (one spilled row only when "
            "a row does not fit)",
        ),
    ),
}


def resolve(dataflow: str, params: Mapping[str, object] | None) -> dict[str, str]:
    """Every switch of ``dataflow`` with its value (given or default); UserError naming the
    switch for an unknown one or a bad value."""
    switches = {s.name: s for s in SWITCHES.get(dataflow, ())}
    given = {str(k): str(v) for k, v in (params or {}).items()}
    unknown = sorted(set(given) - set(switches))
    if unknown:
        takes = ", ".join(switches) or "no parameters"
        raise UserError(f"dataflow {dataflow!r} takes {takes}; unknown: {', '.join(unknown)}")
    out: dict[str, str] = {}
    for name, switch in switches.items():
        value = given.get(name, switch.default)
        if switch.file_suffix and value not in switch.choices:
            if not value.endswith(switch.file_suffix):
                raise UserError(
                    f"{dataflow} {name} must be {' or '.join(switch.choices)} or a "
                    f"{switch.file_suffix} file, got {value!r}"
                )
        elif switch.choices and value not in switch.choices:
            raise UserError(
                f"{dataflow} {name} must be one of {', '.join(switch.choices)}, got {value!r}"
            )
        if value == switch.default == "auto":
            pass  # chosen by the plan (a count the workload and the platform decide)
        elif not switch.choices and (not value.isdigit() or int(value) < 1):
            auto = "auto or " if switch.default == "auto" else ""
            raise UserError(f"{dataflow} {name} must be {auto}a positive integer, got {value!r}")
        out[name] = value
    return out
