"""A benchmark's measurement in a fresh child process (one SystemC simulation per process): the
child prints its figures as one JSON line, the last it writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

#: Variables the child keeps: which package and compiled library it loads (a source tree on
#: PYTHONPATH, a given file, the build mode, the cache holding it), so that two trees or
#: libraries can be measured side by side.
KEPT = ("PYTHONPATH", "ATTN_TLM_NATIVE_LIBRARY", "ATTN_TLM_PGO", "XDG_CACHE_HOME", "HOME")


def _kept() -> dict[str, str]:
    return {name: os.environ[name] for name in KEPT if name in os.environ}


def run_child(script: str, *args: str) -> dict[str, Any]:
    """Runs ``script child ARGS...`` and returns the JSON figures of its last output line."""
    proc = subprocess.run(
        [sys.executable, script, "child", *args],
        capture_output=True,
        text=True,
        env={"SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1", "PATH": "/usr/bin:/bin", **_kept()},
    )
    if proc.returncode != 0:
        raise SystemExit(f"child {args[:2]} failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result
