"""The ahead-of-time compiled session library: the models and the replayer built once with g++.

A simulation process loads this library with ctypes instead of having cling parse and
JIT-compile the models (seconds in every process, docs/runtime.md). It holds the hand-written C
interface (``native/session_api.cpp``) and a component factory generated from the component
registry, so every registered type, built-in or a user's, is constructed by compiled code.

With GCC the library is built with profile-guided optimisation (13-19 % faster replays,
docs/runtime.md): an instrumented build, short training replays that load it in subprocesses
(:mod:`tlm_models.run.pgo_training`), then the final build laid out for the counts they wrote. A
failed training falls back to the plain build, with one line saying so; ``ATTN_TLM_PGO=0``
builds plainly.

The library is cached under the user cache directory, named by a digest of everything it is
built from: the generated and hand-written sources, every header they include (the models and
the user types' headers), the compiler and its version, the flags, the build mode (with the
training replays' source) and the SystemC in use. A stale key simply names another file; a
build goes to a temporary directory renamed into place, under a lock so that racing processes
compile it once. A manifest beside the library records how it was built. Each use touches the
library; after a build, libraries unused for :data:`CACHE_KEEP_DAYS` days beyond the
:data:`CACHE_KEEP_LIBRARIES` most recently used, and the build directories of killed builds,
are removed, so the cache does not grow with every version of the models.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tlm_models.errors import UserError
from tlm_models.platform.cpp_fields import field_type_asserts
from tlm_models.platform.registry import ComponentType, component_types
from tlm_models.runtime.headers import INCLUDE_DIR
from tlm_models.runtime.kernel import SystemCNotFound, cache_dir, systemc_paths
from tlm_models.runtime.pgo_cases import CASES
from tlm_models.terminal.phase import phase

NATIVE_DIR = Path(__file__).resolve().parent / "native"
NATIVE_SOURCES = ("session_api.cpp",)
NATIVE_HEADERS = ("component.h",)
#: The training replays' sources: the cases and the driver that replays one (in the run core).
TRAINING_SOURCES = (
    Path(__file__).resolve().parent / "pgo_cases.py",
    Path(__file__).resolve().parent.parent / "run" / "pgo_training.py",
)
#: Flags of every compile (each source to its own object file, linked with -shared).
CXX_FLAGS = (
    "-std=c++17",
    "-O2",
    "-fPIC",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-DSC_INCLUDE_DYNAMIC_PROCESSES",
)
#: The profile-guided stages' level: -O3 with the profile replayed 4-5 % more operations per CPU
#: second than -O2 with it (docs/runtime.md); the plain build (the fallback) stays at -O2.
PGO_OPT_LEVEL = "-O3"
#: The instrumented build: one counter update per branch (the simulation runs on one thread).
INSTRUMENT_FLAGS = (PGO_OPT_LEVEL, "-fprofile-generate", "-fprofile-update=single")
#: The final build. Code no training replay ran (other models, a user's types, timelines) is
#: optimised as without a profile, not for size; a missing or stale profile is no error.
PROFILE_USE_FLAGS = (
    PGO_OPT_LEVEL,
    "-fprofile-use",
    "-fprofile-partial-training",
    "-Wno-missing-profile",
    "-Wno-error=coverage-mismatch",
)
#: ``0`` builds the library plainly (no instrumented build, no training replays).
PGO_VARIABLE = "ATTN_TLM_PGO"
#: A compiled library to load instead of the cached one (the training replays load the
#: instrumented build this way; also useful to try a build by hand).
LIBRARY_VARIABLE = "ATTN_TLM_NATIVE_LIBRARY"
#: Seconds a training replay may take before the build falls back to the plain one.
TRAINING_TIMEOUT_S = 600.0
#: After a build, libraries nobody used for this many days are removed from the cache...
CACHE_KEEP_DAYS = 14
#: ... except the most recently used ones (a stale key leaves its library behind: 1-2 MB each).
CACHE_KEEP_LIBRARIES = 8
#: A build directory older than this (seconds) belongs to a build that was killed.
STALE_BUILD_S = 86_400.0


def _cxx() -> str:
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        raise SystemCNotFound("no C++ compiler found (g++): install 'g++' to build the models")
    return cxx


@functools.cache
def _version(cxx: str) -> str:
    return subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout


def _include(header: str) -> str:
    return f'#include "{header}"'


def factory_source(types: dict[str, ComponentType]) -> str:
    """C++ of ``make_component`` for ``types``: one branch per type, one line per parameter,
    and a compile-time check that each declared parameter is a ``Params`` field of its kind's
    C++ type (a declaration that disagrees with its model fails the build, naming the field)."""
    lines = [
        "// Generated from the component registry (tlm_models/platform/registry.py): do not edit.",
        "#include <type_traits>",
        _include("component.h"),
        *sorted({_include(t.header) for t in types.values()}),
        "namespace tlm_models::native {",
        "int make_component(const std::string& type, const std::string& name,",
        "                   const ParamList& params, Component& out, std::string& error) {",
    ]
    for spec in sorted(types.values(), key=lambda t: t.name):
        cls = spec.qualified_class
        lines += [
            f'  if (type == "{spec.name}") {{',
            f"    using P = {cls}::Params;",
            *(f"    {line}" for line in field_type_asserts(spec)),
            "    P p;",
            "    for (const auto& [key, value] : params) {",
        ]
        for index, param in enumerate(spec.params):
            keyword = "if" if index == 0 else "} else if"
            lines.append(f'      {keyword} (key == "{param.name}") {{')
            lines.append(f"        set_value(p.{param.name}, value);")
        if spec.params:
            lines.append("      } else {")
        lines.append(f'        error = "{spec.name}: unknown parameter \'" + key + "\'";')
        lines.append("        return 1;")
        if spec.params:
            lines.append("      }")
        lines += [
            "    }",
            "    error = check_params(p);",
            "    if (!error.empty()) return 2;",
            f"    auto* m = new {cls}(name.c_str(), p);",
            "    out.type = type;",
            "    common_hooks(out, m);",
        ]
        for socket in spec.sockets:
            if socket.role == "initiator":
                lines.append(
                    f'    out.initiators["{socket.name}"] = '
                    f"[m](TargetSocket& t) {{ m->{socket.name}.bind(t); }};"
                )
            else:
                lines.append(f'    out.targets["{socket.name}"] = &m->{socket.name};')
        if spec.executor is not None:
            if spec.executor.channel_accessor:
                call = f"&m->{spec.executor.channel_accessor}(channel)"
                lines.append(
                    f"    out.executor = [m](unsigned channel) -> OpExecutor* {{ return {call}; }};"
                )
            else:
                lines.append("    out.executor = [m](unsigned) -> OpExecutor* { return m; };")
        if spec.routes:
            lines.append(
                "    out.add_route = [m](std::uint64_t base, std::uint64_t size, unsigned out, "
                "std::uint64_t offset) { m->add_route(base, size, out, offset); };"
            )
        lines += ["    return 0;", "  }"]
    lines += [
        '  error = "unknown component type \'" + type + "\'";',
        "  return 1;",
        "}",
        "}  // namespace tlm_models::native",
        "",
    ]
    return "\n".join(lines)


def _include_dirs(types: dict[str, ComponentType]) -> list[Path]:
    dirs = [NATIVE_DIR, INCLUDE_DIR]
    for spec in types.values():
        dirs.extend(d for d in spec.include_dirs if d not in dirs)
    return dirs


def _headers(types: dict[str, ComponentType]) -> list[Path]:
    """Every header the library may include from the project and the user types."""
    found = sorted(INCLUDE_DIR.rglob("*.h")) + [NATIVE_DIR / h for h in NATIVE_HEADERS]
    for spec in types.values():
        for directory in spec.include_dirs:
            found.extend(sorted(Path(directory).rglob("*.h")))
        if Path(spec.header).is_absolute():
            found.append(Path(spec.header))
    return found


def _opt_level(stage_flags: tuple[str, ...] = ()) -> str:
    return [f for f in (*CXX_FLAGS, *stage_flags) if f.startswith("-O")][-1]


def _is_gcc(cxx: str) -> bool:
    """GCC's profile format (``.gcda`` files beside the objects, no merge tool) is the one used."""
    return "Free Software Foundation" in _version(cxx) and "clang" not in _version(cxx)


def build_mode(cxx: str | None = None) -> str:
    """``pgo`` (profile-guided, the default with GCC) or ``plain`` (``ATTN_TLM_PGO=0``, other
    compilers)."""
    if os.environ.get(PGO_VARIABLE, "1").strip().lower() in ("0", "off", "no", "false"):
        return "plain"
    return "pgo" if _is_gcc(cxx or _cxx()) else "plain"


def library_key(types: dict[str, ComponentType] | None = None) -> str:
    """Digest of what the library is built from (sources, headers, compiler, flags, build mode
    with the training replays, SystemC)."""
    types = component_types() if types is None else types
    cxx = _cxx()
    version = _version(cxx)
    mode = build_mode(cxx)
    h = hashlib.sha256()
    h.update(factory_source(types).encode())
    # Names and contents, not directories: the same sources compile to the same library.
    sources = [NATIVE_DIR / s for s in NATIVE_SOURCES] + _headers(types)
    if mode == "pgo":  # the training decides the layout of the final build
        sources.extend(TRAINING_SOURCES)
    for path in sources:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    paths = systemc_paths()
    parts = [cxx, version, *CXX_FLAGS, mode, str(paths.include_dir), str(paths.library)]
    if mode == "pgo":
        parts += [*INSTRUMENT_FLAGS, *PROFILE_USE_FLAGS]
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


def library_path(types: dict[str, ComponentType] | None = None) -> Path:
    return cache_dir() / f"attn_tlm_models-{library_key(types)}.so"


def manifest_path(library: Path) -> Path:
    """The JSON beside a library recording how it was built (mode, flags, training, times)."""
    return library.with_suffix(".json")


def library_types(extra: dict[str, ComponentType] | None = None) -> dict[str, ComponentType]:
    """The types a library is built for: those registered in this process, plus ``extra``
    (a platform's own, which a worker receives with the platform rather than registering)."""
    return {**component_types(), **(extra or {})}


def ensure_library(types: dict[str, ComponentType] | None = None, quiet: bool = False) -> Path:
    """The compiled library for ``types`` (default: the registered ones); compiled when missing.
    ``ATTN_TLM_NATIVE_LIBRARY`` names a library file to use instead."""
    pinned = os.environ.get(LIBRARY_VARIABLE)
    if pinned:
        return Path(pinned)
    types = library_types() if types is None else types
    path = library_path(types)
    if path.exists():
        _touch(path)
        return path
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "build.lock", "w") as lock:
        _wait_for_lock(lock.fileno(), path, quiet)  # a racing process compiles; others wait
        if path.exists():
            return path
        _Build(types, path, quiet).run()
        prune_cache(directory, keep=path)
    return path


#: A wait for another process's build longer than this is announced (and then every
#: LOCK_NOTE_S): a silent wait of a minute looks like a hang.
LOCK_NOTE_S = 2.0


def _wait_for_lock(fd: int, path: Path, quiet: bool) -> None:
    """Takes the build lock; when another process holds it (it is compiling ``path``), says so
    after LOCK_NOTE_S, again every LOCK_NOTE_S x 10 of waiting, and when it is free."""
    started = time.monotonic()
    next_note, said = LOCK_NOTE_S, False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            waited = time.monotonic() - started
            if not quiet and waited >= next_note:
                print(
                    f"attn-tlm: waiting for another process that is compiling the C++ models "
                    f"into {path} ({waited:.0f} s so far)",
                    file=sys.stderr,
                    flush=True,
                )
                next_note, said = waited + 10 * LOCK_NOTE_S, True
            time.sleep(0.1)
    if said:
        waited = time.monotonic() - started
        print(f"attn-tlm: the other build finished after {waited:.0f} s", file=sys.stderr)


def _touch(path: Path) -> None:
    """Marks ``path`` as used now (its modification time), for :func:`prune_cache`."""
    with contextlib.suppress(OSError):  # a read-only cache: nothing is pruned there either
        os.utime(path)


def prune_cache(directory: Path, keep: Path, now: float | None = None) -> list[Path]:
    """Removes from ``directory`` the libraries (with their manifests) unused for
    CACHE_KEEP_DAYS days beyond the CACHE_KEEP_LIBRARIES most recently used, never ``keep``,
    and build directories older than STALE_BUILD_S; returns what it removed. A process that
    has a removed library loaded keeps its mapping."""
    now = time.time() if now is None else now
    removed: list[Path] = []
    libraries = sorted(
        (p for p in directory.glob("attn_tlm_models-*.so") if p != keep),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for lib in libraries[CACHE_KEEP_LIBRARIES:]:
        if now - lib.stat().st_mtime < CACHE_KEEP_DAYS * 86_400:
            continue
        for path in (lib, manifest_path(lib)):
            try:
                path.unlink()
                removed.append(path)
            except FileNotFoundError:
                pass
    for build in directory.glob("tmp*"):
        if build.is_dir() and now - build.stat().st_mtime > STALE_BUILD_S:
            shutil.rmtree(build, ignore_errors=True)
            removed.append(build)
    return removed


class TrainingFailed(Exception):
    """A training replay of the instrumented library failed (the build falls back to plain)."""


@dataclass
class _Build:
    """One build of the library into a temporary directory, renamed into place at the end."""

    types: dict[str, ComponentType]
    path: Path
    quiet: bool

    def say(self, text: str) -> None:
        if not self.quiet:
            print(f"attn-tlm: {text}", file=sys.stderr, flush=True)

    def stage(self, text: str) -> contextlib.AbstractContextManager[None]:
        """A stage of tens of seconds: on a terminal its line counts the seconds up and ends
        with its time (a compile prints nothing for half a minute and would look stuck)."""
        if self.quiet:
            return contextlib.nullcontext()
        return phase(f"attn-tlm: {text}")

    def run(self) -> None:
        cxx = _cxx()
        mode = build_mode(cxx)
        started = time.perf_counter()
        manifest: dict[str, object] = {"key": self.path.stem.rsplit("-", 1)[-1], "mode": mode}
        with tempfile.TemporaryDirectory(dir=self.path.parent) as tmp:
            work = Path(tmp)
            (work / "factory.cpp").write_text(factory_source(self.types))
            if mode == "pgo":
                self.say(
                    f"compiling the C++ models once with profile-guided optimisation into "
                    f"{self.path}: an instrumented build, training replays, the final build "
                    f"(g++ {_opt_level(PROFILE_USE_FLAGS)}, about 1-2 minutes)"
                )
                try:
                    manifest.update(self._profile_guided(cxx, work))
                except (TrainingFailed, UserError) as exc:
                    # A failed training, or a compile only the profile-guided stages fail (a
                    # warning GCC gives at -O3 alone, under -Werror): the plain build still runs;
                    # a source that does not compile fails there with the compiler's output.
                    what = "training" if isinstance(exc, TrainingFailed) else "build"
                    lines = str(exc).splitlines()
                    reason = next((line for line in lines if "error" in line), lines[0])
                    self.say(
                        f"profile-guided {what} failed ({reason}); compiling plainly "
                        f"(g++ {_opt_level()})"
                    )
                    manifest.update(mode="plain", pgo_failed=f"{what}: {reason}")
                    with self.stage("plain build"):
                        self._link(cxx, work, ())
            else:
                self.say(
                    f"compiling the C++ models once (g++ {_opt_level()}, about a minute) into "
                    f"{self.path}"
                )
                with self.stage("compiling"):
                    self._link(cxx, work, ())
            manifest.update(
                flags=[*CXX_FLAGS, *(PROFILE_USE_FLAGS if manifest["mode"] == "pgo" else ())],
                build_s=round(time.perf_counter() - started, 1),
                compiler=_version(cxx).splitlines()[0] if _version(cxx) else cxx,
            )
            (work / "lib.json").write_text(json.dumps(manifest, indent=1) + "\n")
            # Atomic renames, the manifest first: a process sees no library or a whole one
            # (never a half-written file), and a library's manifest is always beside it.
            os.replace(work / "lib.json", manifest_path(self.path))
            os.replace(work / "lib.so", self.path)
        self.say(f"models compiled in {time.perf_counter() - started:.0f} s")

    def _profile_guided(self, cxx: str, work: Path) -> dict[str, object]:
        """Instrumented build, training replays, final build; the stages' times (s)."""
        t0 = time.perf_counter()
        with self.stage("[1/3] instrumented build"):
            self._link(cxx, work, INSTRUMENT_FLAGS)
        t1 = time.perf_counter()
        with self.stage(f"[2/3] training replays: {', '.join(CASES)} (about 5 s in all)"):
            for case in CASES:
                self._train(work, case)
        if not any(work.glob("*.gcda")):
            raise TrainingFailed("the training replays wrote no profile")
        t2 = time.perf_counter()
        with self.stage("[3/3] optimised build"):
            self._link(cxx, work, PROFILE_USE_FLAGS)
        t3 = time.perf_counter()
        return {
            "training": list(CASES),
            "instrumented_build_s": round(t1 - t0, 1),
            "training_s": round(t2 - t1, 1),
            "final_build_s": round(t3 - t2, 1),
        }

    def _train(self, work: Path, case: str) -> None:
        env = {**os.environ, LIBRARY_VARIABLE: str(work / "lib.so")}
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "tlm_models.run.pgo_training", case],
                capture_output=True,
                text=True,
                env=env,
                timeout=TRAINING_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            raise TrainingFailed(f"{case}: no result in {TRAINING_TIMEOUT_S:.0f} s") from None
        except OSError as exc:
            raise TrainingFailed(f"{case}: {exc}") from None
        if proc.returncode != 0:
            lines = [line for line in proc.stderr.splitlines() if line.strip()]
            last = lines[-1].strip() if lines else f"exit status {proc.returncode}"
            raise TrainingFailed(f"{case}: {last[:200]}")

    def _link(self, cxx: str, work: Path, stage_flags: tuple[str, ...]) -> None:
        """Compiles each source to its object in ``work`` (both at once), links ``lib.so``.

        Objects keep their names across the stages: GCC finds an object's profile by its
        path (``work/NAME.gcda``), written by the instrumented build's replays."""
        paths = systemc_paths()
        dirs = [f"-I{d}" for d in _include_dirs(self.types)]
        sources = [NATIVE_DIR / s for s in NATIVE_SOURCES] + [work / "factory.cpp"]
        flags = [*CXX_FLAGS, *stage_flags, *paths.cflags(), *dirs]
        compiles = [
            subprocess.Popen(
                [cxx, *flags, "-c", str(source), "-o", f"{source.stem}.o"],
                cwd=work,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for source in sources
        ]
        # The factory (user types) first: a failing header ends the build without waiting.
        for index, compile_ in reversed(list(enumerate(compiles))):
            stderr = compile_.communicate()[1]
            if compile_.returncode != 0:
                for other in compiles[:index]:
                    other.kill()
                    other.communicate()
                raise UserError(f"compiling the C++ models failed:\n{stderr.strip()}")
        objects = [f"{s.stem}.o" for s in sources]
        link = [cxx, "-shared", *stage_flags, *objects, "-o", "lib.so", *paths.ldflags()]
        linked = subprocess.run(link, cwd=work, capture_output=True, text=True)
        if linked.returncode != 0:
            raise UserError(f"linking the C++ models failed:\n{linked.stderr.strip()}")


def main() -> int:
    """``python -m tlm_models.runtime.aot``: compile the library now (``make setup`` does)."""
    try:
        path = ensure_library()
    except UserError as exc:
        print(f"attn-tlm: error: {exc}", file=sys.stderr)
        return UserError.exit_code
    print(f"attn-tlm: compiled models ready: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
