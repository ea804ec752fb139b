"""``attn-tlm bounds``: the table and JSON report of closed-form traffic and lower bounds."""

from __future__ import annotations

import argparse
import json

import pytest

from tlm_models.cli import bounds_cmd


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    parser = argparse.ArgumentParser()
    bounds_cmd.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    assert args.func(args) == 0
    return capsys.readouterr().out


def test_json_report_has_paper_formulas(capsys: pytest.CaptureFixture[str]) -> None:
    out = json.loads(_run(["bounds", "--seq-len", "8K", "--head-dim", "64", "--json"], capsys))
    n, d, m = 8192, 64, 262144
    a = (m - d) // (2 * d + 4)
    assert out["capacity_elements"] == m
    assert out["dataflows"]["attenio"]["elements"] == 2 * n * d + 2 * n * d * -(-n // a)
    # FA2 fitted to the machine: 1,024 query rows a block (the paper's rule keeps 64)
    assert out["dataflows"]["flash2"]["tile"] == {"br": 1024, "bc": 110}
    assert out["dataflows"]["flash2"]["elements"] == 2 * n * d + 2 * n * d * (n // 1024)
    assert out["bounds"]["attention_order_bound"]["elements"] == n * n * d * d / m
    assert "Theta" in out["bounds"]["attention_order_bound"]["expression"]


def test_table_lists_every_dataflow(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(["bounds", "--seq-len", "16384", "--head-dim", "128"], capsys)
    for word in ("standard", "flat", "flash2", "attenio", "MMM lower bound", "order of growth"):
        assert word in out


def test_set_overrides_the_platform(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bounds", "--seq-len", "8K", "--head-dim", "64", "--json"]
    out = json.loads(_run([*argv, "--set", "sram.capacity=256KiB"], capsys))
    m, d, n = 131072, 64, 8192
    assert out["capacity_elements"] == m
    a = (m - d) // (2 * d + 4)
    assert out["dataflows"]["attenio"]["elements"] == 2 * n * d + 2 * n * d * -(-n // a)
