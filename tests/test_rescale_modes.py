"""The O rescale of AttenIO and FlashAttention-2 as a parameter (fused | separate | lazy): the
lazy rescale's counts (expected for exchangeable scores, counted from a run's Q and K), that
every mode computes attention, and that the trace charges exactly the rows whose max rose."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.dataflow_helpers import emit_all, worst_error
from tests.dataflow_platforms import KIB, attenio_machine
from tlm_models.dataflows import Workload
from tlm_models.dataflows.rescale_rows import (
    expected_rises,
    integer_counts,
    observed_rises,
)
from tlm_models.errors import UserError
from tlm_models.replay.reference import ReferenceExecutor, workload_attention
from tlm_models.trace.header import TraceHeader
from tlm_models.trace.record import VECTOR_LAZY_ROWS, OpKind
from tlm_models.trace.text import read_text, write_text

TOL = 1e-3
NAMES = ("flash2", "attenio")
CASES = {
    "dense": Workload(96, 16, heads=2),
    "causal": Workload(64, 16, heads=2, mask="causal"),
    "sliding-gqa": Workload(48, 16, heads=4, kv_heads=2, mask="sliding", window=13),
}


def _inputs(w: Workload, seed: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((w.head_count, w.seq_len, w.head_dim)).astype(np.float32)
    k, v = (
        rng.standard_normal((w.kv_head_count, w.kv_len, w.head_dim)).astype(np.float32)
        for _ in "KV"
    )
    return {"Q": q, "K": k, "V": v}


def _lazy(recs: np.ndarray) -> np.ndarray:
    return recs[(recs["kind"] == OpKind.VECTOR) & ((recs["code"] & VECTOR_LAZY_ROWS) != 0)]


def test_expected_rises_of_single_keys_are_rows_over_j() -> None:
    # Exchangeable scores: the max of the first j keys is the j-th with probability 1/j.
    lo, hi = np.zeros(10, dtype=np.int64), np.full(10, 50, dtype=np.int64)
    starts = np.arange(50)
    got = expected_rises(lo, hi, starts, starts + 1)
    assert np.allclose(got, 10 / np.arange(1, 51))
    # Tiles of 8 keys (the last one 2): tile t of width v after K keys rises with v / K.
    starts8 = np.arange(0, 50, 8)
    ends8 = np.minimum(starts8 + 8, 50)
    assert np.allclose(expected_rises(lo, hi, starts8, ends8), 10 * (ends8 - starts8) / ends8)


def test_expected_rises_follow_each_rows_visible_keys() -> None:
    # Row 0 sees keys [0, 3), row 1 [2, 6): at key 2 row 0 rises with 1/3, row 1 with 1/1.
    lo, hi = np.array([0, 2]), np.array([3, 6])
    starts = np.arange(6)
    want = [1, 1 / 2, 1 / 3 + 1, 1 / 2, 1 / 3, 1 / 4]
    assert np.allclose(expected_rises(lo, hi, starts, starts + 1), want)
    # One tile [2, 6): row 0 sees 1 of its 3 keys there, row 1 all of its 4.
    assert np.allclose(expected_rises(lo, hi, np.array([0, 2]), np.array([2, 6])), [1, 1 / 3 + 1])


def test_integer_counts_keep_the_running_total() -> None:
    counts = integer_counts(np.array([5.0, 2.5, 0.4, 0.4, 0.4, 0.3]), rows=5)
    assert counts.tolist() == [0, 2, 1, 0, 1, 0]  # totals round(2.5)=2, 2.9, 3.3, 3.7, 4.0


def test_observed_rises_count_running_max_increases() -> None:
    q = np.array([[1.0], [-1.0]])
    k = np.array([[1.0], [3.0], [2.0], [5.0]])  # row 0 scores 1 3 2 5, row 1: -1 -3 -2 -5
    starts = np.arange(4)
    assert observed_rises(q, k, np.zeros(2, int), np.full(2, 4), starts, starts + 1).tolist() == [
        0,
        1,
        0,
        1,
    ]
    # Tiles [0, 2), [2, 4): tile maxima 3, 5 (row 0) and -1, -2 (row 1).
    got = observed_rises(q, k, np.zeros(2, int), np.full(2, 4), np.array([0, 2]), np.array([2, 4]))
    assert got.tolist() == [0, 1]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mode", ["fused", "separate", "lazy"])
def test_every_rescale_mode_computes_attention(name: str, mode: str) -> None:
    w, p = CASES["causal"], attenio_machine(2 * KIB)
    header, recs = emit_all(name, w, p, params={"rescale": mode})

    def truth(_h: TraceHeader, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return workload_attention(w, inputs["Q"], inputs["K"], inputs["V"])

    assert worst_error(header, recs, p, _inputs(w), truth) < TOL


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_lazy_counts_from_the_inputs_are_the_rows_the_reference_rescales(
    name: str, case: str, tmp_path: Path
) -> None:
    w, p = CASES[case], attenio_machine(2 * KIB)
    inputs = _inputs(w)
    scores = tmp_path / "qk.npz"
    np.savez(scores, Q=inputs["Q"], K=inputs["K"])
    header, recs = emit_all(name, w, p, params={"rescale": "lazy", "scores": str(scores)})
    ex = ReferenceExecutor(header, p)
    for tensor, value in inputs.items():
        ex.tensor(tensor)[...] = value
    with np.errstate(all="ignore"):
        ex.run(recs)
    out = ex.tensor("O")
    ref = workload_attention(w, inputs["Q"], inputs["K"], inputs["V"])
    assert np.abs(out - ref).max() / np.abs(ref).max() < TOL
    found = np.array(ex.lazy_counts)
    assert len(found) == len(_lazy(recs)) > 0
    assert (found[:, 0] == found[:, 1]).all()  # charged = rows whose factor is not 1
    assert found[:, 0].sum() > 0


def test_lazy_iid_charges_the_expected_rows_and_is_exact() -> None:
    # Dense, one block of 96 rows over 96 single keys: sum over j = 2..96 of 96 / j rows.
    w, p = Workload(96, 16), attenio_machine(8 * KIB)
    header, recs = emit_all("attenio", w, p, params={"rescale": "lazy"})
    lazy = _lazy(recs)
    a = int(header.params["a"])
    assert a >= 96
    assert int(lazy["k"].sum()) == round(96 * sum(1 / j for j in range(2, 97)))
    assert lazy["k"][0] == 48 and lazy["k"][1] == 32  # keys 2 and 3: 96/2, 96/3

    def truth(_h: TraceHeader, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return workload_attention(w, inputs["Q"], inputs["K"], inputs["V"])

    assert worst_error(header, recs, p, _inputs(w), truth) < TOL


def test_bad_scores_are_refused_with_the_file_and_shape(tmp_path: Path) -> None:
    w, p = CASES["dense"], attenio_machine(2 * KIB)
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, Q=np.zeros((1, 96, 16)), K=np.zeros((2, 96, 16)))
    with pytest.raises(UserError, match=r"wrong.npz: Q has shape \(1, 96, 16\), expected \(2"):
        emit_all("attenio", w, p, params={"rescale": "lazy", "scores": str(wrong)})
    with pytest.raises(UserError, match="no such file"):
        emit_all("attenio", w, p, params={"rescale": "lazy", "scores": str(tmp_path / "x.npz")})
    with pytest.raises(UserError, match=r"scores must be iid or a \.npz file"):
        emit_all("attenio", w, p, params={"rescale": "lazy", "scores": "gauss"})


def test_the_text_form_spells_the_lazy_rescale_and_reads_it_back(tmp_path: Path) -> None:
    w, p = Workload(96, 16), attenio_machine(8 * KIB)
    header, recs = emit_all("attenio", w, p, params={"rescale": "lazy"})
    path = tmp_path / "t.trace.txt"
    write_text(path, header, [recs])
    line = next(x for x in path.read_text().splitlines() if "lazy_rows" in x)
    assert "op=mul" in line and "flags=lazy_rows" in line and "bcast=row" in line
    assert " k=48 " in line + " "  # key 2: 96 / 2 rows
    _, back = read_text(path)
    assert (back == recs).all()
