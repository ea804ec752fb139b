"""Replaying traces: operation records into a platform, and what comes out of it.

Owns the replayer of one platform (``replayer``) and of tiled platforms (``tiles``), STL traffic
in and out (``stl_in``, ``stl_out``), timelines and VCD (``timeline``, ``vcd``), and the pure
Python reference executor the C++ replayer is checked against (``reference``,
``reference_tiles``). It may import ``fast_forward``, ``runtime``, ``workload``, ``platform``,
``trace``, ``files``, ``units`` and ``errors``; the run core above it decides what to replay.
"""
