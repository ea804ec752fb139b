"""Progress of one simulation and of command phases, driven by a fake clock."""

from __future__ import annotations

import io

import pytest

from tlm_models.run.progress import SimulationProgress
from tlm_models.terminal.phase import phase
from tlm_models.units import format_bytes, format_count, format_duration, format_ns


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_simulation_progress_rate_eta_and_countdown() -> None:
    clock = FakeClock()
    progress = SimulationProgress(
        "attenio", expected_ops=1_000_000, roofline_ns=4_000_000.0, timer=clock,
        stream=io.StringIO(),
    )  # fmt: skip
    clock.now += 3.0
    assert progress.status() == "starting the simulator and emitting the trace, 3.0 s"
    progress.update(sim_ns=0.0, ops=0)  # first report: the replay starts now
    assert progress.eta() is None and "ETA: measuring" in progress.status()
    clock.now += 2.0
    progress.update(sim_ns=2_500_000.0, ops=250_000)
    assert progress.rate() == 125_000.0
    assert progress.eta() == 6.0  # 750 k ops left at 125 k ops/s
    assert progress.fraction() == 0.25
    assert progress.status() == (
        "250 k/1.00 M ops, simulated 2.50 ms (roofline ≥ 4.00 ms), 125 k ops/s, ETA 6.0 s"
    )
    clock.now += 4.0  # no report for 4 s: the ETA keeps counting down
    assert progress.eta() == 2.0


def test_simulation_progress_is_silent_off_a_terminal() -> None:
    stream = io.StringIO()
    progress = SimulationProgress("flash2", expected_ops=10, stream=stream)
    progress.update(1.0, 5)
    progress.tick()
    progress.close()
    assert stream.getvalue() == ""


def test_simulation_progress_draws_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    clock = FakeClock()
    progress = SimulationProgress("flat", expected_ops=100, timer=clock, stream=stream)
    progress.update(10.0, 0)
    clock.now += 1.0
    progress.update(20.0, 50)
    progress.close()
    text = stream.getvalue()
    assert "flat:  50%" in text and "| 50.0/100 ops, simulated 20.0 ns" in text
    assert "50 ops/s" in text


def test_phase_is_silent_off_a_terminal() -> None:
    stream = io.StringIO()
    with phase("writing", stream):
        pass
    assert stream.getvalue() == ""


@pytest.mark.parametrize(
    ("ns", "text"),
    [(37_878_968.0, "37.9 ms"), (622_000.0, "622 µs"), (1.5, "1.50 ns"), (6.46e9, "6.46 s")],
)
def test_times_read_in_the_largest_unit(ns: float, text: str) -> None:
    assert format_ns(ns) == text


def test_sizes_counts_and_durations_are_readable() -> None:
    assert format_bytes(2 * 2**30) == "2.00 GiB"
    assert format_bytes(12_582_912) == "12.0 MiB"
    assert format_bytes(96) == "96 B"
    assert format_count(5_490_000) == "5.49 M"
    assert format_duration(4.25) == "4.2 s"
    assert format_duration(185) == "3 min 05 s"
