"""The workload description: masks, GQA grouping, validation (no simulation)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tlm_models.errors import UserError
from tlm_models.workload.spec import Workload, check_supported, parse_mask


@pytest.mark.parametrize(
    ("nq", "nk", "mask", "window"),
    [
        (nq, nk, mask, w)
        for nq, nk in [(1, 1), (1, 37), (5, 5), (16, 16), (7, 40), (64, 64)]
        for mask, w in [("none", 0), ("causal", 0), ("sliding", 1), ("sliding", 3), ("sliding", nk)]
        if not (mask != "none" and nq > nk) and w <= nk
    ],
)
def test_visible_pairs_and_ranges_match_the_mask_matrix(
    nq: int, nk: int, mask: str, window: int
) -> None:
    w = Workload(nq, 8, kv_len=nk, mask=mask, window=window)
    m = w.mask_matrix()
    assert m.shape == (nq, nk)
    assert w.visible_pairs() == int(m.sum())
    for row in range(nq):
        lo, hi = w.key_range(row)
        assert np.flatnonzero(m[row]).tolist() == list(range(lo, hi))
    for row0, rows in itertools.product(range(nq), (1, 2, 5)):
        rows = min(rows, nq - row0)
        lo, hi = w.block_key_range(row0, rows)
        cols = np.flatnonzero(m[row0 : row0 + rows].any(axis=0))
        assert (lo, hi) == (int(cols.min()), int(cols.max()) + 1)
    assert w.needed_keys() == int(m.any(axis=0).sum())


def test_causal_self_attention_sees_the_lower_triangle() -> None:
    w = Workload(1024, 64, mask="causal")
    assert w.visible_pairs() == 1024 * 1025 // 2
    assert Workload(1, 64, kv_len=4096, mask="causal", phase="decode").visible_pairs() == 4096


def test_gqa_groups_consecutive_query_heads_per_batch() -> None:
    w = Workload(16, 8, heads=8, kv_heads=2, batch=3)
    assert (w.group, w.head_count, w.kv_head_count) == (4, 24, 6)
    assert [w.kv_head_of(h) for h in range(w.head_count)] == [h // 4 for h in range(24)]
    mqa = Workload(16, 8, heads=8, kv_heads=1, batch=2)
    assert [mqa.kv_head_of(h) for h in range(16)] == [0] * 8 + [1] * 8
    assert w.compulsory_elements() == {"Q": 24 * 128, "K": 6 * 128, "V": 6 * 128, "O": 24 * 128}


def test_defaults_are_concrete_after_construction() -> None:
    w = Workload(512, 64, heads=4)
    assert (w.kv_heads, w.kv_len, w.dense) == (4, 512, True)
    assert w == Workload(512, 64, heads=4, kv_heads=4, kv_len=512)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"heads": 6, "kv_heads": 4}, "query heads (6) must be a multiple of KV heads (4)"),
        (
            {"mask": "sliding", "window": 300},
            "sliding window W = 300 is larger than the key length Nk = 256",
        ),
        ({"mask": "causal", "kv_len": 100}, "more query rows (Nq = 256) than keys (Nk = 100)"),
        ({"mask": "diagonal"}, "mask 'diagonal'"),
        ({"phase": "train"}, "phase 'train'"),
        ({"window": 4}, "needs mask=sliding"),
        ({"kv_heads": -1}, "kv_heads must be a positive integer"),
    ],
)
def test_bad_combinations_name_their_values(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Workload(256, 64, **kwargs)  # type: ignore[arg-type]


def test_parse_mask() -> None:
    assert parse_mask("causal") == ("causal", 0)
    assert parse_mask("sliding:4K") == ("sliding", 4096)
    with pytest.raises(UserError, match="expected none, causal or sliding:W"):
        parse_mask("sliding")


def test_dataflows_refuse_what_they_do_not_implement(monkeypatch: pytest.MonkeyPatch) -> None:
    from tlm_models.workload import spec as mod

    monkeypatch.setitem(mod.FEATURES, "standard", frozenset({"mask"}))
    check_supported("standard", Workload(64, 8, mask="causal"))
    with pytest.raises(UserError, match="does not support kv_heads=1 < heads=2"):
        check_supported("standard", Workload(64, 8, heads=2, kv_heads=1))
