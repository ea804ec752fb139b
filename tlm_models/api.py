"""The public Python API: simulate, sweep, emit and replay_trace (docs/api.md).

Every call resolves its request first, in the calling process (``tlm_models.run.resolve``): the
platform is validated, overrides applied, the workload checked against the platform's element
width and the dataflow's parameters and plan checked, before any simulation process starts.
Simulations run one per worker process, as on the command line; the CLI uses the same steps.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tlm_models.dataflows import EmittedTrace
from tlm_models.dataflows import emit as _emit
from tlm_models.dataflows.builder import DEFAULT_CHUNK_OPS
from tlm_models.errors import UserError
from tlm_models.files.output_file import check_output
from tlm_models.platform.compose import Platform
from tlm_models.platform.info import DEFAULT_ELEM_BYTES
from tlm_models.run.config import DEFAULT_PLATFORM, RunConfig
from tlm_models.run.resolve import ResolvedRun, resolve_run, resolve_runs
from tlm_models.run.run_result import RunResult
from tlm_models.study.grid import GridSpec, SweptSetting, expand_grid
from tlm_models.workload.spec import Workload

__all__ = [
    "Platform",
    "RunResult",
    "SweepOutcome",
    "Workload",
    "emit",
    "model_workload",
    "replay_trace",
    "resolve",
    "simulate",
    "sweep",
]

PlatformLike = Platform | str | os.PathLike[str]


def _platform(platform: PlatformLike, overrides: Iterable[str] = ()) -> Platform:
    loaded = platform if isinstance(platform, Platform) else Platform.load(platform)
    overrides = tuple(overrides)
    return loaded.with_overrides(*overrides) if overrides else loaded


def _params(params: Mapping[str, object]) -> tuple[tuple[str, str], ...]:
    return tuple((name, str(value)) for name, value in params.items())


def resolve(
    dataflow: str,
    workload: Workload,
    platform: PlatformLike = DEFAULT_PLATFORM,
    *,
    overrides: Iterable[str] = (),
    layers: int = 1,
    **params: object,
) -> ResolvedRun:
    """The validated run ``simulate`` would start (nothing is simulated): the element width,
    on-chip capacity M and every check, in the caller."""
    return _resolve(dataflow, workload, platform, overrides, params, layers)


def _resolve(
    dataflow: str,
    workload: Workload,
    platform: PlatformLike,
    overrides: Iterable[str],
    params: Mapping[str, object],
    layers: int = 1,
    model: str = "",
) -> ResolvedRun:
    plat = _platform(platform, overrides)
    config = RunConfig(
        dataflow,
        workload,
        platform=plat.label,
        overrides=plat.overrides,
        extra=_params(params),
        layers=layers,
        model=model,
    )
    return resolve_run(config, elem_bytes=workload.elem_bytes, platform=plat.config)


def simulate(
    dataflow: str,
    workload: Workload,
    platform: PlatformLike = DEFAULT_PLATFORM,
    *,
    overrides: Iterable[str] = (),
    timeline: str | os.PathLike[str] | None = None,
    layers: int = 1,
    model: str = "",
    progress: bool = False,
    **params: object,
) -> RunResult:
    """Emits ``dataflow``'s trace for ``workload`` on ``platform`` and replays it in a worker.

    ``overrides`` are ``component.param=value`` texts (like ``--set``); ``params`` are the
    dataflow's parameters (``degree=2`` for approx); ``timeline`` writes a Perfetto file;
    ``layers`` identical layers run back to back (one is simulated, ``all_layers`` multiplies
    it); ``model`` labels the result (``model_workload`` builds a preset's workload);
    ``progress`` prints the predicted cost (and a warning when it is long) and a progress bar
    on stderr, as ``attn-tlm run`` does.
    """
    from tlm_models.run.execute import run_one
    from tlm_models.run.worker import run_in_worker

    run = _resolve(dataflow, workload, platform, overrides, params, layers, model)
    out = os.fspath(timeline) if timeline is not None else None
    check_output(out, "timeline")  # before the simulation, not after it
    if not progress:
        return RunResult.from_dict(run_in_worker(run_one, run, out))
    from tlm_models.run.cost import announce
    from tlm_models.run.progress import SimulationProgress

    cost = announce(run, sys.stderr)
    bar = SimulationProgress(run.config.dataflow, cost.ops, cost.roofline_ns)
    try:
        return RunResult.from_dict(run_in_worker(run_one, run, out, progress=bar))
    finally:
        bar.close()


@dataclass(frozen=True)
class SweepOutcome:
    """The finished results of a sweep (grid order), the failures by configuration key, and
    the directory holding results.jsonl / results.csv."""

    results: list[RunResult]
    failures: dict[str, str]
    directory: Path


def sweep(
    dataflows: Sequence[str],
    seq_lens: Sequence[int],
    head_dims: Sequence[int],
    *,
    out: str | os.PathLike[str],
    platform: PlatformLike = DEFAULT_PLATFORM,
    settings: Mapping[str, Sequence[object]] | None = None,
    params: Mapping[str, Sequence[object]] | None = None,
    heads: int | Sequence[int] = 1,
    kv_heads: Sequence[int] = (),
    kv_lens: Sequence[int] = (),
    batches: Sequence[int] = (1,),
    masks: Sequence[str] = (),
    phase: str = "prefill",
    layers: int = 1,
    jobs: int | None = None,
    progress: bool = False,
) -> SweepOutcome:
    """Runs every combination into ``out`` (resumable, like ``attn-tlm sweep``).

    ``settings`` sweep platform parameters (``{"sram.capacity": ["256KiB", "512KiB"]}``),
    ``params`` dataflow parameters (``{"approx.degree": [1, 2]}``). The workload axes carry
    ``Workload``'s names: ``seq_lens`` (Nq), ``kv_lens`` (Nk; empty: = Nq), ``heads``,
    ``kv_heads`` (empty: = heads), ``batches``, ``masks`` (``"causal"``, ``"sliding:4096"``).
    Every configuration is resolved first: one bad value and nothing runs. A ``Platform``
    object is saved to ``out/platform.yaml`` so the directory records what ran.
    ``progress`` shows the sweep's bar on stderr with an ETA from each configuration's
    predicted cost, as ``attn-tlm sweep`` does.
    """
    from tlm_models.study.executor_local import LocalExecutor
    from tlm_models.study.store import ResultStore
    from tlm_models.study.sweep import run_sweep

    directory = Path(out)
    label = os.fspath(platform) if not isinstance(platform, Platform) else None
    grid = GridSpec(
        dataflows=tuple(dataflows),
        seq_lens=tuple(seq_lens),
        head_dims=tuple(head_dims),
        heads=heads if isinstance(heads, int) else tuple(heads),
        kv_heads=tuple(kv_heads),
        kv_lens=tuple(kv_lens),
        batches=tuple(batches),
        masks=tuple(masks),
        phase=phase,
        layers=layers,
        platforms=(label or str(directory / "platform.yaml"),),
        settings=tuple(SweptSetting(k, tuple(map(str, v))) for k, v in (settings or {}).items()),
        params=tuple(SweptSetting(k, tuple(map(str, v))) for k, v in (params or {}).items()),
    )
    configs = expand_grid(grid)
    if isinstance(platform, Platform):
        runs = _resolve_grid_on(configs, platform)
        directory.mkdir(parents=True, exist_ok=True)
        platform.save(directory / "platform.yaml")
    else:
        runs = resolve_runs(configs)
    if progress:
        from tlm_models.run.cost import predicted_run_s

        # As `attn-tlm sweep`: the bar with an ETA from each configuration's predicted cost.
        run_sweep(
            configs,
            directory,
            executor=LocalExecutor(jobs),
            cost_of=predicted_run_s,
            resolved=runs,
        )
    else:
        run_sweep(
            configs, directory, executor=LocalExecutor(jobs), interactive=False, resolved=runs
        )
    latest = ResultStore(directory).latest()
    results, failures = [], {}
    for config in configs:
        record = dict(latest.get(config.key(), {"error": "not run"}))
        if "error" in record:
            failures[config.key()] = str(record["error"])
            continue
        for stored in ("key", "config"):  # the store's own fields, not the result's
            record.pop(stored, None)
        results.append(RunResult.from_dict(record))
    return SweepOutcome(results, failures, directory)


def _resolve_grid_on(configs: Sequence[RunConfig], platform: Platform) -> list[ResolvedRun]:
    """Resolves a grid on an in-memory platform (its swept overrides applied to it)."""
    return [
        resolve_run(config, platform=platform.with_overrides(*config.overrides).config)
        for config in configs
    ]


def emit(
    dataflow: str,
    workload: Workload,
    platform: PlatformLike = DEFAULT_PLATFORM,
    *,
    chunk_ops: int = DEFAULT_CHUNK_OPS,
    **params: object,
) -> EmittedTrace:
    """The dataflow's trace (header and a one-shot iterator of record chunks), in this process;
    ``tlm_models.trace.io.write_trace`` stores it. No SystemC is loaded."""
    run = _resolve(dataflow, workload, platform, (), params)
    return _emit(dataflow, run.workload, run.info, chunk_ops=chunk_ops, params=run.params)


def model_workload(
    model: str | os.PathLike[str],
    *,
    seq_len: int = 0,
    kv_len: int = 0,
    batch: int = 1,
    phase: str = "prefill",
    mask: str | None = None,
    elem_bytes: int = DEFAULT_ELEM_BYTES,
) -> Workload:
    """One attention layer of a model: a preset name (``"llama3-8b"``, docs/workloads.md) or
    a Hugging Face config.json path. Hq, Hkv and d are the model's; the mask is causal, or
    sliding within the model's window when that is shorter than the ``kv_len`` keys (one
    query row: none, it sees every key), unless ``mask`` says otherwise. Decode takes
    ``seq_len`` 1 unless given and needs ``kv_len``."""
    from tlm_models.study.grid import model_mask
    from tlm_models.workload.model_presets import MODELS, model_preset
    from tlm_models.workload.spec import parse_mask

    name = os.fspath(model)
    if name.lower() in MODELS or not Path(name).suffix:
        shape = model_preset(name)
    else:
        from tlm_models.workload.hf_config import read_model_config

        shape = read_model_config(name)
    if phase == "decode":
        if not kv_len:
            raise UserError("a decode workload needs kv_len (the KV-cache length)")
        seq_len = seq_len or 1
    elif not seq_len:
        raise UserError("a prefill workload needs seq_len")
    kind, window = parse_mask(mask or model_mask(shape.window, kv_len or seq_len, seq_len))
    return Workload(
        seq_len=seq_len,
        head_dim=shape.head_dim,
        heads=shape.heads,
        batch=batch,
        elem_bytes=elem_bytes,
        kv_heads=shape.kv_heads,
        kv_len=kv_len,
        mask=kind,
        window=window,
        phase=phase,
    )


def replay_trace(
    trace: str | os.PathLike[str],
    platform: PlatformLike = DEFAULT_PLATFORM,
    *,
    overrides: Iterable[str] = (),
    timeline: str | os.PathLike[str] | None = None,
) -> RunResult:
    """Replays a trace file (binary or text) on ``platform`` in a worker; the trace is
    checked against the platform first."""
    from tlm_models.run.trace_job import replay_trace_file
    from tlm_models.run.worker import run_in_worker

    path = os.fspath(trace)
    if not Path(path).is_file():
        raise UserError(f"{path}: no such trace file")
    plat = _platform(platform, overrides)
    out = os.fspath(timeline) if timeline is not None else None
    check_output(out, "timeline")  # before the simulation, not after it
    return RunResult.from_dict(run_in_worker(replay_trace_file, path, plat.config, (), out))
