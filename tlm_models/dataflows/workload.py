"""The attention problem a dataflow computes: O = softmax(Q K^T * scale) V per head."""

from __future__ import annotations

import math
from dataclasses import dataclass

from tlm_models.errors import UserError
from tlm_models.platform.info import PlatformInfo
from tlm_models.units import UnitError
from tlm_models.units import parse_count as _parse_count


def parse_count(text: str, what: str = "sequence length") -> int:
    """A token count such as ``8192``, ``8K`` or ``1M`` (binary multiples: 8K = 8192)."""
    try:
        return _parse_count(text, what)
    except UnitError as exc:
        raise UserError(str(exc)) from None


@dataclass(frozen=True)
class Workload:
    """Exact attention over ``batch * heads`` independent heads of ``seq_len`` x ``head_dim``."""

    seq_len: int
    head_dim: int
    heads: int = 1
    batch: int = 1
    elem_bytes: int = 2  # FP16

    def __post_init__(self) -> None:
        for name in ("seq_len", "head_dim", "heads", "batch", "elem_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise UserError(f"workload {name} must be a positive integer, got {value!r}")

    @property
    def scale(self) -> float:
        """Softmax scale 1/sqrt(d)."""
        return 1.0 / math.sqrt(self.head_dim)

    @property
    def head_count(self) -> int:
        """Independent (batch, head) problems; each is simulated, not extrapolated."""
        return self.heads * self.batch

    @property
    def tensor_elements(self) -> int:
        """Elements of one of Q, K, V, O for one head (N x d)."""
        return self.seq_len * self.head_dim


def check_element_width(workload: Workload, platform: PlatformInfo) -> None:
    """The workload's element width must be the platform's: the emitters tile and count bytes
    with it, and the engines move operands with theirs. A mismatch is refused, not guessed."""
    if workload.elem_bytes != platform.elem_bytes:
        raise UserError(
            f"the workload has {workload.elem_bytes} B elements but platform "
            f"'{platform.name}' computes on {platform.elem_bytes} B elements (pe_array and "
            f"exp_unit elem_bytes); use Workload(..., elem_bytes={platform.elem_bytes}) or set "
            f"the platform's width, e.g. --set pe.elem_bytes={workload.elem_bytes}B "
            f"--set exp.elem_bytes={workload.elem_bytes}B"
        )
