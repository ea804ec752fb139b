"""Preloaded by the worker forkserver (``worker.py``): warms the models up once in its parent.

A failed warm-up is reported on stderr and the forkserver carries on: each worker then loads
the models itself and reports the real error of its own run.
"""

from __future__ import annotations

import signal
import sys

# The forkserver shares the terminal's process group, so Ctrl-C reaches it too; it ignores
# SIGINT only once its preloading is over, and a Ctrl-C during the warm-up printed a
# traceback. The caller stops the workers itself (it kills them), and each worker inherits
# this setting, so an interrupt prints exactly the caller's one line.
signal.signal(signal.SIGINT, signal.SIG_IGN)

from tlm_models.runtime.warm import warm_up  # noqa: E402 -- after the signal is ignored

try:
    warm_up()
except Exception as exc:  # reported; every worker then loads the models on its own
    print(
        f"attn-tlm: warm-up of the simulation workers failed ({type(exc).__name__}: {exc}); "
        "each run loads the models itself",
        file=sys.stderr,
    )
