"""Approximate-attention study: slope fit, approximation error, bounds, demo side study."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from tests.study_jobs import fake_result
from tlm_models.cli.demo_cmd import approx_study_configs
from tlm_models.dataflows.io_formulas import approx_traffic
from tlm_models.dataflows.polynomial import exp_poly_coefficients, poly_attention
from tlm_models.dataflows.reference_machine import attenio_machine
from tlm_models.replay.reference import attention
from tlm_models.run.config import RunConfig
from tlm_models.run.execute import bounds_bytes, run_one
from tlm_models.run.worker import run_in_worker
from tlm_models.study.approx_study import (
    ERROR_SEQ_LEN,
    approx_error,
    error_of,
    loglog_slope,
    slope_series,
    tradeoff_rows,
)
from tlm_models.study.store import result_record
from tlm_models.workload.spec import Workload

# -- slope fit ---------------------------------------------------------------------------------


@pytest.mark.parametrize("power", [1.0, 2.0, 0.5, 3.0])
def test_slope_of_a_power_law_is_its_exponent(power: float) -> None:
    ns = [8192, 16384, 32768, 65536]
    assert loglog_slope(ns, [7.0 * n**power for n in ns]) == pytest.approx(power, abs=1e-12)


def test_slope_is_the_least_squares_fit_of_noisy_points() -> None:
    ns = [1000.0, 2000.0, 4000.0, 8000.0, 16000.0]
    values = [3.0 * n**1.5 * f for n, f in zip(ns, (1.1, 0.9, 1.05, 0.97, 1.02), strict=True)]
    expected = np.polyfit(np.log(ns), np.log(values), 1)[0]
    assert loglog_slope(ns, values) == pytest.approx(expected, rel=1e-12)


def test_slope_fit_rejects_what_it_cannot_fit() -> None:
    with pytest.raises(ValueError, match="two distinct"):
        loglog_slope([8192, 8192], [1.0, 2.0])
    with pytest.raises(ValueError, match="positive"):
        loglog_slope([8192, 16384], [0.0, 2.0])
    with pytest.raises(ValueError, match="y values"):
        loglog_slope([8192, 16384], [1.0])


# -- approximation error -----------------------------------------------------------------------


def test_error_falls_with_degree_at_unit_bound() -> None:
    for d in (16, 32, 64):
        errors = [approx_error(g, 1.0, d) for g in (1, 2, 3)]
        maxima = [float(e["max_rel"]) for e in errors]
        means = [float(e["mean_rel"]) for e in errors]
        assert maxima[0] > maxima[1] > maxima[2] > 0
        assert means[0] > means[1] > means[2] > 0
        assert all(mean < top for mean, top in zip(means, maxima, strict=True))
    # Known values on the fixed seeded inputs (d = 64, B = 1): about 1e-2 at g = 1 and
    # 4.5e-4 at g = 3 (docs/dataflows.md lists the same order on 4 heads).
    assert 5e-3 < float(approx_error(1, 1.0, 64)["max_rel"]) < 2e-2
    assert 1e-4 < float(approx_error(3, 1.0, 64)["max_rel"]) < 1e-3


def test_error_matches_an_independent_evaluation() -> None:
    degree, bound, d = 2, 0.5, 32
    rng = np.random.default_rng(0)
    a = math.sqrt(bound) / d**0.25
    q, k, v = (rng.uniform(-a, a, (ERROR_SEQ_LEN, d)) for _ in range(3))
    assert np.abs(q @ k.T).max() / math.sqrt(d) <= bound  # inputs are in the bounded regime
    gap = np.abs(poly_attention(q, k, v, exp_poly_coefficients(degree, bound)) - attention(q, k, v))
    error = approx_error(degree, bound, d)
    assert error == {
        "max_rel": pytest.approx(gap.max() / np.abs(attention(q, k, v)).max(), rel=1e-12),
        "mean_rel": pytest.approx(gap.mean() / np.abs(attention(q, k, v)).mean(), rel=1e-12),
        "bound": bound,
        "degree": degree,
    }


def test_error_grows_with_the_bound_and_callers_get_their_own_copy() -> None:
    small, large = approx_error(3, 0.5, 16), approx_error(3, 2.0, 16)
    assert float(small["max_rel"]) < float(large["max_rel"])
    small["max_rel"] = -1.0
    assert float(approx_error(3, 0.5, 16)["max_rel"]) > 0  # the cache was not touched


def test_error_of_prefers_the_stored_field_and_fills_in_older_results() -> None:
    config = RunConfig.of("approx", 8192, 16, extra=(("degree", "3"),))
    record = result_record(config, fake_result(config))
    assert error_of(record) == approx_error(3, 1.0, 16)
    record["approx_error"] = {"max_rel": 0.5, "mean_rel": 0.25, "bound": 1.0, "degree": 3}
    assert error_of(record)["max_rel"] == 0.5


# -- series and trade-off rows ----------------------------------------------------------------


def _record(dataflow: str, n: int, d: int, total: float, time_ns: float, **extra: str) -> Any:
    config = RunConfig.of(dataflow, n, d, extra=tuple(extra.items()))
    result = fake_result(config)
    result["offchip_bytes"] = {"read": total, "write": 0, "total": total}
    result["sim_time_ns"] = time_ns
    return result_record(config, result)


def test_slope_series_and_tradeoff_rows() -> None:
    records = [
        _record("attenio", n, 16, 3.0 * n * n, 10.0 * n * n) for n in (8192, 16384, 32768)
    ] + [
        _record("approx", n, 16, 128.0 * n, 100.0 * n * g, degree=str(g))
        for n in (8192, 32768)
        for g in (1, 3)
    ]
    records.append(_record("approx", 8192, 64, 512.0 * 8192, 1.0, degree="1"))  # one N only
    series = {(s.label, s.head_dim): s for s in slope_series(records)}
    assert set(series) == {("attenio", 16), ("approx degree=1", 16), ("approx degree=3", 16)}
    assert series["attenio", 16].slope == pytest.approx(2.0)
    assert series["approx degree=3", 16].slope == pytest.approx(1.0)
    assert series["attenio", 16].points[0] == (8192, 3.0 * 8192**2)

    rows = tradeoff_rows(records)
    assert [(r.head_dim, r.degree, r.seq_len) for r in rows] == [
        (16, 1, 8192),
        (16, 1, 32768),
        (16, 3, 8192),
        (16, 3, 32768),
        (64, 1, 8192),
    ]
    assert rows[1].attenio_time_ns == 10.0 * 32768**2 and rows[-1].attenio_time_ns is None
    assert rows[2].max_rel == approx_error(3, 1.0, 16)["max_rel"]


# -- bounds and the runner ---------------------------------------------------------------------


def test_bounds_of_approx_carry_its_closed_form_and_lower_bound() -> None:
    info = attenio_machine()
    w = Workload(seq_len=8192, head_dim=64)
    for degree in (2, 3):
        bounds = bounds_bytes(w, info, "approx", {"degree": str(degree)})
        expected = approx_traffic(w, info, {"degree": degree}).total_bytes
        assert bounds["closed_form"] == expected
        assert bounds["approx_lower_bound"] == 4 * 8192 * 64 * 2
    # Case I at g = 2 meets the lower bound; g = 3 tiles H into column blocks and does not.
    assert bounds_bytes(w, info, "approx", {"degree": "2"})["closed_form"] == 4 * 8192 * 64 * 2
    assert bounds_bytes(w, info, "approx", {"degree": "3"})["closed_form"] > 4 * 8192 * 64 * 2
    assert "approx_lower_bound" not in bounds_bytes(w, info, "attenio")


def test_run_one_stores_the_approximation_error() -> None:
    config = RunConfig.of("approx", 256, 16, extra=(("degree", "3"), ("bound", "0.5")))
    result = run_in_worker(run_one, config)
    assert result["approx_error"] == approx_error(3, 0.5, 16)
    assert result["bounds"]["closed_form"] == result["offchip_bytes"]["total"]
    exact = run_in_worker(run_one, RunConfig.of("flash2", 256, 16))
    assert "approx_error" not in exact


# -- the demo's side study ---------------------------------------------------------------------


def test_demo_side_study_covers_degrees_dims_and_exact_neighbours() -> None:
    configs = approx_study_configs()
    assert len({c.key() for c in configs}) == len(configs)
    approx = {(dict(c.extra)["degree"], c.head_dim, c.seq_len) for c in configs if c.extra}
    for g in ("1", "2", "3"):
        for d in (16, 32, 64):
            expected = {4096, 8192} if (g, d) == ("3", 64) else {8192, 32768}
            assert {n for gg, dd, n in approx if (gg, dd) == (g, d)} == expected
    exact = {(c.dataflow, c.head_dim, c.seq_len) for c in configs if not c.extra}
    assert exact == {
        (df, d, n) for df in ("flash2", "attenio") for d in (16, 32, 64) for n in (8192, 32768)
    }
