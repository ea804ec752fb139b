"""How much of a loop fast-forward is expected to simulate, known before the run (the cost
estimate, ``run/cost.py``).

The watcher skips once the per-iteration changes repeat over ``repetitions + 1`` periods after
the warm-up, and keeps a tail. Iterations whose records differ (their ``kinds``) cannot repeat
more often than the kinds do, so the kinds' own period (between the warm-up and the tail) is
the shortest the statistics can show: the expectation is warm-up + (repetitions + 1) periods
+ tail. A statistics' period longer than the kinds' makes the run longer than expected; a
loop whose kinds change midway (several regimes) is expected to run whole, though the watcher
may skip within each regime. docs/study.md compares the expectation with measured runs.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

from tlm_models.fast_forward.control import FastForwardSettings, IterationControl


def shortest_period(items: Sequence[Hashable]) -> int:
    """The smallest p with ``items[i] == items[i - p]`` for every i >= p (``len(items)`` when
    none is shorter; 1 for an empty sequence): n minus the longest proper border, from the
    prefix function (linear time)."""
    n = len(items)
    if n == 0:
        return 1
    border = [0] * n
    for i in range(1, n):
        k = border[i - 1]
        while k and items[i] != items[k]:
            k = border[k - 1]
        border[i] = k + 1 if items[i] == items[k] else 0
    return n - border[-1]


def expected_simulated_iterations(
    control: IterationControl, settings: FastForwardSettings, iteration_ps: float = 0.0
) -> int:
    """Iterations of ``control``'s loop the watcher is expected to simulate (all of them when
    it would find no period: the kinds' period is past ``max_period`` or the watch budget).

    A period must also last ``settings.min_period_ps`` (refresh intervals): the shortest
    multiple of the kinds' period that does at ``iteration_ps`` per iteration (a floor of the
    iteration's time, so that the multiple is at least the run's; 0: unknown, no skip
    expected)."""
    total = control.total
    kinds = control.kinds
    # Between the warm-up and the tail, which are simulated anyway (a head's last, shorter
    # block ends the loop); indexed one by one: an emitter's kinds may be computed per index.
    between = range(settings.warmup, total - settings.tail)
    watched = [kinds[i] for i in between] if kinds is not None else []
    period = shortest_period(watched) if watched else 1
    if settings.min_period_ps:
        if iteration_ps <= 0:
            return total
        period *= max(1, math.ceil(settings.min_period_ps / (period * iteration_ps)))
    if period > settings.max_period:
        return total
    needed = settings.warmup + (settings.repetitions(period, exact=True) + 1) * period
    if needed > settings.budget:
        return total
    return min(total, needed + settings.tail)
