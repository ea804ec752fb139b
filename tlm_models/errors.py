"""Errors that are the user's to fix: printed as a message, never as a traceback (exit code 2)."""

from __future__ import annotations


class UserError(Exception):
    """Bad input (YAML, trace, CLI argument). The message names where and what was expected."""

    exit_code = 2


class SimulationError(Exception):
    """A simulation failed in its worker (crash, SystemC fatal, exception); names the cause."""

    exit_code = 1


def shorten(text: str, limit: int = 60) -> str:
    """`text` quoted, cut to `limit` characters: a hostile value keeps its error one short line."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text)} characters)"
