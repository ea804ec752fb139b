"""The run core: one path from a request to a result.

Owns the request (``config.RunConfig``), its resolution against the platform (``resolve``), the
predicted cost (``cost``), the execution in a worker process (``execute``, ``execute_tiled``,
``worker``), and the result with its summary, diagnosis and JSON schema (``result``,
``run_result``, ``tile_result``, ``summary``, ``diagnosis``). It may import everything below
it (``replay``, ``fast_forward``, ``runtime``, ``dataflows``, ``workload``, ``platform``,
``trace``, ``files``, ``units``, ``errors``), never ``study``, ``explore`` or ``cli``.
"""
