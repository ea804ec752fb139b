"""Component parameters are declared once, in the registry: the C++ fields and defaults of every
built-in `Params` are generated from it (include/tlm_models/params_generated.h, checked in and
current), the compiled library refuses a declaration whose C++ field has another type, and the
docs tables are generated from it too."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from tlm_models.platform import cpp_fields
from tlm_models.platform.param_docs import doc_pages, render_page
from tlm_models.platform.registry import (
    ComponentType,
    component_type,
    register_component_type,
    unregister_component_type,
)
from tlm_models.runtime.kernel import systemc_paths


def test_the_checked_in_fields_header_is_the_generated_one() -> None:
    assert cpp_fields.BUILTIN_HEADER.read_text() == cpp_fields.builtin_header(), (
        "params_generated.h is stale: run python -m tlm_models.platform.cpp_fields"
    )
    assert cpp_fields.main(["--check"]) == 0


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


def test_the_generated_fields_follow_the_declaration() -> None:
    hbm = "\n".join(cpp_fields.fields_struct(_hbm()))
    drifted = "\n".join(cpp_fields.fields_struct(_drifted()))
    assert "  unsigned channels = 16;" in hbm and "  unsigned channels = 8;" in drifted
    assert "  std::uint64_t interleave = 256;" in hbm
    assert "  unsigned interleave = 256;" in drifted
    assert "  bool storage = false;" in hbm and "storage" not in drifted
    # Bounds: a minimum, a choice (wrapped at 100 columns), a NaN-proof positive double.
    assert '    if (channels < 1) return "channels must be at least 1";' in hbm
    assert (
        '    if (fidelity != "bandwidth" && fidelity != "bank")\n'
        "      return \"fidelity must be 'bandwidth' or 'bank', got '\" + fidelity + \"'\";"
    ) in hbm
    assert (
        '    if (!(channel_bandwidth >= 1.0)) return "channel_bandwidth must be at least 1 B/s";'
        in hbm
    )
    assert all(len(line) <= 100 for line in cpp_fields.builtin_header().splitlines())


@pytest.mark.parametrize(
    ("name", "value", "literal"),
    [
        ("channel_bandwidth", 8e9, "8e9"),
        ("channel_bandwidth", 1.5e9, "1.5e9"),
        ("channel_bandwidth", 12.8e9, "1.28e10"),
        ("channel_bandwidth", 0.1, "0.1"),
        ("channel_bandwidth", 3.0, "3.0"),
        ("latency", 100_000, "sc_core::sc_time(100, sc_core::SC_NS)"),
        ("latency", 1_500, "sc_core::sc_time(1500, sc_core::SC_PS)"),
        ("latency", 0, "sc_core::SC_ZERO_TIME"),
        ("size", 8 << 30, "8589934592"),
        ("address_mapping", 'a"b', '"a\\"b"'),
        ("storage", True, "true"),
    ],
)
def test_literals_hold_the_declared_value_exactly(name: str, value: object, literal: str) -> None:
    spec = _hbm().param(name)
    assert spec is not None
    assert cpp_fields.cpp_literal(spec, value) == literal  # type: ignore[arg-type]


def test_the_factory_asserts_each_field_type() -> None:
    asserts = cpp_fields.field_type_asserts(_drifted())
    assert (
        "static_assert(std::is_same_v<decltype(P::interleave), unsigned>, "
        '"hbm_drifted.interleave: the Params field of a count parameter must be unsigned");'
    ) in asserts
    assert len(asserts) == len(_drifted().params)


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


_DERIVED = """#include "fixed_latency_memory_params.h"
struct Params : user_models::FixedLatencyMemoryParamFields {
  std::string check() const { return check_fields(); }
};
static_assert(std::is_same_v<decltype(Params::size), std::uint64_t>, "size");
static_assert(std::is_same_v<decltype(Params::latency), sc_core::sc_time>, "latency");
"""


def test_the_component_guide_generates_its_fields(tmp_path: Path) -> None:
    from tests.test_platform_build import _doc_block

    namespace = {"HERE": str(tmp_path)}
    try:
        exec(_doc_block("register"), namespace)
        exec(_doc_block("fields"), namespace)
    finally:
        unregister_component_type("fixed_latency_memory")
    header = (tmp_path / "fixed_latency_memory_params.h").read_text()
    assert "namespace user_models {" in header
    assert "  std::uint64_t size = 1048576;" in header
    assert "  sc_core::sc_time latency = sc_core::sc_time(50, sc_core::SC_NS);" in header
    assert '    if (size < 1) return "size must be at least 1 B";' in header
    (tmp_path / "derived.cpp").write_text(_DERIVED)
    flags = ["-std=c++17", "-Wall", "-Wextra", "-Werror", *systemc_paths().cflags()]
    proc = subprocess.run(
        ["g++", *flags, f"-I{tmp_path}", "-fsyntax-only", str(tmp_path / "derived.cpp")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
