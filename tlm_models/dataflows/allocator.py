"""On-chip buffer allocation: named, aligned buffers packed into one memory region."""

from __future__ import annotations

from dataclasses import dataclass

from tlm_models.errors import UserError
from tlm_models.platform.info import MemoryRegion


@dataclass(frozen=True)
class Buffer:
    """A rows x cols row-major block of elements at an absolute bus address."""

    name: str
    addr: int
    rows: int
    cols: int
    elem_bytes: int

    @property
    def size(self) -> int:
        return self.rows * self.cols * self.elem_bytes

    @property
    def elements(self) -> int:
        return self.rows * self.cols


class OnChipAllocator:
    """Bump allocator over one region (the scratchpad or the KV buffer).

    Buffers live for the whole trace; dataflows reuse them by address, so a plan that does
    not fit is reported up front with every size involved.
    """

    def __init__(self, region: MemoryRegion, elem_bytes: int, alignment: int | None = None):
        align = elem_bytes if alignment is None else alignment
        if align < 1 or align & (align - 1):
            raise UserError(f"buffer alignment must be a power of two, got {align}")
        self.region = region
        self.elem_bytes = elem_bytes
        self.alignment = align
        self.buffers: list[Buffer] = []
        self._next = region.base

    @property
    def used(self) -> int:
        return self._next - self.region.base

    @property
    def free(self) -> int:
        return self.region.size - self.used

    def _aligned(self, addr: int) -> int:
        return (addr + self.alignment - 1) & ~(self.alignment - 1)

    def fits(self, rows: int, cols: int) -> bool:
        """Whether a rows x cols buffer would fit after the current ones."""
        end = self._aligned(self._next) + rows * cols * self.elem_bytes
        return end <= self.region.base + self.region.size

    def alloc(self, name: str, rows: int, cols: int = 1) -> Buffer:
        """Reserve a buffer; raises UserError naming all sizes when the region is full."""
        if rows < 1 or cols < 1:
            raise UserError(f"buffer {name!r} must have a positive shape, got {rows} x {cols}")
        if any(b.name == name for b in self.buffers):
            raise UserError(f"buffer {name!r} allocated twice in {self.region.name}")
        if not self.fits(rows, cols):
            need = rows * cols * self.elem_bytes
            raise UserError(
                f"buffer {name!r} ({rows} x {cols} x {self.elem_bytes} B = {need} B) does not fit "
                f"in {self.region.name} ({self.region.size} B, {self.used} B already used by "
                f"{', '.join(b.name for b in self.buffers) or 'nothing'})"
            )
        buf = Buffer(name, self._aligned(self._next), rows, cols, self.elem_bytes)
        self._next = buf.addr + buf.size
        self.buffers.append(buf)
        return buf

    def layout(self) -> str:
        """A printable table of the buffers: address, shape, bytes."""
        lines = [f"{self.region.name} @ {self.region.base:#x}, {self.region.size} B:"]
        for b in self.buffers:
            lines.append(f"  {b.addr:#014x}  {b.name:<12} {b.rows:>7} x {b.cols:<7} {b.size:>10} B")
        lines.append(f"  used {self.used} B of {self.region.size} B")
        return "\n".join(lines)
