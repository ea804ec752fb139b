"""Design-space exploration (``attn-tlm explore``): which dataflow parameters and platform give
the best attention under a budget.

This package owns the parameter spaces (``space.py``: ``--vary`` axes, the named ``--space``
presets), the closed-form estimates that decide what is simulated (``prune.py``: exact
off-chip bytes, lower bounds on time and energy, area and leakage from
``tlm_models.platform.area``), the branch-and-bound search (``search.py``), Pareto dominance
(``pareto.py``) and the outputs (``report.py``: table, JSON, plot, each point's ``attn-tlm
run`` command). It sits above ``tlm_models.study``: simulations run through the study's
resumable sweep (``run_sweep``, its result store and its local or Dask executors), and it may
import the study, the dataflows' closed forms, the platform loader and the area and energy
models; nothing below it imports it.
"""

from __future__ import annotations
