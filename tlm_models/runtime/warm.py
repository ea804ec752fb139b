"""Warm-up of the worker forkserver's parent: load the compiled models once.

Every forked worker then starts with SystemC and the models mapped, so a run pays only the fork
and its own work. Nothing is elaborated here (SystemC elaborates once per process). Importing
this module does nothing; the forkserver preloads ``tlm_models.runtime.forkserver_preload``, which
calls ``warm_up()``.
"""

from __future__ import annotations


def warm_up() -> None:
    from tlm_models.runtime import session as native_session

    native_session.load_library()
