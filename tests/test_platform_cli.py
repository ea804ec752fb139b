"""`attn-tlm platform check|show`: exit codes, and show --json stable and equal to the YAML."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tlm_models.cli import main as cli_main
from tlm_models.units import parse_bandwidth, parse_frequency, parse_size, parse_time

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = sorted((ROOT / "platforms").glob("*.yaml"))


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli_main.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _yaml_components(path: Path) -> dict[str, dict[str, Any]]:
    """The components as written, includes merged, read with plain PyYAML (not our loader);
    a `tiles:` template's components once per tile, as `tile{i}_<name>`."""
    raw = yaml.safe_load(path.read_text())
    written = dict(raw["components"])
    tiles = raw.get("tiles")
    if tiles:
        for i in range(tiles["count"]):
            written.update({f"tile{i}_{n}": c for n, c in tiles["template"]["components"].items()})
    result = {}
    for name, comp in written.items():
        if "include" in comp:
            included = yaml.safe_load((path.parent / comp["include"]).read_text())
            comp = {**included, **{k: v for k, v in comp.items() if k != "include"}}
        result[name] = comp
    return result


_PARSERS = {"B": parse_size, "B/s": parse_bandwidth, "Hz": parse_frequency, "ps": parse_time}


@pytest.mark.parametrize("path", REFERENCE, ids=lambda p: p.stem)
def test_show_json_matches_the_yaml(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["platform", "show", str(path), "--json"], capsys)
    assert code == 0
    shown = json.loads(out)
    written = _yaml_components(path)
    assert set(shown["components"]) == set(written)
    for name, comp in written.items():
        params = shown["components"][name]["params"]
        assert shown["components"][name]["type"] == comp["type"]
        assert shown["components"][name].get("energy") == comp.get("energy"), f"{name}.energy"
        for key, value in comp.items():
            if key in ("type", "role", "energy"):
                continue
            entry = params[key]
            parse = _PARSERS.get(entry["unit"])
            assert entry["value"] == (parse(value) if parse else value), f"{name}.{key}"
    raw = yaml.safe_load(path.read_text())
    assert shown["name"] == raw["name"]
    # A tiled platform's shared bindings, windows and engines come first, then every tile's.
    shared = [" ".join(b.split()) for b in raw["bindings"]]
    assert shown["bindings"][: len(shared)] == shared
    windows = [a["base"] for a in raw["address_map"]]
    assert [a["base"] for a in shown["address_map"]][: len(windows)] == windows
    engines = {k: v["path"] for k, v in shown["engines"].items()}
    if "tiles" in raw:
        template = raw["tiles"]["template"]["engines"]
        assert engines["tile0_pe"] == "tile0_" + template["pe"]
        assert len(engines) == raw["tiles"]["count"] * len(template) + len(raw.get("engines", {}))
    else:
        assert engines == raw["engines"]


@pytest.mark.parametrize("path", REFERENCE, ids=lambda p: p.stem)
def test_show_json_is_stable(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = _run(["platform", "show", str(path), "--json"], capsys)[1]
    second = _run(["platform", "show", str(path), "--json"], capsys)[1]
    assert first == second
    assert first == json.dumps(json.loads(first), sort_keys=True, indent=2) + "\n"


def test_show_json_derived(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(["platform", "show", str(ROOT / "platforms/attenio.yaml"), "--json"], capsys)
    derived = json.loads(out)["derived"]
    assert derived["pe_flops"] == 4.096e12
    assert derived["offchip_bandwidth"] == 128e9
    assert derived["machine_balance"] == 32.0
    assert derived["onchip_elements"] == 262144


def test_show_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["platform", "show", str(ROOT / "platforms/attenio.yaml")], capsys)
    assert code == 0
    assert re.search(r"channel_bandwidth +8 GB/s", out)
    assert "capacity    512 KiB" in out
    assert "dma_noc.out[0] -> hbm.target" in out
    assert "routed by dma_noc.out[0]" in out
    assert "4.096 TFLOP/s" in out
    assert "262,144 elements" in out


def test_check_with_overrides(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(ROOT / "platforms/attenio.yaml")
    code, out, _ = _run(["platform", "check", path], capsys)
    assert (code, "ok") == (0, out.split(": ")[1])
    code, out, _ = _run(
        [
            "platform",
            "show",
            path,
            "--json",
            "--set",
            "sram.capacity=256KiB",
            "--set",
            "hbm.channels=8",
        ],
        capsys,
    )
    shown = json.loads(out)
    assert code == 0
    assert shown["components"]["sram"]["params"]["capacity"]["value"] == 262144
    assert shown["derived"]["offchip_bandwidth"] == 64e9
    code, _, err = _run(["platform", "check", path, "--set", "hbm.channels=8GB"], capsys)
    assert code == 2
    assert "--set hbm.channels=8GB: components.hbm.channels" in err


def test_check_refuses_the_element_widths_run_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(ROOT / "platforms/attenio.yaml")
    code, _, err = _run(["platform", "check", path, "--set", "pe.elem_bytes=4B"], capsys)
    assert code == 2
    assert "pe.elem_bytes = 4 B but exp.elem_bytes = 2 B" in err
    wide = ["--set", "pe.elem_bytes=4B", "--set", "exp.elem_bytes=4B"]
    code, out, _ = _run(["platform", "check", path, *wide], capsys)
    assert (code, "ok") == (0, out.split(": ")[1])
