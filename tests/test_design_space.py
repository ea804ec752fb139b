"""The design-space section of a sweep report: a swept platform parameter, in numeric order,
with time and traffic per workload, as a table and a plot."""

from __future__ import annotations

import copy
from pathlib import Path

from tests.study_jobs import fake_result
from tlm_models.run.config import RunConfig
from tlm_models.study.design_space import axis_position, swept_axes
from tlm_models.study.report import write_report
from tlm_models.study.store import ResultStore, result_record

CAPACITIES = ("1MiB", "128KiB", "512KiB")  # given out of order on purpose


def _records(directory: Path) -> None:
    store = ResultStore(directory)
    for cap in CAPACITIES:
        for dataflow in ("flash2", "attenio"):
            overrides = (f"sram.capacity={cap}", "hbm.channels=8")
            config = RunConfig.of(dataflow, 8192, 64, overrides=overrides)
            result = copy.deepcopy(fake_result(config))
            # Time falls with capacity, so the table's order can be checked.
            result["sim_time_ns"] = {"128KiB": 3e6, "512KiB": 2e6, "1MiB": 1e6}[cap]
            store.append(result_record(config, result))


def test_swept_parameter_is_found_and_ordered_by_value(tmp_path: Path) -> None:
    _records(tmp_path)
    records = ResultStore(tmp_path).records()
    axes = swept_axes(records)
    # hbm.channels is held at 8 throughout: only the capacity is a design axis.
    assert [axis.key for axis in axes] == ["sram.capacity"]
    axis = axes[0]
    assert axis.values == ("128KiB", "512KiB", "1MiB")
    assert axis.numeric
    assert [axis_position(axis, v) for v in axis.values] == [131072.0, 524288.0, 1048576.0]
    assert [(s.label, s.seq_len, s.head_dim) for s in axis.series] == [
        ("flash2", 8192, 64),
        ("attenio", 8192, 64),
    ]


def test_report_has_the_design_space_table_and_plot(tmp_path: Path) -> None:
    _records(tmp_path)
    text = write_report(tmp_path).read_text()
    assert "## Design space: sram.capacity on platforms/attenio.yaml" in text
    assert "| Dataflow | N | d | 128KiB | 512KiB | 1MiB |" in text
    assert "| flash2 | 8K | 64 | 3.000 | 2.000 | 1.000 |" in text
    assert "![Time and off-chip traffic against sram.capacity](design-1.png)" in text
    assert (tmp_path / "design-1.png").read_bytes()[:4] == b"\x89PNG"


def test_a_single_value_is_not_an_axis(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    config = RunConfig.of("flash2", 8192, 64, overrides=("sram.capacity=256KiB",))
    store.append(result_record(config, fake_result(config)))
    assert swept_axes(store.records()) == []
