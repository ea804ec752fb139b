"""Checks a component type's parameter declaration against its C++ ``Params`` through cppyy.

The registry declares each parameter once (name, kind, default); the C++ model declares the
same ``Params`` field with its own default. ``param_mismatches`` lists every difference:
a field on one side only, a C++ type other than the kind's, a default that differs. Runs in
a simulation process (it loads SystemC): ``run_in_worker(param_mismatches, "hbm")``; a user's
own registered type is checked the same way (docs/platforms.md, "Adding a component type").
"""

from __future__ import annotations

import math
from typing import Any

from tlm_models.platform.registry import ComponentType, ParamSpec, component_type
from tlm_models.platform.validate import convert_param
from tlm_models.runtime.bound_platform import load_component_header

__all__ = ["param_mismatches"]


def _types_checker(gbl: Any, spec: ComponentType) -> Any:
    """A C++ function returning the fields whose type differs from their kind's C++ type."""
    import cppyy

    fn = f"attn_tlm_param_types_{spec.name}"
    if not hasattr(gbl, fn):
        checks = "".join(
            f"  if (!std::is_same<decltype(P::{p.name}), {p.cpp_type}>::value)"
            f' bad += "{p.name} ";\n'
            for p in spec.params
        )
        cppyy.cppdef(
            f"#include <type_traits>\nstd::string {fn}() {{\n"
            f"  using P = {spec.qualified_class}::Params;\n  std::string bad;\n{checks}"
            "  return bad;\n}\n"
        )
    return getattr(gbl, fn)


def _cpp_value(p: ParamSpec, value: Any) -> object:
    """A C++ field's value in the unit the registry holds it in (time: picoseconds)."""
    if p.kind == "time":
        return round(value.to_seconds() * 1e12)
    if p.kind in ("choice", "text"):
        return str(value)
    return value


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b)
    return a == b and type(a) is type(b)


def param_mismatches(type_name: str) -> list[str]:
    """Every difference between the registry's ``type_name`` and its C++ ``Params``."""
    from tlm_models.runtime import kernel

    spec = component_type(type_name)
    if spec is None:
        return [f"component type '{type_name}' is not registered"]
    gbl = kernel.load_models()
    load_component_header(spec)
    cls = gbl
    for part in spec.qualified_class.split("::"):
        cls = getattr(cls, part)
    params = cls.Params()
    cpp_fields = {n for n in dir(cls.Params) if not n.startswith("_") and n != "check"}
    declared = {p.name for p in spec.params}
    problems = [f"{type_name}.{n}: in C++ Params, not declared" for n in cpp_fields - declared]
    problems += [f"{type_name}.{n}: declared, not in C++ Params" for n in declared - cpp_fields]
    wrong_type = str(_types_checker(gbl, spec)()).split()
    problems += [
        f"{type_name}.{n}: C++ type is not {spec.param(n).cpp_type}"  # type: ignore[union-attr]
        for n in wrong_type
    ]
    for p in spec.params:
        if p.name not in cpp_fields or p.name in wrong_type:
            continue
        cpp = _cpp_value(p, getattr(params, p.name))
        declared_value = convert_param(p, p.default)
        if not _same(cpp, declared_value):
            problems.append(
                f"{type_name}.{p.name}: default {p.default!r} = {declared_value!r} "
                f"but C++ has {cpp!r}"
            )
    return sorted(problems)
