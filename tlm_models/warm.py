"""Warm-up of the worker forkserver's parent: load the models and let cling compile them.

``warm_up()`` runs a tiny simulation so the JIT has generated the code paths every run uses,
then installs a fresh simulation context so each forked worker elaborates from scratch.
Importing this module does nothing; the forkserver preloads ``tlm_models._forkserver_preload``,
which calls it.
"""

from __future__ import annotations

from typing import Any

#: Objects of the warm-up design; kept alive because the (abandoned) context refers to them.
_keep: list[Any] = []


def warm_up() -> None:
    from tlm_models import kernel

    gbl = kernel.load_models()
    from tlm_models.smoke import warm_design

    _keep.append(warm_design())
    gbl.tlm_models.fresh_simulation_context()
