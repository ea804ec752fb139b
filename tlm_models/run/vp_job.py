"""A job for the accelerator inside a virtual prototype: the command stream of a dataflow and
workload, its input tensors, and a C header with the register offsets and the job's addresses,
so that bare-metal software on the VP's CPU programs the accelerator without Python.

The trace is emitted for the platform (an accelerator-shaped one: ``accelerator_layout``), its
engines renumbered to the accelerator's fixed indices (DMA channels, then the PE array, then the
Exp unit) and its off-chip addresses moved by ``tensors_at``: the platform places tensors from
address 0 of its off-chip memory, the VP wherever its memory is. ``attn-tlm vp-job`` writes it
(docs/integration.md, "A job for the VP").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tlm_models.dataflows import emit
from tlm_models.errors import UserError
from tlm_models.platform.cpp_params import accelerator_layout
from tlm_models.platform.element_format import element_format, encode
from tlm_models.run.resolve import ResolvedRun
from tlm_models.runtime.headers import INCLUDE_DIR
from tlm_models.trace.record import RECORD_DTYPE

__all__ = ["VpJob", "build_vp_job", "c_header", "write_vp_job"]

_LOAD, _STORE = 1, 2
_RECORD_BYTES = 64
_ACCELERATOR_HEADER = INCLUDE_DIR / "tlm_models" / "attention_accelerator.h"


@dataclass(frozen=True)
class JobTensor:
    name: str
    address: int  # in the VP's address space
    shape: tuple[int, ...]
    elem_bytes: int
    loaded: bool  # read by some load: an input the software must place

    @property
    def bytes(self) -> int:
        return int(np.prod(self.shape)) * self.elem_bytes


@dataclass(frozen=True)
class VpJob:
    records: np.ndarray  # RECORD_DTYPE, in the accelerator's engine numbering and VP addresses
    window: int
    command_base: int
    tensors: tuple[JobTensor, ...]
    dataflow: str
    elem_bytes: int
    #: The values' type (platform/element_format.py); None: raw bytes.
    number_format: str | None = None

    @property
    def bytes_read(self) -> int:
        return _transfer_bytes(self.records, _LOAD)

    @property
    def bytes_written(self) -> int:
        return _transfer_bytes(self.records, _STORE)


def _transfer_bytes(records: np.ndarray, kind: int) -> int:
    sel = records[records["kind"] == kind]
    return int((sel["m"].astype(np.uint64) * sel["n"].astype(np.uint64)).sum())


def _engine_map(run: ResolvedRun, engines: list[str]) -> np.ndarray:
    """The accelerator's index of each of the trace's engines."""
    layout = accelerator_layout(run.platform)
    assert layout is not None
    channels = int(run.platform.components[layout.dma].params["channels"])
    index: list[int] = []
    for name in engines:
        e = run.platform.engines[name]
        if e.component == layout.dma and e.channel is not None:
            index.append(e.channel)
        elif e.component == layout.pe:
            index.append(channels)
        elif e.component == layout.exp:
            index.append(channels + 1)
        else:
            raise UserError(
                f"engine '{name}' ({e.component}) has no counterpart in the accelerator"
            )
    return np.asarray(index, dtype=np.uint8)


def build_vp_job(run: ResolvedRun, tensors_at: int, commands_at: int | None = None) -> VpJob:
    """The job of ``run`` with its tensors from VP address ``tensors_at`` and the command stream
    at ``commands_at`` (default: the next 4 KiB boundary after the tensors)."""
    layout = accelerator_layout(run.platform)
    if layout is None:
        raise UserError(
            f"platform '{run.platform.name}' does not have the accelerator's structure (one dma, "
            "pe_array, exp_unit and scratchpad sram, an off-chip memory at 0): "
            "tlm_models::AttentionAccelerator cannot run its traces"
        )
    emitted = emit(run.config.dataflow, run.workload, run.info, params=run.params)
    header = emitted.header
    records = np.concatenate([np.asarray(c, dtype=RECORD_DTYPE) for c in emitted.chunks])
    records["engine"] = _engine_map(run, header.engines)[records["engine"]]
    loads, stores = records["kind"] == _LOAD, records["kind"] == _STORE
    records["src0"][loads] += np.uint64(tensors_at)
    records["dst"][stores] += np.uint64(tensors_at)
    loaded = set(records["tensor"][loads].tolist())
    tensors = tuple(
        JobTensor(t.name, t.base + tensors_at, t.shape, t.elem_bytes, i in loaded)
        for i, t in enumerate(header.tensors)
        if t.space == "offchip"
    )
    end = max([t.address + t.bytes for t in tensors], default=tensors_at)
    ends = [
        records["src0"][loads].max(initial=0) + 1,
        records["dst"][stores].max(initial=0) + 1,
    ]
    end = max(end, *(int(e) for e in ends))
    base = (end + 0xFFF) & ~0xFFF if commands_at is None else commands_at
    if base % _RECORD_BYTES:
        raise UserError(f"--commands-at {base:#x} must be 64-byte aligned")
    top = max(end, base + len(records) * _RECORD_BYTES)
    if top > layout.offchip_size:
        raise UserError(
            f"the job needs VP addresses up to {top:#x}, beyond the accelerator's off-chip window "
            f"[0, {layout.offchip_size:#x}): lower --tensors-at or --commands-at"
        )
    return VpJob(
        records=records,
        window=header.window,
        command_base=base,
        tensors=tensors,
        dataflow=run.config.dataflow,
        elem_bytes=header.elem_bytes,
        number_format=element_format(
            str(run.platform.components[layout.pe].params["number_format"]), header.elem_bytes
        ),
    )


def _register_defines() -> list[str]:
    """The register offsets and constants, read from the accelerator's header (declared once)."""
    text = _ACCELERATOR_HEADER.read_text()
    regs = text[text.index("enum Reg : std::uint32_t {") : text.index("kRegisterSpace")]
    lines = ["/* Registers (offsets from ATTN_BASE), as in tlm_models/attention_accelerator.h */"]
    for name, value in re.findall(r"k(\w+) = (0x[0-9A-Fa-f]+),", regs):
        lines.append(f"#define ATTN_REG_{_upper(name)} {value}u")
    for name in ("IdValue", "VersionValue", "CtrlStart", "CtrlIrqEnable", "StatusIrqPending"):
        match = re.search(rf"k{name} = (0x[0-9A-Fa-f]+);", text)
        assert match is not None, name
        lines.append(f"#define ATTN_{_upper(name)} {match.group(1)}u")
    errors = text[text.index("enum class Error : std::uint32_t {") :]
    errors = errors[: errors.index("};")]
    for name, value in re.findall(r"(\w+) = (\d+),", errors):
        lines.append(f"#define ATTN_ERROR_{name.upper()} {value}u")
    return lines


def _macro_name(tensor: str) -> str:
    """The tensor's part of its macros, and of its file's name (``<NAME>.bin``)."""
    return re.sub(r"\W", "_", tensor).upper()


def _upper(camel: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", camel).upper()


def c_header(job: VpJob, base: int, command: str) -> str:
    """The C header of ``job`` with the registers at ``base``; ``command`` made it."""
    lines = [
        f"/* Generated by `{command}`. Do not edit. */",
        "#ifndef ATTN_JOB_H",
        "#define ATTN_JOB_H",
        "",
        *_register_defines(),
        "",
        "/* This job */",
        f"#define ATTN_BASE {base:#x}ull",
        f"#define ATTN_JOB_COMMAND_BASE {job.command_base:#x}ull",
        f"#define ATTN_JOB_COMMAND_COUNT {len(job.records)}u",
        f"#define ATTN_JOB_COMMAND_BYTES {len(job.records) * _RECORD_BYTES}ull",
        f"#define ATTN_JOB_WINDOW {job.window}u",
        f"#define ATTN_JOB_ELEM_BYTES {job.elem_bytes}u  /* {job.number_format or 'raw'} */",
        f"#define ATTN_JOB_BYTES_READ {job.bytes_read}ull  /* BYTES_READ after completion */",
        f"#define ATTN_JOB_BYTES_WRITTEN {job.bytes_written}ull  /* BYTES_WRITTEN */",
        f"#define ATTN_JOB_OPS {len(job.records)}ull  /* OPS */",
    ]
    for t in job.tensors:
        name = _macro_name(t.name)
        lines.append(f"#define ATTN_JOB_TENSOR_{name}_ADDR {t.address:#x}ull")
        lines.append(f"#define ATTN_JOB_TENSOR_{name}_BYTES {t.bytes}ull")
    lines += ["", "#endif /* ATTN_JOB_H */", ""]
    return "\n".join(lines)


def write_vp_job(job: VpJob, out: Path, base: int, command: str, seed: int = 0) -> list[Path]:
    """Writes ``commands.bin`` (the records, little-endian), ``<TENSOR>.bin`` for every input
    tensor (values drawn from N(0, 1) in the element type, FP16, BF16 or FP32 as the PE array's
    ``number_format`` says, ``seed``), and ``job.h``."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "commands.bin", out / "job.h"]
    job.records.astype(RECORD_DTYPE).tofile(written[0])  # RECORD_DTYPE is little-endian
    written[1].write_text(c_header(job, base, command))
    rng = np.random.default_rng(seed)
    for t in job.tensors:
        if not t.loaded:
            continue
        path = out / f"{_macro_name(t.name)}.bin"
        count = t.bytes // t.elem_bytes
        if job.number_format is None:
            rng.integers(0, 256, t.bytes, dtype=np.uint8).tofile(path)
        else:
            path.write_bytes(encode(rng.standard_normal(count), job.number_format))
        written.append(path)
    return written
