"""What a run will cost before it starts: operations, expected wall time and a roofline floor
of its simulated time.

Operations, MACs, exps, the bytes loads and stores move and the emitter's loops come from
running the dataflow's emitter in counting mode (loops cost O(1) each, no records are built).
Counting a large trace can itself take seconds (FLAT's per-phase Python), so it has a time
budget: past it, the trace at N/2, N/4, ... is counted and scaled up by the growth exponents
measured between the two largest sizes that fit the budget.

The wall time is a sum of terms with a meaning (docs/study.md, "Predicted wall time", has the
measurements behind each constant and the predictions against measured runs):

    start-up (once per process) + run + tiles x per tile
        + simulated x (loops x per loop + ops / rate + bytes moved / DMA rate)

``rate`` is the tiled replay's when the platform has tiles (every tile's replayer meets the
others at the issue gate); ``simulated`` the part of the trace fast-forward is expected to
simulate on one array (fast_forward/expected.py; 1 on tiles and with ``--exact``). The
constants are CPU seconds measured on the 2-core development machine (``tools/bench_cost.py``:
least squares over the worker CPU time of 72 runs of 38 configurations, every dataflow, 1-16
tiles, 192 to 29 M operations, fast-forwarded or not, at the part they simulated). On a
machine shared with other work every term stretches by ``machine_stretch``: the share of a
core this process gets now.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, replace
from typing import TextIO

from tlm_models.dataflows import emit
from tlm_models.dataflows.builder import CountBudgetExceeded, OpCount, counting_ops
from tlm_models.errors import UserError
from tlm_models.fast_forward.control import IterationControl, settings_for
from tlm_models.fast_forward.expected import expected_simulated_iterations
from tlm_models.platform.info import PlatformInfo
from tlm_models.run.config import RunConfig
from tlm_models.run.resolve import ResolvedRun
from tlm_models.units import format_count, format_duration, format_ns
from tlm_models.workload.spec import Workload

__all__ = [
    "CONTENTION_WINDOW_S",
    "DMA_BYTES_PER_S",
    "LARGE_RUN_S",
    "LOOP_S",
    "OPS_PER_S",
    "RUN_S",
    "STARTUP_S",
    "TILED_OPS_PER_S",
    "TILE_S",
    "CostEstimate",
    "announce",
    "contention",
    "estimate_cost",
    "machine_stretch",
    "predicted_run_s",
    "roofline_ns",
]

#: Starting the worker processes' forkserver, once per process: it loads SystemC and the
#: compiled models before the first worker forks (the command's CPU time from its announcement
#: to its exit less one more run's, on a 138-operation run: 0.27-0.44 s at load 3.5-5.3).
STARTUP_S = 0.35
#: Each run: forking its worker, the simulation's set-up and the result's composition and
#: hand-over (one more 138-operation run in a worker, the forkserver up: 0.22 s of CPU).
RUN_S = 0.2
#: Each tile of a tiled platform: its components elaborated, its replayer bound, its share
#: emitted and its statistics read and composed (a 192-operation run on 1-16 tiles: 40-150 ms).
TILE_S = 0.0101
#: Each loop of the dataflow's emitter (``TraceBuilder.repeat``): its template, offsets and
#: chunks built in Python (GPT-3's 96 heads of FlashAttention-2 emit 6,048 loops of 94
#: operations each; their emission, not their replay, is most of the run).
LOOP_S = 119e-6
#: Operations per second of a one-array run: emitting and replaying each record (AttenIO at
#: d = 64, 2.13 M operations in 40 loops: 1.07 s of CPU in the worker).
OPS_PER_S = 2.06e6
#: The same on a tiled platform: every tile's replayer issues through the gate that orders
#: the tiles at the shared components (attenio-x16, 8.5 M operations: 5.25-5.79 s of CPU).
TILED_OPS_PER_S = 1.61e6
#: Bytes the loads and stores of a trace move per second of simulation: each DMA burst (8 KiB on
#: the AttenIO platforms) is a transaction through the interconnects and the memory (Standard
#: attention at 64K moves 53 kB per operation: 0.42 s of CPU for 27 k operations).
DMA_BYTES_PER_S = 15.6e9
#: Runs predicted to take longer than this get a warning before they start.
LARGE_RUN_S = 120.0
#: Smallest sequence length counted when scaling a count up.
_MIN_COUNTED_N = 256


@dataclass(frozen=True)
class CostEstimate:
    """Predicted size of one run. ``counted_at`` is the length the count ran at (== seq_len,
    the longer of Nq and Nk, when exact); ``roofline_ns`` the simulated time if the busiest of
    compute, exp and off-chip bandwidth ran at peak the whole time (a floor of the simulated
    time); ``tiles`` the platform's compute tiles (0: an untiled platform, one array)."""

    ops: int
    macs: int
    exps: int
    counted_at: int
    seq_len: int
    roofline_ns: float
    loops: int = 0
    tiles: int = 0
    moved_bytes: int = 0
    #: The part of the trace the run is expected to simulate (fast-forward skips the rest).
    simulated: float = 1.0

    @property
    def exact(self) -> bool:
        return self.counted_at == self.seq_len

    @property
    def rate(self) -> float:
        """Operations emitted and replayed per second (the tiled replay's on tiles)."""
        return TILED_OPS_PER_S if self.tiles else OPS_PER_S

    def terms(self) -> dict[str, float]:
        """The run's predicted wall time by term (seconds; the module doc has the model)."""
        return {
            "run": RUN_S,
            "tiles": TILE_S * self.tiles,
            "loops": LOOP_S * self.loops * self.simulated,
            "ops": self.ops * self.simulated / self.rate,
            "dma": self.moved_bytes * self.simulated / DMA_BYTES_PER_S,
        }

    @property
    def wall_s(self) -> float:
        """Expected wall time of the run in a worker, the worker's start-up included (what
        one configuration of a sweep costs; ``attn-tlm run`` adds the forkserver's start)."""
        return sum(self.terms().values())

    def describe(self, startup_s: float = 0.0, stretch: float = 1.0) -> str:
        """``573 k ops, about 1.9 s (start-up 0.6 s, 4 tiles 0.0 s, 6,048 emitter loops 0.9 s,
        operations 0.3 s at 1.6 M ops/s); simulated time ≥ 107 ms (roofline)`` with
        ``startup_s`` of the process's start-up before the run; a ``stretch`` above 1 (the
        machine's load, ``machine_stretch``) multiplies the total, and the idle terms follow
        it: ``about 5.3 s (1.9 s idle, x2.8 for the machine's load now: start-up ...)``.
        A run expected to be fast-forwarded says how much of its trace it simulates."""

        how = "" if self.exact else f" (scaled from a count at N = {self.counted_at:,})"
        terms = self.terms()
        tiles = f"{self.tiles} tiles {format_duration(terms['tiles'])}, " if self.tiles else ""
        part = f"fast-forward simulating {self.simulated:.0%} of " if self.simulated < 1.0 else ""
        idle = format_duration(startup_s + self.wall_s)
        total = f"{idle} ("
        if stretch > 1.0:
            total = (
                f"{format_duration((startup_s + self.wall_s) * stretch)} ({idle} idle, "
                f"x{stretch:.1f} for the machine's load now: "
            )
        return (
            f"{'' if self.exact else '≈ '}{format_count(self.ops)} ops{how}, about {total}start-up "
            f"{format_duration(startup_s + terms['run'])}, {tiles}{part}{self.loops:,} emitter "
            "loops "
            f"{format_duration(terms['loops'])}, operations {format_duration(terms['ops'])} at "
            f"{self.rate / 1e6:.1f} M ops/s, DMA {format_duration(terms['dma'])}); simulated "
            f"time ≥ {format_ns(self.roofline_ns)} (roofline)"
        )


#: Wall time over which the share of a core this process gets is measured (spinning when the
#: cost estimate took less).
CONTENTION_WINDOW_S = 0.05
#: A process younger than this has spent its life starting up (imports, reading platforms):
#: CPU-bound work whose pace tells the share of a core it gets.
YOUNG_PROCESS_S = 10.0


def _clocks() -> tuple[float, float]:
    """This process's wall and CPU clocks (seconds)."""
    return time.perf_counter(), time.process_time()


def _busy_cores_s() -> float | None:
    """CPU seconds the machine's cores have been busy since boot (``/proc/stat``; None where
    it cannot be read)."""
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()
        user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[1:9])
        return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return None


def _spin(since: tuple[float, float], window_s: float) -> tuple[float, float]:
    """Keeps this process busy until ``window_s`` of wall time have passed since ``since``;
    the wall and CPU seconds since then."""
    start_wall, start_cpu = since
    wall, cpu = _clocks()
    while wall - start_wall < window_s:
        wall, cpu = _clocks()
    return wall - start_wall, cpu - start_cpu


def _process_age() -> tuple[float, float] | None:
    """Wall and CPU seconds since this process started (None where unknown)."""
    import psutil

    try:
        process = psutil.Process()
        wall = time.time() - process.create_time()
        times = process.cpu_times()
    except psutil.Error:
        return None
    return wall, times.user + times.system


def contention(since: tuple[float, float] | None = None) -> float:
    """Wall seconds per CPU second this process gets now (at least 1): how many times longer
    than on an idle core CPU-bound work takes. Measured over the CPU-bound work since
    ``since`` (``_clocks()`` at its start: ``announce`` passes the cost estimate's count);
    when that lasted less than CONTENTION_WINDOW_S, over this process's life if it started
    less than YOUNG_PROCESS_S ago (a command: its imports and set-up, CPU-bound too), else
    by spinning until the window has passed. The load average would lag by a minute: at the
    same load average of 5 on 2 cores, commands took 2.7x and 1.3x their CPU time, a few
    minutes apart (docs/study.md)."""
    start = since or _clocks()
    wall, cpu = _clocks()
    wall, cpu = wall - start[0], cpu - start[1]
    if wall < CONTENTION_WINDOW_S:
        age = _process_age()
        if age is not None and CONTENTION_WINDOW_S <= age[0] <= YOUNG_PROCESS_S:
            wall, cpu = age
        else:
            wall, cpu = _spin(start, CONTENTION_WINDOW_S)
    return max(1.0, wall / cpu) if cpu > 0 else 1.0


def machine_stretch(jobs: int = 1, since: tuple[float, float] | None = None) -> float:
    """How many times longer than on an idle machine ``jobs`` simulations about to start take
    now. One job: ``contention``. Several share the cores with each other and with the other
    processes: those are ``contention`` x cores - 1 runnable ones when this process got less
    than a core, else the cores' busy time besides this process's over a 0.2 s spin
    (``/proc/stat``; none where it cannot be read)."""
    if jobs <= 1:
        return contention(since)
    cores = os.cpu_count() or 1
    start, busy = _clocks(), _busy_cores_s()
    wall, cpu = _spin(start, 4 * CONTENTION_WINDOW_S)
    share = max(1.0, wall / cpu) if cpu > 0 else 1.0
    after = _busy_cores_s()
    if share > 1.05:  # less than a core: the cores are all taken, shared evenly
        others = share * cores - 1
    elif busy is not None and after is not None:
        others = min(cores - 1.0, max(0.0, (after - busy - cpu) / wall))
    else:
        others = 0.0
    return max(1.0, (others + jobs) / cores)


def roofline_ns(info: PlatformInfo, macs: float, exps: float, offchip_bytes: float) -> float:
    """The simulated time if the busiest resource ran at its peak throughout (ns)."""
    compute = macs / (info.pe_rows * info.pe_cols * info.pe_clock_hz)
    exp = exps / (info.exp_lanes * info.exp_clock_hz)
    memory = offchip_bytes / info.offchip_bandwidth if info.offchip_bandwidth > 0 else 0.0
    return max(compute, exp, memory) * 1e9


def _tile_infos(run: ResolvedRun) -> tuple[PlatformInfo, ...]:
    """Each compute tile's figures (one for an untiled platform), from the resolved platform."""
    if run.platform.tiles is None:
        return (run.info,)
    return tuple(run.platform.tile_info(i) for i in range(run.platform.tile_count))


def _length(config: RunConfig) -> int:
    """The length a count scales: the longer of Nq and Nk."""
    return max(config.seq_len, config.kv_len)


def _workload_at(run: ResolvedRun, length: int) -> Workload:
    """The run's workload with Nq and Nk scaled by ``length / _length(config)`` (a sliding
    window kept within the keys), for a count at a smaller size: the run's own at full size."""
    config, full = run.config, _length(run.config)
    if length == full:
        return run.workload
    nq = max(1, config.seq_len * length // full)
    nk = max(1, config.kv_len * length // full)
    if config.mask != "none":
        nk = max(nk, nq)
    window = min(config.window, nk) if config.mask == "sliding" else 0
    return replace(run.workload, seq_len=nq, kv_len=nk, window=window)


def _count(
    run: ResolvedRun, infos: tuple[PlatformInfo, ...], length: int, budget_s: float
) -> tuple[OpCount, IterationControl | None]:
    """The operations of every tile's share (each tile emits its own trace), and the first
    tile's loop iterations (None when its dataflow marks none)."""
    workload = _workload_at(run, length)
    iterations = None
    with counting_ops(budget_s) as count:
        for tile, info in enumerate(infos):
            emitted = emit(run.config.dataflow, workload, info, params=run.params)
            for _ in emitted.chunks:
                pass
            if tile == 0:
                iterations = emitted.iterations
    return count, iterations


def _simulated_fraction(
    run: ResolvedRun, iterations: IterationControl | None, roofline: float
) -> float:
    """The part of the trace a run on one array is expected to simulate: fast-forward's
    (fast_forward/expected.py; ``roofline``, the run's floor in ns, gives its iterations' least
    time) where its period rule applies, else all of it. On tiles the whole trace: the chip's
    statistics are watched at a Python cost of their own, about what the skip saves
    (docs/study.md: GPT-3 at 8K on four tiles simulates half its iterations and takes 1.2x
    the CPU time of ``--exact``)."""
    config = run.config
    if run.platform.tiles is not None or config.exact or iterations is None:
        return 1.0
    if iterations.total == 0:
        return 1.0
    settings = settings_for(
        run.platform, config.ff_error_bound, config.ff_max_fraction, config.ff_policy
    )
    if settings.statistical is not None:
        return 1.0  # a bank-level memory's sampled periods: no estimate from the kinds
    iteration_ps = roofline * 1e3 / iterations.total
    return expected_simulated_iterations(iterations, settings, iteration_ps) / iterations.total


def estimate_cost(run: ResolvedRun, budget_s: float = 0.5) -> CostEstimate:
    """Predicted operations, MACs, exps and roofline time of ``run`` (see the module doc).

    Raises what the emitter raises for a configuration that cannot run (a UserError)."""
    from tlm_models.run.execute import bounds_bytes

    config = run.config
    infos = _tile_infos(run)
    info = infos[0]
    n = _length(config)
    counts: list[tuple[int, tuple[OpCount, IterationControl | None]]] = []
    while n >= 1:
        try:
            # Each tile's share is counted: the budget grows with them, so that a tiled
            # run is counted at the same length as an untiled one would be.
            budget = budget_s * len(infos) if n > _MIN_COUNTED_N else 60.0
            counts.append((n, _count(run, infos, n, budget)))
        except CountBudgetExceeded:
            n //= 2
            continue
        except UserError:
            if not counts:  # the configuration itself cannot run: the run says why
                raise
            break  # a tiling that does not plan at the smaller size: one count it is
        if n == _length(config) or len(counts) == 2:
            break
        n //= 2  # a second, smaller count measures how the trace grows
    at, (count, iterations) = counts[0]
    smaller = counts[1][1][0] if len(counts) == 2 else None
    # Attention's work grows as N^2 unless two counts say otherwise; its loops as N (a loop
    # per block row or block) unless they say otherwise.
    factor = _length(config) / at
    scale = _growth(factor, count.ops, smaller.ops if smaller else 0, 2.0, lowest=1.0)
    loop_scale = _growth(factor, count.loops, smaller.loops if smaller else 0, 1.0, lowest=0.0)
    moved_scale = _growth(factor, count.moved, smaller.moved if smaller else 0, 2.0, lowest=1.0)
    bounds = bounds_bytes(run.workload, info, config.dataflow, run.params)
    macs, exps = count.macs * scale, count.exps * scale
    # The tiles' compute rates add up; the off-chip bandwidth is shared (info's is all).
    roofline = roofline_ns(
        info, macs / len(infos), exps / len(infos), bounds.get("closed_form", 0.0)
    )
    return CostEstimate(
        ops=round(count.ops * scale),
        macs=round(macs),
        exps=round(exps),
        counted_at=at,
        seq_len=_length(config),
        roofline_ns=roofline,
        loops=round(count.loops * loop_scale),
        moved_bytes=round(count.moved * moved_scale),
        tiles=run.platform.tile_count if run.platform.tiles is not None else 0,
        # At a smaller count's length the fraction is larger (its loop is shorter): it errs
        # towards the whole trace.
        simulated=_simulated_fraction(run, iterations, roofline),
    )


def _growth(factor: float, counted: int, half: int, exponent: float, lowest: float) -> float:
    """How much a figure counted at a length grows at ``factor`` times that length: by the
    exponent measured between its count there (``counted``) and at half the length (``half``,
    0 when not counted; the exponent kept within ``lowest``-3), else by ``exponent``."""
    if factor == 1.0:
        return 1.0
    if half > 0 and counted > 0:
        exponent = min(3.0, max(lowest, math.log(counted / half, 2)))
    return float(factor**exponent)


def predicted_run_s(run: ResolvedRun) -> float:
    """A sweep's cost weight of ``run``: its predicted wall time in a worker, in seconds (a
    shorter count budget than a single run's: a sweep estimates every configuration before
    its ETA shows)."""
    return estimate_cost(run, budget_s=0.2).wall_s


def announce(run: ResolvedRun, stream: TextIO) -> CostEstimate:
    """Prints the predicted cost of ``run`` and, when it is long, a warning (``attn-tlm run``
    and ``simulate(progress=True)``); returns the estimate for the progress bar. The first
    run of a process also starts the workers' forkserver: its start-up is counted in."""
    from tlm_models.run.worker import forkserver_started

    since = _clocks()
    cost = estimate_cost(run)
    startup = 0.0 if forkserver_started() else STARTUP_S
    stretch = machine_stretch(1, since)  # the count is CPU-bound: it measures the machine
    print(f"predicted: {cost.describe(startup, stretch)}", file=stream, flush=True)
    wall = (startup + cost.wall_s) * stretch
    if wall > LARGE_RUN_S:
        print(
            f"attn-tlm: warning: a large run (about {format_duration(wall)}); Ctrl-C stops it",
            file=stream,
            flush=True,
        )
    return cost
