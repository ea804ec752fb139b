"""Polynomial stand-in for exp and the monomial feature map of polynomial-kernel attention.

exp(x) on [-B, B] is replaced by P(x) = sum_l c_l x^l, the degree-g Chebyshev interpolant:
it interpolates exp at the g + 1 Chebyshev nodes B cos((2k + 1) pi / (2g + 2)), which is
within a small factor of the best uniform (minimax) approximation, has the closed error bound
B^(g+1) e^B / (2^g (g+1)!), and needs no fitting grid. With x = s q.k (s = 1/sqrt(d)),
P(x) = sum over monomials alpha of degree <= g of c_|alpha| s^|alpha| multinomial(alpha)
q^alpha k^alpha, so U1 = q^alpha, U2 = k^alpha and the per-monomial factor is folded into H.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tlm_models.errors import UserError

MAX_DEGREE = 8


def exp_poly_coefficients(degree: int, bound: float) -> np.ndarray:
    """Monomial coefficients c_0..c_g of the Chebyshev interpolant of exp on [-bound, bound]."""
    if isinstance(degree, bool) or not isinstance(degree, int) or not 1 <= degree <= MAX_DEGREE:
        raise UserError(f"polynomial degree must be an integer in 1..{MAX_DEGREE}, got {degree!r}")
    if not math.isfinite(bound) or bound <= 0:
        raise UserError(f"entry bound B must be a positive number, got {bound!r}")
    k = np.arange(degree + 1)
    nodes = bound * np.cos((2 * k + 1) * np.pi / (2 * degree + 2))
    vander = np.vander(nodes, degree + 1, increasing=True)
    coeffs: np.ndarray = np.linalg.solve(vander, np.exp(nodes))
    return coeffs


def feature_count(head_dim: int, degree: int) -> int:
    """r = C(d + g, g): monomials of degree <= g in d variables."""
    return math.comb(head_dim + degree, degree)


@dataclass(frozen=True)
class GenStep:
    """u[dst : dst + length] = u[src : src + length] * u[1 + var] (one vector op on a row)."""

    dst: int
    src: int
    length: int
    var: int


@dataclass(frozen=True)
class ScaleRun:
    """H rows [start, start + length) are multiplied by ``factor``."""

    start: int
    length: int
    factor: float


def monomial_factors(
    monomials: Sequence[tuple[int, ...]], coeffs: np.ndarray, scale: float
) -> np.ndarray:
    """c_|alpha| * scale^|alpha| * multinomial(alpha) per monomial (sorted variable indices)."""
    out = np.empty(len(monomials))
    for i, mono in enumerate(monomials):
        multi = math.factorial(len(mono))
        for count in Counter(mono).values():
            multi //= math.factorial(count)
        out[i] = coeffs[len(mono)] * scale ** len(mono) * multi
    return out


def scale_runs(factors: np.ndarray) -> list[ScaleRun]:
    """Runs of equal consecutive factors: one H scaling op each."""
    breaks = np.flatnonzero(factors[1:] != factors[:-1]) + 1
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [len(factors)]))
    return [
        ScaleRun(int(s), int(e - s), float(factors[s])) for s, e in zip(starts, ends, strict=True)
    ]


@dataclass(frozen=True)
class MonomialPlan:
    """Feature layout of one row u (length r): u[0] = 1, u[1..d] = the row, then degrees 2..g.

    Monomials of each degree are ordered by their largest variable, so the monomials of
    degree l - 1 whose variables are all <= j form a prefix of that degree's section: degree l
    is built from d prefix-times-variable products (``steps``), each one vector op.
    """

    head_dim: int
    degree: int
    monomials: tuple[tuple[int, ...], ...]  # sorted variable indices, generation order
    steps: tuple[GenStep, ...]

    @property
    def size(self) -> int:
        return len(self.monomials)

    def factors(self, coeffs: np.ndarray, scale: float) -> np.ndarray:
        """Per-monomial factor c_|alpha| * scale^|alpha| * multinomial(alpha) folded into H."""
        return monomial_factors(self.monomials, coeffs, scale)

    def scale_runs(self, coeffs: np.ndarray, scale: float) -> list[ScaleRun]:
        """Runs of equal factor in generation order: one H scaling op each."""
        return scale_runs(self.factors(coeffs, scale))

    def features(self, rows: np.ndarray) -> np.ndarray:
        """The monomials of each row of ``rows`` (n x d) in layout order, float64 (for checks)."""
        x = rows.astype(np.float64)
        out = np.ones((x.shape[0], self.size))
        for i, mono in enumerate(self.monomials):
            for var in mono:
                out[:, i] *= x[:, var]
        return out


def monomial_plan(head_dim: int, degree: int) -> MonomialPlan:
    """Generation order and vector-op steps of the degree <= g monomials of d variables."""
    d = head_dim
    sections: list[list[tuple[int, ...]]] = [[()], [(j,) for j in range(d)]]
    offsets = [0, 1]
    steps: list[GenStep] = []
    for level in range(2, degree + 1):
        prev = sections[-1]
        offsets.append(offsets[-1] + len(prev))
        section: list[tuple[int, ...]] = []
        for j in range(d):
            prefix = math.comb(j + level - 1, level - 1)  # degree l-1 monomials with max var <= j
            steps.append(GenStep(offsets[-1] + len(section), offsets[-2], prefix, j))
            section.extend((*m, j) for m in prev[:prefix])
        sections.append(section)
    monomials = tuple(m for sec in sections[: degree + 1] for m in sec)
    return MonomialPlan(d, degree, monomials, tuple(steps))


def poly_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, coeffs: np.ndarray) -> np.ndarray:
    """D^-1 P(Q K^T / sqrt(d)) V per head in float64: the exact polynomial-kernel attention."""
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    s = q64 @ np.swapaxes(k64, -1, -2) / np.sqrt(q.shape[-1])
    p = np.polynomial.polynomial.polyval(s, coeffs)
    return (p / p.sum(axis=-1, keepdims=True)) @ v64  # type: ignore[no-any-return]
