"""How much of a loop fast-forward is expected to simulate, before the run (the cost estimate)."""

from __future__ import annotations

from tlm_models.fast_forward.control import FastForwardSettings, IterationControl
from tlm_models.fast_forward.expected import expected_simulated_iterations, shortest_period
from tlm_models.run import cost
from tlm_models.run.config import RunConfig
from tlm_models.run.cost import estimate_cost
from tlm_models.run.resolve import resolve_run


def test_the_shortest_period_of_a_sequence() -> None:
    assert shortest_period("ababa") == 2
    assert shortest_period("aaaa") == 1
    assert shortest_period("abc") == 3
    assert shortest_period("abcab") == 3
    assert shortest_period("") == 1


def _loop(total: int, period: int) -> IterationControl:
    """A loop whose iterations are alike every ``period`` (a causal head of ``period``
    blocks), the first two (the warm-up) unlike any other."""
    kinds = ["first", "second", *[f"block{i % period}" for i in range(total - 2)]]
    return IterationControl(total, kinds)


def test_warm_up_then_the_confirming_periods_then_the_tail() -> None:
    settings = FastForwardSettings()  # warm-up 2, tail 2; 3 repetitions, 2 from 4 iterations
    # GPT-3 causal FA2 at 8K on one array: heads of 16 blocks; 48 of 1,536 simulated.
    assert expected_simulated_iterations(_loop(1536, 16), settings) == 2 + 3 * 16 + 2
    assert expected_simulated_iterations(_loop(32, 1), settings) == 2 + 4 * 1 + 2
    assert expected_simulated_iterations(IterationControl(32), settings) == 8  # kinds unknown
    assert expected_simulated_iterations(_loop(20, 16), settings) == 20  # too short to skip
    assert expected_simulated_iterations(_loop(1000, 33), settings) == 1000  # past max_period
    # AttenIO on one head: alike blocks, the last (shorter) one in the tail.
    last = IterationControl(34, ["full"] * 33 + ["short"])
    assert expected_simulated_iterations(last, settings) == 8
    unlike = IterationControl(34, ["full"] * 20 + ["short"] * 14)  # a change mid-loop
    assert expected_simulated_iterations(unlike, settings) == 34


def test_a_refresh_interval_lengthens_the_period_to_a_multiple_of_the_kinds() -> None:
    # Periods must last 15.6 µs (four 3.9 µs refresh intervals): at 1 µs per iteration a
    # 4-iteration pattern repeats as a period of 16 iterations.
    settings = FastForwardSettings(min_period_ps=15_600_000)
    loop = _loop(1000, 4)
    assert expected_simulated_iterations(loop, settings, iteration_ps=1e6) == 2 + 3 * 16 + 2
    assert expected_simulated_iterations(loop, settings, iteration_ps=1e5) == 1000  # 156 > 32
    assert expected_simulated_iterations(loop, settings) == 1000  # iteration time unknown


def test_the_estimate_of_a_fast_forwarded_run_charges_its_simulated_part() -> None:
    """GPT-3 causal FA2 at 8K on one array simulates 48 of its 1,536 iterations (its result's
    ``fast_forward`` section): the whole trace predicted 1.2 s of work for a run whose worker
    used 0.13 s of CPU. On four tiles and with --exact the whole trace is charged."""
    gpt3 = {"heads": 96, "mask": "causal"}
    one = estimate_cost(resolve_run(RunConfig.of("flash2", 8192, 128, **gpt3)), budget_s=60.0)
    assert one.simulated == 52 / 1536
    assert one.terms()["ops"] == one.ops * 52 / 1536 / cost.OPS_PER_S
    assert one.terms()["dma"] == one.moved_bytes * 52 / 1536 / cost.DMA_BYTES_PER_S
    exact = RunConfig.of("flash2", 8192, 128, exact=True, **gpt3)
    assert estimate_cost(resolve_run(exact), budget_s=60.0).simulated == 1.0
    x4 = RunConfig.of("flash2", 8192, 128, platform="platforms/attenio-x4.yaml", **gpt3)
    assert estimate_cost(resolve_run(x4), budget_s=60.0).simulated == 1.0
