"""Elaboration of platforms in a subprocess each (SystemC elaborates once per process).

Each run builds the platform, simulates 100 us and returns the statistics tree, which shows
that every component was constructed, bound and routed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = sorted((ROOT / "platforms").glob("*.yaml"))
TRAFFIC = ROOT / "tests" / "data" / "platforms" / "traffic.yaml"
DOC = ROOT / "docs" / "platforms.md"

_RUNNER = """
import json, sys
{prelude}
from tlm_models.runtime.kernel import load_models
from tlm_models.platform import load_platform
from tlm_models.runtime.bound_platform import build_platform

gbl = load_models()
built = build_platform(load_platform(sys.argv[1]))
sc = gbl.sc_core
sc.sc_start(sc.sc_time(100.0, sc.SC_US))
executors = {{
    name: isinstance(e, gbl.tlm_models.OpExecutor) for name, e in built.engines.items()
}}
print(json.dumps({{"stats": built.collect_stats(), "executors": executors,
                  "modules": {{n: str(m.name()) for n, m in built.modules.items()}}}}))
"""


def _elaborate(path: Path, prelude: str = "") -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER.format(prelude=prelude), str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _stat(tree: dict[str, Any], component: str, name: str) -> float:
    child = next(c for c in tree["children"] if c["name"] == component)
    value: float = child["stats"][name]["value"]
    return value


@pytest.mark.slow
@pytest.mark.parametrize("path", REFERENCE, ids=lambda p: p.stem)
def test_reference_platform_elaborates(path: Path) -> None:
    from tlm_models.platform import load_platform

    config = load_platform(path)
    result = _elaborate(path)
    assert result["modules"] == {name: name for name in config.components}
    assert [c["name"] for c in result["stats"]["children"]] == list(config.components)
    assert result["executors"] == {name: True for name in config.engines}


@pytest.mark.slow
def test_traffic_reaches_the_routed_memory() -> None:
    result = _elaborate(TRAFFIC)
    stats = result["stats"]
    assert _stat(stats, "gen", "requests") == 64
    assert _stat(stats, "gen", "errors") == 0
    assert _stat(stats, "hbm", "reads") == 64  # base 0x1000_0000 is routed to out[1] = hbm
    assert _stat(stats, "hbm", "bytes_read") == 64 * 64


def _doc_block(marker: str) -> str:
    text = DOC.read_text()
    match = re.search(rf"<!-- worked-example: {marker} -->\n```\w+\n(.*?)```", text, re.S)
    assert match, f"docs/platforms.md lacks the '{marker}' block"
    return match.group(1)


def test_worked_example_validates(tmp_path: Path) -> None:
    from tlm_models.platform import load_platform
    from tlm_models.platform.registry import component_type, unregister_component_type

    (tmp_path / "fixed_latency_memory.h").write_text(_doc_block("header"))
    (tmp_path / "demo.yaml").write_text(_doc_block("platform"))
    try:
        exec(_doc_block("register"), {"HERE": str(tmp_path)})
        spec = component_type("fixed_latency_memory")
        assert spec is not None
        config = load_platform(tmp_path / "demo.yaml")
        assert config.components["mem"].params == {"size": 64 * 1024, "latency": 20_000}
        assert [(r.interconnect, r.out_index, r.size) for r in config.routes] == [
            ("noc", 0, 64 * 1024)
        ]
    finally:
        unregister_component_type("fixed_latency_memory")


@pytest.mark.slow
def test_worked_example_elaborates_and_runs(tmp_path: Path) -> None:
    (tmp_path / "fixed_latency_memory.h").write_text(_doc_block("header"))
    (tmp_path / "demo.yaml").write_text(_doc_block("platform"))
    (tmp_path / "register.py").write_text(_doc_block("register"))
    prelude = f"HERE = {str(tmp_path)!r}\nexec(open({str(tmp_path / 'register.py')!r}).read())"
    stats = _elaborate(tmp_path / "demo.yaml", prelude)["stats"]
    assert _stat(stats, "gen", "requests") == 32
    assert _stat(stats, "gen", "errors") == 0
    assert _stat(stats, "mem", "accesses") == 32
    assert _stat(stats, "mem", "bytes") == 32 * 64
