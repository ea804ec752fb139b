"""The result JSON has one declaration (the RunResult dataclasses): the shipped JSON Schema is
generated from it, real results validate against it and round-trip through RunResult."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from tlm_models.errors import UserError
from tlm_models.run.config import RunConfig
from tlm_models.run.execute import run_one
from tlm_models.run.result_schema import SCHEMA_FILE, result_schema
from tlm_models.run.run_result import RunResult
from tlm_models.run.worker import run_in_worker


@pytest.fixture(scope="module")
def approx_result() -> dict[str, Any]:
    config = RunConfig.of("approx", 512, 16, extra=(("degree", "2"),))
    result: dict[str, Any] = run_in_worker(run_one, config)
    return result


def test_the_shipped_schema_is_the_generated_one() -> None:
    shipped = json.loads(SCHEMA_FILE.read_text())
    assert shipped == result_schema(), "run python -m tlm_models.run.result_schema"
    jsonschema.Draft202012Validator.check_schema(shipped)


def test_a_real_result_validates_and_round_trips(approx_result: dict[str, Any]) -> None:
    jsonschema.validate(approx_result, result_schema())
    typed = RunResult.from_dict(approx_result)
    assert typed.sections == {}  # every key the runner writes is declared
    assert typed.to_dict() == approx_result
    assert typed.approx_error is not None and typed.approx_error["degree"] == 2
    assert (typed.seq_len, typed.head_dim, typed.elem_bytes) == (512, 16, 2)
    for identity in ("seq_len", "head_dim", "heads"):  # stored once, at the top level
        assert identity not in typed.tiling


def test_a_wrong_result_is_a_clear_error(approx_result: dict[str, Any]) -> None:
    missing = {k: v for k, v in approx_result.items() if k != "sim_time_ns"}
    with pytest.raises(UserError, match="result: missing key 'sim_time_ns'"):
        RunResult.from_dict(missing)
    wrong = {**approx_result, "offchip_bytes": {"read": "many", "write": 0, "total": 0}}
    with pytest.raises(UserError, match=r"result\.offchip_bytes\.read: expected int"):
        RunResult.from_dict(wrong)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(wrong, result_schema())
    with pytest.raises(UserError, match=r"not a attn-tlm\.result/1 result"):
        RunResult.from_dict({**approx_result, "schema": "other/9"})


def test_the_api_names_are_functions_not_modules() -> None:
    import tlm_models
    import tlm_models.api  # imports every submodule the API uses

    for name in tlm_models.__all__:
        value = getattr(tlm_models, name)
        assert not isinstance(value, type(tlm_models)), f"tlm_models.{name} is a module"
