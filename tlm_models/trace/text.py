"""The text trace form: one operation per line, for people and hand-written tests.

Grammar (traces/README.md has the full spec)::

    # comment                       blank lines and '#' comments anywhere
    dataflow: demo                  header lines `key: value`, before the first operation
    engines: dma0 pe exp
    tensor: Q offchip base=0x0 shape=128x64
    0 load dma0 tensor=Q m=1 n=128 src0=0x0 dst=0x100000000
    1 matmul pe m=1 n=1 k=64 src0=... src1=... dst=... flags=trans_b deps=0

An operation is ``[ID] KIND ENGINE key=value...``. ``deps`` lists *absolute* ids of earlier
operations (friendlier to write by hand); they are stored as back-distances. Text traces are
read whole: they are meant to be small.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from tlm_models.errors import UserError
from tlm_models.files.bounded_input import loads_json, read_text_bounded
from tlm_models.files.output_file import atomic_output
from tlm_models.trace.header import DEFAULT_WINDOW, FORMAT_NAME, FORMAT_VERSION, TraceHeader
from tlm_models.trace.header_codec import header_from_dict
from tlm_models.trace.record import (
    BROADCAST_NAMES,
    BROADCAST_SHIFT,
    KIND_NAMES,
    MATMUL_ACCUMULATE,
    MATMUL_FLAGS,
    MATMUL_SCALE_ROWS,
    MATMUL_TRANS_B,
    MAX_DEPS,
    NO_TENSOR,
    RECORD_DTYPE,
    RESCALE,
    STREAMED,
    VECTOR_LAZY_ROWS,
    VECTOR_OP_NAMES,
    Broadcast,
    OpKind,
    bits_float,
    float_bits,
    split_src2,
    src2,
)

MATMUL_FLAG_NAMES = {
    MATMUL_TRANS_B: "trans_b",
    MATMUL_ACCUMULATE: "acc",
    MATMUL_SCALE_ROWS: "scale_rows",
    STREAMED: "stream",
}
#: The flags exp records take: forwarding, and the rescale tag (statistics only).
STREAM_FLAG = {STREAMED: "stream", RESCALE: "rescale"}
#: A vector record's flags: forwarding, and the rescale of k rows (lazy or every row).
VECTOR_FLAG_NAMES = {STREAMED: "stream", VECTOR_LAZY_ROWS: "lazy_rows"}

# Raw record fields settable on any line, with their upper bounds.
_U8, _U32, _U64 = 0xFF, 0xFFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF
RAW_FIELDS = {
    "m": _U32,
    "n": _U32,
    "k": _U32,
    "src0": _U64,
    "src1": _U64,
    "dst": _U64,
    "src_stride": _U32,
    "dst_stride": _U32,
    "code": _U8,
}
FRIENDLY_FIELDS = ("tensor", "deps", "op", "bcast", "flags", "scalar", "src2")
ADDRESS_FIELDS = ("src0", "src1", "dst")
# Fields the writer always prints for a kind (others only when non-zero).
_PRIMARY = {
    OpKind.LOAD: ("m", "n", "src0", "dst"),
    OpKind.STORE: ("m", "n", "src0", "dst"),
    OpKind.MATMUL: ("m", "n", "k", "src0", "src1", "dst"),
    OpKind.VECTOR: ("m", "n", "src0", "src1", "dst"),
    OpKind.EXP: ("m", "n", "src0", "dst"),
}
_FIELD_ORDER = ("m", "n", "k", "src0", "src1", "dst", "src_stride", "dst_stride")


# ----------------------------------------------------------------------------------- reading


#: The text form is for small, hand-written or hand-read traces (about 100 B an operation, all
#: parsed in memory): 256 MiB is some 2.5 M operations, minutes of parsing. Larger traces are
#: binary, which is read in place.
MAX_TEXT_TRACE_BYTES = 256 << 20


def read_text(path: str | os.PathLike[str]) -> tuple[TraceHeader, np.ndarray]:
    """Parse a text trace into its header and a RECORD_DTYPE array."""
    path = Path(path)
    lines = read_text_bounded(path, "text trace", MAX_TEXT_TRACE_BYTES).splitlines()
    return parse_text(lines, str(path))


def parse_text(lines: Iterable[str], name: str = "<text>") -> tuple[TraceHeader, np.ndarray]:
    """Parse text-form lines; ``name`` is used in messages as ``name:line``."""
    header_lines: dict[str, tuple[int, str]] = {}
    tensor_lines: list[tuple[int, str]] = []
    op_lines: list[tuple[int, str]] = []
    end: tuple[int, str] | None = None
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if end is not None:
            raise UserError(f"{name}:{lineno}: a line after 'end:' (line {end[0]})")
        key, colon, value = line.partition(":")
        if colon and key == "end":
            end = (lineno, value.split("#", 1)[0].strip())
            continue
        if colon and " " not in key and "=" not in key and not key.isdigit():
            if op_lines:
                raise UserError(
                    f"{name}:{lineno}: header line {key!r} after the first operation; "
                    "header lines come first"
                )
            if key == "tensor":
                tensor_lines.append((lineno, value.split("#", 1)[0].strip()))
            elif key in header_lines:
                raise UserError(f"{name}:{lineno}: header key {key!r} given twice")
            else:
                # params is JSON and may contain '#'; other header values end at a comment
                text = value if key == "params" else value.split("#", 1)[0]
                header_lines[key] = (lineno, text.strip())
        else:
            op_lines.append((lineno, line))
    header = _parse_header(header_lines, tensor_lines, name)
    parser = _OpParser(header, name)
    rows = [parser.parse(index, lineno, line) for index, (lineno, line) in enumerate(op_lines)]
    records = np.array(rows, dtype=RECORD_DTYPE) if rows else np.empty(0, RECORD_DTYPE)
    _check_count(header_lines, end, len(records), name)
    header.op_count = len(records)
    return header, records


def _check_count(
    header_lines: dict[str, tuple[int, str]], end: tuple[int, str] | None, count: int, name: str
) -> None:
    """A written trace ends with `end: <count>`, so one cut at a line boundary is not taken for a
    shorter trace; hand-written traces (no `format:` line) may leave it out. `op_count:` in the
    header, when given, must tell the truth too."""
    if end is None and "format" in header_lines:
        raise UserError(
            f"{name}: no 'end: <count>' line after the last operation: the trace is cut short "
            f"({count} operations read; written traces end with 'end:')"
        )
    declared_by = [(*end, "end:")] if end else []
    if "op_count" in header_lines:
        declared_by.append((*header_lines["op_count"], "op_count:"))
    for lineno, value, what in declared_by:
        declared = _int(value, f"{name}:{lineno}: {what}", _U64)
        if declared != count:
            raise UserError(
                f"{name}:{lineno}: {what} says {declared} operations, the file has {count} "
                "(cut short or edited)"
            )


_HEADER_KEYS = ("format", "dataflow", "engines", "elem_bytes", "window", "params", "op_count")


def _parse_header(
    lines: dict[str, tuple[int, str]], tensor_lines: list[tuple[int, str]], name: str
) -> TraceHeader:
    for key, (lineno, _) in lines.items():
        if key not in _HEADER_KEYS:
            raise UserError(
                f"{name}:{lineno}: unknown header key {key!r}; expected one of "
                f"{', '.join((*_HEADER_KEYS, 'tensor'))}"
            )
    for key in ("dataflow", "engines"):
        if key not in lines:
            raise UserError(f"{name}: text trace has no '{key}:' header line")
    if "format" in lines:
        lineno, value = lines["format"]
        if value.split() != [FORMAT_NAME, str(FORMAT_VERSION)]:
            raise UserError(
                f"{name}:{lineno}: format is {value!r}, expected '{FORMAT_NAME} {FORMAT_VERSION}'"
            )
    data: dict[str, Any] = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "dataflow": lines["dataflow"][1],
        "engines": lines["engines"][1].split(),
        "elem_bytes": 2,
        "window": DEFAULT_WINDOW,
        "params": {},
        "tensors": [],
        "op_count": 0,
    }
    for key in ("elem_bytes", "window"):
        if key in lines:
            lineno, value = lines[key]
            data[key] = _int(value, f"{name}:{lineno}: {key}", _U64)
    if "params" in lines:
        lineno, value = lines["params"]
        data["params"] = loads_json(value, f"{name}:{lineno}", "params object")
    data["tensors"] = [_parse_tensor(v, f"{name}:{n}", data["elem_bytes"]) for n, v in tensor_lines]
    where = f"{name}:{lines['dataflow'][0]}"
    return header_from_dict(data, where)


def _parse_tensor(value: str, where: str, elem_bytes: int) -> dict[str, Any]:
    tokens = value.split()
    if len(tokens) < 2:
        raise UserError(f"{where}: expected 'tensor: NAME SPACE base=ADDR shape=AxB[...]'")
    fields = _key_values(tokens[2:], where, ("base", "shape", "elem_bytes"))
    if "base" not in fields or "shape" not in fields:
        raise UserError(f"{where}: tensor {tokens[0]!r} needs base= and shape=")
    shape_text = fields["shape"]
    shape = [_int(s, f"{where}: shape", _U64) for s in shape_text.split("x")] if shape_text else []
    return {
        "name": tokens[0],
        "space": tokens[1],
        "base": _int(fields["base"], f"{where}: base", _U64),
        "shape": shape,
        "elem_bytes": _int(fields.get("elem_bytes", str(elem_bytes)), f"{where}: elem_bytes", 64),
    }


def _key_values(tokens: list[str], where: str, allowed: Iterable[str]) -> dict[str, str]:
    allowed = tuple(allowed)
    fields: dict[str, str] = {}
    for token in tokens:
        key, eq, value = token.partition("=")
        if not eq:
            raise UserError(f"{where}: expected key=value, got {token!r}")
        if key not in allowed:
            raise UserError(f"{where}: unknown field {key!r}; expected one of {', '.join(allowed)}")
        if key in fields:
            raise UserError(f"{where}: field {key!r} given twice")
        fields[key] = value
    return fields


def _int(text: str, where: str, hi: int, lo: int = 0) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise UserError(f"{where}: {text!r} is not an integer (decimal or 0x hex)") from None
    if not lo <= value <= hi:
        raise UserError(f"{where}: {value} is out of range {lo}..{hi}")
    return value


def _name_or_index(text: str, names: list[str], where: str, what: str, hi: int) -> int:
    if text in names:
        return names.index(text)
    if text.isdigit():
        return _int(text, where, hi)
    raise UserError(f"{where}: unknown {what} {text!r}; expected one of {', '.join(names)}")


class _OpParser:
    """Turns one operation line into a record tuple in RECORD_DTYPE field order."""

    def __init__(self, header: TraceHeader, name: str) -> None:
        self.header = header
        self.name = name
        self.tensor_names = [t.name for t in header.tensors]
        self.kind_ids = {v: k for k, v in KIND_NAMES.items()}

    def parse(self, index: int, lineno: int, line: str) -> tuple[Any, ...]:
        where = f"{self.name}:{lineno}"
        tokens = line.split("#", 1)[0].split()
        if tokens[0].isdigit():
            op_id = int(tokens[0])
            if op_id != index:
                raise UserError(
                    f"{where}: operation id {op_id} out of sequence, expected {index} "
                    "(ids count operations from 0; the id may be left out)"
                )
            tokens = tokens[1:]
        if len(tokens) < 2:
            raise UserError(f"{where}: expected '[ID] KIND ENGINE key=value...'")
        kind_text, engine_text = tokens[0], tokens[1]
        if kind_text in self.kind_ids:
            kind = self.kind_ids[kind_text]
        elif kind_text.isdigit():
            kind = _int(kind_text, f"{where}: kind", _U8)
        else:
            raise UserError(
                f"{where}: unknown operation kind {kind_text!r}; expected one of "
                f"{', '.join(KIND_NAMES.values())}"
            )
        engine = _name_or_index(engine_text, self.header.engines, where, "engine", _U8)
        fields = _key_values(tokens[2:], where, (*RAW_FIELDS, *FRIENDLY_FIELDS))
        values = {
            k: _int(fields[k], f"{where}: {k}", hi) for k, hi in RAW_FIELDS.items() if k in fields
        }
        code = self._code(kind, fields, values, where)
        tensor = NO_TENSOR
        if "tensor" in fields:
            text = fields["tensor"]
            tensor = (
                NO_TENSOR
                if text == "none"
                else _name_or_index(text, self.tensor_names, f"{where}: tensor", "tensor", _U8)
            )
        deps = self._deps(index, fields.get("deps", ""), where)
        return (
            kind,
            engine,
            tensor,
            code,
            deps,
            *(values.get(k, 0) for k in _FIELD_ORDER),
        )

    def _code(self, kind: int, fields: dict[str, str], values: dict[str, int], where: str) -> int:
        friendly = [k for k in ("op", "bcast", "flags") if k in fields]
        if "code" in values:
            if friendly:
                raise UserError(f"{where}: give either code= or {'/'.join(friendly)}=, not both")
            if "scalar" in fields:
                raise UserError(f"{where}: scalar= needs op=/bcast=scalar, not code=")
            return values["code"]
        if "src2" in fields:
            if kind != OpKind.MATMUL or "src_stride" in values or "dst_stride" in values:
                raise UserError(
                    f"{where}: src2= (row scales) belongs to a matmul, without the strides"
                )
            low, high = split_src2(_int(fields["src2"], f"{where}: src2", _U64))
            values["src_stride"], values["dst_stride"] = low, high
        if kind == OpKind.MATMUL:
            if "op" in fields or "bcast" in fields or "scalar" in fields:
                raise UserError(f"{where}: matmul takes flags=, not op=/bcast=/scalar=")
            code = _flags(fields.get("flags", ""), MATMUL_FLAG_NAMES, where)
            if code & MATMUL_SCALE_ROWS and "src2" not in fields:
                raise UserError(f"{where}: flags=scale_rows needs src2= (the row scales)")
            return code
        streams = kind in (OpKind.VECTOR, OpKind.EXP)
        names = VECTOR_FLAG_NAMES if kind == OpKind.VECTOR else STREAM_FLAG
        stream = _flags(fields.get("flags", ""), names, where) if streams else 0
        if kind == OpKind.VECTOR:
            if "op" not in fields:
                raise UserError(
                    f"{where}: vector needs op= (one of {', '.join(VECTOR_OP_NAMES.values())})"
                )
            op = _lookup(fields["op"], VECTOR_OP_NAMES, f"{where}: op")
            bcast = _lookup(fields.get("bcast", "full"), BROADCAST_NAMES, f"{where}: bcast")
            if "scalar" in fields:
                if bcast != Broadcast.SCALAR:
                    raise UserError(f"{where}: scalar= needs bcast=scalar")
                if "k" in values:
                    raise UserError(f"{where}: give either scalar= or k=, not both")
                try:
                    values["k"] = float_bits(float(fields["scalar"]))
                except (ValueError, OverflowError):
                    raise UserError(
                        f"{where}: scalar: {fields['scalar']!r} is not a number"
                    ) from None
            return op | (bcast << BROADCAST_SHIFT) | stream
        friendly = [f for f in friendly if not (kind == OpKind.EXP and f == "flags")]
        if friendly or "scalar" in fields:
            raise UserError(
                f"{where}: {KIND_NAMES.get(kind, kind)} takes no "
                f"{'/'.join([*friendly, *(['scalar'] if 'scalar' in fields else [])])}="
            )
        return stream

    def _deps(self, index: int, text: str, where: str) -> tuple[int, ...]:
        ids = [t for t in text.split(",") if t] if text else []
        if len(ids) > MAX_DEPS:
            raise UserError(f"{where}: deps: at most {MAX_DEPS} dependencies, got {len(ids)}")
        distances = []
        for t in ids:
            dep = _int(t, f"{where}: deps", _U64, lo=-_U64)
            if not 0 <= dep < index:
                raise UserError(
                    f"{where}: deps: {dep} is not an earlier operation id; operation {index} "
                    f"may depend on ids 0..{index - 1}"
                    + (" (self-dependency)" if dep == index else "")
                )
            distances.append(index - dep)
        return tuple(distances + [0] * (MAX_DEPS - len(distances)))


def _lookup(text: str, names: dict[int, str], where: str) -> int:
    for value, name in names.items():
        if name == text:
            return value
    raise UserError(f"{where}: unknown value {text!r}; expected one of {', '.join(names.values())}")


# ----------------------------------------------------------------------------------- writing


def write_text(
    path: str | os.PathLike[str], header: TraceHeader, chunks: Iterable[np.ndarray]
) -> int:
    """Write a trace in text form; returns the number of operations written."""
    with atomic_output(path, "trace") as f:
        return dump_text(f, header, chunks)


def dump_text(out: TextIO, header: TraceHeader, chunks: Iterable[np.ndarray]) -> int:
    """Write the text form to an open stream."""
    out.write(f"format: {FORMAT_NAME} {FORMAT_VERSION}\n")
    out.write(f"dataflow: {header.dataflow}\n")
    out.write(f"engines: {' '.join(header.engines)}\n")
    out.write(f"elem_bytes: {header.elem_bytes}\nwindow: {header.window}\n")
    if header.params:
        out.write(f"params: {json.dumps(header.params, separators=(',', ':'))}\n")
    for t in header.tensors:
        shape = "x".join(str(s) for s in t.shape)
        out.write(
            f"tensor: {t.name} {t.space} base={t.base:#x} shape={shape} elem_bytes={t.elem_bytes}\n"
        )
    index = 0
    for chunk in chunks:
        for record in chunk.tolist():
            out.write(format_op(index, record, header))
            out.write("\n")
            index += 1
    out.write(f"end: {index}\n")
    return index


def format_op(index: int, record: tuple[Any, ...], header: TraceHeader) -> str:
    """One operation line; ``record`` is a RECORD_DTYPE row as a tuple (``ndarray.tolist()``)."""
    kind, engine, tensor, code, deps, *rest = record
    values = dict(zip(_FIELD_ORDER, rest, strict=True))
    parts = [str(index), KIND_NAMES.get(kind, str(kind))]
    parts.append(header.engines[engine] if engine < len(header.engines) else str(engine))
    if tensor != NO_TENSOR:
        known = tensor < len(header.tensors)
        parts.append(f"tensor={header.tensors[tensor].name if known else tensor}")
    primary = _PRIMARY.get(OpKind(kind), ()) if kind in KIND_NAMES else ()
    parts += _code_fields(kind, code, values)
    for key in _FIELD_ORDER:
        value = values[key]
        if key in primary or value:
            parts.append(f"{key}={value:#x}" if key in ADDRESS_FIELDS else f"{key}={value}")
    dep_ids = [str(index - d) for d in deps if d]
    if dep_ids:
        parts.append("deps=" + ",".join(dep_ids))
    return " ".join(parts)


def _flags(text: str, names: dict[int, str], where: str) -> int:
    """The code bits of a ``flags=a,b`` list."""
    code = 0
    for flag in filter(None, text.split(",")):
        bits = {v: k for k, v in names.items()}.get(flag)
        if bits is None:
            raise UserError(
                f"{where}: flags: unknown flag {flag!r}; expected {', '.join(names.values())}"
            )
        code |= bits
    return code


def _flag_field(code: int) -> list[str]:
    """``flags=stream,rescale`` of a vector or exp record (nothing without flags)."""
    names = [name for bit, name in STREAM_FLAG.items() if code & bit]
    return [f"flags={','.join(names)}"] if names else []


def _code_fields(kind: int, code: int, values: dict[str, int]) -> list[str]:
    """Friendly spelling of ``code`` when one exists, else ``code=``; may consume ``k`` and
    the strides (``src2``)."""
    if kind == OpKind.MATMUL and not code & ~MATMUL_FLAGS & ~STREAMED:
        names = [name for bit, name in MATMUL_FLAG_NAMES.items() if code & bit]
        fields = [f"flags={','.join(names)}"] if names else []
        if code & MATMUL_SCALE_ROWS:
            fields.append(f"src2={src2(values['src_stride'], values['dst_stride']):#x}")
            values["src_stride"] = values["dst_stride"] = 0
        return fields
    if kind == OpKind.EXP and not code & ~(STREAMED | RESCALE):
        return _flag_field(code)
    if kind == OpKind.VECTOR and (code & 0x0F) in VECTOR_OP_NAMES:
        bcast = (code >> BROADCAST_SHIFT) & 0x3
        fields = [f"op={VECTOR_OP_NAMES[code & 0x0F]}"]
        flags = [name for bit, name in VECTOR_FLAG_NAMES.items() if code & bit]
        if flags:
            fields.append(f"flags={','.join(flags)}")
        if bcast != Broadcast.FULL:
            fields.append(f"bcast={BROADCAST_NAMES[bcast]}")
        scalar = repr(bits_float(values["k"]))
        if bcast == Broadcast.SCALAR and float_bits(float(scalar)) == values["k"]:
            fields.append(f"scalar={scalar}")
            values["k"] = 0
        return fields
    return [f"code={code:#x}"] if code else []
