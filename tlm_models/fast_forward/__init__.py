"""Fast-forward: simulate the start of a run exactly and extrapolate the steady state.

Owns the controller that detects a steady state and decides when to jump (``control``), the
periodic and linearly growing patterns (``linear_growth``, ``growth``), the statistical period of
the bank-level HBM (``statistical``), the per-tile fast-forward of tiled platforms
(``tiles``), and how much of a loop a run is expected to simulate, before it runs
(``expected``, for the cost estimate). It is pure arithmetic over the replayer's snapshots:
it imports only ``errors``, and the replayer imports it.
"""
