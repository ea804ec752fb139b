"""The report's tile section: scaling table, bandwidth roofline and plot of tiled runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tlm_models.study.report import render_report
from tlm_models.study.tile_report import TILE_HEADING, plot_tile_scaling, tile_series


def _record(dataflow: str, tiles: int, time_ns: float, memories: int = 1) -> dict[str, Any]:
    """A tiled result record with the fields the section reads: 1 GB of traffic, 128 GB/s a
    memory, every tile equally fast."""
    per_tile = [
        {"tile": t, "sim_time_ns": time_ns, "offchip_bytes": {"total": 10**9 // tiles},
         "pe_busy_fraction": 0.5, "memory_stall_fraction": 0.25,
         "link_utilization": {f"tile{t}_dma_noc.out0": 0.125}}
        for t in range(tiles)
    ]  # fmt: skip
    return {
        "key": f"{dataflow}-{tiles}-{memories}",
        "dataflow": dataflow,
        "platform": "platforms/attenio-x4.yaml",
        "overrides": [f"tiles.count={tiles}"],
        "seq_len": 8192, "head_dim": 64, "heads": 96, "batch": 1, "kv_heads": 96,
        "kv_len": 8192, "mask": "none", "window": 0, "phase": "prefill",
        "sim_time_ns": time_ns,
        "offchip_bytes": {"read": 10**9, "write": 0, "total": 10**9},
        "bounds": {"closed_form": 1e9},
        "memory_stall_fraction": 0.25,
        "peaks": {"offchip_bytes_per_s": 128e9 * memories},
        "tiles": {"count": tiles, "time_ns": time_ns, "imbalance": 1.0, "work_imbalance": 1.0,
                  "memory_utilization": {f"hbm{m}": 0.5 for m in range(memories)},
                  "assignment": f"whole heads per tile (96 heads on {tiles} tiles)",
                  "per_tile": per_tile},
    }  # fmt: skip


RECORDS = [
    _record("flash2", 1, 40e6),
    _record("flash2", 4, 10e6),
    _record("flash2", 16, 7.8125e6),
    _record("flash2", 16, 3.90625e6, memories=2),
]


def test_series_speedups_and_roofline() -> None:
    """One-tile time 40 ms, 1 GB over 128 GB/s (7.8125 ms): the speedup roof is 5.12 on one
    memory and 10.24 on two; the 2-memory series starts from the one-tile run."""
    series = tile_series(RECORDS)
    assert [(s.memories, [r["tiles"]["count"] for r in s.runs]) for s in series] == [
        (1, [1, 4, 16]),
        (2, [1, 16]),
    ]
    one, two = series
    assert [one.speedup(r) for r in one.runs] == [1.0, 4.0, 5.12]
    assert one.roofline() == 5.12
    assert two.roofline() == 10.24
    assert two.speedup(two.runs[-1]) == 10.24


def test_report_has_the_scaling_section_and_per_tile_tables(tmp_path: Path) -> None:
    png = tmp_path / "tile-scaling.png"
    plot_tile_scaling(tile_series(RECORDS), png)
    assert png.stat().st_size > 0
    text = render_report(RECORDS, {TILE_HEADING: [("Speedup against tiles", png.name)]})
    assert f"## {TILE_HEADING}" in text
    assert "| flash2, N = 8192, d = 64, 96 heads; 1 off-chip memory | 16 | 7.81 ms | 5.12 |" in text
    assert "memory-bound from C* = 5.1 tiles" in text
    assert "memory-bound from C* = 10.2 tiles" in text
    assert f"![Speedup against tiles]({png.name})" in text
    assert text.count("| Tile | Time |") == 3  # the runs on 4, 16 and 16 (2 memories) tiles


def test_report_without_tiled_runs_has_no_tile_section() -> None:
    plain = [{k: v for k, v in r.items() if k != "tiles"} for r in RECORDS[:1]]
    assert TILE_HEADING not in render_report(plain)
