"""Predicted against measured wall time of `attn-tlm run` (tlm_models/run/cost.py): prints one
table row per configuration, the figures docs/study.md records.

For each configuration (the options of `attn-tlm run`, one configuration per line of a file
or the built-in list below):

- the prediction on an idle machine (``STARTUP_S + estimate_cost(run).wall_s``) and the one the
  command announces (stretched by the share of a core it measured, read from its line);
- the command's wall and CPU time from that announcement to its exit (what the user waits for
  after reading the prediction: the forkserver's start, the worker, printing the result; the
  CPU time of the command, the forkserver and the worker), ``--reps`` times in fresh processes;
- the worker's own CPU time (``run_one`` in a worker, as the command runs it) against the
  model's work terms, and the operations the replay simulated (fewer than the trace's when
  fast-forward skipped some).

The machine's load average is printed with each row: on a shared machine wall times grow with
the load, CPU times much less. ``--fixed`` measures only the start-up and per-run costs.

    .venv/bin/python tools/bench_cost.py [--reps 2] [--json OUT.jsonl] [--fixed] [CONFIGS.txt]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

X4, X16 = "--platform platforms/attenio-x4.yaml", "--platform platforms/attenio-x16.yaml"
ONE, EDGE = "--platform platforms/attenio.yaml", "--platform platforms/edge-small.yaml"
GPT3_8K = "--model gpt3-175b --mask causal --seq-len 8K --dataflow flash2"
D64 = "--head-dim 64"
#: Tiled and untiled runs of every dataflow, small and large, with and without fast-forward.
CONFIGS = (
    f"{GPT3_8K} {X4}",
    f"{GPT3_8K} {X4} --exact",
    f"--model gpt3-175b --seq-len 2K --dataflow flash2 {X4}",
    f"--dataflow attenio --seq-len 8K {D64} --heads 16 {X16}",
    f"--dataflow attenio --seq-len 4K {D64} --heads 4 {X4}",
    f"--dataflow standard --seq-len 2K {D64} --heads 8 {X4}",
    f"--dataflow flat --seq-len 2K {D64} --heads 8 {X4}",
    f"--dataflow fusemax --seq-len 4K {D64} --heads 8 {X4}",
    "--dataflow flash2 --model llama2-7b --seq-len 4K --platform platforms/edge-quad.yaml",
    f"--dataflow flash2 --model llama2-7b --phase decode --kv-len 8K {X4}",
    f"--dataflow flash2 --model llama2-7b --seq-len 2K {X16}",
    f"--dataflow flash2 --seq-len 1K {D64} --heads 16 {X4} --set tiles.count=2",
    f"--dataflow flash2 --seq-len 1K {D64} --heads 16 {X4} --set tiles.count=8",
    f"{GPT3_8K} {ONE}",
    f"{GPT3_8K} {ONE} --exact",
    f"--dataflow attenio --seq-len 8K {D64} --heads 4 {ONE}",
    f"--dataflow standard --seq-len 2K {D64} --heads 8 {ONE}",
    f"--dataflow flat --seq-len 2K {D64} --heads 8 {ONE}",
    f"--dataflow fusemax --seq-len 4K {D64} --heads 8 {ONE}",
    f"--dataflow flash2 --model llama2-7b --seq-len 2K {EDGE}",
    f"--dataflow flash2 --seq-len 1K {D64}",
    # Large runs on one array: fast-forward skips most of them; FLAT's and Standard's
    # operations move the most data each.
    f"--dataflow flat --seq-len 128K {D64}",
    f"--dataflow standard --seq-len 64K {D64}",
    f"--dataflow approx --seq-len 8K {D64} --param degree=2",
    f"--dataflow attenio --seq-len 64K {D64}",
    "--dataflow flash2 --seq-len 128K --head-dim 128",
)


def measure_in_worker(run: Any) -> dict[str, Any]:
    """``run_one(run)`` as the command runs it, with the worker's own wall and CPU time."""
    from tlm_models.run.execute import run_one

    cpu, wall = time.process_time(), time.perf_counter()
    result = run_one(run)
    return {
        "worker_wall_s": time.perf_counter() - wall,
        "worker_cpu_s": time.process_time() - cpu,
        "ops": result["ops"],
        "simulated_ops": result["fast_forward"].get("simulated_ops", result["ops"]),
    }


def _cpu_s(process: Any, children: bool) -> float:
    times = process.cpu_times()
    own = float(times.user + times.system)
    return own + float(times.children_user + times.children_system) if children else own


def announce_to_exit(argv: list[str]) -> tuple[float, float, float]:
    """Seconds from the command's ``predicted:`` line on stderr to its exit, wall and CPU, and
    the stretch for the machine's load the line announced (1: none).

    The CPU time is the command's own after the announcement and that of the processes it
    started (the forkserver, with the workers it forked and reaped), polled every 10 ms:
    the workers run in grandchildren that no ``wait`` of this process would count."""
    import threading

    import psutil

    proc = subprocess.Popen(
        [sys.executable, "-m", "tlm_models.cli.main", "run", *argv],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    command = psutil.Process(proc.pid)
    cpu: dict[int, float] = {}
    done = threading.Event()

    def poll() -> None:
        while not done.wait(0.01):
            try:
                cpu[proc.pid] = _cpu_s(command, children=False)
                for child in command.children():
                    cpu[child.pid] = _cpu_s(child, children=True)
            except psutil.Error:  # a process ended between the listing and its reading
                continue

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    assert proc.stderr is not None
    announced, before, stretch = None, 0.0, 1.0
    for line in proc.stderr:
        if announced is None and line.startswith("predicted:"):
            announced = time.perf_counter()
            before = _cpu_s(command, children=False)
            found = re.search(r"x([0-9.]+) for the machine's load", line)
            stretch = float(found.group(1)) if found else 1.0
    if proc.wait() != 0 or announced is None:
        raise SystemExit(f"attn-tlm run {' '.join(argv)} failed (exit {proc.returncode})")
    wall = time.perf_counter() - announced
    done.set()
    poller.join()
    return wall, sum(cpu.values()) - before, stretch


def measure(line: str, reps: int) -> dict[str, Any]:
    from tlm_models.cli.main import build_parser
    from tlm_models.cli.run_cmd import config_of
    from tlm_models.run.cost import RUN_S, STARTUP_S, estimate_cost
    from tlm_models.run.resolve import resolve_run
    from tlm_models.run.worker import run_in_worker

    argv = line.split()
    run = resolve_run(config_of(build_parser("run").parse_args(["run", *argv])))
    cost = estimate_cost(run)
    load = os.getloadavg()[0]
    timed = [announce_to_exit(argv) for _ in range(reps)]
    commands = [wall for wall, _, _ in timed]
    workers, runs = [], []
    for _ in range(reps):
        started = time.perf_counter()
        workers.append(run_in_worker(measure_in_worker, run))
        runs.append(time.perf_counter() - started)
    return {
        "config": line,
        "tiles": cost.tiles,
        "load": (load + os.getloadavg()[0]) / 2,
        "predicted_command_s": STARTUP_S + cost.wall_s,
        "announced_command_s": statistics.median(
            (STARTUP_S + cost.wall_s) * stretch for _, _, stretch in timed
        ),
        "predicted_run_s": cost.wall_s,
        "predicted_work_s": cost.wall_s - RUN_S,
        "terms": cost.terms(),
        "ops": cost.ops,
        "loops": cost.loops,
        "command_s": statistics.median(commands),
        "command_range_s": [min(commands), max(commands)],
        "command_cpu_s": statistics.median(cpu for _, cpu, _ in timed),
        "run_s": statistics.median(runs),
        "worker_wall_s": statistics.median(w["worker_wall_s"] for w in workers),
        "worker_cpu_s": statistics.median(w["worker_cpu_s"] for w in workers),
        "simulated_ops": workers[0]["simulated_ops"],
    }


def per_run_cpu(line: str, reps: int) -> tuple[float, float]:
    """Median wall and CPU seconds of one more run of ``line`` in a worker once the forkserver
    is up (this process's, the forkserver's and the worker's CPU): what each configuration of
    a sweep costs beyond its own work."""
    import psutil

    from tlm_models.cli.main import build_parser
    from tlm_models.cli.run_cmd import config_of
    from tlm_models.run.resolve import resolve_run
    from tlm_models.run.worker import run_in_worker

    run = resolve_run(config_of(build_parser("run").parse_args(["run", *line.split()])))
    me = psutil.Process()

    def tree() -> float:
        return _cpu_s(me, children=False) + sum(_cpu_s(c, children=True) for c in me.children())

    walls, cpus = [], []
    for _ in range(reps):
        cpu, wall = tree(), time.perf_counter()
        run_in_worker(measure_in_worker, run)
        walls.append(time.perf_counter() - wall)
        time.sleep(0.05)  # the forkserver reaps the worker: its CPU joins the forkserver's
        cpus.append(tree() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def _short(config: str) -> str:
    return re.sub(r"platforms/|\.yaml|--dataflow |--model ", "", config)


def row(r: dict[str, Any]) -> str:
    """One table row: the command's wall time against the announced prediction (the idle
    prediction stretched by the load), its CPU time against the idle prediction, and the
    model's work terms against the worker's CPU time."""
    low, high = r["command_range_s"]
    return (
        f"| `{_short(r['config'])}` | {r['tiles'] or '-'} | {r['ops']:,} ({r['simulated_ops']:,}) "
        f"| {r['announced_command_s']:.2f} / {r['command_s']:.2f} s ({low:.2f}-{high:.2f}) "
        f"| **{r['announced_command_s'] / r['command_s']:.2f}** "
        f"| {r['predicted_command_s']:.2f} / {r['command_cpu_s']:.2f} s "
        f"| **{r['predicted_command_s'] / r['command_cpu_s']:.2f}** "
        f"| {r['predicted_work_s']:.2f} / {r['worker_cpu_s']:.2f} s "
        f"| {r['predicted_work_s'] / r['worker_cpu_s']:.2f} | {r['load']:.1f} |"
    )


HEADER = (
    "| configuration | tiles | ops (simulated) | command wall: announced / measured | ratio "
    "| command CPU: idle prediction / measured | ratio | work terms / worker CPU | ratio "
    "| load |\n|---|---|---|---|---|---|---|---|---|---|"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="?", help="file of `attn-tlm run` options, one a line")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--json", help="also write every row as a JSON line here")
    parser.add_argument(
        "--fixed", action="store_true", help="only the fixed costs: start-up and per run"
    )
    args = parser.parse_args()
    text = Path(args.configs).read_text().splitlines() if args.configs else CONFIGS
    lines = [s.strip() for s in text if s.strip() and not s.startswith("#")]
    from tlm_models.run.smoke import smoke_summary
    from tlm_models.run.worker import run_in_worker

    run_in_worker(smoke_summary)  # this process's forkserver starts here, not in a row
    if args.fixed:
        tiny = CONFIGS[-1]
        wall, cpu = per_run_cpu(tiny, max(5, args.reps))
        timed = [announce_to_exit(tiny.split()) for _ in range(max(5, args.reps))]
        print(
            f"`{tiny}` ({os.getloadavg()[0]:.1f} load): one more run in a worker "
            f"{wall:.3f} s wall, {cpu:.3f} s CPU; the command from its announcement to its "
            f"exit {statistics.median(w for w, _, _ in timed):.3f} s wall, "
            f"{statistics.median(c for _, c, _ in timed):.3f} s CPU (medians of {len(timed)})"
        )
        return
    out = open(args.json, "w") if args.json else None  # noqa: SIM115 (rows as they come)
    print(HEADER)
    wall, cpu = [], []
    for line in lines:
        r = measure(line, args.reps)
        print(row(r), flush=True)
        wall.append(r["announced_command_s"] / r["command_s"])
        cpu.append(r["predicted_command_s"] / r["command_cpu_s"])
        if out is not None:
            print(json.dumps(r), file=out, flush=True)
    if out is not None:
        out.close()
    within = sum(0.5 <= w <= 2.0 for w in wall)
    print(
        f"announced / measured wall time {min(wall):.2f}-{max(wall):.2f}, idle prediction / "
        f"CPU time {min(cpu):.2f}-{max(cpu):.2f} (goal: every announcement within 0.5-2x of "
        f"the wall time: {within} of {len(wall)}, {'met' if within == len(wall) else 'not met'})"
    )


if __name__ == "__main__":
    main()
