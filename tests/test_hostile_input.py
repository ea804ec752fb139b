"""Hostile input: every mutation of every reference platform, hostile trace and hostile command
line ends in a clean error -- a UserError (exit code 2) whose lines each name one problem, no
traceback -- well within a time bound. Mutations are generated, not hand-picked: numeric
extremes and integer widths for every parameter of every component, YAML bombs, cycles, deep
nesting, encodings, oversized files and includes of special files.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tlm_models.cli.main import main
from tlm_models.errors import UserError
from tlm_models.platform import load_platform
from tlm_models.platform.bounded_yaml import MAX_FILE_BYTES
from tlm_models.platform.loader import PlatformError

ROOT = Path(__file__).resolve().parent.parent
PLATFORMS = sorted((ROOT / "platforms").glob("*.yaml"))
#: Seconds any hostile input may take to be refused (the acceptance bound is 10 s per command).
BOUND_S = 10.0

#: Values per parameter kind that no model can hold, each with what the error must say.
EXTREMES: dict[str, list[tuple[str, str]]] = {
    "count": [
        ("4294967296", "unsigned"),
        ("-1", "must be"),
        ("1e400", "whole number"),
        ("9" * 5000, "whole number"),
    ],
    "size": [
        ("1e999999999 KiB", "out of range"),
        ("18446744073709551616 B", "std::uint64_t"),
        ("0.5 B", "whole number"),
        ("-1 B", "positive"),
    ],
    "time": [
        ("1e999999999 s", "out of range"),
        ("1e9 s", "sc_core::sc_time"),
        ("0.1 ps", "whole number"),
    ],
    "frequency": [
        ("2000 GHz", "below the 1 ps"),
        ("1e-20 Hz", "must be at least 1 Hz"),
        ("1e-999999 Hz", "out of range"),
    ],
    "bandwidth": [
        ("0.001 B/s", "at least 1 B/s"),
        ("1e30 TB/s", "above"),
        ("1e99999999 GB/s", "out of range"),
    ],
    "address": [("18446744073709551616", "std::uint64_t")],
}


def _params() -> Iterator[tuple[Path, str, str, str, str]]:
    """(platform, 'component.param', kind, value, expected text): every extreme of every kind
    on every component of every reference platform, each on a different parameter of that
    kind in turn (all parameters of a kind share one converter and one range check)."""
    for path in PLATFORMS:
        config = load_platform(path)
        for comp in config.components.values():
            # A tile's component is set through the template (`tiles.template.components.pe`),
            # once: every tile is a copy of it.
            key = comp.name
            if config.tiles is not None and comp.name.startswith("tile"):
                local = comp.name.split("_", 1)[1]
                if comp.name != f"tile0_{local}":
                    continue
                key = f"tiles.template.components.{local}"
            for kind, extremes in EXTREMES.items():
                specs = [p for p in comp.spec.params if p.kind == kind]
                for i, (value, expected) in enumerate(extremes if specs else []):
                    spec = specs[i % len(specs)]
                    yield path, f"{key}.{spec.name}", kind, value, expected


def _refused(path: Path | str, overrides: tuple[str, ...] = ()) -> str:
    started = time.monotonic()
    with pytest.raises(PlatformError) as info:
        load_platform(path, overrides)
    assert time.monotonic() - started < BOUND_S
    return str(info.value)


def test_every_parameter_refuses_values_the_model_cannot_hold() -> None:
    cases = list(_params())
    assert len(cases) > 100
    # Each case is bounded by _refused (no hang); a bound on the whole loop would only
    # measure the machine's load, as the case count grows with every new parameter.
    for path, key, _kind, value, expected in cases:
        message = _refused(path, (f"{key}={value}",))
        assert expected in message, (path.name, key, value, message)
        # One line names the override, the parameter and the problem.
        assert any(expected in line and key in line for line in message.splitlines()), message
        assert all(len(line) < 300 for line in message.splitlines()), message


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (("hbm.channels=2147483648", "hbm.channel_bandwidth=1 TB/s"), "peak bandwidth"),
        (("hbm.channels=4096", "hbm.interleave=8 EB"), "unknown unit"),
        (("hbm.channels=65536", "hbm.interleave=1000000 TiB"), "interleave round"),
        (("pe.rows=65536", "pe.cols=65536"), "MACs per cycle"),
        (("dma.max_outstanding=4294967295", "dma.max_burst=16 TiB"), "in flight"),
    ],
)
def test_products_that_overflow_are_refused(overrides: tuple[str, ...], expected: str) -> None:
    assert expected in _refused(ROOT / "platforms" / "attenio.yaml", overrides)


def _with_sram_base(tmp_path: Path, base: str) -> Path:
    text = (ROOT / "platforms" / "attenio.yaml").read_text()
    text = text.replace("{base: 0x1_0000_0000, target: sram}", f"{{base: {base}, target: sram}}")
    text = text.replace("  - {base: 0x2_0000_0000, target: kvbuf}\n", "")
    text = text.replace(
        "include: parts/hbm-spec.yaml",
        "include: " + str(ROOT / "platforms" / "parts" / "hbm-spec.yaml"),
    )
    out = tmp_path / "window.yaml"
    out.write_text(text)
    return out


def test_address_window_may_end_at_but_not_beyond_two_to_the_64(tmp_path: Path) -> None:
    sram = 512 * 1024  # attenio's SRAM capacity: the window's size
    config = load_platform(_with_sram_base(tmp_path, hex(2**64 - sram)))
    assert max(w.base + w.size for w in config.address_map) == 2**64
    message = _refused(_with_sram_base(tmp_path, hex(2**64 - sram + 64)))
    assert "beyond the 64-bit address space" in message


# -- YAML structure and file mutations --------------------------------------------------------


def _laughs(levels: int) -> str:
    lines = ["l0: &l0 [a, a, a, a, a, a, a, a, a]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


def _mutations(text: str) -> dict[str, tuple[bytes | str, str]]:
    """Name -> (file content, what the error must say), each made from a reference platform."""
    return {
        "alias_bomb": (_laughs(9) + text, "aliases are expanded"),
        "self_reference": ("loop: &loop [*loop]\n" + text, "a cycle"),
        "self_reference_mapping": ("loop: &loop {x: *loop}\n" + text, "a cycle"),
        "deep_nesting": ("deep: " + "[" * 50_000 + "]" * 50_000 + "\n" + text, "nesting"),
        "deep_mappings": ("deep: " + "{a: " * 2_000 + "1" + "}" * 2_000 + "\n" + text, "nesting"),
        "huge_file": (text + "#" * (MAX_FILE_BYTES + 1) + "\n", "larger than"),
        "huge_scalar": ("description: " + "x" * 100_000 + "\n" + text, "characters"),
        "utf16": (text.encode("utf-16"), "not UTF-8"),
        "latin1": (b"# caf\xe9\n" + text.encode(), "not UTF-8"),
        "nul_bytes": ("\0" * 64 + text, "YAML"),
        "huge_exponent": (text.replace(" B\n", " B\nbogus: 1e99999999999 GB\n", 1), "problem"),
        "include_dev_zero": (
            text.replace("components:\n", "components:\n  zero: {include: /dev/zero}\n", 1),
            "not a regular file",
        ),
        "include_directory": (
            text.replace("components:\n", "components:\n  here: {include: .}\n", 1),
            "not a regular file",
        ),
    }


MUTATION_NAMES = sorted(_mutations("components:\n"))


@pytest.mark.parametrize("name", MUTATION_NAMES)
@pytest.mark.parametrize("platform", PLATFORMS, ids=[p.stem for p in PLATFORMS])
def test_mutated_platform_files_are_refused(tmp_path: Path, platform: Path, name: str) -> None:
    content, expected = _mutations(platform.read_text())[name]
    path = tmp_path / platform.name
    for part in (platform.parent / "parts").glob("*.yaml"):  # includes resolve as before
        (tmp_path / "parts").mkdir(exist_ok=True)
        (tmp_path / "parts" / part.name).write_text(part.read_text())
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    message = _refused(path)
    assert expected in message, message
    assert "Traceback" not in message
    assert all(len(line) < 300 for line in message.splitlines()), message


def test_include_of_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)  # opening it for reading would block until a writer appears
    path = tmp_path / "p.yaml"
    text = (ROOT / "platforms" / "edge-small.yaml").read_text()
    path.write_text(text.replace("components:\n", "components:\n  p: {include: pipe.yaml}\n", 1))
    assert "not a regular file" in _refused(path)
    assert "not a regular file" in _refused(fifo)


# -- command lines ----------------------------------------------------------------------------

_RUN = ["run", "--dataflow", "flash2", "--seq-len", "256", "--head-dim", "64"]


@pytest.mark.parametrize(
    "argv",
    [
        ["platform", "check", "/dev/zero"],
        ["platform", "check", str(ROOT / "platforms" / "attenio.yaml"), "--set", "=" * 10_000],
        ["platform", "check", str(ROOT / "platforms" / "attenio.yaml"), "--set", "hbm"],
        [*_RUN, "--set", "hbm.channels=4294967296"],
        [*_RUN, "--set", "hbm.latency=1e999999999 s"],
        [*_RUN, "--set", "pe.clock=2000 GHz"],
        [*_RUN, "--set", "hbm.channels=&a [*a]"],
        ["run", "--dataflow", "flash2", "--seq-len", "9" * 5000, "--head-dim", "64"],
        ["run", "--dataflow", "flash2", "--seq-len", "-4", "--head-dim", "64"],
        ["run", "--dataflow", "nope", "--seq-len", "256", "--head-dim", "64"],
        [*_RUN, "--platform", "/dev/zero"],
        ["replay", "/dev/zero"],
        ["trace", "check", "/dev/null"],
    ],
)
def test_hostile_command_lines_end_in_a_clean_error(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse: usage and one error line
        code = exc.code if isinstance(exc.code, int) else 2
    elapsed = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert "Traceback" not in err
    assert err.strip()
    assert all(len(line) < 400 for line in err.splitlines()), err
    assert elapsed < BOUND_S


def test_user_errors_are_the_only_way_out_of_the_loader(tmp_path: Path) -> None:
    # A directory given as the platform itself.
    with pytest.raises(UserError):
        load_platform(tmp_path)


# -- traces -----------------------------------------------------------------------------------

SAMPLE = ROOT / "traces" / "samples" / "double_buffered_loop.trace.txt"


def _written_text_trace(tmp_path: Path) -> list[str]:
    """The sample written back by the trace writer (which ends it with 'end: N')."""
    from tlm_models.trace.io import open_trace
    from tlm_models.trace.text import write_text

    trace = open_trace(SAMPLE)
    out = tmp_path / "written.trace.txt"
    write_text(out, trace.header, trace.chunks(1024))
    return out.read_text().splitlines(keepends=True)


def _hostile_traces(tmp_path: Path) -> dict[str, tuple[str | bytes, str]]:
    lines = _written_text_trace(tmp_path)
    ops = [i for i, line in enumerate(lines) if line[:1].isdigit()]
    sample = SAMPLE.read_text()
    first_op = next(line for line in sample.splitlines() if line[:1].isdigit())
    extra = f"{len(ops)} " + first_op.split(" ", 1)[1].split("#")[0].strip()  # one more record
    return {
        "cut_at_a_line_boundary": ("".join(lines[: ops[-1]]), "cut short"),
        "cut_before_end_line": ("".join(lines[:-1]), "cut short"),
        "cut_in_a_line": ("".join(lines)[:-12], "trace.txt:"),
        "end_lies": ("".join(lines[:-1]) + "end: 999\n", "says 999 operations"),
        "op_count_lies": ("op_count: 99\n" + sample, "says 99 operations"),
        "line_after_end": ("".join(lines) + first_op + "\n", "after 'end:'"),
        "dependency_on_itself": (sample + f"{extra} deps={len(ops)}\n", "deps"),
        "dependency_on_a_later_record": (sample + f"{extra} deps=99\n", "deps"),
        "operand_beyond_32_bits": (sample.replace("m=1 ", "m=4294967296 ", 1), "m"),
        "address_beyond_64_bits": (sample.replace("src0=0x0", "src0=0x1" + "0" * 16, 1), "src0"),
        "params_nested_deeply": (
            sample.replace(
                "engines:", "params: " + "[" * 100_000 + "]" * 100_000 + "\nengines:", 1
            ),
            "nested too deeply",
        ),
        "not_utf8": (b"\xff\xfe" + sample.encode(), "UTF-8"),
    }


TRACE_MUTATIONS = [
    "cut_at_a_line_boundary", "cut_before_end_line", "cut_in_a_line", "end_lies",
    "op_count_lies", "line_after_end", "dependency_on_itself", "dependency_on_a_later_record",
    "operand_beyond_32_bits", "address_beyond_64_bits", "params_nested_deeply", "not_utf8",
]  # fmt: skip


@pytest.mark.parametrize("name", TRACE_MUTATIONS)
def test_hostile_traces_end_in_a_clean_error(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    content, expected = _hostile_traces(tmp_path)[name]
    path = tmp_path / "hostile.trace.txt"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    started = time.monotonic()
    code = main(["trace", "check", str(path)])
    elapsed = time.monotonic() - started
    _out, err = capsys.readouterr()
    assert code == 2, err
    assert expected in err, err
    assert "Traceback" not in err
    assert all(len(line) < 400 for line in err.splitlines()), err
    assert elapsed < BOUND_S


def test_the_written_trace_itself_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "ok.trace.txt"
    path.write_text("".join(_written_text_trace(tmp_path)))
    assert main(["trace", "check", str(path)]) == 0
