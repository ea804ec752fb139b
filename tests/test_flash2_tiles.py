"""FlashAttention-2's tile choice (``flash2_tiles.py``): bytes equal the closed form for any
(Br, Bc), ``tiling=fit`` holds as many query rows as pay off, ``tiling=paper`` keeps the rule."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from tests.dataflow_helpers import emit_all, offchip_elements
from tests.dataflow_platforms import KIB, attenio_machine
from tlm_models.dataflows import Workload
from tlm_models.dataflows import flash2 as flash2_module
from tlm_models.dataflows.flash2 import flash2_plan
from tlm_models.dataflows.flash2_tiles import (
    FlashTiling,
    Machine,
    fit_bc,
    need_elements,
    tile_seconds,
)
from tlm_models.dataflows.io_formulas import TRAFFIC, online_softmax_elements
from tlm_models.platform import load_platform
from tlm_models.platform.info import PlatformInfo
from tlm_models.run.config import RunConfig
from tlm_models.run.execute import run_one
from tlm_models.run.resolve import resolve_run
from tlm_models.run.worker import run_in_worker

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("n", "d", "br", "bc"),
    [(256, 16, 8, 40), (256, 16, 100, 7), (300, 32, 33, 300), (512, 16, 512, 3), (300, 32, 64, 1)],
)
def test_bytes_equal_the_closed_form_for_any_tiles(
    n: int, d: int, br: int, bc: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Br above and below d, Bc from 1 to all keys: K and V once per block of Br rows."""
    w, p = Workload(n, d), attenio_machine(512 * KIB)

    def forced(*_: object, **__: object) -> FlashTiling:
        return FlashTiling(br, 0, bc, "forced")

    monkeypatch.setattr(flash2_module, "fit_tiling", forced)
    header, recs = emit_all("flash2", w, p)
    assert (header.params["br"], header.params["bc"]) == (br, bc)
    moved = offchip_elements(header, recs)
    assert moved == online_softmax_elements(w, br) == TRAFFIC["flash2"](w, p).elements
    assert sum(moved.values()) == 2 * n * d + 2 * n * d * math.ceil(n / br)


def test_fit_on_a_32_mib_buffer_holds_every_query_row_and_reads_k_v_once() -> None:
    info = load_platform(ROOT / "platforms" / "large-buffer.yaml").info()
    assert info.capacity_elements() == 16 * 2**20  # 32 MiB of FP16
    w = Workload(4096, 64)
    t = flash2_plan(w, info).tiling
    assert t.br == 4096  # not min(ceil(M/4d), d) = 64
    # the widest tile beside them, rounded down to the 256 array columns
    assert t.bc == fit_bc(16 * 2**20, 0, 4096, 64, 1) // 256 * 256 == 3840
    header, recs = emit_all("flash2", w, info, chunk_ops=1 << 16)
    assert offchip_elements(header, recs) == {e: 4096 * 64 for e in "QKVO"}
    assert "least estimated time" in header.params["tile_choice"]
    paper = TRAFFIC["flash2"](w, info, {"tiling": "paper"})
    assert paper.tile == {"br": 64, "bc": 4096}
    assert paper.elements["K"] == 4096 * 64 * 64  # K read 64 times


@pytest.mark.parametrize(("n", "d"), [(1024, 64), (8192, 64), (8192, 128)])
def test_fit_beats_the_paper_rule_on_the_attenio_machine(n: int, d: int) -> None:
    """Its estimate ranks every candidate, the paper's tiles among them; the choice fits."""
    p = attenio_machine(512 * KIB)
    w, m = Workload(n, d), 262_144
    fit = flash2_plan(w, p).tiling
    assert fit.br > d
    assert need_elements(0, fit.br, fit.bc, d, 1) <= m
    fit_bytes = TRAFFIC["flash2"](w, p).total_bytes
    assert fit_bytes < TRAFFIC["flash2"](w, p, {"tiling": "paper"}).total_bytes
    assert "the paper's Br" in fit.reason


def test_tile_estimate_follows_the_array_timing() -> None:
    """Broadcast (attenio): ceil(m n / P) k per matmul; 64 x 32 MACs, latencies 2 and 4."""
    m = Machine.of(attenio_machine())
    br, bc, d = 64, 1024, 64
    pe = (32 * 64 + 2) + (2 * 1024 + 2)  # S: 32 passes of d; P V: 2 passes of Bc
    pe += (32 + 2 + 10) + (32 + 2) + (32 + 2 + 10)  # rowmax (tree of 10), sub, rowsum
    pe += (2 + 2) + 4 * (1 + 2)  # O *= alpha, four statistics of 64
    exp = 512 + 1 + 2 * 4  # exp of 64 x 1024 and of 64 on 128 lanes
    assert tile_seconds(m, br, bc, d) == pytest.approx((pe + exp) * 1e-9)


def test_paper_tiling_is_unchanged_and_fit_refuses_what_cannot_fit() -> None:
    p = attenio_machine(512 * KIB)
    assert TRAFFIC["flash2"](Workload(8192, 64), p, {"tiling": "paper"}).tile == {
        "br": 64,
        "bc": 1024,
    }
    tiny: PlatformInfo = attenio_machine(256)
    with pytest.raises(Exception, match="FlashAttention-2 needs"):
        flash2_plan(Workload(4096, 128), tiny)


def test_a_16_mib_sram_on_the_attenio_machine_runs() -> None:
    """`--set sram.capacity=16MiB` on platforms/attenio.yaml: the SRAM's window grows below the
    KV buffer's, the run simulates, and FA2 keeps all 1K query rows (K and V read once)."""
    config = RunConfig.of("flash2", 1024, 64, overrides=("sram.capacity=16MiB",))
    run = resolve_run(config)
    assert run.capacity_elements == 8 * 2**20
    result: dict[str, Any] = run_in_worker(run_one, run)
    assert result["tiling"]["br"] == 1024
    assert result["offchip_bytes"]["total"] == 4 * 1024 * 64 * 2
    assert result["sim_time_ns"] > 0
