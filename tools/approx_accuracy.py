"""Error of polynomial attention against softmax attention, by degree g and entry bound B.

The error is the study's ``approx_error`` (tlm_models.study.approx_study): seeded uniform
Q, K, V of 512 rows with |q.k| / sqrt(d) <= B, max |O_poly - O_softmax| / max |O_softmax|.
Prints a Markdown table for docs/dataflows.md.

    .venv/bin/python tools/approx_accuracy.py [d]
"""

from __future__ import annotations

import sys

from tlm_models.study.approx_study import ERROR_SEQ_LEN, approx_error

DEGREES = (1, 2, 3, 4)
BOUNDS = (0.5, 1.0, 2.0, 4.0)


def main(argv: list[str]) -> int:
    d = int(argv[0]) if argv else 64
    print(f"N = {ERROR_SEQ_LEN}, d = {d}: max |O_poly - O_softmax| / max |O_softmax|\n")
    print("| B | " + " | ".join(f"g = {g}" for g in DEGREES) + " |")
    print("|---|" + "---|" * len(DEGREES))
    for bound in BOUNDS:
        cells = " | ".join(f"{approx_error(g, bound, d)['max_rel']:.1e}" for g in DEGREES)
        print(f"| {bound:g} | {cells} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
