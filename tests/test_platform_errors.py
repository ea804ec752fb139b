"""Malformed platforms: one file per error class under tests/data/bad_platforms/.

Each file's second line says what must be reported: `# expect: line=L key=K message=M` (L may be
`file:line` when the problem is in an included file). The test checks the diagnostic names that
place and key, and that the CLI reports it with exit code 2 and no traceback.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tlm_models.cli import main as cli_main
from tlm_models.platform import PlatformError, load_platform
from tlm_models.platform.registry import (
    ComponentType,
    ParamSpec,
    SocketSpec,
    register_component_type,
    unregister_component_type,
)

ROOT = Path(__file__).resolve().parent.parent
BAD = Path(__file__).resolve().parent / "data" / "bad_platforms"
FILES = sorted(BAD.glob("*.yaml"))
_EXPECT = re.compile(r"^# expect: line=(\S+) key=(\S*) message=(.+)$", re.M)


def _expectation(path: Path) -> tuple[str, int, str, str]:
    match = _EXPECT.search(path.read_text())
    assert match, f"{path.name} lacks its '# expect:' line"
    where, key, message = match.groups()
    rel = str(path.relative_to(ROOT))
    file, _, line = where.rpartition(":")
    return (file or rel), int(line), key, message


def _load(path: Path) -> PlatformError:
    with pytest.raises(PlatformError) as err:
        load_platform(path.relative_to(ROOT))
    return err.value


@pytest.fixture(autouse=True)
def _in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_enough_error_classes() -> None:
    assert len(FILES) >= 25


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_error_names_line_and_key(path: Path) -> None:
    file, line, key, message = _expectation(path)
    error = _load(path)
    matching = [
        d
        for d in error.diagnostics
        if d.loc.file == file and d.loc.line == line and d.key == key and message in d.message
    ]
    assert matching, f"expected {file}:{line}: {key}: ...{message}...; got:\n{error}"
    assert f"{file}:{line}:" in str(error)


def _run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The real entry point (it imports only the command's own module)."""
    code = cli_main.main(argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_cli_reports_without_traceback(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file, line, _, _ = _expectation(path)
    for action in ("check", "show"):
        code, err = _run_cli(["platform", action, str(path.relative_to(ROOT))], capsys)
        assert code == 2
        assert "Traceback" not in err
        assert f"{file}:{line}:" in err


def test_console_process_exits_2_without_traceback() -> None:
    script = "import sys, tlm_models.cli.main as m;sys.exit(m.main(sys.argv[1:]))"
    for name in ("yaml_syntax_error", "include_cycle", "routing_cycle"):
        proc = subprocess.run(
            [sys.executable, "-c", script, "platform", "check", str(BAD / f"{name}.yaml")],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        assert proc.stderr.startswith("attn-tlm: error:")


def test_all_problems_of_a_file_are_reported_together(tmp_path: Path) -> None:
    text = (ROOT / "tests/data/platforms/tiny.yaml").read_text()
    text = text.replace("capacity: 64 KiB", "capacity: 65536")
    text = text.replace("  pe: pe\n", "  pe: pe2\n").replace("lanes: 8", "lanse: 8")
    path = tmp_path / "many.yaml"
    path.write_text(text)
    error = _load_abs(path)
    keys = {d.key for d in error.diagnostics}
    assert keys == {"components.sram.capacity", "engines.pe", "components.exp.lanse"}
    # sorted by line
    lines = [d.loc.line for d in error.diagnostics]
    assert lines == sorted(lines)


def _load_abs(path: Path) -> PlatformError:
    with pytest.raises(PlatformError) as err:
        load_platform(path)
    return err.value


def test_missing_required_parameter(tmp_path: Path) -> None:
    register_component_type(
        ComponentType(
            name="test_required_mem",
            cpp_class="test::RequiredMem",
            header="/nonexistent/required_mem.h",
            params=(ParamSpec("capacity", "size", required=True, minimum=1),),
            sockets=(SocketSpec("target", "target", required=False),),
            memory="onchip",
            size_param="capacity",
        )
    )
    try:
        path = tmp_path / "req.yaml"
        path.write_text("name: r\ncomponents:\n  mem:\n    type: test_required_mem\n")
        error = _load_abs(path)
        [diag] = error.diagnostics
        assert (diag.loc.line, diag.key) == (3, "components.mem.capacity")
        assert "missing required parameter 'capacity'" in diag.message
    finally:
        unregister_component_type("test_required_mem")


@pytest.mark.parametrize(
    "text",
    ["", "- just\n- a list\n", "name: [\n", "\t: bad", "name: x\ncomponents: 3\n", "a: b: c\n"],
)
def test_garbage_never_raises_anything_but_platform_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "garbage.yaml"
    path.write_text(text)
    _load_abs(path)


def test_unreadable_file(tmp_path: Path) -> None:
    error = _load_abs(tmp_path / "missing.yaml")
    assert "cannot read file" in str(error)
