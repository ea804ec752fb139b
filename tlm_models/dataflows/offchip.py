"""Off-chip tensor layout: Q, K, V, O (and any spill tensors) row-major in the off-chip region."""

from __future__ import annotations

from tlm_models.errors import UserError
from tlm_models.platform.info import MemoryRegion
from tlm_models.trace.header import TensorInfo

TENSOR_ALIGN = 4096


def layout_tensors(
    region: MemoryRegion, elem_bytes: int, shapes: list[tuple[str, tuple[int, ...]]]
) -> list[TensorInfo]:
    """Place named tensors one after another (4 KiB aligned); UserError if they overflow."""
    tensors: list[TensorInfo] = []
    addr = region.base
    for name, shape in shapes:
        size = elem_bytes
        for dim in shape:
            size *= dim
        tensors.append(TensorInfo(name, addr, shape, elem_bytes))
        addr = (addr + size + TENSOR_ALIGN - 1) // TENSOR_ALIGN * TENSOR_ALIGN
    used = addr - region.base
    if used > region.size:
        listing = ", ".join(f"{t.name}{list(t.shape)}" for t in tensors)
        raise UserError(
            f"off-chip tensors need {used} B but {region.name} has {region.size} B ({listing})"
        )
    return tensors
