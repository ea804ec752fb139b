"""Errors that are the user's to fix: printed as a message, never as a traceback (exit code 2)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class UserError(Exception):
    """Bad input (YAML, trace, CLI argument). The message names where and what was expected."""

    exit_code = 2


class SimulationError(Exception):
    """A simulation failed in its worker (crash, SystemC fatal, exception); names the cause."""

    exit_code = 1


def shorten(text: str, limit: int = 60) -> str:
    """`text` quoted, cut to `limit` characters: a hostile value keeps its error one short line."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text)} characters)"


def suggest(word: str, choices: Iterable[str]) -> str:
    """`; did you mean 'x'?` for the closest choice, or nothing."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""
