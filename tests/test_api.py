"""The public API beyond docs/api.md's examples: sweeps on an in-memory platform."""

from __future__ import annotations

from pathlib import Path

import pytest

from tlm_models import Platform, sweep
from tlm_models.errors import UserError


def test_a_sweep_on_a_platform_object_records_it_and_runs(tmp_path: Path) -> None:
    platform = Platform.load("platforms/attenio.yaml").with_overrides("sram.capacity=256KiB")
    with pytest.raises(UserError, match="did you mean 'rows'"):
        sweep(["flash2"], [256], [32], out=tmp_path / "bad", platform=platform,
              settings={"pe.rowz": ["32"]})  # fmt: skip
    assert not (tmp_path / "bad").exists()
    outcome = sweep(["flash2"], [256], [32], out=tmp_path / "ok", platform=platform,
                    settings={"pe.rows": ["32"]})  # fmt: skip
    assert outcome.failures == {}
    (result,) = outcome.results
    saved = Platform.load(tmp_path / "ok" / "platform.yaml")
    assert saved.info.scratchpad.size == 256 << 10  # the override went into the saved file
    assert result.platform == str(tmp_path / "ok" / "platform.yaml")
    assert result.overrides == ["pe.rows=32"]
    assert result.offchip_bytes.total == result.bounds["closed_form"]  # type: ignore[index]
