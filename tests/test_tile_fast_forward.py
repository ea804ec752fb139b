"""Fast-forward across the tiles of a tiled platform (tlm_models/fast_forward/tiles.py): the
chip's steady state skipped on every tile together, masked loops by linear growth too, checked
against exact replays (time and every counter of every tile and component), bytes against the
closed forms."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fast_forward_jobs import worst_difference
from tests.tile_jobs import PAPER_TILES, equal_tile_bytes, tiled_replay_stats, tiled_result_job
from tlm_models.dataflows import Workload, emit
from tlm_models.dataflows.io_formulas import TRAFFIC
from tlm_models.fast_forward.control import FAST_FORWARD_CHUNK_OPS, Columns, IterationControl
from tlm_models.fast_forward.growth import GrowthFastForward
from tlm_models.fast_forward.tiles import drift, unbalanced_reason
from tlm_models.platform.compose import Platform
from tlm_models.run.worker import run_in_worker

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
    params = PAPER_TILES if dataflow == "flash2" else None
    assert total == TRAFFIC[dataflow](w, config.info(), params).total_bytes


def test_unbalanced_shares_run_exactly() -> None:
    """6 heads on 4 tiles: tiles get 1 or 2 heads, so their loops differ and are not skipped
    together; the reason names the first tile that differs."""
    config = Platform.load(ROOT / "platforms/attenio-x4.yaml").config
    w = Workload(seq_len=1024, head_dim=64, heads=6)
    controls = [
        emit(
            "flash2", w, config.tile_info(t), FAST_FORWARD_CHUNK_OPS, params=PAPER_TILES
        ).iterations
        for t in range(4)
    ]
    reason = unbalanced_reason(controls)
    assert reason is not None and reason.startswith("tile 1's loop (32 iterations)")
    balanced = Workload(seq_len=1024, head_dim=64, heads=8)
    assert (
        unbalanced_reason(
            [
                emit(
                    "flash2",
                    balanced,
                    config.tile_info(t),
                    FAST_FORWARD_CHUNK_OPS,
                    params=PAPER_TILES,
                ).iterations
                for t in range(4)
            ]
        )
        is None
    )


#: Masked loops on whole heads a tile (every tile's blocks grow alike): dataflow, N, d, heads,
#: workload fields, platform, the rule of each skip.
MASKED = {
    # Each tile's head grows along the causal diagonal: a new K/V tile every 16 blocks.
    "causal": ("flash2", 8192, 64, 4, {"mask": "causal"}, "attenio-x4",
               ["linear growth, period 16"]),
    # A window of 8K keys at 16K: the blocks grow until it is full, then repeat.
    "sliding": ("flash2", 16384, 64, 4, {"mask": "sliding", "window": 8192}, "attenio-x4",
                ["linear growth, period 16", "exact"]),
}  # fmt: skip
PE_FOLD_OVERLAP = "tiles.template.components.pe.fold_overlap=true"
#: Longer cases (2-10 s each; more measured in docs/models/tiles.md).
MASKED_SLOW = {
    "16 tiles": ("flash2", 8192, 64, 16, {"mask": "causal"}, "attenio-x16",
                 ["linear growth, period 16"]),
    "16 tiles sliding": ("flash2", 8192, 64, 16, {"mask": "sliding", "window": 2048},
                         "attenio-x16", ["exact"]),
    "GQA": ("flash2", 8192, 64, 8, {"mask": "causal", "kv_heads": 4}, "attenio-x4",
            ["linear growth, period 32"]),
    "2 heads a tile": ("flash2", 8192, 64, 8, {"mask": "causal"}, "attenio-x4",
                       ["linear growth, period 16"]),
    "d = 128": ("flash2", 8192, 128, 4, {"mask": "causal"}, "attenio-x4",
                ["linear growth, period 8"]),
    # 4 heads a tile: tile 3 falls behind tile 0 over the third head (14 more operations, a
    # K/V tile's, over the blocks to skip), so that head's skip is refused (``drift``).
    "4 heads a tile": ("flash2", 16384, 64, 16, {"mask": "causal"}, "attenio-x4",
                       ["linear growth, period 16"] * 3),
    # AttenIO's blocks of a = 494 rows (the edge tile's 128 KiB) on the edge part's 4 tiles,
    # its systolic array paying fill and drain once per operation: with a fill and drain per
    # fold its 17 blocks do not repeat exactly within the loop, and nothing is skipped.
    "attenio causal": ("attenio", 8192, 64, 4, {"mask": "causal"}, "edge-quad",
                       ["linear growth, period 1"], (PE_FOLD_OVERLAP,)),
    "attenio sliding": ("attenio", 8192, 64, 4, {"mask": "sliding", "window": 2048}, "edge-quad",
                        ["times within 0.0001 of each other"], (PE_FOLD_OVERLAP,)),
}  # fmt: skip


def _masked_matches_exact(
    dataflow: str,
    seq_len: int,
    head_dim: int,
    heads: int,
    shape: dict[str, Any],
    platform: str,
    rules: list[str],
    overrides: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Exact and fast-forwarded replays of one masked case: a skip was taken on every tile by
    each of ``rules`` (growth skips corrected at their boundary), every statistic of every
    tile and component within 0.1 % of the exact replay's, the bytes of each tile equal to
    the exact replay's and to that tile's closed form."""
    args = (dataflow, seq_len, head_dim, heads)
    kw = {"platform_file": f"platforms/{platform}.yaml", "overrides": overrides, **shape}
    exact = run_in_worker(tiled_replay_stats, *args, False, **kw)
    fast = run_in_worker(tiled_replay_stats, *args, True, **kw)
    section = fast["fast_forward"]
    worst, where = worst_difference(exact, fast)
    assert worst <= BOUND, f"{where} differs by {worst:.3g} ({section})"
    tiles = len(fast["closed_form_tiles"])
    assert section["tiles_skipped_together"] == tiles
    assert section["simulated_fraction"] < 1
    assert fast["simulated_ops"] < exact["simulated_ops"]
    skips = section.get("skips", [section])
    assert [s["periodicity"] for s in skips] == rules, section
    assert all(s["boundary_corrected"] for s in skips if "growth" in s["periodicity"])
    equal_tile_bytes(exact, fast, tiles)
    for tile, closed_form in enumerate(fast["closed_form_tiles"]):
        stats = fast["stats"]
        got = stats[f"replay_tile{tile}/offchip_read"] + stats[f"replay_tile{tile}/offchip_write"]
        assert got == closed_form, f"tile {tile}"
    return dict(section)


@pytest.mark.parametrize("case", MASKED)
def test_masked_loops_on_tiles_match_exact(case: str) -> None:
    """attenio-x4, a causal or sliding-window head a tile: the blocks' growth (and a full
    window's repetition) skipped on all four tiles together."""
    _masked_matches_exact(*MASKED[case])


@pytest.mark.slow
@pytest.mark.parametrize("case", MASKED_SLOW)
def test_more_masked_loops_on_tiles_match_exact(case: str) -> None:
    """16 tiles on two stacks, grouped queries, two or four heads a tile, d = 128, and AttenIO
    on the edge part."""
    section = _masked_matches_exact(*MASKED_SLOW[case])
    if case == "4 heads a tile":
        assert section["refused_skip"].startswith("tile 3 drifts against tile 0 over the loop")


def test_a_skip_that_would_shift_a_tile_against_tile_0_is_refused() -> None:
    """``drift``: every count of each tile's replay (its engines by tile 0's names) must
    change over the iterations to skip as tile 0's; the records read ahead and the platform's
    statistics are not compared."""
    alike = {
        ("replay", "ops"): 6044.0,
        ("replay_tile3", "ops"): 6044.0,
        ("replay", "engines", "tile0_pe", "macs"): 8.0,
        ("replay_tile3", "engines", "tile3_pe", "macs"): 8.0,
        ("replay", "records_read"): 9000.0,
        ("replay_tile3", "records_read"): 7000.0,
        ("platform", "hbm", "bytes_read"): 1.0,
    }
    assert drift(alike) is None
    behind = alike | {("replay_tile3", "engines", "tile3_pe", "macs"): 7.0}
    assert drift(behind) == (
        "tile 3 drifts against tile 0 over the loop (engines/tile3_pe/macs: 7 against tile 0's "
        "8 over the iterations to skip): they are simulated, as a skip would shift it"
    )
    # A growth skip: every tile behind tile 0 by less than tile 0's last iteration (180 ops).
    before = {("replay", "ops"): 1000.0, ("replay_tile3", "ops"): 900.0}
    last = {("replay", "ops"): 1180.0, ("replay_tile3", "ops"): 1100.0}
    assert drift(alike, [before, last]) is None
    assert drift(alike, [before, last | {("replay_tile3", "ops"): 1000.0}]) == (
        "tile 3 runs 180 behind tile 0's operations at its iteration starts, not within its "
        "iteration of 180: a growth skip's boundary correction would miss its place, so the "
        "blocks are simulated"
    )
    ahead = drift(alike, [before, last | {("replay_tile3", "ops"): 1183.0}])
    assert ahead is not None and ahead.startswith("tile 3 runs 3 ahead of tile 0's operations")
    control = IterationControl(100, shapes=[(("b",), (1, k)) for k in range(100)])
    watcher = GrowthFastForward(control, veto=drift)
    watcher.columns = Columns.of([(p, "1") for p in behind])
    control.mark(9, 900)
    watcher.skipped_range = control.plan_skip(1, 2)
    assert watcher.refused(behind) and control.skip is None and watcher.skipped_range is None
    assert watcher.vetoed == drift(behind)


def test_masked_shares_run_exactly_unless_they_grow_alike() -> None:
    """Whole causal heads a tile grow alike; one head dealt zig-zag over 4 tiles (each tile
    other rows of the triangle) does not, nor do equal kinds with other growth, nor unlike
    kinds of an unmasked loop; each reason names the tile."""
    config = Platform.load(ROOT / "platforms/attenio-x4.yaml").config

    def controls(**shape: Any) -> list[IterationControl | None]:
        w = Workload(seq_len=2048, head_dim=64, **shape)
        return [
            emit(
                "flash2", w, config.tile_info(t), FAST_FORWARD_CHUNK_OPS, params=PAPER_TILES
            ).iterations
            for t in range(4)
        ]

    assert unbalanced_reason(controls(heads=4, mask="causal")) is None
    zigzag = unbalanced_reason(controls(heads=1, mask="causal"))
    assert zigzag is not None
    assert zigzag.startswith("tile 1's blocks lie elsewhere along the mask than tile 0's")
    gqa = unbalanced_reason(controls(heads=8, kv_heads=2, mask="sliding", window=512))
    assert gqa is not None and gqa.startswith("tile 1's blocks lie elsewhere along the mask")
    grow = [(("first", "diag"), (1, k)) for k in range(4)]
    faster = [(("first", "diag"), (1, 2 * k)) for k in range(4)]
    alike = [IterationControl(4, ["b"] * 4, grow) for _ in range(3)]
    assert unbalanced_reason(alike) is None
    reason = unbalanced_reason([*alike[:2], IterationControl(4, ["b"] * 4, faster)])
    assert reason == (
        "tile 2's blocks grow along the mask unlike tile 0's (other numbers of key tiles per "
        "block): masked shares of unlike growth run exactly"
    )
    unmasked = [IterationControl(2, ["a", "a"]), IterationControl(2, ["a", "b"])]
    assert unbalanced_reason(unmasked) == (
        "tile 1's iterations differ in kind from tile 0's: shares of unlike blocks run exactly"
    )


@pytest.mark.parametrize(("seq_len", "heads", "mask"), [(4096, 8, "none"), (8192, 4, "causal")])
def test_tiled_run_result_says_what_was_skipped(seq_len: int, heads: int, mask: str) -> None:
    """``run_tiled`` (the CLI's and the study's path): FlashAttention-2 on attenio-x4, N = 4K
    with 8 heads or causal N = 8K with 4, fast-forwarded takes the exact run's time to the
    picosecond and its bytes equal the closed form; ``--exact`` says so."""
    fast = run_in_worker(tiled_result_job, "flash2", seq_len, heads, False, mask)
    exact = run_in_worker(tiled_result_job, "flash2", seq_len, heads, True, mask)
    assert fast["fast_forward"]["skipped_iterations"] > 0
    assert fast["fast_forward"]["tiles_skipped_together"] == 4
    assert exact["fast_forward"] == {"enabled": False, "reason": "--exact"}
    assert fast["time"] == pytest.approx(exact["time"], rel=0, abs=1e-3)
    assert fast["bytes"] == exact["bytes"] == fast["closed_form"]
