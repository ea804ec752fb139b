"""The attention problem a dataflow computes: O = softmax(Q K^T * scale) V per head."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from tlm_models.errors import UserError

_COUNT_RE = re.compile(r"^\s*(\d+)\s*([kKmM]?)\s*$")


def parse_count(text: str) -> int:
    """A token count such as ``8192``, ``8K`` or ``1M`` (binary multiples: 8K = 8192)."""
    match = _COUNT_RE.match(text)
    if match is None:
        raise UserError(f"expected a count such as 8192 or 8K, got {text!r}")
    value = int(match.group(1))
    suffix = match.group(2).upper()
    return value * {"": 1, "K": 1 << 10, "M": 1 << 20}[suffix]


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
