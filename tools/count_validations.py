"""Counts how often one `attn-tlm run` loads and validates its platform and builds its workload.

Runs the command in this process (the worker's share included: the job is called directly
instead of in a worker process) with counters on the platform validator and on ``Workload``'s
checks, and prints both counts. The goal (docs/internals.md) is once each.

    .venv/bin/python tools/count_validations.py --dataflow flash2 --seq-len 1K --head-dim 64
"""

from __future__ import annotations

import importlib
import sys
from collections import Counter
from typing import Any

from tlm_models.cli import main as cli_main
from tlm_models.cli import run_cmd
from tlm_models.workload import spec

validate = importlib.import_module("tlm_models.platform.validate")

counts: Counter[str] = Counter()


def _counting(name: str, fn: Any) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        counts[name] += 1
        return fn(*args, **kwargs)

    return wrapper


def main(argv: list[str]) -> int:
    validate._Checker.platform = _counting(  # type: ignore[method-assign]
        "platform validated", validate._Checker.platform
    )
    spec.Workload.__post_init__ = _counting(  # type: ignore[method-assign]
        "workload validated", spec.Workload.__post_init__
    )

    def in_process(fn: Any, *args: Any, progress: Any = None, **kwargs: Any) -> Any:
        return fn(*args)

    run_cmd.run_in_worker = in_process  # type: ignore[attr-defined]
    code = cli_main.main(["run", *argv])
    for name in ("platform validated", "workload validated"):
        print(f"{name}: {counts[name]}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
