"""The training replays of the profile-guided build: which runs, on which platforms.

Data only, so that the compiled-library build (:mod:`tlm_models.runtime.aot`) can name the cases
without importing the run core above it; :mod:`tlm_models.run.pgo_training` replays a case.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PLATFORMS = Path(__file__).resolve().parent.parent.parent / "platforms"


# The few RunConfig fields a case sets, not a RunConfig itself: aot imports CASES in every
# simulation process, and the run core (RunConfig's package) sits above the runtime.
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
