"""report.md and plots from a synthetic sweep directory."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from tests.study_jobs import fake_result
from tlm_models.run.config import RunConfig
from tlm_models.study.approx_study import approx_error
from tlm_models.study.grid import GridSpec, expand_grid
from tlm_models.study.report import load_results, render_report, write_report
from tlm_models.study.store import ResultStore, error_record, result_record


def _write_results(directory: Path) -> list[RunConfig]:
    configs = expand_grid(
        GridSpec(
            dataflows=("standard", "flat", "flash2", "attenio"),
            seq_lens=(8192, 16384, 32768),
            head_dims=(64, 128),
        )
    )
    store = ResultStore(directory)
    for config in configs:
        if config.dataflow == "flat" and config.seq_len == 32768 and config.head_dim == 128:
            store.append(error_record(config, "SimulationError: worker crashed: SIGABRT (abort)"))
        else:
            store.append(result_record(config, fake_result(config)))
    return configs


def _write_timelines(directory: Path) -> None:
    (directory / "timelines").mkdir()
    for name, step in (("standard", 0.4), ("attenio", 0.25)):
        events: list[dict[str, object]] = [
            {"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": engine}}
            for tid, engine in enumerate(("dma0", "pe", "exp"))
        ]
        for i in range(40):
            events.append(
                {
                    "name": f"load K[{i}]",
                    "ph": "X",
                    "ts": 100 + i * step,
                    "dur": step * 0.9,
                    "pid": 1,
                    "tid": 0,
                }
            )
            events.append(
                {
                    "name": "matmul S",
                    "ph": "X",
                    "ts": 100.2 + i * step,
                    "dur": step * 0.6,
                    "pid": 1,
                    "tid": 1,
                }
            )
            events.append(
                {
                    "name": "exp P",
                    "ph": "X",
                    "ts": 100.3 + i * step,
                    "dur": step * 0.3,
                    "pid": 1,
                    "tid": 2,
                }
            )
        (directory / "timelines" / f"{name}.json").write_text(json.dumps({"traceEvents": events}))


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_report_tables_have_units_speedups_and_failures(tmp_path: Path) -> None:
    _write_results(tmp_path)
    text = render_report(list(ResultStore(tmp_path).latest().values()))
    assert "### N = 8K tokens, d = 64" in text
    header = next(line for line in text.splitlines() if line.startswith("| Dataflow"))
    for unit in (
        "(×)",
        "PE MAC util. (%)",
        "Exp lane util. (%)",
        "Memory stall (%)",
        "Overlap efficiency (%)",
    ):
        assert unit in header
    # fake attenio is 3x faster than standard: the speedup column shows it.
    attenio = next(line for line in text.splitlines() if line.startswith("| attenio"))
    assert attenio.split("|")[3].strip() == "3.00"
    # Times and bytes carry their unit in each cell, in the largest unit that reads well.
    assert attenio.split("|")[2].strip().endswith((" ms", " µs", " s"))
    assert attenio.split("|")[4].strip().endswith(("MiB", "KiB", "GiB"))
    assert "## Executive summary" in text and "is fastest" in text
    assert "Closed-form off-chip bounds:" in text and "mmm_lower 2.00 MiB" in text
    assert "## Failed configurations" in text and "SIGABRT" in text
    assert "23 finished, 1 failed" in text


def test_report_uses_gib_for_large_traffic(tmp_path: Path) -> None:
    config = RunConfig.of("standard", 131072, 128)
    record = result_record(config, fake_result(config))
    row = next(line for line in render_report([record]).splitlines() if line.startswith("| st"))
    assert row.split("|")[4].strip().endswith(" GiB")


def test_write_report_produces_markdown_and_real_images(tmp_path: Path) -> None:
    _write_results(tmp_path)
    _write_timelines(tmp_path)
    path = write_report(tmp_path)
    text = path.read_text()
    for stem in (
        "speedup", "offchip", "utilization", "stall_overlap", "timeline", "energy-stacked",
        "energy-vs-n",
    ):  # fmt: skip
        assert f"({stem}.png)" in text
        assert (tmp_path / f"{stem}.svg").read_text().lstrip().startswith("<?xml")
        width, height = _png_size(tmp_path / f"{stem}.png")
        assert 400 <= width <= 3000 and 200 <= height <= 3000
    image = pytest.importorskip("matplotlib.image").imread(tmp_path / "speedup.png")
    assert image.std() > 0.05  # drawn content, not a blank canvas


def test_report_energy_section(tmp_path: Path) -> None:
    _write_results(tmp_path)
    text = render_report(load_results(tmp_path))
    section = text.split("## Energy", 1)[1]
    assert "| Dataflow | Energy (mJ) | Dynamic (mJ) | Static (mJ) | Avg. power (W) |" in section
    assert "pJ / attention FLOP | hbm (mJ) | pe (mJ) |" in section  # dma spent nothing
    # standard at N = 8K, d = 64: 1 pJ per MAC = 0.5 pJ per FLOP, plus 32 pJ per byte and 1 W.
    config = RunConfig.of("standard", 8192, 64)
    fake = fake_result(config)
    pj_flop = fake["energy"]["total_j"] * 1e12 / (4 * 8192**2 * 64)
    row = next(line for line in section.splitlines() if line.startswith("| standard |"))
    assert f"| {pj_flop:,.3f} |" in row
    assert f"| {fake['energy']['total_j'] * 1e3:,.3f} |" in row


def test_variants_get_their_own_sections_and_plots(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    for capacity in ("256KiB", "512KiB"):
        for dataflow in ("standard", "attenio"):
            config = RunConfig.of(dataflow, 8192, 64, overrides=(f"sram.capacity={capacity}",))
            store.append(result_record(config, fake_result(config)))
    text = write_report(tmp_path).read_text()
    assert "## platforms/attenio.yaml, sram.capacity=256KiB" in text
    assert (tmp_path / "speedup-1.png").exists() and (tmp_path / "speedup-2.png").exists()


def _write_approx_results(directory: Path) -> None:
    """Exact dataflows with quadratic traffic and approx with linear traffic, d = 16 and 64."""
    store = ResultStore(directory)
    for d in (16, 64):
        for n in (8192, 16384, 32768):
            for dataflow, per_row in (("flash2", n // 32), ("attenio", n // 1024)):
                config = RunConfig.of(dataflow, n, d)
                result = fake_result(config)
                total = 2 * n * d * per_row
                result["offchip_bytes"] = {"read": total - 2 * n * d, "write": 2 * n * d}
                result["offchip_bytes"]["total"] = total
                result["bounds"] = {"closed_form": total, "mmm_lower": n * n}
                store.append(result_record(config, result))
            for degree in (1, 2, 3):
                config = RunConfig.of("approx", n, d, extra=(("degree", str(degree)),))
                result = fake_result(config)
                result["offchip_bytes"] = {"read": 6 * n * d, "write": 2 * n * d}
                result["offchip_bytes"]["total"] = 8 * n * d
                result["sim_time_ns"] = 0.5 * n * d * degree
                result["bounds"] = {"closed_form": 8 * n * d, "approx_lower_bound": 8 * n * d}
                store.append(result_record(config, result))


def test_report_has_approx_slopes_and_tradeoff(tmp_path: Path) -> None:
    _write_approx_results(tmp_path)
    text = render_report(list(ResultStore(tmp_path).latest().values()))
    assert "## Approximate attention" in text
    lines = text.splitlines()
    slopes = lines[lines.index("| Dataflow | d = 16 | d = 64 |") :]
    rows = {line.split("|")[1].strip(): line for line in slopes[2:] if line.startswith("| ")}
    assert rows["flash2"].split("|")[2].strip() == "2.00 (N 8K–32K)"
    assert rows["attenio"].split("|")[3].strip() == "2.00 (N 8K–32K)"
    for degree in (1, 2, 3):
        assert rows[f"approx degree={degree}"].split("|")[2].strip() == "1.00 (N 8K–32K)"
    tradeoff = [line for line in lines if line.startswith("| 64 | 3 | 1 | 32K |")]
    assert len(tradeoff) == 1
    cells = [cell.strip() for cell in tradeoff[0].split("|")[1:-1]]
    error = approx_error(3, 1.0, 64)
    assert cells[4] == "3.15 ms"  # simulated time 0.5 N d g ns = 3,145,728 ns
    assert cells[5] == "16.0 MiB"  # 8 N d bytes at N = 32K, d = 64
    assert cells[7] == f"{error['max_rel']:.2e}" and cells[8] == f"{error['mean_rel']:.2e}"
    # AttenIO (fake) runs n^2 d / 6144 ns; approx 1.5 n d ns at g = 3.
    assert cells[6] == f"{(32768 * 32768 * 64 / 2048 / 3) / (0.5 * 32768 * 64 * 3):.2f}"


def test_report_without_approx_has_no_approx_section(tmp_path: Path) -> None:
    _write_results(tmp_path)
    assert "Approximate attention" not in render_report(
        list(ResultStore(tmp_path).latest().values())
    )


def test_write_report_draws_the_approx_plots(tmp_path: Path) -> None:
    _write_approx_results(tmp_path)
    text = write_report(tmp_path).read_text()
    section = text[text.index("## Approximate attention") :]
    for stem in ("approx_slopes", "approx_tradeoff"):
        assert f"({stem}.png)" in section
        width, height = _png_size(tmp_path / f"{stem}.png")
        assert 400 <= width <= 3000 and 200 <= height <= 3000
        image = pytest.importorskip("matplotlib.image").imread(tmp_path / f"{stem}.png")
        assert image.std() > 0.05
    svg = (tmp_path / "approx_slopes.svg").read_text()
    assert "slope 1.00" in svg and "slope 2.00" in svg  # the fitted slopes are in the legend
    assert not (tmp_path / "speedup.png").exists()  # no Standard runs: no speedup plot


def _with_time(result: dict[str, object], sim_ns: float) -> dict[str, object]:
    """The fake result with a PE/Exp time breakdown: 50 % matmuls, 10 % element-wise, 5 %
    rescaling, 5 % drain, 20 % idle for loads, 10 % idle at the end (Exp: 10 % exps)."""
    pe = dict(result["pe"])  # type: ignore[call-overload]
    exp = dict(result["exp"])  # type: ignore[call-overload]
    idle = dict.fromkeys(("load_data", "exp_result"), 0.0)
    pe["time"] = {
        "busy": {"mac": 0.5 * sim_ns, "elementwise": 0.1 * sim_ns, "rescale": 0.05 * sim_ns,
                 "drain": 0.05 * sim_ns},
        "idle": {**idle, "load_data": 0.2 * sim_ns},
        "idle_no_work": 0.1 * sim_ns,
    }  # fmt: skip
    exp["time"] = {
        "busy": {"exp": 0.1 * sim_ns},
        "idle": {**idle, "exp_result": 0.0},
        "idle_no_work": 0.9 * sim_ns,
    }
    return {**result, "pe": pe, "exp": exp}


def test_the_report_breaks_the_engines_time_down_by_work_and_idle_cause(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    for config in expand_grid(GridSpec(("flash2", "attenio"), (8192,), (64,))):
        fake = fake_result(config)
        store.append(result_record(config, _with_time(fake, float(fake["sim_time_ns"]))))
    text = write_report(tmp_path).read_text()
    assert "### Where the compute engines' time went" in text
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("| Dataflow | N | d | Engine | m"))
    assert header == (
        "| Dataflow | N | d | Engine | matmuls (%) | element-wise ops (%) | rescaling (%) | "
        "exponentials (%) | pipeline drain (%) | idle waiting for off-chip loads (%) | "
        "idle, nothing left to do (%) |"
    )
    row = next(line for line in lines if line.startswith("| flash2 | 8K | 64 | PE"))
    cells = [c.strip() for c in row.strip("|").split("|")[4:]]
    assert cells == ["50.0", "10.0", "5.0", "–", "5.0", "20.0", "10.0"]  # no exps on the PE
    assert sum(float(c) for c in cells if c != "–") == 100.0
    assert (tmp_path / "stalls.png").exists()


def test_energy_plots_are_a_readable_grid_with_every_dataflow_in_the_legend(
    tmp_path: Path,
) -> None:
    """Six (N, d) shapes: one row of them was 2,772 px wide (5,082 in the demo, labels on top
    of each other); three panels a row are 1,386 px. The legends are the figure's, built from
    every panel, inside the picture."""
    _write_results(tmp_path)
    write_report(tmp_path)
    width, height = _png_size(tmp_path / "energy-stacked.png")
    assert width <= 1400 and height >= 600  # two rows of three
    from matplotlib.figure import Figure

    from tlm_models.study import energy_plots
    from tlm_models.study.variants import group_variants

    seen: list[list[str]] = []
    original = Figure.legend

    def record(self: Figure, *args: object, **kwargs: object) -> object:
        seen.append(list(args[1]) if len(args) > 1 else [])  # type: ignore[call-overload]
        assert kwargs.get("loc") == "outside lower center"
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Figure, "legend", record)
        (variant,) = group_variants(load_results(tmp_path))
        energy_plots.plot_energy(variant, tmp_path)
    assert seen[1] == ["standard", "flat", "flash2", "attenio"]


def test_energy_without_any_leak_entry_has_no_static_column(tmp_path: Path) -> None:
    """A column of 0.000 static energy read as a measurement; it is not modelled."""
    store = ResultStore(tmp_path)
    for config in expand_grid(GridSpec(("flash2", "attenio"), (8192,), (64,))):
        fake = fake_result(config)
        energy = dict(fake["energy"])
        energy["total_j"] -= energy["static_j"]
        energy["static_j"] = 0.0
        store.append(result_record(config, {**fake, "energy": energy}))
    section = render_report(load_results(tmp_path))
    assert "Static energy is not modelled" in section
    assert "| Dataflow | Energy (mJ) | Dynamic (mJ) | Avg. power (W) |" in section


def test_dataflows_below_the_mmm_bound_are_explained(tmp_path: Path) -> None:
    """AttenIO and FA2 went below a 'lower bound' without a word."""
    store = ResultStore(tmp_path)
    for config in expand_grid(GridSpec(("standard", "attenio"), (8192,), (64,))):
        fake = fake_result(config)
        total = 10_000_000 if config.dataflow == "attenio" else 900_000_000
        bounds = {"compulsory": 4_194_304.0, "mmm_lower_bound": 137_396_744.0}
        offchip = {"read": total, "write": 0, "total": total}
        store.append(result_record(config, {**fake, "bounds": bounds, "offchip_bytes": offchip}))
    text = render_report(load_results(tmp_path))
    assert "attenio moves less than the tall-and-skinny MMM lower bound: that bound is" in text
    assert "standard moves less" not in text


def test_the_summary_make_demo_prints_is_the_reports_head(tmp_path: Path) -> None:
    """`make demo` ended by printing the whole report (508 lines in the demo)."""
    from tlm_models.study.report import render_summary

    _write_results(tmp_path)
    records = load_results(tmp_path)
    summary, whole = render_summary(records), render_report(records)
    assert whole.startswith(summary.rstrip())
    assert "## Executive summary" in summary and "###" not in summary
    assert len(summary.splitlines()) < len(whole.splitlines()) / 3


def test_the_summary_gives_both_amounts_of_traffic_not_a_rounded_ratio() -> None:
    """With fitted FlashAttention-2 tiles AttenIO moved 12 MiB against 18 MiB, which the
    summary rounded to "2x less" (and 3.75 against 4.1 GiB to "1x less")."""
    from tlm_models.study.explain import shape_summary

    def row(dataflow: str, ns: float, mib: int) -> dict[str, object]:
        return {
            "dataflow": dataflow,
            "sim_time_ns": ns,
            "offchip_bytes": {"total": mib << 20},
            "pe": {"busy_fraction": 0.9, "mac_utilization": 0.8},
            "memory_stall_fraction": 0.0,
        }

    text = shape_summary(8192, 64, [row("flash2", 4.89e6, 18), row("attenio", 7.45e6, 12)])
    assert "attenio moves the least off-chip data (12.0 MiB against flash2's 18.0 MiB)" in text
