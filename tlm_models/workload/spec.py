"""The attention problem a dataflow computes: O = softmax(mask(Q K^T * scale)) V per query head.

One typed description shared by the CLI, sweeps, the Python API and the trace header:
``batch`` sequences, ``heads`` query heads sharing ``kv_heads`` K/V heads (MHA when equal,
GQA when a divisor, MQA when 1), ``seq_len`` query rows (Nq) against ``kv_len`` keys (Nk),
and a mask.

Masks align the last query with the last key (bottom-right), which is what prefill with a KV
cache and decode need: query row i (0-based) sits at absolute position i + Nk - Nq and sees

- ``none``: every key 0..Nk-1;
- ``causal``: keys 0 .. i + Nk - Nq;
- ``sliding`` (window W): the W keys i + Nk - Nq - W + 1 .. i + Nk - Nq (fewer at the start).

Heads are numbered batch-major: global head h = b * heads + q; its K/V head is
b * kv_heads + q // group with group = heads // kv_heads, so a group's query heads are
consecutive and can reuse one K/V tile while it is on chip.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np

from tlm_models.errors import UserError
from tlm_models.platform.info import DEFAULT_ELEM_BYTES, PlatformInfo
from tlm_models.units import UnitError
from tlm_models.units import parse_count as _parse_count

MASKS = ("none", "causal", "sliding")
PHASES = ("prefill", "decode")


def parse_count(text: str, what: str = "sequence length") -> int:
    """A token count such as ``8192``, ``8K`` or ``1M`` (binary multiples: 8K = 8192)."""
    try:
        return _parse_count(text, what)
    except UnitError as exc:
        raise UserError(str(exc)) from None


def parse_mask(text: str) -> tuple[str, int]:
    """``none``, ``causal`` or ``sliding:W`` (W a token count, e.g. ``sliding:4K``) as
    (mask, window); UserError naming the text otherwise."""
    kind, sep, arg = text.strip().partition(":")
    if kind in ("none", "causal") and not sep:
        return kind, 0
    if kind == "sliding" and sep:
        return kind, parse_count(arg, "sliding window")
    raise UserError(f"mask {text!r}: expected none, causal or sliding:W (e.g. sliding:4096)")


@dataclass(frozen=True)
class Workload:
    """Exact attention over ``batch * heads`` query heads of ``seq_len`` x ``head_dim``
    against ``batch * kv_heads`` K/V heads of ``kv_len`` keys.

    ``kv_heads`` and ``kv_len`` default (0) to ``heads`` and ``seq_len``: after construction
    they always hold the concrete value.
    """

    seq_len: int  # Nq: query rows per head
    head_dim: int
    heads: int = 1  # Hq: query heads per sequence
    batch: int = 1
    elem_bytes: int = DEFAULT_ELEM_BYTES  # the platform's, once resolved
    kv_heads: int = 0  # Hkv (0: = heads)
    kv_len: int = 0  # Nk (0: = seq_len)
    mask: str = "none"
    window: int = 0  # sliding window W in keys (mask="sliding" only)
    phase: str = "prefill"

    def __post_init__(self) -> None:
        if self.kv_heads == 0:
            object.__setattr__(self, "kv_heads", self.heads)
        if self.kv_len == 0:
            object.__setattr__(self, "kv_len", self.seq_len)
        for name in ("seq_len", "head_dim", "heads", "batch", "elem_bytes", "kv_heads", "kv_len"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise UserError(f"workload {name} must be a positive integer, got {value!r}")
        if self.heads % self.kv_heads:
            raise UserError(
                f"query heads ({self.heads}) must be a multiple of KV heads ({self.kv_heads}): "
                "each KV head serves a whole group of query heads"
            )
        if self.mask not in MASKS:
            raise UserError(f"mask {self.mask!r}: expected one of {', '.join(MASKS)}")
        if self.phase not in PHASES:
            raise UserError(f"phase {self.phase!r}: expected one of {', '.join(PHASES)}")
        if self.mask == "sliding":
            if not isinstance(self.window, int) or self.window < 1:
                raise UserError(f"sliding window must be a positive integer, got {self.window!r}")
            if self.window > self.kv_len:
                raise UserError(
                    f"sliding window W = {self.window} is larger than the key length "
                    f"Nk = {self.kv_len}; use mask=causal, or a window <= Nk"
                )
        elif self.window:
            raise UserError(f"a window ({self.window}) needs mask=sliding, not {self.mask!r}")
        if self.mask != "none" and self.seq_len > self.kv_len:
            raise UserError(
                f"a {self.mask} mask with more query rows (Nq = {self.seq_len}) than keys "
                f"(Nk = {self.kv_len}) leaves the first {self.seq_len - self.kv_len} rows "
                "with no key to attend to"
            )

    def at_width(self, elem_bytes: int) -> Workload:
        """This workload at ``elem_bytes`` per element (the platform's width): the checks of
        the other fields already ran when it was built, so only the width is checked."""
        if elem_bytes == self.elem_bytes:
            return self
        if not isinstance(elem_bytes, int) or isinstance(elem_bytes, bool) or elem_bytes < 1:
            raise UserError(f"workload elem_bytes must be a positive integer, got {elem_bytes!r}")
        widened = copy.copy(self)
        object.__setattr__(widened, "elem_bytes", elem_bytes)
        return widened

    @property
    def scale(self) -> float:
        """Softmax scale 1/sqrt(d)."""
        return 1.0 / math.sqrt(self.head_dim)

    @property
    def head_count(self) -> int:
        """Independent (batch, query head) problems; each is simulated, not extrapolated."""
        return self.heads * self.batch

    @property
    def kv_head_count(self) -> int:
        """K/V heads over the batch: K and V tensors hold this many (kv_len x d) matrices."""
        return self.kv_heads * self.batch

    @property
    def group(self) -> int:
        """Query heads per K/V head (1: MHA; heads: MQA)."""
        return self.heads // self.kv_heads

    def kv_head_of(self, head: int) -> int:
        """The K/V head (0 .. kv_head_count-1) global query head ``head`` reads."""
        b, q = divmod(head, self.heads)
        return b * self.kv_heads + q // self.group

    @property
    def tensor_elements(self) -> int:
        """Elements of one head of Q or O (Nq x d)."""
        return self.seq_len * self.head_dim

    @property
    def dense(self) -> bool:
        """Plain self-attention: no mask, MHA, Nq = Nk."""
        return self.mask == "none" and self.group == 1 and self.kv_len == self.seq_len

    @property
    def key_offset(self) -> int:
        """Absolute position of query row 0 (Nk - Nq): masks align the last rows."""
        return self.kv_len - self.seq_len

    def key_range(self, row: int) -> tuple[int, int]:
        """Keys [lo, hi) query row ``row`` attends to."""
        if self.mask == "none":
            return 0, self.kv_len
        hi = row + self.key_offset + 1
        return (max(0, hi - self.window) if self.mask == "sliding" else 0), hi

    def block_key_range(self, row0: int, rows: int) -> tuple[int, int]:
        """Keys [lo, hi) any of query rows row0 .. row0+rows-1 attends to (the union; both
        ends are monotone in the row)."""
        return self.key_range(row0)[0], self.key_range(row0 + rows - 1)[1]

    def visible_pairs(self) -> int:
        """(query, key) pairs not masked, per head: the MACs of Q K^T and P V are d times this
        and the exps this many, when a dataflow skips everything masked."""
        nq, nk = self.seq_len, self.kv_len
        if self.mask == "none":
            return nq * nk
        off = self.key_offset
        causal = nq * (off + 1) + nq * (nq - 1) // 2  # sum of (i + off + 1)
        if self.mask == "causal":
            return causal
        w = self.window
        # rows whose causal count i + off + 1 exceeds W see exactly W keys
        full_from = max(0, w - off)  # first row with i + off + 1 > W is i = W - off
        short = min(nq, full_from)
        return short * (off + 1) + short * (short - 1) // 2 + (nq - short) * w

    def mask_matrix(self) -> np.ndarray:
        """Boolean (Nq, Nk) matrix, True where a query row sees a key (numeric references)."""
        rows = np.arange(self.seq_len)[:, None]
        keys = np.arange(self.kv_len)[None, :]
        if self.mask == "none":
            return np.ones((self.seq_len, self.kv_len), dtype=bool)
        hi = rows + self.key_offset + 1
        visible = keys < hi
        if self.mask == "sliding":
            visible &= keys >= hi - self.window
        return np.asarray(visible)

    def needed_keys(self) -> int:
        """Keys at least one query row sees, per K/V head: the compulsory K (and V) rows."""
        lo, hi = self.block_key_range(0, self.seq_len)
        return hi - lo

    def compulsory_elements(self) -> dict[str, int]:
        """The traffic floor: Q and O once per query head, the needed K and V rows once per
        K/V head (elements, all heads)."""
        qo = self.head_count * self.tensor_elements
        kv = self.kv_head_count * self.needed_keys() * self.head_dim
        return {"Q": qo, "K": kv, "V": kv, "O": qo}

    def describe(self) -> str:
        """``B = 1, Hq = 32, Hkv = 8, Nq = 8192, Nk = 8192, d = 128, causal``: for messages."""
        mask = f"sliding:{self.window}" if self.mask == "sliding" else self.mask
        return (
            f"B = {self.batch}, Hq = {self.heads}, Hkv = {self.kv_heads}, Nq = {self.seq_len}, "
            f"Nk = {self.kv_len}, d = {self.head_dim}, mask {mask}, {self.phase}"
        )


#: What each dataflow's emitter handles beyond dense self-attention: "mask" (causal and
#: sliding), "gqa" (kv_heads < heads), "cross" (Nk != Nq, which decode needs). Emitters add
#: a feature here when they implement it; the rest are refused before anything runs.
FEATURES: dict[str, frozenset[str]] = {
    "standard": frozenset({"mask", "gqa", "cross"}),
    "flat": frozenset({"mask", "gqa", "cross"}),
    "flash2": frozenset({"mask", "gqa", "cross"}),
    "attenio": frozenset({"mask", "gqa", "cross"}),
    "fusemax": frozenset({"mask", "gqa", "cross"}),
    "approx": frozenset({"mask", "gqa", "cross"}),
}


def check_supported(dataflow: str, workload: Workload) -> None:
    """UserError when ``dataflow`` cannot compute ``workload`` (naming what it lacks)."""
    have = FEATURES.get(dataflow, frozenset())
    needs = []
    if workload.mask != "none" and "mask" not in have:
        needs.append(f"mask={workload.mask}")
    if workload.group > 1 and "gqa" not in have:
        needs.append(f"kv_heads={workload.kv_heads} < heads={workload.heads}")
    if workload.kv_len != workload.seq_len and "cross" not in have:
        needs.append(f"kv_len={workload.kv_len} != seq_len={workload.seq_len}")
    if needs:
        raise UserError(
            f"dataflow {dataflow!r} does not support {', '.join(needs)} ({workload.describe()})"
        )


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
