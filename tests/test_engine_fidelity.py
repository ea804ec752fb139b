"""Engine capabilities of the AttenIO design, each with a hand-written trace and its exact
timeline: the fused scale-and-accumulate matmul, forwarding (streamed operations) and the
split-k broadcast mapping. Formulas: docs/models/pe_array.md and docs/models/exp_unit.md.

Platform tests/data/platforms/exact.yaml with operand traffic off (so every time is a formula):
PE 4 x 4 = 16 MACs, broadcast mapping, pipeline latency 8 cycles; Exp unit 8 lanes, latency
4 cycles; 1 GHz, so one cycle = 1 ns. Forwarding granularity 8 elements on both engines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tlm_models.platform import load_platform
from tlm_models.platform.info import MemoryRegion, PlatformInfo
from tlm_models.replay.reference import ReferenceExecutor, adversarial_orders
from tlm_models.replay.replayer import TimelineWindow, replay_in_this_process
from tlm_models.run.worker import run_in_worker
from tlm_models.trace.text import read_text

PLATFORM = str(Path(__file__).parent / "data" / "platforms" / "exact.yaml")
S = 0x4000_0000  # SRAM base
TIMING_ONLY = ("pe.sram_traffic=false", "exp.sram_traffic=false")
FORWARD_8 = ("pe.forward_granularity=8", "exp.forward_granularity=8")
HEADER = "dataflow: fidelity\nengines: dma0 dma1 pe exp\nwindow: 16\n"


def replay_timeline(trace: str, overrides: tuple[str, ...]) -> dict[str, Any]:
    """Worker job: replay a text trace; per record [start, end] in ns plus PE statistics."""
    platform = load_platform(PLATFORM, overrides)
    header, records = read_text(trace)
    out = replay_in_this_process(platform, header, [records], timeline=TimelineWindow())
    assert out.timeline is not None
    spans: dict[int, tuple[float, float]] = {}
    for track in out.timeline.tracks:
        if not track.args:
            continue
        for start, end, args in zip(track.starts_ns, track.ends_ns, track.args, strict=True):
            if "record" in args:
                spans[int(args["record"])] = (float(start), float(end))
    pe = next(c for c in out.platform["children"] if c["name"] == "pe")
    return {"spans": spans, "pe": {k: v["value"] for k, v in pe["stats"].items()}}


def _run(tmp_path: Path, body: str, overrides: tuple[str, ...] = ()) -> dict[str, Any]:
    trace = tmp_path / "t.trace.txt"
    trace.write_text(HEADER + body)
    return run_in_worker(replay_timeline, str(trace), (*TIMING_ONLY, *overrides), timeout=120)


def test_fused_scale_matmul_times_like_an_accumulate_and_reads_alpha(tmp_path: Path) -> None:
    # C = diag(alpha) C + A B, 4 x 4 x 8: issue ceil(16/16) * 8 = 8, latency 8 -> done 16,
    # exactly the accumulate matmul beside it (issued at 8, when the array is free: done 32).
    body = (
        f"0 matmul pe m=4 n=4 k=8 flags=scale_rows src2={S + 0x300:#x} src0={S:#x}"
        f" src1={S + 0x40:#x} dst={S + 0x100:#x}\n"
        f"1 matmul pe m=4 n=4 k=8 flags=acc src0={S:#x} src1={S + 0x40:#x} dst={S + 0x200:#x}\n"
    )
    r = _run(tmp_path, body)
    assert r["spans"] == {0: (0.0, 16.0), 1: (8.0, 24.0)}
    assert r["pe"]["scaled_matmul_ops"] == 1
    # With operand traffic: A 64 B + B 64 B + C 32 B + alpha 4 x 2 B = 168 B read by record 0,
    # 160 B by record 1.
    trace = tmp_path / "t.trace.txt"
    stats = run_in_worker(replay_timeline, str(trace), (), timeout=120)["pe"]
    assert stats["sram_bytes_read"] == 168 + 160
    assert stats["sram_bytes_written"] == 2 * 32


def test_a_plain_mac_array_spends_one_more_step_on_the_scale(tmp_path: Path) -> None:
    # scale_accumulate false: the 4 x 4 x 8 scaled matmul issues 8 + ceil(16/16) = 9 cycles
    # (done 17); the accumulate beside it enters at 9 (done 25).
    body = (
        f"0 matmul pe m=4 n=4 k=8 flags=scale_rows src2={S + 0x300:#x} src0={S:#x}"
        f" src1={S + 0x40:#x} dst={S + 0x100:#x}\n"
        f"1 matmul pe m=4 n=4 k=8 flags=acc src0={S:#x} src1={S + 0x40:#x} dst={S + 0x200:#x}\n"
    )
    r = _run(tmp_path, body, ("pe.scale_accumulate=false",))
    assert r["spans"] == {0: (0.0, 17.0), 1: (9.0, 25.0)}


def test_a_lazy_rescale_charges_only_its_rows(tmp_path: Path) -> None:
    # code 0x53 = mul | row broadcast | lazy_rows. 3 rows of 4: ceil(12/16) = 1 issue cycle,
    # done 9; none: no issue cycle, nothing written (no hold for the next op); the full mul of
    # the 8 x 4 block, handed over at 1, is held for record 0's result (done 9): 9 + 2 + 8 = 19.
    o, alpha = S + 0x100, S + 0x300
    body = (
        f"0 vector pe m=8 n=4 k=3 code=0x53 src0={o:#x} src1={alpha:#x} dst={o:#x}\n"
        f"1 vector pe m=8 n=4 k=0 code=0x53 src0={o:#x} src1={alpha:#x} dst={o:#x}\n"
        f"2 vector pe m=8 n=4 op=mul bcast=row src0={o:#x} src1={alpha:#x} dst={o:#x}\n"
    )
    r = _run(tmp_path, body)
    assert r["spans"] == {0: (0.0, 9.0), 1: (1.0, 9.0), 2: (1.0, 19.0)}
    assert (r["pe"]["lazy_rescale_ops"], r["pe"]["lazy_rescale_rows"]) == (2, 3)
    assert r["pe"]["vector_elements"] == 12 + 32


def test_split_k_uses_idle_macs_with_an_adder_tree(tmp_path: Path) -> None:
    body = (
        f"0 matmul pe m=2 n=1 k=8 flags=trans_b src0={S:#x} src1={S + 0x40:#x} dst={S + 0x100:#x}\n"
        f"1 matmul pe m=3 n=1 k=64 flags=trans_b src0={S + 0x800:#x} src1={S + 0x400:#x}"
        f" dst={S + 0x200:#x}\n"
    )
    # Without split-k: 8 + 8 = 16; the second enters at 8: 64 + 8 -> 80.
    plain = _run(tmp_path, body)
    assert plain["spans"] == {0: (0.0, 16.0), 1: (8.0, 80.0)}
    # split-k: record 0 splits k over min(8, 16 / 2) = 8 MACs per output: 1 issue cycle,
    # latency 8 + log2(8) = 11 -> done 12. Record 1: 16 / 3 = 5 MACs per output,
    # ceil(64 / 5) = 13 issue cycles from 1, latency 8 + ceil(log2 5) = 11 -> done 25.
    split = _run(tmp_path, body, ("pe.split_k=true",))
    assert split["spans"] == {0: (0.0, 12.0), 1: (1.0, 25.0)}
    assert split["pe"]["macs"] == plain["pe"]["macs"] == 2 * 8 + 3 * 64


FORWARD_CHAIN = (
    # PE add 1 x 64: issue ceil(64/16) = 4, done 4 + 8 = 12; its first granule of 8 elements
    # takes ceil(4 * 8 / 64) = 1 issue cycle and is out at 1 + 8 = 9.
    f"0 vector pe op=add m=1 n=64 src0={S:#x} src1={S + 0x100:#x} dst={S + 0x200:#x}\n"
    # exp of it on 8 lanes: issue 8, latency 4.
    f"1 exp exp m=1 n=64 src0={S + 0x200:#x} dst={S + 0x300:#x} FLAGS deps=0\n"
    # PE mul of the exp's result.
    f"2 vector pe op=mul m=1 n=64 src0={S + 0x300:#x} src1={S + 0x100:#x}"
    f" dst={S + 0x400:#x} FLAGS deps=1\n"
)


def test_forwarding_lets_a_stream_start_on_the_first_granule(tmp_path: Path) -> None:
    # Without forwarding: exp starts at 12, done 12 + 8 + 4 = 24; mul starts at 24, done 36.
    whole = _run(tmp_path, FORWARD_CHAIN.replace(" FLAGS", ""), FORWARD_8)
    assert whole["spans"] == {0: (0.0, 12.0), 1: (12.0, 24.0), 2: (24.0, 36.0)}
    # Streamed: exp starts at the add's first granule, 9; it cannot finish issuing before the
    # add's last granule (done 12) plus one granule (ceil(8 * 8 / 64) = 1 cycle): issue ends
    # max(9 + 8, 12 + 1) = 17, done 21; its first granule is out at 9 + 1 + 4 = 14.
    # mul starts at 14; issue ends max(14 + 4, 21 + 1) = 22, done 30.
    stream = _run(tmp_path, FORWARD_CHAIN.replace("FLAGS", "flags=stream"), FORWARD_8)
    assert stream["spans"] == {0: (0.0, 12.0), 1: (9.0, 21.0), 2: (14.0, 30.0)}
    assert stream["pe"]["streamed_ops"] == 1


def test_forwarding_within_the_pe_array(tmp_path: Path) -> None:
    # The mul reads the add's result on the same engine without naming it (the interlock);
    # the replayer hands it over at 4 (the array is free), which the timeline shows as its
    # start. Whole, it is held until done 12 -> 12 + 4 + 8 = 24; streamed it enters at the
    # first granule, 9, and ends issuing at max(9 + 4, 12 + 1) = 13 -> done 21.
    body = (
        f"0 vector pe op=add m=1 n=64 src0={S:#x} src1={S + 0x100:#x} dst={S + 0x200:#x}\n"
        f"1 vector pe op=mul m=1 n=64 src0={S + 0x200:#x} src1={S + 0x100:#x}"
        f" dst={S + 0x400:#x} FLAGS\n"
    )
    whole = _run(tmp_path, body.replace(" FLAGS", ""), FORWARD_8)
    assert whole["spans"] == {0: (0.0, 12.0), 1: (4.0, 24.0)}
    stream = _run(tmp_path, body.replace("FLAGS", "flags=stream"), FORWARD_8)
    assert stream["spans"] == {0: (0.0, 12.0), 1: (4.0, 21.0)}


# --------------------------------------------------------------- numeric executor, forwarding


def _machine() -> PlatformInfo:
    return PlatformInfo(
        name="numeric",
        offchip=MemoryRegion("hbm", 0x0, 1 << 20),
        scratchpad=MemoryRegion("sram", S, 1 << 16),
        engines={"dma0": "dma", "pe": "pe", "exp": "exp"},
        pe_rows=4,
        pe_cols=4,
        pe_clock_hz=1e9,
        exp_lanes=8,
        exp_clock_hz=1e9,
        offchip_bandwidth=1e9,
    )


NUMERIC_HEADER = (
    "dataflow: numeric\nengines: dma0 pe exp\nwindow: 16\ntensor: X offchip base=0x0 shape=1x32\n"
    "tensor: O offchip base=0x1000 shape=1x32\n"
)


def _numeric(tmp_path: Path, body: str) -> list[np.ndarray]:
    """O of the trace in every adversarial order, with granules of 8 elements."""
    trace = tmp_path / "n.trace.txt"
    trace.write_text(NUMERIC_HEADER + body)
    header, records = read_text(trace)
    outs = []
    for order in adversarial_orders(header.engines):
        ex = ReferenceExecutor(header, _machine())
        ex.tensor("X")[...] = np.arange(32, dtype=np.float32) / 32
        ex.run(records, order, granularity=8)
        outs.append(ex.tensor("O").copy())
    return outs


def _chain(exp_src: int, exp_n: int = 32) -> str:
    """X scaled by 2 (PE), exp of it streamed (Exp unit), then the fused, streamed matmul
    O = diag(alpha) C + p B with C = 1, B = 1, alpha = 0.5: O = 0.5 + exp(2x)."""
    const = "bcast=scalar scalar"
    return (
        f"0 load dma0 tensor=X m=1 n=64 src0=0x0 dst={S:#x}\n"
        f"1 vector pe op=mul m=1 n=32 {const}=0.0 src0={S:#x} dst={S + 0x400:#x} deps=0\n"
        f"2 vector pe op=add m=1 n=32 {const}=1.0 src0={S + 0x400:#x} dst={S + 0x400:#x}\n"
        f"3 vector pe op=mul m=1 n=1 {const}=0.0 src0={S:#x} dst={S + 0x300:#x}\n"
        f"4 vector pe op=add m=1 n=1 {const}=1.0 src0={S + 0x300:#x} dst={S + 0x300:#x}\n"
        f"5 vector pe op=mul m=1 n=32 {const}=0.0 src0={S:#x} dst={S + 0x500:#x}\n"
        f"6 vector pe op=add m=1 n=32 {const}=0.5 src0={S + 0x500:#x} dst={S + 0x500:#x}\n"
        f"7 vector pe op=mul m=1 n=32 {const}=2.0 src0={S:#x} dst={S + 0x100:#x}\n"
        f"8 exp exp m=1 n={exp_n} src0={exp_src:#x} dst={S + 0x200:#x} flags=stream deps=7\n"
        f"9 matmul pe m=32 n=1 k=1 flags=scale_rows,stream src2={S + 0x500:#x}"
        f" src0={S + 0x200:#x} src1={S + 0x300:#x} dst={S + 0x400:#x} deps=8\n"
        f"10 store dma0 tensor=O m=1 n=64 src0={S + 0x400:#x} dst=0x1000 deps=9\n"
    )


def test_streamed_chain_with_fused_rescale_is_exact_in_every_order(tmp_path: Path) -> None:
    x = np.arange(32, dtype=np.float32) / 32
    expected = 0.5 + np.exp(2 * x)
    for out in _numeric(tmp_path, _chain(S + 0x100)):
        assert np.allclose(out[0], expected, rtol=1e-6)


def test_a_stream_reading_ahead_of_its_producer_fails(tmp_path: Path) -> None:
    # The exp reads the scaled row 8 elements (one granule) further on: its granule c needs
    # the producer's granule c + 1, so a run-ahead order reads elements not yet written.
    outs = _numeric(tmp_path, _chain(S + 0x110, exp_n=24))
    assert any(not np.all(np.isfinite(out[0, :24])) for out in outs)


@pytest.mark.parametrize("granularity", [None, 8])
def test_a_streamed_reduction_waits_for_the_whole_block_or_fails(
    tmp_path: Path, granularity: int | None
) -> None:
    # A row sum consumes every element of its row before it has a result: streamed from a
    # split producer it reads past the first granule.
    body = (
        f"0 load dma0 tensor=X m=1 n=64 src0=0x0 dst={S:#x}\n"
        f"1 exp exp m=1 n=32 src0={S:#x} dst={S + 0x100:#x} deps=0\n"
        f"2 vector pe op=rowsum m=1 n=32 src0={S + 0x100:#x} dst={S + 0x200:#x} flags=stream"
        " deps=1\n"
        f"3 store dma0 tensor=O m=1 n=2 src0={S + 0x200:#x} dst=0x1000 deps=2\n"
    )
    trace = tmp_path / "r.trace.txt"
    trace.write_text(NUMERIC_HEADER + body)
    header, records = read_text(trace)
    sums = []
    for order in adversarial_orders(header.engines):
        ex = ReferenceExecutor(header, _machine())
        ex.tensor("X")[...] = np.arange(32, dtype=np.float32) / 32
        ex.run(records, order, granularity=granularity)
        sums.append(float(ex.tensor("O")[0, 0]))
    expected = float(np.exp(np.arange(32, dtype=np.float32) / 32).sum())
    if granularity is None:
        assert sums == pytest.approx([expected] * len(sums), rel=1e-6)
    else:
        assert any(not np.isfinite(s) for s in sums)
