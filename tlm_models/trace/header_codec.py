"""TraceHeader <-> plain JSON-able dict, with the checks every trace reader shares.

The binary form stores this dict as JSON; the text form builds it from its header lines. Both
validate through :func:`header_from_dict` so a bad header gets the same message either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tlm_models.errors import UserError
from tlm_models.trace.header import (
    FORMAT_NAME,
    FORMAT_VERSION,
    MAX_WINDOW,
    TensorInfo,
    TraceHeader,
)
from tlm_models.trace.record import NO_TENSOR

HEADER_KEYS = (
    "format",
    "version",
    "dataflow",
    "params",
    "elem_bytes",
    "tensors",
    "engines",
    "window",
    "op_count",
)
TENSOR_SPACES = ("offchip", "onchip")
# The record's engine and tensor fields are one byte; 0xFF means "no tensor".
MAX_ENGINES = 256
MAX_TENSORS = NO_TENSOR


def header_to_dict(header: TraceHeader) -> dict[str, Any]:
    """The header as the JSON object the binary format stores (keys in HEADER_KEYS order)."""
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "dataflow": header.dataflow,
        "params": _plain(header.params),
        "elem_bytes": int(header.elem_bytes),
        "tensors": [tensor_to_dict(t) for t in header.tensors],
        "engines": list(header.engines),
        "window": int(header.window),
        "op_count": int(header.op_count),
    }


def tensor_to_dict(tensor: TensorInfo) -> dict[str, Any]:
    return {
        "name": tensor.name,
        "base": int(tensor.base),
        "shape": [int(s) for s in tensor.shape],
        "elem_bytes": int(tensor.elem_bytes),
        "space": tensor.space,
    }


def header_from_dict(data: object, where: str) -> TraceHeader:
    """Validate a decoded header object; ``where`` names the file (and line) for messages."""
    if not isinstance(data, Mapping):
        raise UserError(f"{where}: trace header must be a JSON object, got {type(data).__name__}")
    missing = [k for k in HEADER_KEYS if k not in data]
    if missing:
        raise UserError(f"{where}: trace header is missing key(s) {', '.join(missing)}")
    unknown = sorted(set(data) - set(HEADER_KEYS))
    if unknown:
        raise UserError(
            f"{where}: unknown trace header key(s) {', '.join(map(str, unknown))}; "
            f"expected {', '.join(HEADER_KEYS)}"
        )
    if data["format"] != FORMAT_NAME:
        raise UserError(f"{where}: header format is {data['format']!r}, expected {FORMAT_NAME!r}")
    version = _int(data, "version", where, 0)
    if version != FORMAT_VERSION:
        raise UserError(
            f"{where}: trace format version {version} is not supported "
            f"(this build reads version {FORMAT_VERSION})"
        )
    dataflow = data["dataflow"]
    if not isinstance(dataflow, str):
        raise UserError(f"{where}: header 'dataflow' must be a string")
    params = data["params"]
    if not isinstance(params, dict):
        raise UserError(f"{where}: header 'params' must be a JSON object")
    engines = data["engines"]
    if (
        not isinstance(engines, list)
        or not all(isinstance(e, str) and e for e in engines)
        or len(engines) > MAX_ENGINES
    ):
        raise UserError(
            f"{where}: header 'engines' must be a list of at most {MAX_ENGINES} non-empty names"
        )
    if len(set(engines)) != len(engines):
        raise UserError(f"{where}: header 'engines' has duplicate names: {engines}")
    tensors_raw = data["tensors"]
    if not isinstance(tensors_raw, list) or len(tensors_raw) > MAX_TENSORS:
        raise UserError(f"{where}: header 'tensors' must be a list of at most {MAX_TENSORS}")
    tensors = [_tensor(t, f"{where}: tensor {i}") for i, t in enumerate(tensors_raw)]
    names = [t.name for t in tensors]
    if len(set(names)) != len(names):
        raise UserError(f"{where}: header 'tensors' has duplicate names: {names}")
    return TraceHeader(
        dataflow=dataflow,
        engines=list(engines),
        tensors=tensors,
        params=dict(params),
        elem_bytes=_int(data, "elem_bytes", where, 1, 64),
        window=_int(data, "window", where, 1, MAX_WINDOW),
        op_count=_int(data, "op_count", where, 0),
    )


def _tensor(raw: object, where: str) -> TensorInfo:
    if not isinstance(raw, Mapping):
        raise UserError(f"{where}: must be an object with name, base, shape, elem_bytes, space")
    for key in ("name", "base", "shape", "elem_bytes", "space"):
        if key not in raw:
            raise UserError(f"{where}: missing key {key!r}")
    name, shape, space = raw["name"], raw["shape"], raw["space"]
    if not isinstance(name, str) or not name:
        raise UserError(f"{where}: 'name' must be a non-empty string")
    if not isinstance(shape, list) or not all(_is_int(s) and s >= 0 for s in shape):
        raise UserError(f"{where} ({name}): 'shape' must be a list of non-negative integers")
    if space not in TENSOR_SPACES:
        raise UserError(f"{where} ({name}): 'space' is {space!r}, expected one of {TENSOR_SPACES}")
    return TensorInfo(
        name=name,
        base=_int(raw, "base", f"{where} ({name})", 0, (1 << 64) - 1),
        shape=tuple(int(s) for s in shape),
        elem_bytes=_int(raw, "elem_bytes", f"{where} ({name})", 1, 64),
        space=str(space),
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int(data: Mapping[str, Any], key: str, where: str, lo: int, hi: int | None = None) -> int:
    value = data[key]
    if not _is_int(value) or value < lo or (hi is not None and value > hi):
        bound = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise UserError(f"{where}: header {key!r} is {value!r}, expected an integer {bound}")
    return int(value)


def _plain(value: Any) -> Any:
    """Params as plain JSON types: numpy scalars and tuples from emitters become int/float/list."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    return value
