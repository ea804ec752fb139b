"""``attn-tlm replay``: summary and JSON of a good trace; every kind of bad input ends with exit
code 2 and a message naming the file / record, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tlm_models.cli.main import main
from tlm_models.cli.replay_cmd import parse_window
from tlm_models.errors import UserError
from tlm_models.run.result import SCHEMA
from tlm_models.run.trace_job import replay_trace_file
from tlm_models.run.worker import run_in_worker
from tlm_models.trace.io import open_trace, write_trace

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "traces" / "samples" / "double_buffered_loop.trace.txt"
TINY = str(ROOT / "tests" / "data" / "platforms" / "tiny.yaml")
SRAM = 0x1_0000_0000  # platforms/attenio.yaml


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def _text_trace(tmp_path: Path, engines: str, *ops: str) -> Path:
    path = tmp_path / "bad.trace.txt"
    path.write_text(
        f"dataflow: test\nengines: {engines}\ntensor: K offchip base=0x0 shape=16x64\n"
        + "\n".join(ops)
        + "\n"
    )
    return path


def test_summary_has_units(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["replay", str(SAMPLE)], capsys)
    assert code == 0
    assert "simulated time" in out and " ns" in out
    assert "read 12.1 KiB" in out  # 12,416 B: 128 B of Q + 3 x 32 x 128 B of K
    assert "overlap efficiency" in out and "%" in out
    assert "load_data" in out


def test_json_is_the_result_contract(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    timeline = tmp_path / "t.json"
    code, out, _ = _run(
        [
            "replay",
            str(SAMPLE),
            "--json",
            "--timeline",
            str(timeline),
            "--timeline-window",
            "0:500",
        ],
        capsys,
    )
    assert code == 0
    result = json.loads(out)
    assert result["schema"] == SCHEMA
    assert result["ops"] == 7
    assert result["offchip_bytes"]["read"] == 12_416
    assert result["offchip_bytes_per_tensor"]["K"]["read"] == 12_288
    assert set(result["stalls"]) == {"dma0", "pe"}
    assert timeline.is_file()
    other = json.loads(timeline.read_text())["otherData"]
    assert other["window_ns"] == [0.0, 500.0]


def test_overrides_change_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(["replay", str(SAMPLE), "--json"], capsys)
    _, slow, _ = _run(["replay", str(SAMPLE), "--json", "--set", "hbm.latency=1us"], capsys)
    assert json.loads(slow)["sim_time_ns"] > json.loads(out)["sim_time_ns"] + 900


def test_queued_memory_is_for_stl_replays(capsys: pytest.CaptureFixture[str]) -> None:
    # The engines book their requests ahead of the simulation clock: a waiting memory cannot
    # serve them, so the operation replay refuses it by name.
    queued = ["--set", "hbm.fidelity=bank", "--set", "hbm.request_mode=queued"]
    code, _, err = _run(["replay", str(SAMPLE), *queued], capsys)
    assert code == 2
    assert "hbm.request_mode=queued applies to STL replays" in err


def test_engine_the_platform_lacks(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    trace = _text_trace(
        tmp_path, "dma0 npu", f"0 load dma0 tensor=K m=1 n=128 src0=0x0 dst={SRAM:#x}"
    )
    code, _, err = _run(["replay", str(trace)], capsys)
    assert code == 2
    assert "'npu'" in err and "dma0" in err and str(trace) in err


@pytest.mark.parametrize(
    ("op", "what"),
    [
        (f"load dma0 tensor=K m=1 n=128 src0=0x2_0000_0000 dst={SRAM:#x}", "inside hbm"),
        (f"load dma0 tensor=K m=1 n=128 src0=0x0 dst={SRAM + (512 << 10) - 64:#x}", "inside sram"),
        (f"exp exp m=1 n=64 src0={SRAM:#x} dst=0x40", "inside sram"),
    ],
    ids=["unmapped_source", "past_the_sram", "compute_result_off_chip"],
)
def test_address_outside_memory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, op: str, what: str
) -> None:
    trace = _text_trace(
        tmp_path,
        "dma0 pe exp",
        f"0 load dma0 tensor=K m=1 n=128 src0=0x0 dst={SRAM:#x}",
        f"1 {op}",
    )
    code, _, err = _run(["replay", str(trace)], capsys)
    assert code == 2
    assert f"{trace}: record 1:" in err
    assert what in err


def test_record_that_slips_past_the_check_fails_cleanly(tmp_path: Path) -> None:
    # Without the check the DMA's write goes to an address no route covers: the interconnect
    # answers with an address error, the DMA throws OpError, the replayer names the record.
    trace = _text_trace(
        tmp_path,
        "dma0",
        f"0 load dma0 tensor=K m=1 n=128 src0=0x0 dst={SRAM:#x}",
        "1 load dma0 tensor=K m=1 n=128 src0=0x0 dst=0x3_0000_0000",
    )
    with pytest.raises(UserError, match=r"record 1 \(load on dma0\)"):
        run_in_worker(
            replay_trace_file,
            str(trace),
            "platforms/attenio.yaml",
            (),
            check=False,
            timeout=120,
        )


def test_truncated_binary_trace(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = open_trace(SAMPLE)
    binary = tmp_path / "t.bin"
    write_trace(binary, source.header, source.chunks())
    data = binary.read_bytes()
    binary.write_bytes(data[:-10])
    code, _, err = _run(["replay", str(binary)], capsys)
    assert code == 2
    assert str(binary) in err


def test_malformed_text_trace_names_the_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = _text_trace(tmp_path, "dma0", "0 load dma0 m=one n=128")
    code, _, err = _run(["replay", str(trace)], capsys)
    assert code == 2
    assert f"{trace}:4" in err


def test_engine_of_the_wrong_kind(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    trace = _text_trace(tmp_path, "pe", f"0 load pe tensor=K m=1 n=128 src0=0x0 dst={SRAM:#x}")
    code, _, err = _run(["replay", str(trace)], capsys)
    assert code == 2
    assert "record 0" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "no/such/trace.bin"],
        ["replay", str(SAMPLE), "--platform", "no/such/platform.yaml"],
        ["replay", str(SAMPLE), "--set", "hbm.nonsense=3"],
        ["replay", str(SAMPLE), "--timeline", "x.json", "--timeline-window", "5:1"],
        ["replay", str(SAMPLE), "--timeline-window", "0:100"],
        ["replay", str(SAMPLE), "--platform", TINY],  # tiny maps its SRAM elsewhere
    ],
    ids=["no_trace", "no_platform", "bad_override", "bad_window", "window_alone", "wrong_map"],
)
def test_bad_command_lines(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, _, err = _run(argv, capsys)
    assert code == 2
    assert err.startswith("attn-tlm: error:")


@pytest.mark.parametrize("text", ["", "5", "a:b", "-1:4", "3:3", "0:inf"])
def test_parse_window_rejects(text: str) -> None:
    with pytest.raises(UserError, match="--timeline-window"):
        parse_window(text)


def test_parse_window() -> None:
    window = parse_window("100:2500.5")
    assert (window.start_ns, window.end_ns) == (100.0, 2500.5)


def test_trace_of_another_element_width_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # The sample trace is FP16 (elem_bytes 2); a platform computing on 4 B elements would
    # count its operand traffic and tiling in the wrong width.
    wide = ["--set", "pe.elem_bytes=4B", "--set", "exp.elem_bytes=4B"]
    code, _, err = _run(["replay", str(SAMPLE), *wide], capsys)
    assert code == 2
    assert "2 B elements" in err and "4 B elements" in err and str(SAMPLE) in err
