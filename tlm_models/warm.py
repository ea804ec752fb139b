"""Imported by the worker forkserver's parent: load the compiled models once.

Every forked worker then starts with SystemC and the models mapped, so a run pays only the fork
and its own work. Nothing is elaborated here (SystemC elaborates once per process). Any failure
is swallowed: workers then load on their own and report the real error.
"""

from __future__ import annotations

import contextlib


def warm_up() -> None:
    from tlm_models import native_session

    native_session.load_library()


with contextlib.suppress(Exception):  # see the module docstring
    warm_up()
