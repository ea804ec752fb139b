"""Input of the replayer: chunks are read where they lie (NativeSession.feed lends them), so
the session must keep every chunk alive until its records have been read, and let go of it
after; the result must not depend on how the records were chunked."""

from __future__ import annotations

from pathlib import Path

from tests.replay_input_jobs import feed_refusals, replay_in_fresh_chunks
from tlm_models.dataflows import emit
from tlm_models.platform import load_platform
from tlm_models.run.worker import run_in_worker
from tlm_models.trace.io import write_trace
from tlm_models.workload.spec import Workload

PLATFORM = str(Path(__file__).resolve().parent.parent / "platforms" / "attenio.yaml")


def test_lent_chunks_live_until_read_and_not_longer(tmp_path: Path) -> None:
    trace = tmp_path / "attenio.bin"
    emitted = emit("attenio", Workload(seq_len=512, head_dim=64), load_platform(PLATFORM).info())
    count = write_trace(trace, emitted.header, emitted.chunks, "binary")
    small = run_in_worker(replay_in_fresh_chunks, str(trace), PLATFORM, 97, timeout=300)
    whole = run_in_worker(replay_in_fresh_chunks, str(trace), PLATFORM, 1 << 20, timeout=300)
    assert small["failure"] is None and small["finished"]
    assert small["chunks"] == -(-count // 97) > 10
    assert small["unread_but_freed"] == 0
    # Only chunks not read in full are kept: the one being read, and the one just fed.
    assert small["most_held"] <= 2
    assert whole["chunks"] == 1
    assert small["result"] == whole["result"]


def test_arrays_the_replayer_cannot_read_in_place_are_refused() -> None:
    said = run_in_worker(feed_refusals, PLATFORM, timeout=120)
    assert said == ["feed takes C-contiguous arrays of 64-byte trace records"] * 2
