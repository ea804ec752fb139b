"""Burst trains on real dataflow traces: an exact replay with `dma.burst_trains` on (the
default) gives every statistic of the replay with it off (one call per burst), bit for bit.
The traces overlap the K/V stream with compute on the SRAM and with result stores on the same
HBM channels and link, so the trains are booked among other traffic. Exact expected times of
hand-built transfers are in tests/cpp/test_burst_train.cpp."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.burst_train_jobs import replay_stats
from tlm_models.run.worker import run_in_worker

OFF = ["dma.burst_trains=false"]
PLATFORMS = Path(__file__).resolve().parent.parent / "platforms"


def _check(dataflow: str, seq_len: int, head_dim: int, overrides: list[str], **shape: Any) -> None:
    on = run_in_worker(replay_stats, dataflow, seq_len, head_dim, overrides, **shape)
    off = run_in_worker(replay_stats, dataflow, seq_len, head_dim, [*overrides, *OFF], **shape)
    assert on["stats"].keys() == off["stats"].keys()
    differ = {
        path: (value, off["stats"][path])
        for path, value in on["stats"].items()
        if value != off["stats"][path]
        and not (value != value and off["stats"][path] != off["stats"][path])
    }
    assert not differ, differ
    assert on["stats"]["platform/hbm/reads"] > 0


@pytest.mark.parametrize(
    ("dataflow", "seq_len", "head_dim"),
    [("flat", 2048, 64), ("standard", 2048, 128), ("flash2", 2048, 64), ("attenio", 2048, 128)],
)
def test_trains_replay_exactly_as_burst_by_burst(
    dataflow: str, seq_len: int, head_dim: int
) -> None:
    _check(dataflow, seq_len, head_dim, [])


def test_trains_replay_exactly_with_grouped_heads_and_a_causal_mask() -> None:
    _check("flat", 2048, 64, [], heads=4, kv_heads=2, mask="causal")


def test_burst_by_burst_paths_replay_alike_with_the_switch_either_way() -> None:
    # Bank-level HBM keeps burst-by-burst booking whatever the switch says.
    _check("flat", 1024, 64, ["hbm.fidelity=bank"])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("dataflow", "seq_len", "head_dim"),
    [
        ("flat", 4096, 64),
        ("flat", 8192, 64),
        ("flat", 4096, 128),
        ("standard", 4096, 64),
        ("standard", 8192, 128),
    ],
)
def test_trains_replay_exactly_at_larger_sizes(dataflow: str, seq_len: int, head_dim: int) -> None:
    _check(dataflow, seq_len, head_dim, [])


HOST_KEYS = {"wall_s", "replay_wall_s", "ops_per_s", "overrides", "params", "peaks"}


def _without_host_figures(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_host_figures(v) for k, v in value.items() if k not in HOST_KEYS}
    if isinstance(value, list):
        return [_without_host_figures(v) for v in value]
    return value


def test_trains_replay_a_tiled_chip_exactly() -> None:
    # Four tiles' DMA engines stream through their tile crossbar and the chip crossbar (a chain
    # of two) into one HBM, each among the other tiles' bursts.
    from tlm_models.run.config import RunConfig
    from tlm_models.run.execute import run_one

    key = "tiles.template.components.dma.burst_trains"
    platform = str(PLATFORMS / "attenio-x4.yaml")

    def run(trains: str) -> Any:
        config = RunConfig.of(
            dataflow="flat", seq_len=2048, head_dim=64, heads=4, exact=True, platform=platform,
            overrides=(f"{key}={trains}",),
        )  # fmt: skip
        return run_in_worker(run_one, config)

    results = [run("true"), run("false")]
    on, off = (_without_host_figures(r) for r in results)
    assert on == off
    assert on["sim_time_ns"] > 0
