"""Progress of one simulation on stderr: operations replayed against the predicted count,
simulated time against the roofline estimate, replay speed and ETA.

The worker process reports (simulated ns, operations read) from the slices its replay loop
already runs in (``tlm_models.replay.replayer.report_progress_to``), at most a few times a
second; this side turns them into a tqdm bar on a terminal and stays silent otherwise (pipes,
``--json``).
Before the first report the line says what the worker is doing (starting, emitting).
"""

from __future__ import annotations

from dataclasses import dataclass

from tlm_models.terminal.progress import TerminalProgress
from tlm_models.units import format_count, format_duration, format_ns

__all__ = ["SimulationProgress"]


@dataclass
class SimulationProgress(TerminalProgress):
    """``expected_ops`` and ``roofline_ns`` come from the cost estimate (0 = unknown)."""

    label: str
    expected_ops: int = 0
    roofline_ns: float = 0.0
    sim_ns: float = 0.0
    ops: int = 0
    _first: tuple[float, int] | None = None  # (time, ops) of the first report
    _last: tuple[float, int] | None = None

    def rate(self) -> float | None:
        """Operations per second since the first report (the start-up is not replay)."""
        if self._first is None or self._last is None:
            return None
        seconds = self._last[0] - self._first[0]
        return (self._last[1] - self._first[1]) / seconds if seconds > 0 else None

    def eta(self) -> float | None:
        """Seconds left at the measured rate, counting down since the last report."""
        rate = self.rate()
        if not rate or not self.expected_ops or self._last is None:
            return None
        left = max(0, self.expected_ops - self.ops) / rate
        return max(0.0, left - (self.timer() - self._last[0]))

    def fraction(self) -> float | None:
        if not self.expected_ops:
            return None
        return min(1.0, self.ops / self.expected_ops)

    def status(self) -> str:
        """The whole status line: operations, then ``details``."""
        if self._last is None:
            return self.details()
        ops = format_count(self.ops)
        ops += f"/{format_count(self.expected_ops)} ops" if self.expected_ops else " ops"
        return f"{ops}, {self.details()}"

    def details(self) -> str:
        """What the bar shows after the operation count: simulated time against the roofline
        floor, speed and ETA (before the first report: that the worker is starting)."""
        elapsed = self.elapsed()
        if self._last is None:
            return f"starting the simulator and emitting the trace, {format_duration(elapsed)}"
        sim = f"simulated {format_ns(self.sim_ns)}"
        if self.roofline_ns:
            sim += f" (roofline ≥ {format_ns(self.roofline_ns)})"
        parts = [sim]
        rate = self.rate()
        if rate:
            parts.append(f"{format_count(rate)} ops/s")
        eta = self.eta()
        parts.append(f"ETA {format_duration(eta)}" if eta is not None else "ETA: measuring")
        return ", ".join(parts)

    def update(self, sim_ns: float, ops: int) -> None:
        """A report from the worker."""
        now = self.timer()
        self.sim_ns, self.ops = sim_ns, ops
        if self._first is None:
            self._first = (now, ops)
        self._last = (now, ops)
        self.tick()

    def tick(self) -> None:
        """Redraws at most twice a second (called while waiting for the worker)."""
        if not self.interactive or self.timer() - self._last_draw < 0.5:
            return
        self._last_draw = self.timer()
        if self._bar is None:
            from tqdm import tqdm

            # tqdm writes ", " before the postfix (our details).
            known = "{desc}: {percentage:3.0f}%|{bar:16}| {n_fmt}/{total_fmt} ops{postfix}"
            self._bar = tqdm(
                total=self.expected_ops or None,
                file=self.stream,
                bar_format=known if self.expected_ops else "{desc}: {n_fmt} ops{postfix}",
                desc=self.label,
                unit_scale=True,
                dynamic_ncols=True,
                leave=False,
            )
        self._bar.n = min(self.ops, self.expected_ops) if self.expected_ops else self.ops
        self._bar.set_postfix_str(self.details(), refresh=True)

    def close(self) -> None:
        """Removes the bar (the summary that follows says what happened)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
