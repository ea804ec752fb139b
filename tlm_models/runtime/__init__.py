"""The runtime: the compiled model library and the SystemC process that runs it.

Owns the ahead-of-time build of the C++ models with g++ (``aot``, with the profile-guided
training cases in ``pgo_cases``), the ctypes session that elaborates a platform and replays
operations in it (``session``), the forkserver warm-up (``warm``, ``forkserver_preload``), and
the cppyy path that binds the same headers into Python (``kernel``, ``bound_platform``;
docs/python-systemc.md). It may import ``platform``, ``trace``, ``files``,
``units`` and ``errors``, nothing that drives a run.
"""
