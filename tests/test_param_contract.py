"""Component parameters are declared once: the registry equals the C++ `Params` (defaults and
field types, through cppyy) and the docs tables are generated from it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from tlm_models.platform.param_docs import BUILTIN_TYPES, doc_pages, render_page
from tlm_models.platform.registry import (
    ComponentType,
    component_type,
    register_component_type,
    unregister_component_type,
)
from tlm_models.run.worker import run_in_worker
from tlm_models.runtime.cpp_contract import param_mismatches


def _mismatches_of_all(names: tuple[str, ...]) -> dict[str, list[str]]:
    return {name: param_mismatches(name) for name in names}


def test_every_builtin_declaration_equals_its_cpp_params() -> None:
    found = run_in_worker(_mismatches_of_all, BUILTIN_TYPES)
    assert found == {name: [] for name in BUILTIN_TYPES}


def _hbm() -> ComponentType:
    spec = component_type("hbm")
    assert spec is not None
    return spec


def _drifted() -> ComponentType:
    """The hbm declaration with one default changed, one kind changed and one field gone."""
    hbm = _hbm()
    params = []
    for p in hbm.params:
        if p.name == "channels":
            p = replace(p, default=8)
        elif p.name == "interleave":
            p = replace(p, kind="count", default=256)
        if p.name != "storage":
            params.append(p)
    return replace(hbm, name="hbm_drifted", params=tuple(params))


def _register_and_check(spec: ComponentType) -> list[str]:
    register_component_type(spec, replace=True)  # in the worker, which has its own registry
    return param_mismatches(spec.name)


def test_a_drifted_declaration_is_caught() -> None:
    found = run_in_worker(_register_and_check, _drifted())
    assert found == [
        "hbm_drifted.channels: default 8 = 8 but C++ has 16",
        "hbm_drifted.interleave: C++ type is not unsigned",
        "hbm_drifted.storage: in C++ Params, not declared",
    ]


@pytest.fixture()
def drifted_registered() -> Iterator[ComponentType]:
    spec = _drifted()
    register_component_type(spec)
    yield spec
    unregister_component_type(spec.name)


def test_docs_tables_are_the_generated_ones(drifted_registered: ComponentType) -> None:
    for page in doc_pages():
        text = page.read_text()
        assert render_page(text) == text, (
            f"{page} differs from the registry: run python -m tlm_models.platform.param_docs"
        )
    # A changed declaration changes the generated table.
    page = "<!-- params: hbm_drifted -->\n<!-- /params -->"
    assert "| `channels` | count | `unsigned` | — | 8 |" in render_page(page)


def test_cpp_types_and_ranges_follow_the_kind() -> None:
    hbm = _hbm()
    channels, latency, bandwidth = (
        hbm.param(n) for n in ("channels", "latency", "channel_bandwidth")
    )
    assert channels is not None and latency is not None and bandwidth is not None
    assert (channels.cpp_type, channels.cpp_max) == ("unsigned", 2**32 - 1)
    assert (latency.cpp_type, latency.cpp_max) == ("sc_core::sc_time", 2**64 - 1)
    assert (bandwidth.cpp_type, bandwidth.cpp_max) == ("double", None)


def _register_example_and_check(directory: str, register: str) -> list[str]:
    exec(register, {"HERE": directory})
    return param_mismatches("fixed_latency_memory")


def test_the_component_guide_example_matches_its_cpp_params(tmp_path: Path) -> None:
    from tests.test_platform_build import _doc_block

    (tmp_path / "fixed_latency_memory.h").write_text(_doc_block("header"))
    register = _doc_block("register")
    assert run_in_worker(_register_example_and_check, str(tmp_path), register) == []
    drifted = register.replace('"50 ns"', '"60 ns"')
    assert run_in_worker(_register_example_and_check, str(tmp_path), drifted) == [
        "fixed_latency_memory.latency: default '60 ns' = 60000 but C++ has 50000"
    ]
