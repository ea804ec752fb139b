"""VCD and STL export of tiled runs, and an STL export that holds every request of a run that
would otherwise be fast-forwarded (tlm_models/replay/stl_out.py, vcd.py)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tlm_models.cli.main import main
from tlm_models.replay.stl_in import replay_stl_file
from tlm_models.replay.stl_out import EXACT_REASON, stl_paths
from tlm_models.run.config import RunConfig
from tlm_models.run.execute import run_one
from tlm_models.run.worker import run_in_worker
from tlm_models.trace.stl import load_stl

ROOT = Path(__file__).resolve().parent.parent
#: FlashAttention-2 with the paper's tiles (Br = 64 rows at d = 64)
PAPER = (("tiling", "paper"),)
X4 = str(ROOT / "platforms" / "attenio-x4.yaml")
X16 = str(ROOT / "platforms" / "attenio-x16.yaml")


def _scopes(vcd: str) -> dict[str, list[str]]:
    """Signal names by scope, from the VCD header."""
    scopes: dict[str, list[str]] = {}
    current = ""
    for line in vcd.split("$enddefinitions", 1)[0].splitlines():
        if m := re.match(r"\$scope module (\S+) \$end", line):
            current = m.group(1)
            scopes.setdefault(current, [])
        elif m := re.match(r"\$var wire 1 \S+ (\S+) \$end", line):
            scopes[current].append(m.group(1))
    return scopes


def test_tiled_run_writes_a_waveform_scope_per_tile_and_one_stl(tmp_path: Path) -> None:
    vcd, stl = tmp_path / "x4.vcd", tmp_path / "x4.stl"
    config = RunConfig.of(
        dataflow="flash2", platform=X4, seq_len=1024, head_dim=64, heads=4, extra=PAPER
    )  # the paper's 64-row tiles: every HBM channel busy
    result = run_in_worker(run_one, config, None, None, str(vcd), str(stl), 1e9)
    scopes = _scopes(vcd.read_text())
    for tile in range(4):
        assert scopes[f"tile{tile}"] == ["dma0", "dma1", "pe", "exp"]
    assert scopes["memory_channels"] == [f"hbm_ch{c}" for c in range(16)]
    # Every tile's engines switch on in the waveform.
    body = vcd.read_text().split("$enddefinitions $end", 1)[1]
    assert {line[1:] for line in body.splitlines() if line.startswith("1")} >= {
        chr(33 + i) for i in range(16)
    }
    # One memory: one STL file at the path given, holding the four tiles' every byte.
    requests = load_stl(stl)
    assert int(requests["length"][~requests["is_write"]].sum()) == result["offchip_bytes"]["read"]
    assert int(requests["length"][requests["is_write"]].sum()) == result["offchip_bytes"]["write"]
    assert np.all(np.diff(requests["time_ps"].astype(np.int64)) >= 0)
    assert result["fast_forward"] == {"enabled": False, "reason": EXACT_REASON}


def test_two_stacks_give_one_stl_per_memory_that_replays_into_its_own_stack(
    tmp_path: Path,
) -> None:
    stl = tmp_path / "x16.stl"
    config = RunConfig.of(dataflow="flash2", platform=X16, seq_len=1024, head_dim=64, heads=16)
    result = run_in_worker(run_one, config, None, None, None, str(stl), 1e9)
    paths = stl_paths(stl, ["hbm0", "hbm1"])
    assert paths == {"hbm0": tmp_path / "x16.hbm0.stl", "hbm1": tmp_path / "x16.hbm1.stl"}
    assert not stl.exists()
    total = 0
    for memory, path in paths.items():
        requests = load_stl(path)
        window = 0x1_0000_0000 * int(memory[-1])
        # Tiles 0-7 keep their heads in hbm0, tiles 8-15 in hbm1; each file stays in its window.
        assert np.all(requests["address"] >= window)
        assert np.all(requests["address"] < window + 0x1_0000_0000)
        total += int(requests["length"].sum())
        replayed = run_in_worker(replay_stl_file, str(path), X16)
        assert replayed["memory"] == memory
        assert replayed["requests"] == len(requests)
    assert total == result["offchip_bytes"]["total"]


def test_export_of_a_fast_forwardable_run_holds_every_request(tmp_path: Path) -> None:
    # FlashAttention-2 at 4K repeats its loop: without the export it is fast-forwarded
    # (skipping iterations whose requests an STL file would miss); with it, it replays exactly.
    stl = tmp_path / "fa2.stl"
    config = RunConfig.of(dataflow="flash2", seq_len=4096, head_dim=64, extra=PAPER)  # 64 blocks
    plain = run_in_worker(run_one, config)
    assert plain["fast_forward"]["enabled"] is True
    assert plain["fast_forward"]["skipped_iterations"] > 0
    exported = run_in_worker(run_one, config, None, None, None, str(stl), 1e9)
    assert exported["fast_forward"] == {"enabled": False, "reason": EXACT_REASON}
    requests = load_stl(stl)
    assert int(requests["length"].sum()) == exported["offchip_bytes"]["total"]
    assert exported["offchip_bytes"] == plain["offchip_bytes"]


def test_cli_names_each_stl_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stl = tmp_path / "out.stl"
    args = ["run", "--platform", X16, "--dataflow", "flash2", "--seq-len", "1K"]
    assert main([*args, "--head-dim", "64", "--heads", "16", "--export-stl", str(stl)]) == 0
    out = capsys.readouterr().out
    assert f"off-chip requests of hbm0 (STL): {tmp_path / 'out.hbm0.stl'}" in out
    assert f"off-chip requests of hbm1 (STL): {tmp_path / 'out.hbm1.stl'}" in out
