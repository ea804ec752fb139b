"""A sweep's progress on stderr: done / failed / total, elapsed time and an ETA weighted by
each configuration's predicted cost.

On a terminal a tqdm bar is redrawn about once a second; otherwise (a log file, CI) each
finished configuration prints one plain line, so logs stay readable. A configuration's cost is
its predicted wall time (run/cost.py); the ETA divides the predicted time still to run by the
rate measured on the configurations that finished (their predicted time over their own wall
time: how much faster or slower this machine runs now than the prediction assumed), so a
cheap first point does not predict an hour and an expensive one does not predict a minute.
Between events the ETA counts down.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from tlm_models.terminal.progress import TerminalProgress
from tlm_models.units import format_count, format_duration

__all__ = ["LARGE_SWEEP_S", "Progress", "format_count", "format_duration", "sweep_eta"]

#: Sweeps predicted to take longer than this get a warning.
LARGE_SWEEP_S = 1800.0


def sweep_eta(
    finished: list[tuple[float, float]],
    remaining: list[float],
    parallel: int,
    prior_rate: float,
    rate_cap: float = math.inf,
) -> float:
    """Seconds until the ``remaining`` costs are done.

    ``finished`` holds (cost, wall seconds) of finished configurations; their total cost over
    their total wall time is the rate of one job (``prior_rate`` before any finished). At most
    ``parallel`` jobs run at once, and the largest remaining job takes its own time at least.
    ``rate_cap`` bounds the rate from above (what jobs still running after a while allow).
    """
    if not remaining:
        return 0.0
    done_cost = sum(cost for cost, _ in finished)
    done_wall = sum(wall for _, wall in finished)
    rate = done_cost / done_wall if done_cost > 0 and done_wall > 0 else prior_rate
    rate = min(rate, rate_cap)
    lanes = max(1, min(parallel, len(remaining)))
    return max(sum(remaining) / (rate * lanes), max(remaining) / rate)


@dataclass
class Progress(TerminalProgress):
    """Counts finished configurations of a sweep and reports them on ``stream``.

    ``skipped`` are configurations already done before this run; they count as done but not
    toward the rate. ``costs`` maps the keys of the configurations to run to their predicted
    cost (seconds of wall time in a worker); it may fill in while the sweep runs
    (``set_costs``): until then, and for keys without a cost, every configuration costs the
    mean. ``prior_rate`` is predicted seconds per wall second before any configuration
    finished (1: as predicted).
    """

    total: int
    skipped: int = 0
    parallel: int = 1
    prior_rate: float = 1.0
    pending: list[str] = field(default_factory=list)
    done: int = 0
    failed: int = 0
    _costs: dict[str, float] = field(default_factory=dict)
    _finished: list[tuple[float, float]] = field(default_factory=list)
    _eta: tuple[float, float] | None = None  # (ETA in s, time it was computed)
    _incoming: dict[str, float] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self.done = self.skipped

    def set_costs(self, costs: Mapping[str, float]) -> None:
        """Predicted costs of the pending configurations (keys as in ``pending``). May be
        called from another thread: the costs are taken in at the next event or tick."""
        self._incoming = dict(costs)

    def _absorb(self) -> None:
        incoming, self._incoming = self._incoming, None
        if incoming:
            self._costs.update(incoming)
            self._update_eta()
            self._announce(incoming)

    def _announce(self, costs: Mapping[str, float]) -> None:
        """One line with the sweep's predicted size, and a warning when it is large."""
        total = sum(costs.values())
        wall = sweep_eta([], list(costs.values()), self.parallel, self.prior_rate)
        workers = f"{self.parallel} worker{'s' if self.parallel > 1 else ''}"
        text = (
            f"sweep: predicted {len(costs)} configurations in about {format_duration(wall)} on "
            f"{workers} ({format_duration(total)} of runs)"
        )
        if wall > LARGE_SWEEP_S:
            text += "; a large sweep: Ctrl-C stops it, the same command resumes it"
        if self._bar is not None:
            self._write(text)
        else:
            print(text, file=self.stream, flush=True)

    def _cost(self, key: str) -> float:
        if key in self._costs:
            return self._costs[key]
        known = [c for k, c in self._costs.items() if k in self.pending]
        return sum(known) / len(known) if known else self.prior_rate  # one second's worth

    def _update_eta(self) -> None:
        if not self.pending or (not self._finished and not self._costs):
            self._eta = None
            return
        remaining = [self._cost(key) for key in self.pending]
        eta = sweep_eta(self._finished, remaining, self.parallel, self.prior_rate)
        self._eta = (eta, self.timer())

    def eta(self) -> float | None:
        """Seconds left, counting down from the last estimate; None before any estimate."""
        if self._eta is None:
            return None
        eta, since = self._eta
        now = self.timer()
        if eta - (now - since) > 0 or not self.pending:
            return max(0.0, eta - (now - since))
        # Overdue: the jobs running since the last event are slower than the rate assumed.
        # Each started at or before that event, so none runs faster than its cost over the
        # time since: re-estimate at that rate (the ETA then grows while they run).
        running = [self._cost(key) for key in self.pending[: self.parallel]]
        cap = max(running) / max(now - since, 1e-9)
        remaining = [self._cost(key) for key in self.pending]
        return sweep_eta(self._finished, remaining, self.parallel, self.prior_rate, cap)

    def line(self) -> str:
        """The status text: counts, elapsed time and the ETA once there is one."""
        self._absorb()
        elapsed = self.elapsed()
        text = (
            f"sweep: {self.done}/{self.total} done, {self.failed} failed, "
            f"elapsed {format_duration(elapsed)}"
        )
        eta = self.eta()
        if self.pending and eta is not None:
            text += f", ETA {format_duration(eta)}"
        return text

    def start(self) -> None:
        """Shows the initial state (how much a resumed sweep already has)."""
        self._update_eta()
        if self.interactive:
            from tqdm import tqdm

            self._bar = tqdm(
                total=self.total,
                initial=self.done,
                file=self.stream,
                # tqdm puts ", " before the postfix: "| 3/50 done, 0 failed, elapsed ..."
                bar_format="{l_bar}{bar:20}| {n_fmt}/{total_fmt} done{postfix}",
                desc="sweep",
                dynamic_ncols=True,
                mininterval=0.5,
                leave=False,
            )
            self._draw()
        else:
            note = f" ({self.skipped} already done)" if self.skipped else ""
            print(f"sweep: {self.total} configurations{note}", file=self.stream, flush=True)

    def finished(self, label: str, ok: bool, wall_s: float, error: str = "") -> None:
        """Counts configuration ``label`` (a key of ``pending``) that finished or failed."""
        self._absorb()
        if ok:
            self.done += 1
        else:
            self.failed += 1
        if label in self.pending:
            self.pending.remove(label)
            if ok and wall_s > 0:
                self._finished.append((self._cost(label), wall_s))
        self._update_eta()
        if self._bar is not None:
            if not ok:  # a failure stays visible above the bar
                self._write(f"FAILED after {wall_s:.1f} s: {label}: {error}")
            self._bar.update(1)
            self._draw()
        else:
            status = "done" if ok else f"FAILED ({error})"
            print(
                f"{self.line()} | {status} in {wall_s:.1f} s: {label}", file=self.stream, flush=True
            )

    def tick(self) -> None:
        """Redraws the terminal line about once a second so elapsed time and ETA move."""
        self._absorb()
        if self._bar is not None and self.timer() - self._last_draw >= 1.0:
            self._draw()

    def close(self, note: str = "") -> None:
        """Ends the progress display with the final counts (and ``note``, e.g. interrupted)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        suffix = f" ({note})" if note else ""
        print(self.line() + suffix, file=self.stream, flush=True)

    def _write(self, text: str) -> None:
        from tqdm import tqdm

        tqdm.write(text, file=self.stream)

    def _draw(self) -> None:
        self._last_draw = self.timer()
        assert self._bar is not None
        status = self.line().split(" done, ", 1)[1]
        if self.eta() is None and self.pending:
            status += ", ETA: estimating"
        self._bar.set_postfix_str(status, refresh=True)
