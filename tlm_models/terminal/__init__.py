"""What a person at a terminal sees while a long command works: a named phase redrawn with its
elapsed time (``phase``), whether a stream reaches a person at all (``is_terminal``), and what
every progress bar shares (``progress.TerminalProgress``). Below every folder that does long
work (the library build in ``runtime``, runs, sweeps, reports), so each can show it; it may
import only ``units`` and ``errors``.
"""
