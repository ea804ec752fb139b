"""Analyses of approximate-attention runs for reports: traffic growth in N and accuracy cost.

``loglog_slope`` fits the growth exponent of off-chip bytes in N (about 2 for exact attention,
1 for polynomial attention whose H fits on chip). ``approx_error`` measures how far the
degree-g polynomial attention is from softmax attention on bounded inputs; it depends on
(g, d, B) only, not on the platform, so a fixed seeded workload of ``ERROR_SEQ_LEN`` tokens
stands for every run.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tlm_models.dataflows.approx import approx_params
from tlm_models.run.approx_error import ERROR_SEED, ERROR_SEQ_LEN, approx_error
from tlm_models.study.variants import label_of, labels_in, metric

__all__ = [
    "ERROR_SEED",
    "ERROR_SEQ_LEN",
    "SlopeSeries",
    "TradeoffRow",
    "approx_error",
    "approx_records",
    "error_of",
    "loglog_slope",
    "slope_series",
    "tradeoff_rows",
]


def loglog_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of log y against log x: the exponent p of y ~ x^p."""
    if len(xs) != len(ys):
        raise ValueError(f"{len(xs)} x values but {len(ys)} y values")
    if any(not (v > 0 and math.isfinite(v)) for v in (*xs, *ys)):
        raise ValueError("a log-log slope needs positive finite values")
    log_x, log_y = np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float))
    spread = log_x - log_x.mean()
    if not np.any(spread):
        raise ValueError("a log-log slope needs at least two distinct x values")
    return float(spread @ (log_y - log_y.mean()) / (spread @ spread))


def error_of(record: dict[str, Any]) -> dict[str, float | int]:
    """The stored ``approx_error`` of an approx run, computed when an older result lacks it."""
    stored = record.get("approx_error")
    if isinstance(stored, dict) and "max_rel" in stored:
        return stored
    p = approx_params(record.get("config", {}).get("extra", {}))
    return approx_error(p.degree, p.bound, int(record["head_dim"]))


def approx_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The finished approx runs."""
    return [r for r in records if r.get("dataflow") == "approx" and "error" not in r]


@dataclass(frozen=True)
class SlopeSeries:
    """Off-chip bytes of one dataflow label at one head dim over N, with its fitted slope."""

    label: str
    head_dim: int
    points: tuple[tuple[int, float], ...]  # (N, bytes), N ascending
    slope: float


def slope_series(records: Iterable[dict[str, Any]]) -> list[SlopeSeries]:
    """Every (label, d) with off-chip bytes at two or more N, by d then report order."""
    finished = [r for r in records if "error" not in r]
    series: list[SlopeSeries] = []
    for d in sorted({int(r["head_dim"]) for r in finished}):
        at_d = [r for r in finished if int(r["head_dim"]) == d]
        for label in labels_in(at_d):
            by_n = {
                int(r["seq_len"]): value
                for r in at_d
                if label_of(r) == label
                and (value := metric(r, "offchip_bytes.total")) is not None
                and value > 0
            }
            if len(by_n) >= 2:
                points = tuple(sorted(by_n.items()))
                slope = loglog_slope([n for n, _ in points], [b for _, b in points])
                series.append(SlopeSeries(label, d, points, slope))
    return series


@dataclass(frozen=True)
class TradeoffRow:
    """One approx run beside its accuracy, and AttenIO's time on the same shape if it ran."""

    degree: int
    bound: float
    head_dim: int
    seq_len: int
    time_ns: float | None
    offchip_bytes: float | None
    attenio_time_ns: float | None
    max_rel: float
    mean_rel: float


def tradeoff_rows(records: Sequence[dict[str, Any]]) -> list[TradeoffRow]:
    """The approx runs of one variant, sorted by d, g, B, N."""
    attenio = {
        (int(r["seq_len"]), int(r["head_dim"])): metric(r, "sim_time_ns")
        for r in records
        if label_of(r) == "attenio" and "error" not in r
    }
    rows = []
    for record in approx_records(records):
        p = approx_params(record.get("config", {}).get("extra", {}))
        error = error_of(record)
        n, d = int(record["seq_len"]), int(record["head_dim"])
        rows.append(
            TradeoffRow(
                degree=p.degree,
                bound=p.bound,
                head_dim=d,
                seq_len=n,
                time_ns=metric(record, "sim_time_ns"),
                offchip_bytes=metric(record, "offchip_bytes.total"),
                attenio_time_ns=attenio.get((n, d)),
                max_rel=float(error["max_rel"]),
                mean_rel=float(error["mean_rel"]),
            )
        )
    return sorted(rows, key=lambda row: (row.head_dim, row.degree, row.bound, row.seq_len))
