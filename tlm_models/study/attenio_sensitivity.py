"""What flips the AttenIO-vs-FlashAttention-2 verdict: one modelling assumption at a time.

Around the "as published" setting of ``attenio_repro`` (bank-level HBM), each assumption
below is one declaration: the choice the base makes, where it comes from, and the alternative
settings (``--param`` for a dataflow, ``--set`` for the platform) the study also runs. The
report gives FA2 time / AttenIO time for each alternative with only that assumption changed
(a table and a tornado plot); above 1 AttenIO is faster (docs/study.md, "What flips the
verdict"). A new assumption is a new ``Assumption`` in ``ASSUMPTIONS``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tlm_models.run.config import RunConfig
from tlm_models.study.attenio_repro import BANK_HBM, PUBLISHED, _config
from tlm_models.study.variants import format_tokens

#: The pair whose time ratio is the verdict.
PAIR = ("flash2", "attenio")

Params = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Alternative:
    """One setting of an assumption: ``params`` replace the base's --param values of the same
    name per dataflow; ``overrides`` (--set) apply to both dataflows, a ``key=`` the base also
    sets (hbm.fidelity) replacing it."""

    label: str
    params: Mapping[str, Params] = field(default_factory=dict)
    overrides: tuple[str, ...] = ()


@dataclass(frozen=True)
class Assumption:
    name: str
    base: str  # the base setting's choice, in words
    source: str  # where the base choice comes from
    alternatives: tuple[Alternative, ...]


def _both(**params: str) -> dict[str, Params]:
    return {df: tuple(params.items()) for df in PAIR}


ASSUMPTIONS: tuple[Assumption, ...] = (
    Assumption(
        "O rescale",
        "AttenIO fused on a scale-accumulate PE; FA2 separate",
        "paper silent on Alg. 1 line 13; FA2 as its paper writes it (O scaled per tile)",
        (
            Alternative(
                "plain MAC PE (fused costs a step)", overrides=("pe.scale_accumulate=false",)
            ),
            Alternative("both separate", {"attenio": (("rescale", "separate"),)}),
            Alternative("both lazy (iid scores)", _both(rescale="lazy")),
            Alternative("both fused", {"flash2": (("rescale", "fused"),)}),
        ),
    ),
    # A systolic array pays skew, fill and drain per fold (SCALE-Sim v3, the default) or hides
    # them behind double-buffered registers (pe.fold_overlap): docs/models/pe_array.md.
    Assumption(
        "PE organization",
        "broadcast, one MAC per result",
        "Sec. 4.3 / Fig. 8",
        (
            Alternative(
                "output-stationary systolic, per-fold fill/drain",
                overrides=("pe.mapping=output_stationary",),
            ),
            Alternative(
                "output-stationary systolic, folds overlapped",
                overrides=("pe.mapping=output_stationary", "pe.fold_overlap=true"),
            ),
            Alternative("broadcast + split-k", overrides=("pe.split_k=true",)),
        ),
    ),
    Assumption(
        "FA2 tiling",
        "Br = min(ceil(M/4d), d), Bc = ceil(M/4d)",
        "Sec. 5, the paper's FA2 baseline",
        (Alternative("fit", {"flash2": (("tiling", "fit"),)}),),
    ),
    Assumption(
        "FA2 overlap",
        "none",
        "Sec. 5: 'strictly the original dataflow'",
        (
            Alternative("split", {"flash2": (("overlap", "split"),)}),
            Alternative(
                "double (fit tiles)", {"flash2": (("tiling", "fit"), ("overlap", "double"))}
            ),
        ),
    ),
    Assumption(
        "AttenIO staging",
        "2 K and 2 V rows ahead",
        "Sec. 4.2 preloads (docs/dataflows.md)",
        (
            Alternative("1 row ahead", {"attenio": (("stage", "1"),)}),
            Alternative("4 rows ahead", {"attenio": (("stage", "4"),)}),
        ),
    ),
    Assumption(
        "HBM fidelity",
        "bank-level controller",
        "Sec. 5: DRAMSim3 timing",
        (Alternative("bandwidth-level", overrides=("hbm.fidelity=bandwidth",)),),
    ),
    Assumption(
        "SRAM size",
        "512 KiB",
        "Table 2",
        (
            Alternative("256 KiB", overrides=("sram.capacity=256KiB",)),
            Alternative("768 KiB", overrides=("sram.capacity=768KiB",)),
        ),
    ),
)


def _merge(base: Params, given: Params) -> Params:
    names = {name for name, _ in given}
    return tuple(p for p in base if p[0] not in names) + given


def _overrides(alt: Alternative | None) -> tuple[str, ...]:
    given = () if alt is None else alt.overrides
    keys = {o.split("=", 1)[0] for o in given}
    return tuple(o for o in (BANK_HBM,) if o.split("=", 1)[0] not in keys) + given


def point_config(dataflow: str, n: int, d: int, alt: Alternative | None) -> RunConfig:
    """The run of ``dataflow`` at (n, d) with ``alt`` (None: the base)."""
    base = _config(PUBLISHED, dataflow, n, d, _overrides(alt))
    if alt is None or dataflow not in alt.params:
        return base
    merged = _merge(PUBLISHED.params[dataflow], alt.params[dataflow])
    return replace(base, extra=merged)


def sensitivity_configs(points: Iterable[tuple[int, int]]) -> list[RunConfig]:
    """The base and every alternative of every assumption, FA2 and AttenIO, at each point."""
    alts: list[Alternative | None] = [None]
    alts += [alt for a in ASSUMPTIONS for alt in a.alternatives]
    unique: dict[str, RunConfig] = {}
    for n, d in points:
        for alt in alts:
            for df in PAIR:  # an alternative of the other dataflow only repeats this one's base
                config = point_config(df, n, d, alt)
                unique.setdefault(config.key(), config)
    return list(unique.values())


def _ratio(
    index: Mapping[str, dict[str, Any]], n: int, d: int, alt: Alternative | None
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, float | None]:
    recs = []
    for df in PAIR:
        rec = index.get(point_config(df, n, d, alt).key())
        recs.append(None if rec is None or "error" in rec else rec)
    fa2, att = recs
    ratio = None if fa2 is None or att is None else fa2["sim_time_ns"] / att["sim_time_ns"]
    return fa2, att, ratio


def ratios(
    index: Mapping[str, dict[str, Any]], n: int, d: int
) -> tuple[float | None, list[tuple[Assumption, list[tuple[Alternative, float | None]]]]]:
    """The base ratio and each assumption's alternatives' ratios at (n, d)."""
    base = _ratio(index, n, d, None)[2]
    rows = [
        (a, [(alt, _ratio(index, n, d, alt)[2]) for alt in a.alternatives]) for a in ASSUMPTIONS
    ]
    return base, rows


def _ms(rec: dict[str, Any] | None) -> str:
    return "—" if rec is None else f"{rec['sim_time_ns'] / 1e6:.3f}"


def _x(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}x"


def render(
    index: Mapping[str, dict[str, Any]], points: Sequence[tuple[int, int]], figure: str | None
) -> list[str]:
    """The report section: per point, the base and every alternative."""
    lines = [
        "## What flips the verdict: one assumption at a time",
        "",
        "Base: the as-published setting (FA2 `tiling=paper overlap=none`, AttenIO's paper "
        f"design, `--set {BANK_HBM}`). Each row changes one assumption; FA2 / AttenIO above 1: "
        "AttenIO is faster. 'flips' marks a ratio on the other side of 1 from the base's.",
        "",
    ]
    for n, d in points:
        base_fa2, base_att, base = _ratio(index, n, d, None)
        lines += [
            f"### N = {format_tokens(n)}, d = {d}",
            "",
            "| assumption | setting | source of the base | FA2 ms | AttenIO ms | FA2 / AttenIO |",
            "|---|---|---|---|---|---|",
            f"| (base) | — | — | {_ms(base_fa2)} | {_ms(base_att)} | {_x(base)} |",
        ]
        for a in ASSUMPTIONS:
            lines.append(f"| {a.name} | base: {a.base} | {a.source} | | | {_x(base)} |")
            for alt in a.alternatives:
                fa2, att, value = _ratio(index, n, d, alt)
                flip = ""
                if value is not None and base is not None and (value > 1) != (base > 1):
                    flip = " flips"
                lines.append(f"| | {alt.label} | | {_ms(fa2)} | {_ms(att)} | {_x(value)}{flip} |")
        lines.append("")
    if figure:
        lines += [f"![sensitivity]({figure})", ""]
    return lines


def plot_tornado(
    index: Mapping[str, dict[str, Any]], points: Sequence[tuple[int, int]], png: Any
) -> None:
    """One panel per point: each assumption's range of FA2 / AttenIO around the base ratio."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        1, len(points), figsize=(6.5 * len(points), 0.7 * len(ASSUMPTIONS) + 1.6), squeeze=False
    )
    for ax, (n, d) in zip(axes[0], points, strict=True):
        base, rows = ratios(index, n, d)
        if base is None:
            ax.set_title(f"N = {format_tokens(n)}, d = {d}: base not run", fontsize=9)
            continue
        spans = []
        for a, alts in rows:
            values = [v for _, v in alts if v is not None]
            spans.append((a.name, min([base, *values]), max([base, *values]), alts))
        spans.sort(key=lambda s: s[2] - s[1])
        for y, (_, lo, hi, alts) in enumerate(spans):
            ax.barh(y, hi - lo, left=lo, color="tab:blue", alpha=0.35, edgecolor="black")
            for i, (alt, value) in enumerate(alts):
                if value is not None:
                    ax.plot([value], [y], "o", color="tab:green" if value > 1 else "tab:red")
                    # labels of one row alternate above and below the bar
                    ax.annotate(alt.label, (value, y), textcoords="offset points",
                                xytext=(0, 7 if i % 2 == 0 else -11), ha="center",
                                fontsize=6)  # fmt: skip
        ax.set_xscale("log")  # ratios: a factor either way is the same distance
        ax.margins(x=0.08)
        ax.set_yticks(range(len(spans)), [s[0] for s in spans], fontsize=8)
        ax.axvline(base, color="black", linewidth=1, label=f"base {base:.2f}")
        ax.axvline(1.0, color="grey", linestyle="--", linewidth=1, label="verdict flips")
        ax.set_xlabel("FA2 time / AttenIO time (> 1: AttenIO faster)")
        ax.set_title(f"N = {format_tokens(n)}, d = {d}", fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
