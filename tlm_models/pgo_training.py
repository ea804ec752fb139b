"""The training replays of the profile-guided build of the compiled models (:mod:`tlm_models.aot`).

The instrumented library counts which branches and calls the replays take; the final build lays
out and inlines the code for those counts. The replays are short but take the paths a study
spends its time in: one tile with the PE/Exp operand traffic (AttenIO and FlashAttention-2,
replayed exactly), four tiles sharing the HBM, sixteen tiles handing over at the issue gate,
and the bank-level HBM with the steady-state fast-forward on. Each runs in its own process
(SystemC elaborates once per process), which writes its counts when it exits; the counts of
the runs add up.

    python -m tlm_models.pgo_training CASE     (aot runs every case with the instrumented library)
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from tlm_models.errors import UserError

PLATFORMS = Path(__file__).resolve().parent.parent / "platforms"


# The few RunConfig fields a case sets, not a RunConfig itself: aot imports CASES in every
# simulation process, and tlm_models.study (RunConfig's package) takes 0.22 s to import.
@dataclass(frozen=True)
class TrainingCase:
    dataflow: str
    seq_len: int
    platform: str
    heads: int = 1
    exact: bool = True
    overrides: tuple[str, ...] = ()


#: name -> replay; about 0.1-0.5 M operations each (d = 64), a few seconds in all instrumented.
CASES: dict[str, TrainingCase] = {
    "attenio": TrainingCase("attenio", 4096, "attenio.yaml"),
    "flash2": TrainingCase("flash2", 4096, "attenio.yaml"),
    "x4-flash2": TrainingCase("flash2", 2048, "attenio-x4.yaml", heads=4),
    "x16-attenio": TrainingCase("attenio", 1024, "attenio-x16.yaml", heads=16),
    "bank-flash2": TrainingCase(
        "flash2", 2048, "attenio.yaml", exact=False, overrides=("hbm.fidelity=bank",)
    ),
}


def run_case(case: TrainingCase) -> None:
    """Replays ``case`` in this process (the compiled library it loads is the one in use)."""
    from tlm_models.dataflows.workload import Workload
    from tlm_models.resolved_run import resolve_run
    from tlm_models.study.config import RunConfig
    from tlm_models.study.run import run_one

    config = RunConfig.for_workload(
        case.dataflow,
        Workload(seq_len=case.seq_len, head_dim=64, heads=case.heads),
        platform=str(PLATFORMS / case.platform),
        overrides=case.overrides,
        exact=case.exact,
    )
    run_one(resolve_run(config))


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in CASES:
        print(f"usage: python -m tlm_models.pgo_training {{{','.join(CASES)}}}", file=sys.stderr)
        return 2
    try:
        run_case(CASES[argv[0]])
    except UserError as exc:
        print(f"attn-tlm: error: {exc}", file=sys.stderr)
        return UserError.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
