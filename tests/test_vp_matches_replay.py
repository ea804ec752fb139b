"""The example virtual prototype and a Python replay agree number for number.

``platforms/vp-soc.yaml`` describes the accelerator inside ``examples/vp`` (same components and
parameters, its off-chip traffic through the SoC's system bus to the SoC's memory). A trace run
by the VP — fetched by the accelerator from system memory and executed — and the same trace
replayed by ``replay_in_this_process`` on that platform give identical statistics: simulated
time, bytes read and written, busy time, stalls and operations per engine. The comparison is
exact when the command fetch does not overlap execution (``--fetch-block`` covering the whole
stream: one read, then execution); with the default streamed fetch the command reads share the
DMA's path to memory, so the counts still agree exactly and the fetch traffic is reported in its
own counters (docs/integration.md).
"""

from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.cpp_build import build_cpp_test
from tlm_models.dataflows import emit
from tlm_models.platform import load_platform
from tlm_models.replay.replayer import replay_in_this_process
from tlm_models.run.worker import run_in_worker
from tlm_models.trace.binary import read_binary, write_binary
from tlm_models.trace.header import TensorInfo, TraceHeader
from tlm_models.trace.record import RECORD_DTYPE
from tlm_models.workload.spec import Workload

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = ROOT / "platforms" / "vp-soc.yaml"
ENV = {**os.environ, "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"}
SRAM = 1 << 32
#: buffer_capacity depends on the replayer's read-ahead setting (Python 2^21 records, the
#: accelerator 2^20), not on the workload; first_start and last_done are absolute times and the
#: VP's stream starts after the driver has set it up (their difference, sim_time, is compared).
NOT_COMPARED = {"replay.buffer_capacity", "replay.first_start", "replay.last_done"}

Stats = dict[str, float | None]


def _replay_job(platform: str, trace: str) -> dict[str, Any]:
    """Runs in a worker: the Python replay of a binary trace file."""
    header, records = read_binary(trace)
    output = replay_in_this_process(load_platform(platform), header, [records])
    return output.replay


def _flatten(group: dict[str, Any], prefix: str, out: Stats) -> Stats:
    for name, stat in group["stats"].items():
        out[prefix + name] = stat["value"]
    for child in group["children"]:
        _flatten(child, f"{prefix}{child['name']}.", out)
    return out


def _vp_lines(binary: Path, trace: Path, fetch_block: int | None) -> dict[str, str]:
    cmd = [str(binary), str(trace)]
    if fetch_block is not None:
        cmd[1:1] = ["--fetch-block", str(fetch_block)]
    proc = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{cmd} failed:\n{proc.stdout}\n{proc.stderr}"
    return dict(line.split(" ", 1) for line in proc.stdout.splitlines())


def _vp_replay_stats(lines: dict[str, str], header: TraceHeader) -> Stats:
    """The VP's ``replay.*`` lines, tensors renamed from index to the trace header's names."""
    names = {f"tensor[{i}]": t.name for i, t in enumerate(header.tensors)}
    stats: Stats = {}
    for key, value in lines.items():
        if not key.startswith("replay."):
            continue
        parts = key.split(".")
        if parts[1] == "tensors":
            parts[2] = names.get(parts[2], parts[2])
        stats[".".join(parts)] = None if value == "null" else float(value)
    return stats


def _python_replay_stats(trace: Path, header: TraceHeader) -> Stats:
    replay = run_in_worker(_replay_job, str(PLATFORM), str(trace), timeout=600)
    return _flatten(replay, "replay.", {})


def _comparable(stats: Stats) -> Stats:
    """Without NOT_COMPARED and zero tensor counts: the VP lists a tensor only when it carried
    traffic (it does not know the names), the Python replay every declared one."""
    return {
        k: v
        for k, v in stats.items()
        if k not in NOT_COMPARED and not (k.startswith("replay.tensors.") and v == 0)
    }


@pytest.fixture(scope="module")
def vp_binary() -> Path:
    return build_cpp_test(ROOT / "examples" / "vp" / "main.cpp")


def _attenio_trace(path: Path) -> TraceHeader:
    emitted = emit("attenio", Workload(seq_len=256, head_dim=64), load_platform(PLATFORM).info())
    write_binary(path, emitted.header, emitted.chunks)
    return read_binary(path)[0]


def _hand_trace(path: Path) -> TraceHeader:
    """Loads, a matmul, a vector op, an exp and stores with dependencies, repeated 12 times
    (96 records: more than one default fetch block); engine list in a different order from the
    accelerator's."""
    header = TraceHeader(
        dataflow="vp-match",
        engines=["pe", "dma0", "exp", "dma1"],
        tensors=[TensorInfo("Q", 0x200000, (64, 64), 2), TensorInfo("O", 0x300000, (64, 64), 2)],
        window=16,
    )
    recs = np.zeros(8, dtype=RECORD_DTYPE)
    recs["tensor"] = 0xFF
    q, k, s, p = SRAM, SRAM + 0x2000, SRAM + 0x4000, SRAM + 0x6000
    # kind engine tensor code deps m n k src0 src1 dst src_stride dst_stride
    recs[0] = (1, 1, 0, 0, (0, 0, 0, 0), 64, 128, 0, 0x200000, 0, q, 0, 0)  # load Q (dma0)
    recs[1] = (1, 1, 0, 0, (0, 0, 0, 0), 64, 128, 0, 0x210000, 0, k, 0, 0)  # load K (dma0)
    recs[2] = (3, 0, 0xFF, 1, (1, 2, 0, 0), 64, 64, 64, q, k, s, 0, 0)  # S = Q K^T (pe)
    recs[3] = (4, 0, 0xFF, 7, (1, 0, 0, 0), 64, 64, 0, s, 0, p, 0, 0)  # rowmax (pe)
    recs[4] = (5, 2, 0xFF, 0, (2, 0, 0, 0), 64, 64, 0, s, 0, s, 0, 0)  # exp S (exp)
    recs[5] = (2, 3, 1, 0, (1, 0, 0, 0), 64, 128, 0, s, 0, 0x300000, 0, 0)  # store O (dma1)
    recs[6] = (1, 1, 0, 0, (4, 0, 0, 0), 32, 64, 0, 0x220000, 0, q, 256, 0)  # strided load
    recs[7] = (2, 3, 1, 0, (5, 2, 0, 0), 64, 64, 0, p, 0, 0x310000, 0, 0)  # store (dma1)
    write_binary(path, header, [np.tile(recs, 12)])
    return header


TRACES = {"attenio-n256": _attenio_trace, "hand-96": _hand_trace}


@pytest.mark.parametrize("name", sorted(TRACES))
def test_vp_matches_python_replay_exactly(vp_binary: Path, tmp_path: Path, name: str) -> None:
    trace = tmp_path / f"{name}.bin"
    header = TRACES[name](trace)
    count = len(read_binary(trace)[1])
    lines = _vp_lines(vp_binary, trace, fetch_block=count)  # one read, then execution
    vp = _vp_replay_stats(lines, header)
    py = _python_replay_stats(trace, header)
    assert vp["replay.failed"] == 0 and py["replay.failed"] == 0
    assert _comparable(vp) == _comparable(py)
    assert len(_comparable(py)) > 60
    assert vp["replay.ops"] == count
    # The registers the driver read are the same numbers, in whole cycles of 1 GHz.
    sim_ns = py["replay.sim_time"]
    assert sim_ns is not None and sim_ns > 0
    vp_first, vp_last = vp["replay.first_start"], vp["replay.last_done"]
    assert vp_first is not None and vp_last is not None and vp_first > 0
    assert vp_last - vp_first == sim_ns
    assert int(lines["sim_time_ps"]) == round(sim_ns * 1000)
    assert int(lines["exec_cycles"]) == math.ceil(sim_ns)
    assert int(lines["bytes_read"]) == py["replay.offchip_read"]
    assert int(lines["bytes_written"]) == py["replay.offchip_write"]
    assert int(lines["ops"]) == count
    for engine in ("dma0", "dma1", "pe", "exp"):
        busy = py[f"replay.engines.{engine}.busy_time"]
        assert busy is not None
        assert int(lines[f"busy_cycles.{engine}"]) == math.ceil(busy)
    assert int(lines["fetch_bytes"]) == 64 * count
    assert int(lines["cycles"]) >= int(lines["exec_cycles"]) + int(lines["fetch_cycles"]) - 1


def test_streamed_fetch_counts_match_and_fetch_is_reported_apart(
    vp_binary: Path, tmp_path: Path
) -> None:
    trace = tmp_path / "hand.bin"
    header = _hand_trace(trace)
    lines = _vp_lines(vp_binary, trace, fetch_block=None)  # default: 64-record blocks
    vp = _vp_replay_stats(lines, header)
    py = _python_replay_stats(trace, header)
    counted = [k for k in py if k.endswith((".ops", ".bytes", ".read", ".write"))]
    counted += ["replay.offchip_read", "replay.offchip_write", "replay.engines.pe.macs",
                "replay.engines.pe.element_ops", "replay.engines.exp.exps"]  # fmt: skip
    assert len(counted) > 10
    assert {k: vp[k] for k in counted} == {k: py[k] for k in counted}
    assert int(lines["fetch_bytes"]) == 96 * 64
    # Execution started after the first of two blocks, so the fetch overlapped it.
    assert int(lines["cycles"]) < int(lines["exec_cycles"]) + int(lines["fetch_cycles"])
