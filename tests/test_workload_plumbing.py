"""The workload travels as one description: RunConfig, grids, the CLI options, the result,
model presets and Hugging Face configs, and the demo's model entries."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from tlm_models.api import model_workload
from tlm_models.cli import demo_cmd
from tlm_models.cli.workload_args import add_workload_args, workload_grid
from tlm_models.errors import UserError
from tlm_models.run.config import RunConfig
from tlm_models.run.cost import _workload_at
from tlm_models.run.execute import all_layers
from tlm_models.run.resolve import resolve_run
from tlm_models.study.grid import GridSpec, expand_grid, model_mask, workload_fields
from tlm_models.workload import spec as workload_module
from tlm_models.workload.hf_config import read_model_config
from tlm_models.workload.model_presets import MODELS, model_preset
from tlm_models.workload.spec import Workload

ALL_FEATURES = frozenset({"mask", "gqa", "cross"})


def test_default_fields_keep_the_old_key_and_old_records_load() -> None:
    old = {"dataflow": "flash2", "seq_len": 8192, "head_dim": 64, "heads": 2, "overrides": []}
    config = RunConfig.from_dict(old)
    assert config.key() == (
        "dataflow=flash2 N=8192 d=64 heads=2 platform=platforms/attenio.yaml"
    )  # a sweep directory written before the workload fields resumes
    assert (config.batch, config.kv_heads, config.kv_len) == (1, 2, 8192)
    assert (config.mask, config.window, config.phase, config.layers) == ("none", 0, "prefill", 1)


def test_workload_fields_round_trip_and_enter_the_key() -> None:
    decode = RunConfig.of(
        "flash2", 1, 128, heads=32, kv_heads=8, kv_len=8192, batch=8, phase="decode",
        layers=32, model="llama3-8b",
    )  # fmt: skip
    assert decode == RunConfig.from_dict(json.loads(json.dumps(decode.as_dict())))
    assert decode.key() == (
        "dataflow=flash2 N=1 d=128 heads=32 platform=platforms/attenio.yaml batch=8 "
        "kv_heads=8 kv_len=8192 phase=decode layers=32 model=llama3-8b"
    )
    assert decode.workload == Workload(
        1, 128, heads=32, batch=8, kv_heads=8, kv_len=8192, phase="decode"
    )
    assert decode.workload_parts() == [
        "llama3-8b", "decode", "GQA 32/8", "Nk = 8K", "B = 8", "32 layers"
    ]  # fmt: skip
    sliding = RunConfig.of("attenio", 8192, 64, mask="sliding", window=4096)
    assert sliding.key().endswith("mask=sliding:4096")
    assert RunConfig("attenio", sliding.workload) == sliding


def test_bad_workloads_are_one_error_naming_the_values() -> None:
    with pytest.raises(UserError, match=r"query heads \(6\) must be a multiple of KV heads \(4\)"):
        RunConfig.of("flash2", 1024, 64, heads=6, kv_heads=4)
    with pytest.raises(UserError, match="W = 4096 is larger than the key length Nk = 1024"):
        RunConfig.of("flash2", 1024, 64, mask="sliding", window=4096)
    with pytest.raises(UserError, match="layers must be a positive integer, found 0"):
        RunConfig.of("flash2", 1024, 64, layers=0)


def test_a_dataflow_without_the_feature_refuses_before_anything_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(workload_module.FEATURES, "flash2", frozenset())
    config = RunConfig.of("flash2", 1024, 64, heads=4, kv_heads=1)
    with pytest.raises(UserError, match="'flash2' does not support kv_heads=1 < heads=4"):
        resolve_run(config)


def test_resolve_builds_the_workload_from_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(workload_module.FEATURES, "attenio", ALL_FEATURES)
    config = RunConfig.of("attenio", 512, 64, heads=4, kv_heads=2, mask="causal", batch=2)
    run = resolve_run(config)
    assert run.workload == Workload(
        512, 64, heads=4, batch=2, kv_heads=2, mask="causal", elem_bytes=2
    )


def test_grid_sweeps_every_workload_axis() -> None:
    spec = GridSpec(
        dataflows=("flash2",),
        seq_lens=(1024, 2048),
        head_dims=(64,),
        heads=(4, 8),
        kv_heads=(2,),
        batches=(1, 2),
        masks=("none", "causal", "sliding:512"),
    )
    configs = expand_grid(spec)
    assert len(configs) == 2 * 2 * 2 * 3
    assert {c.window for c in configs} == {0, 512}
    assert {(c.heads, c.kv_heads) for c in configs} == {(4, 2), (8, 2)}
    assert len({c.key() for c in configs}) == len(configs)
    with pytest.raises(UserError, match=r"query heads \(4\) must be a multiple of KV heads \(3\)"):
        expand_grid(GridSpec(("flash2",), (1024,), (64,), heads=4, kv_heads=(3,)))


def test_a_model_mask_follows_the_key_length() -> None:
    assert model_mask(4096, 16384, 16384) == "sliding:4096"
    assert model_mask(4096, 4096, 4096) == "causal"  # the window covers every key
    assert model_mask(0, 8192, 8192) == "causal"
    assert model_mask(0, 8192, 1) == "none"  # the last row alone sees every key
    assert model_mask(4096, 8192, 1) == "sliding:4096"
    points = workload_fields(
        GridSpec((), (2048, 8192), (128,), heads=32, kv_heads=(8,), model_window=4096)
    )
    assert [(p["mask"], p["window"]) for p in points] == [("causal", 0), ("sliding", 4096)]


def _args(argv: list[str], *, lists: bool = False) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_workload_args(parser, lists=lists)
    return parser.parse_args(argv)


def test_command_line_defaults_and_decode() -> None:
    spec = workload_grid(_args(["--seq-len", "8K", "--head-dim", "64"]))
    (point,) = workload_fields(spec)
    assert point == {
        "batch": 1, "heads": 1, "kv_heads": 0, "seq_len": 8192, "kv_len": 0, "head_dim": 64,
        "mask": "none", "window": 0, "phase": "prefill", "layers": 1, "model": "",
    }  # fmt: skip
    decode = workload_grid(_args(["--phase", "decode", "--kv-len", "4K", "--head-dim", "64"]))
    assert (decode.seq_lens, decode.kv_lens) == ((1,), (4096,))
    with pytest.raises(UserError, match="--phase decode needs --kv-len"):
        workload_grid(_args(["--phase", "decode", "--head-dim", "64"]))
    with pytest.raises(UserError, match="--head-dim D is needed"):
        workload_grid(_args(["--seq-len", "8K"]))
    with pytest.raises(UserError, match=r"--heads must be a positive integer.*'x'"):
        workload_grid(_args(["--seq-len", "8K", "--head-dim", "64", "--heads", "x"]))


def test_model_fills_the_shape_and_explicit_options_override() -> None:
    spec = workload_grid(_args(["--model", "mistral-7b", "--seq-len", "16K", "--layers", "model"]))
    (point,) = workload_fields(spec)
    assert (point["heads"], point["kv_heads"], point["head_dim"]) == (32, 8, 128)
    assert (point["mask"], point["window"], point["layers"]) == ("sliding", 4096, 32)
    spec = workload_grid(
        _args(["--model", "llama3-70b", "--seq-len", "2K", "--kv-heads", "16", "--mask", "none"])
    )
    (point,) = workload_fields(spec)
    assert (point["heads"], point["kv_heads"], point["mask"]) == (64, 16, "none")
    with pytest.raises(UserError, match="--layers model needs --model"):
        workload_grid(_args(["--seq-len", "2K", "--head-dim", "64", "--layers", "model"]))
    argv = ["--seq-lens", "1K,2K", "--head-dims", "64", "--mask", "none,causal"]
    sweep = workload_grid(_args(argv, lists=True), lists=True)
    assert len(workload_fields(sweep)) == 4


def test_presets_carry_sources_and_suggest_names() -> None:
    llama = model_preset("Llama3-8B")
    assert (llama.heads, llama.kv_heads, llama.head_dim, llama.layers) == (32, 8, 128, 32)
    assert (model_preset("gpt3-175b").heads, model_preset("gpt3-175b").kind) == (96, "MHA")
    assert model_preset("falcon-7b").kind == "MQA" and model_preset("mistral-7b").window == 4096
    for preset in MODELS.values():
        assert preset.heads % preset.kv_heads == 0
        assert preset.source.startswith(("https://", "Brown et al."))
    with pytest.raises(UserError, match="did you mean 'llama3-70b'"):
        model_preset("llama3-7Ob")


def _config(tmp_path: Path, data: object, name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_hugging_face_configs_are_read(tmp_path: Path) -> None:
    mistral = {
        "model_type": "mistral", "num_attention_heads": 32, "num_key_value_heads": 8,
        "hidden_size": 4096, "sliding_window": 4096, "num_hidden_layers": 32,
    }  # fmt: skip
    shape = read_model_config(_config(tmp_path, mistral))
    assert (shape.heads, shape.kv_heads, shape.head_dim, shape.window) == (32, 8, 128, 4096)
    qwen = {**mistral, "use_sliding_window": False, "num_key_value_heads": 4}
    assert read_model_config(_config(tmp_path, qwen)).window == 0
    gemma = {"num_attention_heads": 8, "num_key_value_heads": 1, "head_dim": 256,
             "hidden_size": 2048, "num_hidden_layers": 18}  # fmt: skip
    assert read_model_config(_config(tmp_path, gemma)).head_dim == 256
    falcon = {"n_head": 71, "hidden_size": 4544, "multi_query": True, "n_layer": 32}
    assert read_model_config(_config(tmp_path, falcon)).kv_heads == 1


def test_hugging_face_config_errors_name_the_file_and_key(tmp_path: Path) -> None:
    path = _config(tmp_path, {"hidden_size": 4096, "num_hidden_layers": 2})
    with pytest.raises(UserError, match=f"{path}: missing key 'num_attention_heads'"):
        read_model_config(path)
    path = _config(tmp_path, {"num_attention_heads": 6, "num_key_value_heads": 4,
                              "hidden_size": 384, "num_hidden_layers": 2})  # fmt: skip
    with pytest.raises(UserError, match=r"num_attention_heads \(6\) is not a multiple"):
        read_model_config(path)
    path = _config(tmp_path, {"num_attention_heads": "32"})
    with pytest.raises(UserError, match="'num_attention_heads' must be a positive integer"):
        read_model_config(path)
    bad = tmp_path / "broken.json"
    bad.write_text("{\n  oops", encoding="utf-8")
    with pytest.raises(
        UserError, match=r"broken.json: the model config is not valid JSON: .* \(line 2 "
    ):
        read_model_config(bad)
    with pytest.raises(UserError, match="cannot read"):
        read_model_config(tmp_path / "missing.json")


def test_api_model_workload() -> None:
    assert model_workload("llama3-8b", phase="decode", kv_len=8192, batch=8) == Workload(
        1, 128, heads=32, batch=8, kv_heads=8, kv_len=8192, phase="decode"
    )
    assert model_workload("gpt3-175b", seq_len=8192).mask == "causal"
    with pytest.raises(UserError, match="decode workload needs kv_len"):
        model_workload("llama3-8b", phase="decode")


def test_all_layers_multiplies_one_simulated_layer() -> None:
    result = {
        "sim_time_ns": 1.5e6, "offchip_bytes": {"total": 1000}, "pe": {"macs": 7},
        "exp": {"exps": 3}, "energy": {"total_j": 0.25},
    }  # fmt: skip
    assert all_layers(result, 32) == {
        "layers": 32.0, "sim_time_ns": 48e6, "offchip_bytes": 32000.0, "macs": 224.0,
        "exps": 96.0, "energy_j": 8.0,
    }  # fmt: skip


def test_cost_counts_scale_both_lengths() -> None:
    config = RunConfig.of("flash2", 1, 64, kv_len=8192, phase="decode")
    assert _workload_at(resolve_run(config), 2048) == Workload(1, 64, kv_len=2048, phase="decode")
    sliding = RunConfig.of("flash2", 8192, 64, mask="sliding", window=4096)
    small = _workload_at(resolve_run(sliding), 2048)
    assert (small.seq_len, small.kv_len, small.window) == (2048, 2048, 2048)


def test_demo_model_entries_use_what_the_dataflows_support(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for dataflow in demo_cmd.DECODE_DATAFLOWS:
        monkeypatch.setitem(workload_module.FEATURES, dataflow, frozenset())
    configs, notes = demo_cmd.model_configs()
    assert {(c.dataflow, c.mask, c.model) for c in configs} == {
        (dataflow, "none", "gpt3-175b") for dataflow in demo_cmd.PREFILL_DATAFLOWS
    }
    assert any("not run" in note and "llama3-8b" in note for note in notes)
    for dataflow in demo_cmd.DECODE_DATAFLOWS:
        monkeypatch.setitem(workload_module.FEATURES, dataflow, ALL_FEATURES)
    configs, notes = demo_cmd.model_configs()
    assert notes == []
    decode = [c for c in configs if c.phase == "decode"]
    assert {(c.batch, c.heads, c.kv_heads, c.seq_len, c.kv_len) for c in decode} == {
        (8, 32, 8, 1, 8192)
    }
    assert {c.mask for c in configs if c.model == "gpt3-175b"} == {"causal", "none"}


def test_workloads_page_lists_every_preset_as_the_table_has_it() -> None:
    page = (Path(__file__).resolve().parent.parent / "docs" / "workloads.md").read_text()
    for m in MODELS.values():
        window = m.window or "–"
        row = (
            f"| `{m.name}` | {m.title} | {m.heads} | {m.kv_heads} ({m.kind}) | {m.head_dim} | "
            f"{window} | {m.layers} | {m.source} |"
        )
        assert row in page


def test_run_and_sweep_command_lines(tmp_path: Path) -> None:
    from tlm_models.cli.main import build_parser
    from tlm_models.cli.run_cmd import config_of
    from tlm_models.cli.study_cmd import grid_of

    argv = ["run", "--dataflow", "standard", "--model", "llama3-8b", "--phase", "decode"]
    args = build_parser("run").parse_args(
        [*argv, "--kv-len", "8K", "--batch", "8", "--layers", "model"]
    )
    assert config_of(args) == RunConfig.of(
        "standard", 1, 128, heads=32, kv_heads=8, kv_len=8192, batch=8, phase="decode",
        layers=32, model="llama3-8b",
    )  # fmt: skip
    sweep = ["sweep", "--dataflows", "flash2,attenio", "--seq-lens", "1K,2K", "--head-dims", "64"]
    more = ["--heads", "4", "--kv-heads", "1,2", "--mask", "none,causal", "--out", str(tmp_path)]
    configs = expand_grid(grid_of(build_parser("sweep").parse_args([*sweep, *more])))
    assert len(configs) == 2 * 2 * 2 * 2
    assert {(c.kv_heads, c.mask) for c in configs} == {
        (1, "none"), (1, "causal"), (2, "none"), (2, "causal")
    }  # fmt: skip


def test_bad_command_lines_are_one_line_naming_the_values(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tlm_models.cli.main import main

    base = ["run", "--dataflow", "flash2", "--seq-len", "1K", "--head-dim", "64"]
    for extra, words in (
        (["--heads", "6", "--kv-heads", "4"], "query heads (6) must be a multiple of KV heads (4)"),
        (["--mask", "sliding:2K"], "W = 2048 is larger than the key length Nk = 1024"),
        (["--phase", "decode"], "--phase decode needs --kv-len"),
        (["--model", "gpt-3"], "unknown model 'gpt-3'"),
    ):
        assert main([*base, *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and words in err, err


def test_a_replayed_trace_states_its_workload(tmp_path: Path) -> None:
    from tlm_models.api import emit, replay_trace
    from tlm_models.trace.io import write_trace

    trace = emit("standard", Workload(256, 64, heads=4, kv_heads=2))
    path = tmp_path / "gqa.trace.txt"
    write_trace(path, trace.header, trace.chunks)
    result = replay_trace(path)
    assert (result.seq_len, result.heads, result.kv_heads, result.kv_len) == (256, 4, 2, 256)
    assert (result.mask, result.window, result.phase, result.batch) == ("none", 0, "prefill", 1)
    assert "kv_heads" not in result.tiling and "tile" in result.tiling
