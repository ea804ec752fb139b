"""The ahead-of-time compiled session library: the models and the replayer built once with g++.

A simulation process loads this library with ctypes instead of having cling parse and
JIT-compile the models (seconds in every process, docs/runtime.md). It holds the hand-written C
interface (``native/session_api.cpp``) and a component factory generated from the component
registry, so every registered type, built-in or a user's, is constructed by compiled code.

The library is cached under the user cache directory, named by a digest of everything it is
built from: the generated and hand-written sources, every header they include (the models and
the user types' headers), the compiler and its version, the flags and the SystemC in use. A
stale key simply names another file; a build goes to a temporary file renamed into place, under
a lock so that racing processes compile it once.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tlm_models import INCLUDE_DIR
from tlm_models.errors import UserError
from tlm_models.kernel import SystemCNotFound, cache_dir, systemc_paths
from tlm_models.platform.registry import ComponentType, component_types

NATIVE_DIR = Path(__file__).resolve().parent / "native"
NATIVE_SOURCES = ("session_api.cpp",)
NATIVE_HEADERS = ("component.h",)
CXX_FLAGS = (
    "-std=c++17",
    "-O2",
    "-fPIC",
    "-shared",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-DSC_INCLUDE_DYNAMIC_PROCESSES",
)


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
    """C++ of ``make_component`` for ``types``: one branch per type, one line per parameter."""
    lines = [
        "// Generated from the component registry (tlm_models/platform/registry.py): do not edit.",
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
            f"    {cls}::Params p;",
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


def _command(cxx: str, sources: list[Path], output: Path, dirs: list[Path]) -> list[str]:
    paths = systemc_paths()
    return [
        cxx,
        *CXX_FLAGS,
        *paths.cflags(),
        *(f"-I{d}" for d in dirs),
        *(str(s) for s in sources),
        "-o",
        str(output),
        *paths.ldflags(),
    ]


def library_key(types: dict[str, ComponentType] | None = None) -> str:
    """Digest of what the library is built from (sources, headers, compiler, flags, SystemC)."""
    types = component_types() if types is None else types
    cxx = _cxx()
    version = _version(cxx)
    h = hashlib.sha256()
    h.update(factory_source(types).encode())
    # Names and contents, not directories: the same sources compile to the same library.
    for path in [NATIVE_DIR / s for s in NATIVE_SOURCES] + _headers(types):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    paths = systemc_paths()
    for part in (cxx, version, *CXX_FLAGS, str(paths.include_dir), str(paths.library)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


def library_path(types: dict[str, ComponentType] | None = None) -> Path:
    return cache_dir() / f"attn_tlm_models-{library_key(types)}.so"


def library_types(extra: dict[str, ComponentType] | None = None) -> dict[str, ComponentType]:
    """The types a library is built for: those registered in this process, plus ``extra``
    (a platform's own, which a worker receives with the platform rather than registering)."""
    return {**component_types(), **(extra or {})}


def ensure_library(types: dict[str, ComponentType] | None = None, quiet: bool = False) -> Path:
    """The compiled library for ``types`` (default: the registered ones); compiled when missing."""
    types = library_types() if types is None else types
    path = library_path(types)
    if path.exists():
        return path
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a racing process compiles; the others wait for it
        if path.exists():
            return path
        _compile(types, path, quiet)
    return path


def _compile(types: dict[str, ComponentType], path: Path, quiet: bool) -> None:
    if not quiet:
        print(
            f"attn-tlm: compiling the C++ models once (g++ -O2, about a minute) into {path}",
            file=sys.stderr,
            flush=True,
        )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        factory = Path(tmp) / "factory.cpp"
        factory.write_text(factory_source(types))
        out = Path(tmp) / "lib.so"
        sources = [NATIVE_DIR / s for s in NATIVE_SOURCES] + [factory]
        proc = subprocess.run(
            _command(_cxx(), sources, out, _include_dirs(types)), capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise UserError(f"compiling the C++ models failed:\n{proc.stderr.strip()}")
        # Atomic rename: a process sees no library or a whole one, never a half-written file.
        os.replace(out, path)
    if not quiet:
        print(
            f"attn-tlm: models compiled in {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
            flush=True,
        )


def main() -> int:
    """``python -m tlm_models.aot``: compile the library now (``make setup`` does)."""
    try:
        path = ensure_library()
    except UserError as exc:
        print(f"attn-tlm: error: {exc}", file=sys.stderr)
        return UserError.exit_code
    print(f"attn-tlm: compiled models ready: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
