"""Emitted off-chip traffic equals each dataflow's closed form exactly, per tensor."""

from __future__ import annotations

import math

import pytest

from tests.dataflow_helpers import emit_all, offchip_elements
from tests.dataflow_platforms import KIB, attenio_machine
from tlm_models.dataflows import EMITTERS, Workload, emit
from tlm_models.dataflows.io_formulas import (
    TRAFFIC,
    attention_order_bound,
    mmm_lower_bound,
)
from tlm_models.errors import UserError

CASES = [
    (256, 16, 4 * KIB, 1),
    (200, 32, 8 * KIB, 2),
    (512, 64, 32 * KIB, 1),
    (1000, 64, 64 * KIB, 1),
]


@pytest.mark.parametrize("name", sorted(EMITTERS))
@pytest.mark.parametrize(("n", "d", "sram", "heads"), CASES)
def test_emitted_traffic_matches_closed_form(
    name: str, n: int, d: int, sram: int, heads: int
) -> None:
    w, p = Workload(n, d, heads=heads), attenio_machine(sram)
    header, recs = emit_all(name, w, p)
    expected = TRAFFIC[name](w, p)
    assert offchip_elements(header, recs) == expected.elements


@pytest.mark.parametrize(
    ("n", "d", "sram"), [(256, 16, 4 * KIB), (2048, 64, 512 * KIB), (300, 128, 64 * KIB)]
)
def test_attenio_follows_the_paper(n: int, d: int, sram: int) -> None:
    w, p = Workload(n, d), attenio_machine(sram)
    m = sram // 2
    a = (m - 4 * d) // (2 * d + 4)  # the paper's tile beside K and V rows staged 2 ahead
    header, recs = emit_all("attenio", w, p, chunk_ops=1 << 16)
    total = sum(offchip_elements(header, recs).values())
    assert total == n * d + 2 * n * d * math.ceil(n / a) + n * d


@pytest.mark.parametrize(("n", "d"), [(2048, 64), (1000, 128)])
def test_flash2_paper_tiling_follows_the_paper(n: int, d: int) -> None:
    """Br = min(ceil(M/4d), d) (64 at d = 64, 128 at d = 128 on 512 KiB)."""
    w, p = Workload(n, d), attenio_machine(512 * KIB)
    br = min(math.ceil(262_144 / (4 * d)), d)
    header, recs = emit_all("flash2", w, p, chunk_ops=1 << 16, params={"tiling": "paper"})
    assert header.params["br"] == br
    total = sum(offchip_elements(header, recs).values())
    assert total == n * d + 2 * n * d * math.ceil(n / br) + n * d


def test_attenio_without_kv_buffer_reads_the_staging_slots() -> None:
    w = Workload(256, 16)
    p = attenio_machine(4 * KIB, kv_bytes=None, two_dmas=False)
    header, recs = emit_all("attenio", w, p)
    assert header.params["a"] == (2048 - 4 * 16) // 36
    assert header.engines == ["dma0", "pe", "exp"]
    assert offchip_elements(header, recs) == TRAFFIC["attenio"](w, p).elements


VARIANTS = [
    ("attenio", {"rescale": "separate"}),
    ("attenio", {"rescale": "lazy"}),
    ("attenio", {"stage": "1"}),
    ("attenio", {"stage": "5"}),
    ("flash2", {"tiling": "paper", "overlap": "none"}),
    ("flash2", {"tiling": "paper", "overlap": "split"}),
    ("flash2", {"tiling": "fit", "overlap": "split"}),
    ("flash2", {"tiling": "fit", "overlap": "double"}),
    ("flash2", {"rescale": "fused"}),
    ("flash2", {"rescale": "lazy"}),
    ("standard", {"overlap": "none"}),
    ("flat", {"overlap": "none"}),
    ("fusemax", {"pipeline": "none"}),
    ("fusemax", {"rows": "fit"}),
    ("fusemax", {"subblock": "3", "keys": "5"}),
]


@pytest.mark.parametrize(("name", "params"), VARIANTS)
@pytest.mark.parametrize(("n", "d", "sram"), [(256, 16, 8 * KIB), (1000, 64, 128 * KIB)])
def test_every_variant_moves_its_closed_form(
    name: str, params: dict[str, str], n: int, d: int, sram: int
) -> None:
    w, p = Workload(n, d), attenio_machine(sram)
    header, recs = emit_all(name, w, p, params=params)
    assert offchip_elements(header, recs) == TRAFFIC[name](w, p, params).elements
    assert header.params["variant"] == {**header.params["variant"], **params}


def test_attenio_tile_follows_the_staging() -> None:
    w, p = Workload(8192, 64), attenio_machine(512 * KIB)
    m = 262_144
    for stage in (1, 2, 5):
        header, _ = emit_all("attenio", Workload(256, 64), p, params={"stage": str(stage)})
        a = (m - 2 * stage * 64) // (2 * 64 + 4)
        assert header.params["a"] == a
        traffic = TRAFFIC["attenio"](w, p, {"stage": str(stage)})
        assert traffic.total_elements == 8192 * 64 * (2 + 2 * math.ceil(8192 / a))


def test_flash2_paper_tiling_has_no_room_for_double_buffers() -> None:
    w, p = Workload(8192, 64), attenio_machine(512 * KIB)
    t = TRAFFIC["flash2"](w, p, {"tiling": "paper", "overlap": "none"})
    assert t.tile == {"br": 64, "bc": 1024}
    assert TRAFFIC["flash2"](
        Workload(8192, 128), p, {"tiling": "paper"} | {"overlap": "split"}
    ).tile == {
        "br": 128,
        "bc": 512,
    }
    with pytest.raises(UserError, match="tiling=paper does not fit"):
        emit("flash2", w, p, params={"tiling": "paper", "overlap": "double"})
    with pytest.raises(UserError, match="overlap must be one of none, split, double"):
        emit("flash2", w, p, params={"overlap": "triple"})
    with pytest.raises(UserError, match="unknown: stage"):
        emit("flash2", w, p, params={"stage": "2"})


def test_flat_spills_partial_rows_when_a_row_does_not_fit() -> None:
    w, p = Workload(512, 16), attenio_machine(1 * KIB)
    header, recs = emit_all("flat", w, p, params={"spill": "never"})
    assert header.params["spill"] is True
    traffic = offchip_elements(header, recs)
    assert traffic["S"] == 2 * 512 * 512
    assert traffic == TRAFFIC["flat"](w, p, {"spill": "never"}).elements


def test_chunks_are_bounded_and_complete() -> None:
    w, p = Workload(512, 64), attenio_machine(32 * KIB)
    sizes = [len(c) for c in emit("attenio", w, p, chunk_ops=1000).chunks]
    assert all(s == 1000 for s in sizes[:-1]) and 0 < sizes[-1] <= 1000


def test_plans_that_do_not_fit_are_user_errors() -> None:
    tiny = attenio_machine(256)
    for name in EMITTERS:
        with pytest.raises(UserError, match="M"):
            emit(name, Workload(4096, 128), tiny)
    with pytest.raises(UserError, match="unknown dataflow"):
        emit("nope", Workload(64, 16), tiny)


def test_lower_bounds() -> None:
    assert mmm_lower_bound(8192, 64, 262144) == pytest.approx(
        8192 * 64 + 8192**2 * 64 * 65 / (262144 - 64) + 8192**2
    )
    assert attention_order_bound(8192, 64, 262144) == 8192**2 * 64**2 / 262144
    with pytest.raises(UserError):
        mmm_lower_bound(10, 64, 64)


@pytest.mark.parametrize(
    ("n", "d", "sram", "rows", "keep"),
    [(512, 16, 8 * KIB, 31, 0), (200, 16, 1 * KIB, 8, 4), (256, 16, 512, 4, 8)],
)
def test_flat_spill_moves_its_closed_form(n: int, d: int, sram: int, rows: int, keep: int) -> None:
    """spill=auto: R rows keep their first ``keep`` scores and spill the rest, written and read
    once: 2Nd + 2Nd ceil(N/R) + 2N(N - keep), fewer bytes than whole rows (spill=never)."""
    w, p = Workload(n, d), attenio_machine(sram)
    header, recs = emit_all("flat", w, p, params={"spill": "auto"})
    assert (header.params["rows"], header.params["keep"]) == (rows, keep)
    moved = offchip_elements(header, recs)
    assert moved["S"] == 2 * n * (n - keep)
    assert sum(moved.values()) == 2 * n * d + 2 * n * d * math.ceil(n / rows) + 2 * n * (n - keep)
    assert moved == TRAFFIC["flat"](w, p, {"spill": "auto"}).elements
    assert sum(moved.values()) < TRAFFIC["flat"](w, p, {"spill": "never"}).total_elements
