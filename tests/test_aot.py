"""The ahead-of-time compiled models: generated factory, cache key, the profile-guided build and
its fallback, and user types compiled in.

The library itself is exercised by every replay test; these check what decides when it is
rebuilt, how it was built, and that a user's component type is constructed by compiled code too.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tlm_models.platform.cpp_fields import field_type_asserts
from tlm_models.platform.registry import ComponentType, ParamSpec, SocketSpec, component_types
from tlm_models.runtime import aot

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "platforms.md"


def test_factory_builds_every_registered_type_with_every_parameter() -> None:
    types = component_types()
    source = aot.factory_source(types)
    for spec in types.values():
        assert f'if (type == "{spec.name}")' in source
        assert f"new {spec.qualified_class}(name.c_str(), p)" in source
        for param in spec.params:
            assert f"set_value(p.{param.name}, value);" in source
        for line in field_type_asserts(spec):
            assert line in source
        for socket in spec.sockets:
            assert f'"{socket.name}"' in source


def _user_type(directory: Path) -> ComponentType:
    return ComponentType(
        name="key_probe",
        cpp_class="probe::Probe",
        header="probe.h",
        include_dirs=(directory,),
        params=(ParamSpec("size", "size", "1 KiB"),),
        sockets=(SocketSpec("target", "target"),),
    )


def test_key_follows_header_contents_not_their_directory(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "probe.h").write_text("// version 1\n")
    builtin = component_types()
    key_a = aot.library_key({**builtin, "key_probe": _user_type(tmp_path / "a")})
    key_b = aot.library_key({**builtin, "key_probe": _user_type(tmp_path / "b")})
    assert key_a == key_b  # same sources, same library
    (tmp_path / "a" / "probe.h").write_text("// version 2\n")
    assert aot.library_key({**builtin, "key_probe": _user_type(tmp_path / "a")}) != key_a
    assert aot.library_key(builtin) not in (key_a, aot.library_key({}))


def test_the_registered_library_is_cached_and_whole() -> None:
    path = aot.ensure_library(quiet=True)
    assert path.exists() and path.parent == aot.library_path().parent
    assert aot.ensure_library(quiet=True) == path  # no rebuild while nothing changed
    _assert_built_as_requested(path)


def _assert_built_as_requested(path: Path) -> None:
    """The manifest beside ``path`` says it is the profile-guided build when that is the mode."""
    manifest = json.loads(aot.manifest_path(path).read_text())
    assert manifest["key"] == path.stem.rsplit("-", 1)[-1]
    assert manifest["mode"] == aot.build_mode()  # "pgo" with GCC unless ATTN_TLM_PGO=0
    if manifest["mode"] == "pgo":
        from tlm_models.run.pgo_training import CASES

        assert manifest["training"] == list(CASES)
        assert "-fprofile-use" in manifest["flags"]
        assert "pgo_failed" not in manifest


def test_the_build_mode_is_part_of_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(aot.PGO_VARIABLE, "0")
    assert aot.build_mode() == "plain"
    plain = aot.library_key()
    monkeypatch.setenv(aot.PGO_VARIABLE, "1")
    if aot.build_mode() == "pgo":  # GCC
        assert aot.library_key() != plain
    monkeypatch.setenv(aot.LIBRARY_VARIABLE, "/some/where/lib.so")
    assert aot.ensure_library(quiet=True) == Path("/some/where/lib.so")


#: A C interface that compiles in a second and has no session: loading it for a training replay
#: fails, which is what the fallback needs (the factory of no types leaves its arguments unused).
_TINY_COMPONENT_H = """#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <string>
#include <utility>
#include <vector>
namespace tlm_models::native {
using ParamList = std::vector<std::pair<std::string, std::string>>;
struct Component {};
}
"""


_TINY_SESSION = """#ifdef REFUSE
#error refused in the instrumented build
#endif
extern "C" int attn_probe() { return 1; }
"""


def _tiny_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Builds the tiny library (profile-guided if that is the mode) in a cache of its own."""
    if aot.build_mode() != "pgo":
        pytest.skip("profile-guided builds are off (ATTN_TLM_PGO=0 or not GCC)")
    native = tmp_path / "native"
    native.mkdir()
    (native / "component.h").write_text(_TINY_COMPONENT_H)
    (native / "session_api.cpp").write_text(_TINY_SESSION)
    monkeypatch.setattr(aot, "NATIVE_DIR", native)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return aot.ensure_library({})


def test_a_compile_failing_only_in_the_profile_guided_stages_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(aot, "INSTRUMENT_FLAGS", (*aot.INSTRUMENT_FLAGS, "-DREFUSE"))
    path = _tiny_build(tmp_path, monkeypatch)
    lines = capsys.readouterr().err.splitlines()
    assert any(
        line.startswith("attn-tlm: profile-guided build failed (")
        and "error: #error refused in the instrumented build" in line
        and line.endswith("compiling plainly (g++ -O2)")
        for line in lines
    ), lines
    assert json.loads(aot.manifest_path(path).read_text())["mode"] == "plain"


def test_a_failed_training_falls_back_to_the_plain_build_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _tiny_build(tmp_path, monkeypatch)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    failed = [line for line in err.splitlines() if "failed (" in line]
    assert len(failed) == 1, err
    assert failed[0].startswith("attn-tlm: profile-guided training failed (attenio: ")
    assert failed[0].endswith("compiling plainly (g++ -O2)")
    manifest = json.loads(aot.manifest_path(path).read_text())
    assert manifest["mode"] == "plain"
    assert manifest["pgo_failed"].removeprefix("training: ") in failed[0]
    assert "-fprofile-use" not in manifest["flags"]
    assert [p.name for p in path.parent.iterdir() if p.is_dir()] == []  # no build left behind
    assert (
        "attn_probe"
        in subprocess.run(["nm", "-D", str(path)], capture_output=True, text=True).stdout
    )


def test_a_failing_compile_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "probe.h").write_text("this is not C++\n")
    types = {"key_probe": _user_type(tmp_path)}
    with pytest.raises(aot.UserError, match="compiling the C\\+\\+ models failed"):
        aot.ensure_library(types, quiet=True)
    assert not aot.library_path(types).exists()


def test_a_cpp_field_of_another_type_than_declared_fails_the_build(tmp_path: Path) -> None:
    # key_probe declares `size` a size (std::uint64_t); this model holds it in an unsigned.
    (tmp_path / "probe.h").write_text(
        "namespace probe {\nstruct Probe {\n  struct Params {\n    unsigned size = 1024;\n"
        "  };\n};\n}  // namespace probe\n"
    )
    types = {"key_probe": _user_type(tmp_path)}
    message = "key_probe.size: the Params field of a size parameter must be std::uint64_t"
    with pytest.raises(aot.UserError, match=re.escape(message)):
        aot.ensure_library(types, quiet=True)
    assert not aot.library_path(types).exists()


def _doc_block(marker: str) -> str:
    match = re.search(
        rf"<!-- worked-example: {marker} -->\n```\w+\n(.*?)```", DOC.read_text(), re.S
    )
    assert match, f"docs/platforms.md lacks the '{marker}' block"
    return match.group(1)


_RUNNER = """
import json, sys
HERE = sys.argv[2]
exec(open(sys.argv[3]).read())
from tlm_models.platform import load_platform
from tlm_models.runtime.session import NativeSession

from tlm_models.runtime import aot
config = load_platform(sys.argv[1])
session = NativeSession(config)
session.run_for(100_000.0)
extra = {c.spec.name: c.spec for c in config.components.values()}
print(aot.library_path(aot.library_types(extra)))
print(json.dumps(session.platform_stats()))
"""


@pytest.mark.slow
def test_a_user_type_is_compiled_into_its_own_library(tmp_path: Path) -> None:
    (tmp_path / "fixed_latency_memory.h").write_text(_doc_block("header"))
    (tmp_path / "demo.yaml").write_text(_doc_block("platform"))
    (tmp_path / "register.py").write_text(_doc_block("register"))
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(tmp_path / "demo.yaml"), str(tmp_path),
         str(tmp_path / "register.py")],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    _assert_built_as_requested(Path(lines[-2]))  # profile-guided with the user's type in it
    stats = json.loads(lines[-1])
    by_name = {c["name"]: c["stats"] for c in stats["children"]}
    assert by_name["gen"]["requests"]["value"] == 32
    assert by_name["gen"]["errors"]["value"] == 0
    assert by_name["mem"]["bytes"]["value"] == 32 * 64


def test_the_cache_keeps_recent_libraries_and_drops_old_ones(tmp_path: Path) -> None:
    now = 1_000_000_000.0
    day = 86_400.0

    def library(name: str, age_days: float) -> Path:
        lib = tmp_path / f"attn_tlm_models-{name}.so"
        lib.write_bytes(b"\x7fELF")
        aot.manifest_path(lib).write_text("{}")
        os.utime(lib, (now - age_days * day, now - age_days * day))
        return lib

    keep = library("current", 400)  # the one just built or in use: never removed
    recent = [library(f"r{i}", 20 + i) for i in range(aot.CACHE_KEEP_LIBRARIES)]
    old = library("old", 30 + aot.CACHE_KEEP_LIBRARIES)  # beyond the most recent, unused for long
    fresh = library("fresh", aot.CACHE_KEEP_DAYS - 1)  # used within the period: stays
    killed = tmp_path / "tmpabc123"
    killed.mkdir()
    (killed / "factory.cpp").write_text("")
    os.utime(killed, (now - 2 * day, now - 2 * day))
    running = tmp_path / "tmpdef456"  # a build going on now
    running.mkdir()
    os.utime(running, (now - 60, now - 60))

    removed = aot.prune_cache(tmp_path, keep=keep, now=now)

    # fresh and the 7 newest of `recent` are the 8 most recently used; recent[-1] and old are
    # beyond them and unused for more than CACHE_KEEP_DAYS.
    assert sorted(removed) == sorted(
        [old, aot.manifest_path(old), recent[-1], aot.manifest_path(recent[-1]), killed]
    )
    assert keep.exists() and fresh.exists() and running.exists()
    assert all(lib.exists() for lib in recent[:-1])


def test_using_a_cached_library_marks_it_used() -> None:
    path = aot.ensure_library(quiet=True)
    os.utime(path, (0, 0))
    assert aot.ensure_library(quiet=True) == path
    assert time.time() - path.stat().st_mtime < 3600


def test_a_wait_for_another_build_is_announced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make demo` waited 48 s without a word while another process built the library."""
    import fcntl
    import threading

    monkeypatch.setattr(aot, "LOCK_NOTE_S", 0.2)
    lock_file = tmp_path / "build.lock"
    holder = open(lock_file, "w")  # noqa: SIM115 - released by the timer below
    fcntl.flock(holder, fcntl.LOCK_EX)
    threading.Timer(0.5, holder.close).start()
    with open(lock_file, "w") as waiter:
        aot._wait_for_lock(waiter.fileno(), tmp_path / "lib.so", quiet=False)
    err = capsys.readouterr().err
    assert f"waiting for another process that is compiling the C++ models into {tmp_path}" in err
    assert "the other build finished after" in err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_each_build_stage_counts_its_seconds_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    # A fresh `make demo` stood 35 s without a byte on the screen during the instrumented
    # build: a stage's line now counts up while the compiler runs.
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    build = aot._Build(types={}, path=Path("unused.so"), quiet=False)
    with build.stage("[1/3] instrumented build"):
        time.sleep(1.1)
    out = term.getvalue()
    assert out.count("attn-tlm: [1/3] instrumented build … 00:0") >= 2, out  # redrawn
    assert re.search(r"attn-tlm: \[1/3\] instrumented build: 1\.\d s\n$", out), out
    quiet = _Terminal()
    monkeypatch.setattr(sys, "stderr", quiet)
    with aot._Build(types={}, path=Path("unused.so"), quiet=True).stage("x"):
        pass
    assert quiet.getvalue() == ""
