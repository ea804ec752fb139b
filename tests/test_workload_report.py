"""Reports and `attn-tlm bounds` on workloads other than dense self-attention: kinds of
workload grouped and set side by side, the compulsory floor, unsupported dataflows named."""

from __future__ import annotations

import argparse
import json
from typing import Any

import pytest

from tests.study_jobs import fake_result
from tlm_models.cli import bounds_cmd
from tlm_models.run.config import RunConfig
from tlm_models.study.report import render_report
from tlm_models.study.store import result_record
from tlm_models.study.variants import group_variants
from tlm_models.workload import spec as workload_module


def _record(config: RunConfig, compulsory: float) -> dict[str, Any]:
    result = {**fake_result(config), **config.workload_fields(), "layers": config.layers}
    result["bounds"] = {"compulsory": compulsory}
    result["pe"]["macs"] = 1000 if config.mask == "none" else 500
    result["exp"]["exps"] = 10
    return result_record(config, result)


def _records() -> list[dict[str, Any]]:
    dense = RunConfig.of("flash2", 8192, 64)
    causal = RunConfig.of("flash2", 8192, 64, mask="causal")
    decode = RunConfig.of(
        "flash2", 1, 64, heads=4, kv_heads=1, kv_len=8192, batch=2, phase="decode"
    )
    attenio = RunConfig.of("attenio", 8192, 64, mask="causal")
    return [_record(c, 4.0 * 8192 * 64 * 2) for c in (dense, causal, decode, attenio)]


def test_variants_split_by_workload_kind() -> None:
    titles = [v.title() for v in group_variants(_records())]
    assert titles == [
        "platforms/attenio.yaml",
        "platforms/attenio.yaml, causal",
        "platforms/attenio.yaml, 4 heads, decode, MQA 4/1, Nk = 8K, B = 2",
    ]


def test_report_sets_workload_kinds_side_by_side() -> None:
    text = render_report(_records())
    section = text[text.index("## Workloads side by side") :]
    rows = [line for line in section.splitlines() if line.startswith("| flash2")]
    assert [row.split(" | ")[1] for row in rows] == ["dense", "causal", "decode, MQA 4/1"]
    assert rows[0].endswith("| 1,000 | 10 |")  # MACs, exps
    assert rows[1].endswith("| 500 | 10 |")
    assert "| flash2 | decode, MQA 4/1 | 1 | 8K | 64 | 4/1 | 2 |" in section
    assert "### Nq = 1, Nk = 8K tokens, d = 64" in text  # the decode variant's table


def test_one_kind_of_workload_has_no_side_by_side_section() -> None:
    records = _records()[:1]
    assert "Workloads side by side" not in render_report(records)


def _bounds(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    parser = argparse.ArgumentParser()
    bounds_cmd.register(parser.add_subparsers())
    args = parser.parse_args(["bounds", *argv])
    assert args.func(args) == 0
    return capsys.readouterr().out


def test_bounds_floor_and_unsupported_rows(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for dataflow in workload_module.FEATURES:
        monkeypatch.setitem(workload_module.FEATURES, dataflow, frozenset())
    argv = ["--model", "llama3-8b", "--phase", "decode", "--kv-len", "8K", "--batch", "4"]
    out = json.loads(_bounds([*argv, "--layers", "model", "--json"], capsys))
    b, hq, hkv, nk, d = 4, 32, 8, 8192, 128
    floor = out["bounds"]["compulsory"]
    assert floor["per_tensor_elements"] == {
        "Q": b * hq * d, "K": b * hkv * nk * d, "V": b * hkv * nk * d, "O": b * hq * d
    }  # fmt: skip
    assert floor["bytes"] == 2 * (2 * b * hq * d + 2 * b * hkv * nk * d)
    assert (out["kv_heads"], out["kv_len"], out["phase"], out["layers"]) == (8, nk, "decode", 32)
    assert set(out["bounds"]) == {"compulsory"}  # the dense-only bounds are left out
    for row in out["dataflows"].values():
        assert "kv_heads=8 < heads=32" in row["unsupported"]
    table = _bounds(argv, capsys)
    assert "not supported" in table and "compulsory floor" in table


def test_bounds_of_dense_attention_sit_above_the_floor(capsys: pytest.CaptureFixture[str]) -> None:
    out = json.loads(_bounds(["--seq-len", "8K", "--head-dim", "64", "--json"], capsys))
    n, d = 8192, 64
    assert out["bounds"]["compulsory"]["elements"] == 4 * n * d
    assert out["dataflows"]["attenio"]["elements"] >= 4 * n * d
    assert out["dataflows"]["approx"]["elements"] == 4 * n * d  # Case I meets the floor


def test_useful_flops_count_only_visible_pairs() -> None:
    from tlm_models.study.energy_report import attention_flops

    n, d = 1024, 64
    dense = {"seq_len": n, "head_dim": d, "heads": 2}
    assert attention_flops(dense) == 4.0 * n * n * d * 2  # an older record: dense
    causal = {**dense, "mask": "causal", "kv_heads": 1, "batch": 3}
    assert attention_flops(causal) == 4.0 * (n * (n + 1) // 2) * d * 2 * 3


def test_dense_runs_without_a_counterpart_stay_out_of_the_side_by_side_table() -> None:
    lone = _record(RunConfig.of("flash2", 4096, 128), 1.0)
    text = render_report([*_records(), lone])
    section = text[text.index("## Workloads side by side") :]
    assert "| flash2 | dense | 8K | 8K | 64 |" in section
    assert "| flash2 | dense | 4K |" not in section


def test_a_section_of_one_simulated_layer_says_per_layer() -> None:
    """Sections titled '96 layers' showed one layer's figures."""
    from tlm_models.study.variants import Variant

    variant = Variant("platforms/attenio.yaml", (), 96, (), ("causal", "96 layers"))
    assert variant.title() == "platforms/attenio.yaml, 96 heads, causal, per layer of 96"
