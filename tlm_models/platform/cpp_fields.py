"""The C++ side of each component's parameters, generated from their one declaration (the registry).

Every parameter is declared once, in :mod:`tlm_models.platform.registry` (name, kind, unit,
default, bounds, doc line). From it this module writes, per component type, a struct of the
``Params`` fields (the kind's C++ type, the declared default in SI units, the doc line as a
comment) with ``check_fields()``, which rejects a field outside its declared bounds (a
minimum, a choice); the model's ``Params`` derives from it and adds only the rules that join
several fields. The built-in types' structs are checked in as
``include/tlm_models/params_generated.h`` so that the headers stay usable without Python;
``python -m tlm_models.platform.cpp_fields`` rewrites it and ``--check`` fails when it is stale
(a test runs the check).

A user's own type may generate its struct the same way (:func:`fields_header`); whichever way
its ``Params`` is written, the compiled library's factory asserts at build time that every
declared field exists with its kind's C++ type (:func:`field_type_asserts`), and a run sets
every field from the declaration.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from pathlib import Path

from tlm_models.platform.param_docs import BUILTIN_TYPES
from tlm_models.platform.registry import (
    KIND_UNITS,
    ComponentType,
    ParamSpec,
    ParamValue,
    component_types,
)
from tlm_models.platform.validate import convert_param

__all__ = [
    "BUILTIN_HEADER",
    "builtin_header",
    "field_type_asserts",
    "fields_header",
    "fields_struct_name",
]

#: The checked-in header of the built-in types' fields (the models include it).
BUILTIN_HEADER = (
    Path(__file__).resolve().parent.parent / "include" / "tlm_models" / "params_generated.h"
)
_COMMAND = "python -m tlm_models.platform.cpp_fields"
_COLUMNS = 100


def fields_struct_name(spec: ComponentType) -> str:
    """The generated struct of ``spec``'s fields (``HbmMemoryParamFields``), in its namespace."""
    return f"{spec.qualified_class.rsplit('::', 1)[-1]}ParamFields"


def _namespace(spec: ComponentType) -> str:
    return spec.qualified_class.rsplit("::", 1)[0]


def _double(value: float) -> str:
    """A C++ double literal of ``value`` as people write it (``8e9``, ``1.5e9``, ``0.5``)."""
    text = f"{value:g}"
    if float(text) != value:
        text = repr(value)
    text = re.sub(r"e\+?0*(\d)", r"e\1", text).replace("e-0", "e-")
    return text if any(c in text for c in ".en") else f"{text}.0"


def _time(ps: int) -> str:
    if ps == 0:
        return "sc_core::SC_ZERO_TIME"
    if ps % 1000 == 0:
        return f"sc_core::sc_time({ps // 1000}, sc_core::SC_NS)"
    return f"sc_core::sc_time({ps}, sc_core::SC_PS)"


def _escaped(text: str) -> str:
    """``text`` as the inside of a C++ string literal."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _string(text: str) -> str:
    return f'"{_escaped(text)}"'


def cpp_literal(spec: ParamSpec, value: ParamValue) -> str:
    """``value`` (in the kind's unit, as :func:`convert_param` returns it) as a C++ expression
    of the field's type."""
    if spec.kind == "time":
        return _time(int(value))
    if spec.kind in ("bandwidth", "frequency"):
        return _double(float(value))
    if spec.kind in ("choice", "text"):
        return _string(str(value))
    if spec.kind == "bool":
        return "true" if value else "false"
    if spec.kind == "address":
        return f"{int(value):#x}ull" if value else "0"
    # Beyond a signed 64-bit literal g++ warns that the constant is unsigned.
    return f"{int(value)}ull" if int(value) >= 2**63 else str(int(value))


def _comment(spec: ParamSpec) -> str:
    """The doc line, then the unit and the YAML spelling of the default where they say more."""
    notes = []
    spelled = isinstance(spec.default, str) and spec.default and spec.kind not in ("choice", "text")
    if spec.unit or (spec.display_unit and not spelled and spec.kind != "time"):
        notes.append(spec.display_unit)  # a spelled default ("8 GB/s") carries its SI unit
    if spelled:
        notes.append(str(spec.default))
    return f"{spec.description} ({'; '.join(notes)})" if notes else spec.description


def _field(spec: ParamSpec) -> list[str]:
    if spec.default is None:  # a required parameter: every platform sets it
        decl = f"{spec.cpp_type} {spec.name}{{}};"
    elif spec.kind in ("choice", "text") and spec.default == "":
        decl = f"{spec.cpp_type} {spec.name};"
    else:
        value = convert_param(spec, spec.default)
        decl = f"{spec.cpp_type} {spec.name} = {cpp_literal(spec, value)};"
    return [f"  // {line}" for line in _wrap(_comment(spec), _COLUMNS - 5)] + [f"  {decl}"]


def _wrap(text: str, width: int, separator: str = " ") -> list[str]:
    """``text``'s pieces (split at ``separator``, which ends each line but the last) filled
    into lines of at most ``width`` characters."""
    lines: list[str] = []
    for piece in text.split(separator):
        if lines and len(lines[-1]) + len(separator) + len(piece) <= width:
            lines[-1] += separator + piece
        else:
            lines.append(piece)
    return [line + separator.rstrip() for line in lines[:-1]] + lines[-1:]


def _if_return(test: str, message: str, name: str | None = None) -> list[str]:
    """``if (test) return "message"`` (+ the field's value when ``name`` is given), wrapped at
    100 columns."""
    value = f' + {name} + "\'"' if name else ""
    message = _escaped(message)
    one_line = f'    if ({test}) return "{message}"{value};'
    if len(one_line) <= _COLUMNS:
        return [one_line]
    tests = _wrap(test, _COLUMNS - 9, " && ")
    lines = [f"    if ({tests[0]}"] + [f"        {t}" for t in tests[1:]]
    lines[-1] += ")"
    pieces = _wrap(message, _COLUMNS - 16)
    said = [f'"{piece} "' for piece in pieces[:-1]] + [f'"{pieces[-1]}"{value};']
    return [*lines, f"      return {said[0]}", *(f"             {p}" for p in said[1:])]


def _quoted_choices(choices: tuple[str, ...]) -> str:
    quoted = [f"'{c}'" for c in choices]
    return ", ".join(quoted[:-1]) + f" or {quoted[-1]}" if len(quoted) > 1 else quoted[0]


def _bound_check(spec: ParamSpec) -> list[str]:
    """The C++ test of ``spec``'s declared bounds (none for a bool, a text or a zero minimum)."""
    name = spec.name
    if spec.kind == "choice":
        test = " && ".join(f"{name} != {_string(c)}" for c in spec.choices)
        return _if_return(test, f"{name} must be {_quoted_choices(spec.choices)}, got '", name)
    if spec.minimum <= 0 or spec.kind in ("bool", "text"):
        return []
    unit = KIND_UNITS[spec.kind]
    message = f"{name} must be at least {spec.minimum}{' ' + unit if unit else ''}"
    if spec.kind in ("bandwidth", "frequency"):  # a NaN fails too
        return _if_return(f"!({name} >= {_double(float(spec.minimum))})", message)
    if spec.kind == "time":
        return _if_return(f"{name} < {_time(spec.minimum)}", message)
    return _if_return(f"{name} < {spec.minimum}", message)


def fields_struct(spec: ComponentType) -> list[str]:
    """The struct of ``spec``'s ``Params`` fields with their defaults and ``check_fields()``."""
    struct = fields_struct_name(spec)
    owner = spec.qualified_class.rsplit("::", 1)[-1]
    lines = [
        f"// `{spec.name}`: {spec.description}." if spec.description else f"// `{spec.name}`.",
        f"// The fields of {owner}::Params ({spec.header}).",
        f"struct {struct} {{",
    ]
    for param in spec.params:
        lines += _field(param)
    checks = [line for param in spec.params for line in _bound_check(param)]
    lines += [
        "",
        "  // The first field outside its declared bounds; empty when every field is in them.",
        "  std::string check_fields() const {",
        *checks,
        '    return "";',
        "  }",
        "};",
    ]
    return lines


def fields_header(types: Iterable[ComponentType], guard: str, command: str = _COMMAND) -> str:
    """A header of the fields structs of ``types`` (include guard ``guard``), saying it was
    generated by ``command``."""
    types = list(types)
    lines = [
        f"// Generated by `{command}` from the component registry, where",
        "// each parameter is declared once (built-in types: tlm_models/platform/registry.py).",
        "// Do not edit: change the declaration and regenerate.",
        "// Each model's Params derives from its struct below: the fields (YAML parameter names,",
        "// SI values: sizes in bytes, bandwidths in B/s, frequencies in Hz), their defaults and",
        "// check_fields(); the model's Params::check() adds the rules that join fields.",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <cstdint>",
        "#include <string>",
        "",
        "#include <systemc>",
    ]
    namespace = None
    for spec in types:
        if _namespace(spec) != namespace:
            if namespace is not None:
                lines += ["", f"}}  // namespace {namespace}"]
            namespace = _namespace(spec)
            lines += ["", f"namespace {namespace} {{"]
        lines += ["", *fields_struct(spec)]
    if namespace is not None:
        lines += ["", f"}}  // namespace {namespace}"]
    lines += ["", f"#endif  // {guard}", ""]
    return "\n".join(lines)


def builtin_header() -> str:
    """The text ``include/tlm_models/params_generated.h`` must have."""
    types = component_types()
    return fields_header((types[name] for name in BUILTIN_TYPES), "TLM_MODELS_PARAMS_GENERATED_H")


def field_type_asserts(spec: ComponentType, params: str = "P") -> list[str]:
    """C++ ``static_assert``s that ``params`` (a ``Params`` type) has every declared field, each
    of its kind's C++ type: a declaration and a model that disagree fail the library build."""
    return [
        f"static_assert(std::is_same_v<decltype({params}::{p.name}), {p.cpp_type}>, "
        f'"{spec.name}.{p.name}: the Params field of a {p.kind} parameter must be {p.cpp_type}");'
        for p in spec.params
    ]


def main(argv: list[str] | None = None) -> int:
    """Rewrites ``params_generated.h`` from the registry; ``--check``: exit 1 when it differs."""
    parser = argparse.ArgumentParser(prog=_COMMAND, description=main.__doc__)
    parser.add_argument("--check", action="store_true", help="only say whether it is current")
    args = parser.parse_args(argv)
    text = builtin_header()
    current = BUILTIN_HEADER.read_text() if BUILTIN_HEADER.exists() else ""
    if text == current:
        return 0
    if args.check:
        print(f"{BUILTIN_HEADER} is stale: run {_COMMAND}", file=sys.stderr)
        return 1
    BUILTIN_HEADER.write_text(text)
    print(f"rewrote {BUILTIN_HEADER}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
