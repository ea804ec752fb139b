"""SystemC from Python (docs/python-systemc.md): the paper's platform with a user's C++ memory
and a Python traffic generator bound to its DMA interconnect, statistics checked against the
components' timing formulas; the request records' layout shared with C++."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests import python_systemc_jobs as jobs
from tlm_models.errors import UserError
from tlm_models.systemc import REQUEST_DTYPE, TLM_OK_RESPONSE, requests, run_in_worker
from tlm_models.systemc.request_chunks import ChunkFeeder

NS = 1000  # ps
ROOT = Path(__file__).resolve().parent.parent

# attenio.yaml: dma_noc 256 B per 1 ns cycle, 1 ns per hop; hbm 16 channels x 8 GB/s, 256 B
# interleave, 100 ns latency. One 256 B read of an idle channel, issued at t (interconnect.md,
# hbm.md): link xfer = ceil(256 / 256) x 1 ns = 1 ns, the HBM sees it at t + 1 ns and is ready
# at t + 1 + 256 B / 8 GB/s + 100 = t + 133 ns, done = max(t + 133, t + 1 + 1) + 1 = t + 134 ns.
READ_NS = 1 + 256 // 8 + 100 + 1
# The user's PacedMemory (tests/data/systemc/paced_memory.h), 20 ns + ceil(512 / 64) x 1 ns:
# link xfer 2 ns, seen at t + 1, ready at t + 1 + 28, done = max(t + 29, t + 1 + 2) + 1.
WRITE_NS = 1 + 20 + 512 // 64 + 1


@pytest.fixture(scope="module")
def paper_run() -> dict[str, Any]:
    result: dict[str, Any] = run_in_worker(jobs.paper_platform_with_user_modules, timeout=900)
    return result


@pytest.mark.slow  # cling compiles the models in the worker: seconds of CPU
def test_python_traffic_and_a_user_memory_on_the_paper_platform(paper_run: dict[str, Any]) -> None:
    stats = paper_run["stats"]
    reads_done = [(i + 1) * READ_NS * NS for i in range(16)]
    writes_start = reads_done[-1] + jobs.GAP_PS
    writes_done = [writes_start + (i + 1) * WRITE_NS * NS for i in range(8)]
    # One request in flight: each issues when the previous completed (the first write at the
    # time the generator computed from the reads' results).
    assert paper_run["read_done_ps"] == reads_done
    assert paper_run["read_status"] == [TLM_OK_RESPONSE] * 16
    assert paper_run["write_done_ps"] == writes_done
    assert paper_run["end_ns"] == paper_run["again_ns"] == writes_done[-1] / NS == 2484
    # run("1 us") stopped at 1 us, then run() went on. The 8th read was issued at 7 x 134 ns
    # and, loosely timed, counted when its b_transport returned (completion 8 x 134 > 1000).
    assert paper_run["partial_ns"] == 1000
    assert paper_run["partial_requests"] == 8
    assert {k: stats[f"gen/{k}"] for k in ("requests", "reads", "writes", "errors", "chunks")} == {
        "requests": 24, "reads": 16, "writes": 8, "errors": 0, "chunks": 2,
    }  # fmt: skip
    assert stats["gen/bytes_read"] == 16 * 256
    assert stats["gen/bytes_written"] == 8 * 512
    assert stats["gen/first_issue"] == 0
    assert stats["gen/last_completion"] == 2484
    assert stats["gen/latency_max"] == READ_NS
    # The HBM served the reads on 16 channels (the 256 B interleave), one each.
    assert (stats["hbm/reads"], stats["hbm/bytes_read"], stats["hbm/writes"]) == (16, 4096, 0)
    assert [stats[f"hbm/channel{c}/bytes_read"] for c in range(16)] == [256] * 16
    # The user's memory saw the writes relative to its window.
    assert (stats["mem/writes"], stats["mem/reads"], stats["mem/bytes"]) == (8, 0, 4096)
    assert stats["mem/last_address"] == 7 * 512
    # The platform's own initiators stayed idle.
    assert stats["sram/bytes_read"] == stats["sram/bytes_written"] == 0


@pytest.mark.slow  # cling compiles the models in the worker: seconds of CPU
def test_the_platform_and_the_users_modules_are_all_there(paper_run: dict[str, Any]) -> None:
    assert paper_run["modules"] == sorted(
        ["hbm", "sram", "kvbuf", "dma_noc", "compute_noc", "dma", "pe", "exp", "mem", "gen"]
    )


@pytest.mark.slow  # cling compiles the models in the worker: seconds of CPU
def test_request_records_have_the_cpp_layout(paper_run: dict[str, Any]) -> None:
    fields = REQUEST_DTYPE.fields
    assert fields is not None
    expected = {name: fields[name][1] for name in REQUEST_DTYPE.names or ()}
    assert paper_run["layout"] == {**expected, "itemsize": REQUEST_DTYPE.itemsize}


class _Recorder:
    """Stands in for the C++ generator: records what the feeder hands over."""

    def __init__(self) -> None:
        self.fed: list[tuple[int, int]] = []

    def feed(self, address: int, count: int) -> None:
        self.fed.append((address, count))


def test_feeder_skips_empty_chunks_and_ends_with_zero() -> None:
    recorder = _Recorder()
    chunk = requests([0, 64], 64)
    feeder = ChunkFeeder("gen", recorder, [requests([], 64), chunk])
    assert feeder() == 1
    assert recorder.fed == [(chunk.ctypes.data, 2)]  # the caller's array itself: results land in it
    assert feeder() == 0
    assert feeder.error is None


def test_feeder_keeps_errors_for_the_caller() -> None:
    def broken() -> Any:
        yield requests([0], 64)
        raise ValueError("pattern exhausted")

    feeder = ChunkFeeder("gen", _Recorder(), broken())
    assert feeder() == 1
    assert feeder() == -1
    assert isinstance(feeder.error, ValueError)

    zero = ChunkFeeder("gen", _Recorder(), requests([0, 64], [64, 0]))
    assert zero() == -1
    assert isinstance(zero.error, UserError)
    assert str(zero.error) == (
        "traffic generator 'gen': traffic chunk 0, request 1: length must be at least 1 B"
    )


def test_other_record_layouts_are_converted() -> None:
    plain = np.zeros(2, dtype=[("address", "<u8"), ("length", "<u4")])
    plain["length"] = 32
    recorder = _Recorder()
    assert ChunkFeeder("gen", recorder, plain)() == 1
    assert recorder.fed[0][1] == 2
    lacking = ChunkFeeder("gen", _Recorder(), np.zeros(1, dtype=[("address", "<u8")]))
    assert lacking() == -1
    assert "lack field(s) length" in str(lacking.error)


@pytest.mark.slow  # cling compiles the models in the worker: seconds of CPU
def test_failures_and_refusals_name_their_cause() -> None:
    out = run_in_worker(jobs.failures_and_refusals, timeout=900)
    assert out == {
        "no_module": "socket 'pi.socket': no module 'pi'",
        "index": "socket 'noc.in[2]': noc.in binds in index order; the next free one is [1]",
        "bound": "socket 'hbm.target' is bound already",
        "role": "socket 'noc.in' is a target socket: bind(initiator, target)",
        "taken": "module name 'gen' is taken by another module",
        "second": (
            "this process has elaborated a SystemC simulation already and SystemC elaborates "
            "once per process: run each Simulation in its own process "
            "(tlm_models.systemc.run_in_worker)"
        ),
        # The generator's exception stopped the simulation and came back from run().
        "raised": "pattern ran out",
        "py_requests": 4,
        "gen_requests": 4,  # the platform file's generator, with its override applied
        "rerun": "the simulation has stopped: SystemC cannot start again in this process",
    }


def test_composing_loads_no_systemc_until_it_is_needed() -> None:
    # The platform is validated in the caller; cppyy loads on the first call that needs it.
    code = (
        "import sys, tlm_models\n"
        "plat = 'platforms/attenio.yaml'\n"
        "sim = tlm_models.systemc.Simulation(plat, overrides=['hbm.channels=8'])\n"
        "assert sim.config.components['hbm'].params['channels'] == 8\n"
        "from tlm_models import Platform\n"
        "sim = tlm_models.systemc.Simulation(Platform.load(plat), overrides=['hbm.channels=4'])\n"
        "assert sim.config.components['hbm'].params['channels'] == 4\n"
        "assert 'cppyy' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr


def test_a_callable_is_called_until_it_returns_none() -> None:
    left = [requests([0], 64), requests([64, 128], 64)]
    recorder = _Recorder()
    feeder = ChunkFeeder("gen", recorder, lambda: left.pop(0) if left else None)
    assert [feeder(), feeder(), feeder()] == [1, 1, 0]
    assert [count for _, count in recorder.fed] == [1, 2]
