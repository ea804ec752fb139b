"""Preloaded by the worker forkserver (``worker.py``): warms the models up once in its parent.

A failed warm-up is reported on stderr and the forkserver carries on: each worker then loads
the models itself and reports the real error of its own run.
"""

from __future__ import annotations

import sys

from tlm_models.warm import warm_up

try:
    warm_up()
except Exception as exc:  # reported; every worker then loads the models on its own
    print(
        f"attn-tlm: warm-up of the simulation workers failed ({type(exc).__name__}: {exc}); "
        "each run loads the models itself",
        file=sys.stderr,
    )
