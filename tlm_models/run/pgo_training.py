"""The training replays of the profile-guided build of the compiled models.

The compiled-library build (:mod:`tlm_models.runtime.aot`) runs them.

The instrumented library counts which branches and calls the replays take; the final build lays
out and inlines the code for those counts. The replays are short but take the paths a study
spends its time in: one tile with the PE/Exp operand traffic (AttenIO and FlashAttention-2,
replayed exactly), four tiles sharing the HBM, sixteen tiles handing over at the issue gate,
and the bank-level HBM with the steady-state fast-forward on. Each runs in its own process
(SystemC elaborates once per process), which writes its counts when it exits; the counts of
the runs add up.

    python -m tlm_models.run.pgo_training CASE   (aot runs each case with the instrumented library)
"""

from __future__ import annotations

import sys

from tlm_models.errors import UserError
from tlm_models.runtime.pgo_cases import CASES, PLATFORMS, TrainingCase


def run_case(case: TrainingCase) -> None:
    """Replays ``case`` in this process (the compiled library it loads is the one in use)."""
    from tlm_models.run.config import RunConfig
    from tlm_models.run.execute import run_one
    from tlm_models.run.resolve import resolve_run
    from tlm_models.workload.spec import Workload

    config = RunConfig(
        case.dataflow,
        Workload(seq_len=case.seq_len, head_dim=64, heads=case.heads),
        platform=str(PLATFORMS / case.platform),
        overrides=case.overrides,
        exact=case.exact,
    )
    run_one(resolve_run(config))


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in CASES:
        print(
            f"usage: python -m tlm_models.run.pgo_training {{{','.join(CASES)}}}", file=sys.stderr
        )
        return 2
    try:
        run_case(CASES[argv[0]])
    except UserError as exc:
        print(f"attn-tlm: error: {exc}", file=sys.stderr)
        return UserError.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
