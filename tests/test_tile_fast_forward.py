"""Fast-forward across the tiles of a tiled platform (tlm_models/tile_fast_forward.py): the
chip's steady state skipped on every tile together, checked against exact replays (time and
every counter of every tile and component), bytes against the closed forms."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fast_forward_jobs import worst_difference
from tests.tile_jobs import equal_tile_bytes, tiled_replay_stats, tiled_result_job
from tlm_models.dataflows import Workload, emit
from tlm_models.dataflows.io_formulas import TRAFFIC
from tlm_models.fast_forward import FAST_FORWARD_CHUNK_OPS
from tlm_models.platform.compose import Platform
from tlm_models.tile_fast_forward import unbalanced_reason
from tlm_models.worker import run_in_worker

ROOT = Path(__file__).resolve().parent.parent
BOUND = 1e-3  # 0.1 %


@pytest.mark.parametrize(
    ("dataflow", "seq_len", "head_dim", "skips"),
    [("flash2", 4096, 64, True), ("attenio", 4096, 128, False)],
)
def test_tiled_fast_forward_matches_exact(
    dataflow: str, seq_len: int, head_dim: int, skips: bool
) -> None:
    """attenio-x4, 4 heads (one a tile): FlashAttention-2's 64 blocks a tile repeat and are
    skipped on all tiles together; AttenIO's 5 iterations a tile are too few and run exactly.
    Either way every statistic matches the exact replay within 0.1 % and the bytes of every
    tile equal the exact replay's and, summed, the one-chip closed form."""
    heads = 4
    exact = run_in_worker(tiled_replay_stats, dataflow, seq_len, head_dim, heads, False)
    fast = run_in_worker(tiled_replay_stats, dataflow, seq_len, head_dim, heads, True)
    section = fast["fast_forward"]
    worst, where = worst_difference(exact, fast)
    assert worst <= BOUND, f"{where} differs by {worst:.3g} ({section})"
    assert (section["skipped_iterations"] > 0) == skips, section
    if skips:
        assert section["tiles_skipped_together"] == 4
        assert fast["simulated_ops"] < exact["simulated_ops"]
    else:
        assert section["reason"]
    total = equal_tile_bytes(exact, fast, 4)
    config = Platform.load(ROOT / "platforms/attenio-x4.yaml").config
    w = Workload(seq_len=seq_len, head_dim=head_dim, heads=heads)
    assert total == TRAFFIC[dataflow](w, config.info()).total_bytes


def test_unbalanced_shares_run_exactly() -> None:
    """6 heads on 4 tiles: tiles get 1 or 2 heads, so their loops differ and are not skipped
    together; the reason names the first tile that differs."""
    config = Platform.load(ROOT / "platforms/attenio-x4.yaml").config
    w = Workload(seq_len=1024, head_dim=64, heads=6)
    controls = [
        emit("flash2", w, config.tile_info(t), FAST_FORWARD_CHUNK_OPS).iterations for t in range(4)
    ]
    reason = unbalanced_reason(controls)
    assert reason is not None and reason.startswith("tile 1's loop (32 iterations)")
    balanced = Workload(seq_len=1024, head_dim=64, heads=8)
    assert (
        unbalanced_reason(
            [
                emit("flash2", balanced, config.tile_info(t), FAST_FORWARD_CHUNK_OPS).iterations
                for t in range(4)
            ]
        )
        is None
    )


def test_tiled_run_result_says_what_was_skipped() -> None:
    """``run_tiled`` (the CLI's and the study's path): FlashAttention-2 N = 4K, 8 heads on
    attenio-x4 fast-forwarded takes the exact run's time to the picosecond and its bytes equal
    the closed form; ``--exact`` says so."""
    fast = run_in_worker(tiled_result_job, "flash2", 4096, 8, False)
    exact = run_in_worker(tiled_result_job, "flash2", 4096, 8, True)
    assert fast["fast_forward"]["skipped_iterations"] > 0
    assert fast["fast_forward"]["tiles_skipped_together"] == 4
    assert exact["fast_forward"] == {"enabled": False, "reason": "--exact"}
    assert fast["time"] == pytest.approx(exact["time"], rel=0, abs=1e-3)
    assert fast["bytes"] == exact["bytes"] == fast["closed_form"]
