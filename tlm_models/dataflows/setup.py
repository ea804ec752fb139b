"""What every emitter sets up first: engines, off-chip tensors, the header, on-chip regions."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from tlm_models.dataflows.allocator import OnChipAllocator
from tlm_models.dataflows.offchip import layout_tensors
from tlm_models.dataflows.partition import RowRange, tile_share
from tlm_models.errors import UserError
from tlm_models.fast_forward.control import IterationControl
from tlm_models.platform.info import PlatformInfo
from tlm_models.trace.header import TensorInfo, TraceHeader
from tlm_models.workload.spec import Workload, check_element_width, check_supported


@dataclass
class EmittedTrace:
    """A header plus a one-shot iterator over record chunks (numpy ``RECORD_DTYPE`` arrays)."""

    header: TraceHeader
    chunks: Iterator[np.ndarray]
    layout: str = ""
    #: The outer loop's iteration marks and skips (fast-forward); None for traces without one.
    iterations: IterationControl | None = None

    def __iter__(self) -> Iterator[np.ndarray]:
        return self.chunks


def trace_engines(platform: PlatformInfo) -> list[str]:
    """Engine table of a trace: dma0 (loads), dma1 (stores) when present, pe, exp."""
    missing = [e for e in ("dma0", "pe", "exp") if e not in platform.engines]
    if missing:
        raise UserError(
            f"platform {platform.name!r} lacks engine(s) {', '.join(missing)}; dataflows need "
            f"dma0, pe and exp (it has {', '.join(sorted(platform.engines)) or 'none'})"
        )
    dmas = ["dma0", "dma1"] if "dma1" in platform.engines else ["dma0"]
    return [*dmas, "pe", "exp"]


@dataclass
class DataflowSetup:
    """Header and allocators of one emitted trace; per-head tensor addresses."""

    workload: Workload
    platform: PlatformInfo
    header: TraceHeader
    scratch: OnChipAllocator
    kvbuf: OnChipAllocator | None
    tensor: dict[str, int] = field(default_factory=dict)  # name -> header index
    #: name -> (address of head 0, bytes per head): ``base`` is called per block
    _bases: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: The query rows this trace computes: all of them, or a tile's share (partition.py).
    share: tuple[RowRange, ...] = ()

    @property
    def elem_bytes(self) -> int:
        return self.workload.elem_bytes

    def base(self, name: str, head: int = 0) -> int:
        """Absolute address of tensor ``name``'s element [head, 0, 0]."""
        start, per_head = self._bases.get(name) or self._tensor_base(name)
        return start + head * per_head

    def _tensor_base(self, name: str) -> tuple[int, int]:
        info = self.header.tensors[self.tensor[name]]
        self._bases[name] = (info.base, int(np.prod(info.shape[1:])) * info.elem_bytes)
        return self._bases[name]

    def layout(self) -> str:
        parts = [self.scratch.layout()]
        if self.kvbuf is not None and self.kvbuf.buffers:
            parts.append(self.kvbuf.layout())
        return "\n".join(parts)


class ChunkSource(Protocol):
    """A dataflow's loop: yields its records in chunks of about ``chunk_ops`` operations."""

    def chunks(self, chunk_ops: int) -> Iterator[np.ndarray]: ...


@dataclass(frozen=True)
class DataflowTrace:
    """What each dataflow builds from a workload and a platform before any record exists: its
    setup (header, on-chip layout), the loop that streams the records, and the loop's iteration
    control (None: the trace runs exactly, no fast-forward). ``emitted`` is the one ending every
    dataflow shares."""

    setup: DataflowSetup
    loop: ChunkSource
    iterations: IterationControl | None
    #: Layout lines after the setup's (a second phase reusing the same space).
    extra_layout: str = ""

    def emitted(self, chunk_ops: int) -> EmittedTrace:
        chunks = self.loop.chunks(chunk_ops)
        layout = self.setup.layout()
        if self.extra_layout:
            layout = f"{layout}\n{self.extra_layout}"
        return EmittedTrace(self.setup.header, chunks, layout, self.iterations)


def make_setup(
    dataflow: str,
    workload: Workload,
    platform: PlatformInfo,
    params: dict[str, Any],
    spill: list[tuple[str, tuple[int, ...]]] | None = None,
) -> DataflowSetup:
    """Lay out Q, K, V, O (plus ``spill`` tensors, shared by all heads) and build the header.
    Q and O hold one (Nq x d) matrix per query head, K and V one (Nk x d) per K/V head."""
    check_element_width(workload, platform)
    check_supported(dataflow, workload)
    eb = workload.elem_bytes
    qo = (workload.head_count, workload.seq_len, workload.head_dim)
    kv = (workload.kv_head_count, workload.kv_len, workload.head_dim)
    shapes: list[tuple[str, tuple[int, ...]]] = [("Q", qo), ("K", kv), ("V", kv), ("O", qo)]
    shapes += [(name, (1, *shape)) for name, shape in (spill or [])]
    tensors: list[TensorInfo] = layout_tensors(platform.offchip, eb, shapes)
    header = TraceHeader(
        dataflow=dataflow,
        engines=trace_engines(platform),
        tensors=tensors,
        params={
            "seq_len": workload.seq_len,
            "head_dim": workload.head_dim,
            "heads": workload.heads,
            "batch": workload.batch,
            "kv_heads": workload.kv_heads,
            "kv_len": workload.kv_len,
            "mask": workload.mask,
            "window": workload.window,
            "phase": workload.phase,
            "scale": workload.scale,
            "capacity_elements": platform.capacity_elements(eb),
            **params,
        },
        elem_bytes=eb,
    )
    # Query rows split over tiles: dense self-attention only (other workloads deal blocks).
    by_rows = workload.dense or platform.tiles == 1
    share = (
        tile_share(workload.head_count, workload.seq_len, platform.tile, platform.tiles)
        if by_rows
        else ()
    )
    if platform.tiles > 1:
        header.params["tile"] = platform.tile
        header.params["tiles"] = platform.tiles
    kvbuf = None if platform.kv_buffer is None else OnChipAllocator(platform.kv_buffer, eb)
    return DataflowSetup(
        workload=workload,
        platform=platform,
        header=header,
        scratch=OnChipAllocator(platform.scratchpad, eb),
        kvbuf=kvbuf,
        tensor={t.name: i for i, t in enumerate(tensors)},
        share=share,
    )
