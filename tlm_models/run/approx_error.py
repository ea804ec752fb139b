"""The numerical error of polynomial (approximate) attention against exact softmax attention.

Part of the approximate dataflow's result (``approx_error``), computed once per (degree, bound,
head dimension) on random inputs whose scores all lie within the approximation's bound.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from tlm_models.dataflows.polynomial import exp_poly_coefficients, poly_attention
from tlm_models.replay.reference import attention

#: Tokens and seed of the fixed workload the approximation error is measured on.
ERROR_SEQ_LEN = 512
ERROR_SEED = 0


def approx_error(degree: int, bound: float, head_dim: int) -> dict[str, float | int]:
    """Error of degree-g polynomial attention against softmax attention, |q.k|/sqrt(d) <= B.

    Q, K, V (``ERROR_SEQ_LEN`` x d, seed ``ERROR_SEED``) are uniform in [-a, a] with
    a = sqrt(B) / d^(1/4), so every score q.k/sqrt(d) lies in [-B, B]. ``max_rel`` is
    max|O_poly - O| / max|O|, ``mean_rel`` is mean|O_poly - O| / mean|O|.
    """
    max_rel, mean_rel = _relative_errors(degree, bound, head_dim)
    return {"max_rel": max_rel, "mean_rel": mean_rel, "bound": bound, "degree": degree}


@lru_cache(maxsize=256)
def _relative_errors(degree: int, bound: float, head_dim: int) -> tuple[float, float]:
    coeffs = exp_poly_coefficients(degree, bound)  # validates degree and bound
    rng = np.random.default_rng(ERROR_SEED)
    a = math.sqrt(bound) / head_dim**0.25
    q, k, v = (rng.uniform(-a, a, (ERROR_SEQ_LEN, head_dim)) for _ in range(3))
    exact = attention(q, k, v)
    gap = np.abs(poly_attention(q, k, v, coeffs) - exact)
    return float(gap.max() / np.abs(exact).max()), float(gap.mean() / np.abs(exact).mean())
