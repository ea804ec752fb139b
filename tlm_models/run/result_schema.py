"""The JSON Schema of the result JSON, generated from the ``RunResult`` dataclasses.

``python -m tlm_models.run.result_schema`` rewrites
``tlm_models/run/schemas/result.schema.json``; a test fails when the shipped file and the classes
differ, and validates real results against it.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any, Union

from tlm_models.run.result import SCHEMA
from tlm_models.run.run_result import RunResult

__all__ = ["SCHEMA_FILE", "result_schema", "write_schema_file"]

SCHEMA_FILE = Path(__file__).resolve().parent / "schemas" / "result.schema.json"

_SCALARS: dict[object, dict[str, Any]] = {
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
}


def _schema_of(tp: Any, definitions: dict[str, Any]) -> dict[str, Any]:
    if tp in _SCALARS:
        return dict(_SCALARS[tp])
    if tp is Any:
        return {}
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return {"anyOf": [_schema_of(option, definitions) for option in typing.get_args(tp)]}
    if origin is dict:
        return {
            "type": "object",
            "additionalProperties": _schema_of(typing.get_args(tp)[1], definitions),
        }
    if origin is list:
        return {"type": "array", "items": _schema_of(typing.get_args(tp)[0], definitions)}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        name = tp.__name__
        if name not in definitions:
            definitions[name] = {}  # placeholder against recursion
            definitions[name] = _object_of(tp, definitions, closed=True)
        return {"$ref": f"#/$defs/{name}"}
    raise TypeError(f"no JSON Schema for {tp!r}")


def _object_of(cls: Any, definitions: dict[str, Any], closed: bool) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for f in dataclasses.fields(cls):
        if f.metadata.get("spread"):
            continue
        properties[f.name] = _schema_of(hints[f.name], definitions)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    if (cls.__doc__ or "").strip():
        schema["description"] = " ".join((cls.__doc__ or "").split())
    schema["additionalProperties"] = not closed
    return schema


def result_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a ``RunResult``; other sections may be added."""
    definitions: dict[str, Any] = {}
    top = _object_of(RunResult, definitions, closed=False)
    top["properties"]["schema"] = {"const": SCHEMA}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:{SCHEMA.replace('/', ':')}",
        "title": f"attn-tlm run result ({SCHEMA})",
        **top,
        "$defs": dict(sorted(definitions.items())),
    }


def write_schema_file(path: Path = SCHEMA_FILE) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result_schema(), indent=2) + "\n")
    return path


if __name__ == "__main__":
    print(f"wrote {write_schema_file()}", file=sys.stderr)
