"""Functional mode: the accelerator in the example VP computes O = softmax(mask(QK^T/sqrt(d)))V in
the platform's element type (FP16, BF16, FP32) from the Q, K, V that `attn-tlm vp-job` wrote,
within a bound derived from the format's precision, at the timing of timing-only mode (every
counter, the execution time in picoseconds and every replay statistic equal).

The bound (docs/integration.md, "Functional mode"), first order in the format's unit roundoff u
(2^-11 FP16, 2^-8 BF16, 2^-24 FP32; products and sums in FP32, u32 = 2^-24), per output row i:
- weight j of row i, w_ij = softmax weight, is exp(s_ij - m) of a score rounded once when
  written (u |s_ij|), shifted by the running max and rounded (u |s_ij - m_i|), exponentiated
  and rounded (u), its d products summed in FP32 (d u32 A_ij, A = |Q||K|^T / sqrt(d)): a relative
  error e_ij below u (|s_ij| + |s_ij - m_i| + 1) + d u32 A_ij;
- relative errors e_j of the weights of a weighted mean of values |v| <= V move it by at most
  sum_j w_j e_j * 2V (numerator and denominator see the same rounded weights);
- the output accumulator, the row sum and the rescale factor are rounded once per K/V tile:
  3 u V per tile, T tiles (bounded by the most matmuls writing one on-chip block); the final
  division once more, u V; the P V products of a row summed in FP32 over Nk keys: Nk u32 V.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from tests.example_vp import example_vp_output, run_example_vp
from tlm_models.cli.main import main as cli_main
from tlm_models.platform.element_format import decode
from tlm_models.trace.record import RECORD_DTYPE, OpKind

HEAD_DIM = 64
UNIT_ROUNDOFF = {"fp16": 2.0**-11, "bf16": 2.0**-8, "fp32": 2.0**-24}
FP32_U = 2.0**-24
FORMAT_SETS = {
    "fp16": [],
    "bf16": ["--set", "pe.number_format=bf16", "--set", "exp.number_format=bf16"],
    "fp32": [
        "--set", "pe.elem_bytes=4B", "--set", "exp.elem_bytes=4B",
        "--set", "pe.number_format=fp32", "--set", "exp.number_format=fp32",
    ],
}  # fmt: skip


def _job(out: Path, dataflow: str, n: int, mask: str, fmt: str) -> Path:
    argv = [
        "vp-job", "--dataflow", dataflow, "--seq-len", str(n), "--head-dim", str(HEAD_DIM),
        "--mask", mask, "--platform", "platforms/vp-soc.yaml", *FORMAT_SETS[fmt],
        "--base", "0x2_0000_0000", "--tensors-at", "0x1000_0000", "--out", str(out / "job"),
    ]  # fmt: skip
    assert cli_main(argv) == 0
    return out / "job"


def _vp(job: Path, dump: Path, *extra: str) -> str:
    dump.mkdir()
    return example_vp_output(job, "--dump", str(dump), *extra)


def _tensor(path: Path, fmt: str, n: int) -> npt.NDArray[np.float64]:
    return decode(path.read_bytes(), fmt).reshape(n, HEAD_DIM)


def _reference_and_bound(
    job: Path, fmt: str, n: int, mask: str
) -> tuple[npt.NDArray[np.float64], float]:
    """O in float64 from the job's (already rounded) Q, K, V, and the error bound above."""
    q, k, v = (_tensor(job / f"{t}.bin", fmt, n) for t in "QKV")
    s = q @ k.T / np.sqrt(HEAD_DIM)
    visible = np.tril(np.ones((n, n), bool)) if mask == "causal" else np.ones((n, n), bool)
    s = np.where(visible, s, -np.inf)
    m = s.max(axis=1, keepdims=True)
    p = np.exp(s - m)
    w = p / p.sum(axis=1, keepdims=True)
    u = UNIT_ROUNDOFF[fmt]
    a = np.abs(q) @ np.abs(k).T / np.sqrt(HEAD_DIM)
    finite_s = np.where(visible, np.abs(s), 0.0)
    finite_shift = np.where(visible, np.abs(s - m), 0.0)
    weight_error = u * (finite_s + finite_shift + 1) + HEAD_DIM * FP32_U * a
    big_v = float(np.abs(v).max())
    records = np.fromfile(job / "commands.bin", dtype=RECORD_DTYPE)
    matmul_dst = records["dst"][records["kind"] == OpKind.MATMUL]
    tiles = int(np.unique(matmul_dst, return_counts=True)[1].max())
    bound = (
        2 * big_v * float((w * weight_error).sum(axis=1).max())
        + (3 * tiles + 1) * u * big_v
        + n * FP32_U * big_v
    )
    return w @ v, bound


@pytest.mark.parametrize(
    ("dataflow", "n", "mask", "fmt"),
    [
        ("flash2", 128, "causal", "fp16"),
        ("flash2", 128, "causal", "bf16"),
        ("flash2", 128, "causal", "fp32"),
        ("flash2", 256, "none", "bf16"),
        ("attenio", 128, "none", "fp16"),
    ],
)
def test_functional_output_matches_reference_at_timing_only_timing(
    dataflow: str, n: int, mask: str, fmt: str, tmp_path: Path
) -> None:
    job = _job(tmp_path, dataflow, n, mask, fmt)
    functional = _vp(job, tmp_path / "functional", "--functional", "--number-format", fmt)
    timing_only = _vp(job, tmp_path / "timing", "--number-format", fmt)
    # Same time and bytes: every counter, sim_time_ps and every replay.* statistic.
    assert functional == timing_only
    assert "status 2\n" in functional
    reference, bound = _reference_and_bound(job, fmt, n, mask)
    out = _tensor(tmp_path / "functional" / "O.bin", fmt, n)
    error = float(np.abs(out - reference).max())
    assert error <= bound, f"{dataflow} N={n} {mask} {fmt}: max abs error {error} > {bound}"
    # Timing-only mode computes nothing: the DMA stores whatever the SRAM held (zeros).
    assert not _tensor(tmp_path / "timing" / "O.bin", fmt, n).any()


def test_functional_vp_refuses_a_job_of_another_width(tmp_path: Path) -> None:
    job = _job(tmp_path, "flash2", 64, "none", "fp16")
    proc = run_example_vp(job, "--functional", "--number-format", "fp32")
    assert proc.returncode == 2
    assert "the job has 2-byte elements, the accelerator 4" in proc.stderr
