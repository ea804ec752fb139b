"""A small but complete simulation: the default platform replaying a short AttenIO trace.

A quick health check of the whole path (elaboration, every engine, the replayer, statistics)
and the job the start-up benchmark times.
"""

from __future__ import annotations

from pathlib import Path

from tlm_models.dataflows import emit
from tlm_models.platform import load_platform
from tlm_models.replay.replayer import ReplayOutput, TimelineWindow, replay_in_this_process
from tlm_models.workload.spec import Workload

DEFAULT_PLATFORM = Path(__file__).resolve().parent.parent.parent / "platforms" / "attenio.yaml"


def smoke_replay(platform: Path = DEFAULT_PLATFORM, seq_len: int = 256) -> ReplayOutput:
    """Replays AttenIO at N = ``seq_len``, d = 64 on ``platform`` in this process."""
    config = load_platform(platform)
    emitted = emit("attenio", Workload(seq_len=seq_len, head_dim=64), config.info())
    return replay_in_this_process(
        config, emitted.header, emitted.chunks, timeline=TimelineWindow(0.0, 1e3, 64)
    )


def smoke_summary() -> dict[str, float]:
    """The smoke replay's headline figures as plain data (a worker job)."""
    out = smoke_replay()
    stats = out.replay["stats"]
    return {
        "sim_time_ns": float(stats["sim_time"]["value"]),
        "ops": float(out.ops),
        "offchip_read": float(stats["offchip_read"]["value"]),
        "offchip_write": float(stats["offchip_write"]["value"]),
    }
