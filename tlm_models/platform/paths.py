"""Where a platform file is: a path, one relative to the repository, or a shipped platform's name.

Declared here, below the run core, so that composing platforms and every command find a
platform the same way.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from tlm_models.errors import UserError

__all__ = ["DEFAULT_PLATFORM", "resolve_platform"]

#: The paper's machine; relative paths are looked up in the working directory, then the repository.
DEFAULT_PLATFORM = "platforms/attenio.yaml"

_REPOSITORY = Path(__file__).resolve().parent.parent.parent


def resolve_platform(path: str) -> Path:
    """Finds a platform file: absolute, else relative to the working directory, else the repo,
    else a shipped platform's name (``attenio-x4``).

    The fallback lets the default ``platforms/attenio.yaml`` work from any directory.
    """
    candidate = Path(path).expanduser()
    local = candidate.is_absolute() or candidate.exists()
    found = candidate if local else _REPOSITORY / candidate
    named = _REPOSITORY / "platforms" / f"{path}.yaml"
    if not found.is_file() and "/" not in path and not path.endswith(".yaml") and named.is_file():
        found = named  # a platform's name: `attenio-x4` is platforms/attenio-x4.yaml
    if not found.is_file() and os.path.lexists(candidate):
        return candidate  # there, but no regular file (a link loop, a FIFO): the loader says so
    if not found.is_file():
        tried = [candidate] if candidate.is_absolute() else [Path.cwd() / candidate, found]
        places = " and ".join(str(p) for p in dict.fromkeys(tried))
        known = sorted(p.name for p in (_REPOSITORY / "platforms").glob("*.yaml"))
        close = difflib.get_close_matches(candidate.name, known, n=1)
        hint = f"; did you mean platforms/{close[0]}?" if close else ""
        raise UserError(f"platform file '{path}' not found (looked for {places}){hint}")
    return found
