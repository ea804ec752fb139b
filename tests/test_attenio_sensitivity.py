"""What flips the AttenIO-vs-FA2 verdict: each alternative changes one assumption of the
as-published base, the study runs them, and the report's table and tornado plot show them."""

from __future__ import annotations

from pathlib import Path

from tests.study_jobs import fake_result
from tlm_models.run.resolve import resolve_run
from tlm_models.study import attenio_repro as study
from tlm_models.study import attenio_sensitivity as sens
from tlm_models.study.store import result_record


def _differences(a: object, b: object) -> set[str]:
    return {k for k, v in vars(a).items() if vars(b)[k] != v}


def test_each_alternative_changes_only_its_own_assumption() -> None:
    for assumption in sens.ASSUMPTIONS:
        for alt in assumption.alternatives:
            changed = False
            for df in sens.PAIR:
                base = sens.point_config(df, 8192, 64, None)
                other = sens.point_config(df, 8192, 64, alt)
                diff = _differences(other, base)
                assert diff <= {"extra", "overrides", "ff_policy"}, (alt.label, diff)
                if "extra" in diff:
                    assert df in alt.params
                    given = dict(alt.params[df])
                    kept = {k: v for k, v in base.extra if k not in given}
                    assert dict(other.extra) == {**kept, **given}
                if "overrides" in diff:
                    assert alt.overrides
                    assert set(other.overrides) - set(base.overrides) == set(alt.overrides)
                changed |= bool(diff)
            assert changed, alt.label


def test_base_is_the_as_published_main_run() -> None:
    main = {c.key() for c in study.main_configs(study.FULL, study.PUBLISHED)}
    assert all(sens.point_config(df, 8192, 64, None).key() in main for df in sens.PAIR)


def test_every_sensitivity_run_resolves() -> None:
    for config in sens.sensitivity_configs([(8192, 64)]):
        resolve_run(config)  # raises for a parameter or override the model does not take


def test_the_full_study_runs_the_sensitivity_once_per_point() -> None:
    keys = {c.key() for c in study.study_configs(study.FULL)}
    assert {c.key() for c in sens.sensitivity_configs(study.FULL.sensitivity)} <= keys
    assert study.FULL.sensitivity == ((8192, 64), (8192, 128))


def test_table_and_tornado_from_results(tmp_path: Path) -> None:
    configs = sens.sensitivity_configs([(8192, 64)])
    records = {}
    for c in configs:
        record = result_record(c, fake_result(c))
        if c.dataflow == "attenio" and ("rescale", "separate") in c.extra:
            record["sim_time_ns"] *= 2  # AttenIO at half speed: FA2 / AttenIO 1.5 -> 0.75
        records[record["key"]] = record
    text = "\n".join(sens.render(records, [(8192, 64)], "t.png"))
    assert "| (base) | — | — | 1.049 | 0.699 | 1.500x |" in text
    assert "| | both separate | | 1.049 | 1.398 | 0.750x flips |" in text
    assert "| | bandwidth-level | | 1.049 | 0.699 | 1.500x |" in text
    assert "![sensitivity](t.png)" in text
    sens.plot_tornado(records, [(8192, 64)], tmp_path / "t.png")
    assert (tmp_path / "t.png").stat().st_size > 10_000
