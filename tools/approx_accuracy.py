"""Max error of polynomial attention against softmax attention, by degree g and entry bound B.

Inputs are uniform with |q.k| / sqrt(d) <= B (entries in [-a, a], a = sqrt(B) / d^(1/4)); the
error is max |O_poly - O_softmax| / max |O_softmax| over 4 heads. Prints a Markdown table.

    .venv/bin/python tools/approx_accuracy.py [N] [d]
"""

from __future__ import annotations

import sys

import numpy as np

from tlm_models.dataflows.polynomial import exp_poly_coefficients, poly_attention
from tlm_models.reference import attention

DEGREES = (1, 2, 3, 4)
BOUNDS = (0.5, 1.0, 2.0, 4.0)


def max_error(n: int, d: int, degree: int, bound: float, seed: int = 0) -> float:
    """Relative max error of degree-g polynomial attention on inputs bounded by ``bound``."""
    rng = np.random.default_rng(seed)
    a = np.sqrt(bound) / d**0.25
    q, k, v = (rng.uniform(-a, a, (4, n, d)) for _ in range(3))
    exact = attention(q, k, v)
    approx = poly_attention(q, k, v, exp_poly_coefficients(degree, bound))
    return float(np.abs(approx - exact).max() / np.abs(exact).max())


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 512
    d = int(argv[1]) if len(argv) > 1 else 64
    print(f"N = {n}, d = {d}: max |O_poly - O_softmax| / max |O_softmax|\n")
    print("| B | " + " | ".join(f"g = {g}" for g in DEGREES) + " |")
    print("|---|" + "---|" * len(DEGREES))
    for bound in BOUNDS:
        cells = " | ".join(f"{max_error(n, d, g, bound):.1e}" for g in DEGREES)
        print(f"| {bound:g} | {cells} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
