"""`attn-tlm reproduce attenio`: the study's configurations, its closed-form crossover, the
conclusions it states and its report; the run itself is resumable like a sweep."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.study_jobs import fake_result
from tlm_models.study import attenio_repro as study
from tlm_models.study.store import result_record

M = 262_144
MACS_PER_S = 64 * 32 * 1e9


def test_settings_differ_only_in_the_baselines() -> None:
    configs = study.study_configs(study.QUICK)
    keys = [c.key() for c in configs]
    assert len(keys) == len(set(keys))
    published = study.main_configs(study.QUICK, study.PUBLISHED)
    strong = study.main_configs(study.QUICK, study.STRONG)
    for a, b in zip(published, strong, strict=True):
        assert (a.dataflow, a.seq_len, a.head_dim, a.overrides) == (
            b.dataflow,
            b.seq_len,
            b.head_dim,
            b.overrides,
        )
        assert "hbm.fidelity=bank" in a.overrides
        assert (a.key() == b.key()) == (a.dataflow == "attenio")
    fa2 = next(c for c in published if c.dataflow == "flash2")
    assert dict(fa2.extra) == {"tiling": "paper", "overlap": "none"}
    assert max(c.seq_len for c in configs) <= 16384  # --quick
    causal = [c for c in configs if c.mask == "causal"]
    assert {c.dataflow for c in causal} == {"flash2", "attenio"}
    # each causal run has its non-causal twin in the main grid
    plain = {(c.dataflow, c.seq_len, c.head_dim, c.extra, c.overrides) for c in configs}
    assert all((c.dataflow, c.seq_len, c.head_dim, c.extra, c.overrides) in plain for c in causal)


def test_balance_bandwidth_is_the_closed_form() -> None:
    # d = 64: Br = 64, N = 8K: 2 B x 2048 MAC/cycle x 1 GHz x (1 + 128) / 8192 = 64.5 GB/s
    assert study.flash2_balance_bandwidth(8192, 64, M, MACS_PER_S) == pytest.approx(64.5e9)
    # d = 16: Br = 16 -> 2 x 2048e9 x (1 + 512) / 8192
    assert study.flash2_balance_bandwidth(8192, 16, M, MACS_PER_S) == pytest.approx(
        2 * 2048e9 * 513 / 8192
    )


def test_conclusions_follow_the_measurements() -> None:
    s = study.PUBLISHED

    def at(*ratios: float, d: int = 64) -> list[tuple[int, int, float]]:
        return [(1024 << i, d, r) for i, r in enumerate(ratios)]

    said = study.conclusion(s, at(1.1, 1.3))
    assert "d = 64: AttenIO is faster at every N (1.10x to 1.30x)" in said
    assert "FlashAttention-2 is at least as fast at every N" in study.conclusion(s, at(0.5, 1.0))
    assert "faster from N = 2K on, not below (0.90x to 1.20x)" in study.conclusion(s, at(0.9, 1.2))
    assert "faster at N = 1K (0.80x to 1.20x)" in study.conclusion(s, at(1.2, 0.8))
    both = study.conclusion(s, at(0.9, 1.2) + at(0.6, 0.7, d=128))
    assert "from N = 2K on, not below (0.90x to 1.20x); d = 128: FlashAttention-2" in both
    assert "no finished" in study.conclusion(s, [])


#: FA2 / AttenIO time as published at d = 64: the full study's at N = 8K .. 128K
#: (docs/reproduce/attenio-full.md) and the quick study's at 2K .. 16K (docs/study.md).
FULL_D64 = {8192: 0.98, 16384: 1.05, 32768: 1.08, 65536: 1.08, 131072: 1.09}
QUICK_D64 = {2048: 0.72, 4096: 0.87, 8192: 0.98, 16384: 1.05}


def test_quick_reaches_the_full_studys_conclusions_where_they_meet() -> None:
    full = {c.key(): c for c in study.study_configs(study.FULL)}
    quick = study.study_configs(study.QUICK)
    full_points = set(study.FULL.points())
    meet = [c for c in quick if (c.seq_len, c.head_dim) in full_points and c.mask != "causal"]
    # Where the grids meet the runs are the same configurations, hence the same results.
    assert {(c.seq_len, c.head_dim) for c in meet} >= {(8192, 64), (16384, 64)}
    assert all(c.key() in full for c in meet)
    assert max(n for n, d in study.QUICK.points() if d == 64) == 16384
    # ... and the verdict at d = 64 as published turns where the full study's does.
    s = study.PUBLISHED
    on_full = study.conclusion(s, [(n, 64, r) for n, r in FULL_D64.items()])
    on_quick = study.conclusion(s, [(n, 64, r) for n, r in QUICK_D64.items()])
    assert "d = 64: AttenIO is faster from N = 16K on, not below" in on_full
    assert "d = 64: AttenIO is faster from N = 16K on, not below" in on_quick


def test_report_and_plot_from_results(tmp_path: Path) -> None:
    configs = study.study_configs(study.QUICK)
    records = [result_record(c, fake_result(c)) for c in configs]
    text = study.render(records, study.QUICK, M, MACS_PER_S, "fig.png")
    assert "## Setting: as published" in text and "## Setting: strong baselines" in text
    # causal beside non-causal for FA2 and AttenIO (the fake model gives them equal times)
    assert text.count("### Causal masking") == 2
    assert "- Causal masks, **as published** (FA2 / AttenIO time): d = 64: AttenIO is" in text
    assert "| 2K | 64 | 0.066 | 0.066 | 1.00 | 0.044 | 0.044 | 1.00 | 1.50x |" in text
    # the fake model makes AttenIO 1.5x faster than FA2 everywhere
    assert text.count("d = 64: AttenIO is faster at every N") == 4  # + causal
    assert "| 64 | flash2 | 1.6x (published) | 1.50x | 1.50x |" in text
    assert "| 2K | 64 | 0.131 | 0.087 | 0.066 | 0.044 | 1.50x | 2.00x | 3.00x | 1.50x |" in text
    # energy beside time: total mJ and pJ per attention FLOP (4 N^2 d) of each run
    att = next(
        r
        for r in records
        if r["dataflow"] == "attenio" and r["seq_len"] == 2048 and r["head_dim"] == 64
    )
    total_j = att["energy"]["total_j"]
    per_flop = total_j * 1e12 / (4 * 2048 * 2048 * 64)
    assert f"| {total_j * 1e3:.3f} | {per_flop:.3f} |" in text
    study.plot_crossover(records, study.QUICK, M, MACS_PER_S, tmp_path / "x.png")
    assert (tmp_path / "x.png").stat().st_size > 10_000


@pytest.mark.slow
def test_quick_study_runs_and_resumes(tmp_path: Path) -> None:
    """The whole --quick preset through the CLI (fake simulations), then a resume that runs
    nothing again."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    cmd = [
        sys.executable, "-m", "tlm_models.cli.main", "reproduce", "attenio", "--quick",
        "--out", str(tmp_path), "--job", "tests.study_jobs:fake_run",
    ]  # fmt: skip
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "attenio-report.md").is_file()
    assert (tmp_path / "attenio-crossover.png").is_file()
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    assert again.returncode == 0, again.stderr
    total = len(study.study_configs(study.QUICK))
    assert f"{total}/{total} done" in again.stderr
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(lines) == total
