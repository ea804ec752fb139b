"""Loading SystemC 2.3.4, TLM-2.0 and the project's C++ models into cppyy — the only module that
touches cppyy set-up.

Facts this relies on (docs/runtime.md has the measurements):
- ``libsystemc.so`` leaves ``sc_main`` undefined and is bound immediately, so a tiny library
  defining ``sc_main`` must be loaded first with global visibility. It is compiled once with the
  system C compiler and cached under the user's cache directory, keyed by its source, the
  compiler and the platform, and written atomically because workers may race.
- cling compiles as C++20 while Debian's SystemC was built as C++17: ``SC_CPLUSPLUS`` must say
  C++17 before ``<systemc>`` is included, or SystemC's API version check fails to link.
- SystemC fatals abort the process by default; they are set to throw so they arrive in Python.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tlm_models.errors import UserError
from tlm_models.runtime.headers import INCLUDE_DIR

STUB_SOURCE = (
    "extern int sc_main(int argc, char** argv);\n"
    "int sc_main(int argc, char** argv) { (void)argc; (void)argv; return 0; }\n"
)

# Headers loaded into every simulation process: SystemC, TLM, the sockets, then the models.
SYSTEM_HEADERS = (
    "systemc",
    "tlm",
    "tlm_utils/simple_initiator_socket.h",
    "tlm_utils/simple_target_socket.h",
    "tlm_utils/multi_passthrough_initiator_socket.h",
    "tlm_utils/multi_passthrough_target_socket.h",
    "tlm_utils/tlm_quantumkeeper.h",
)
MODELS_HEADER = "tlm_models/all.h"

_loaded: Any = None


class SystemCNotFound(UserError):
    """SystemC headers or library are missing; the message says how to get them."""


@dataclass(frozen=True)
class SystemCPaths:
    """Where the SystemC in use lives: the system one, or ``$SYSTEMC_HOME``."""

    include_dir: Path
    library: Path

    def cflags(self) -> list[str]:
        # The system include directory needs no -I (and -I would turn off its warning
        # suppression under -Werror).
        if self.include_dir == Path("/usr/include"):
            return []
        return [f"-isystem{self.include_dir}"]

    def ldflags(self) -> list[str]:
        lib_dir = self.library.parent
        return [f"-L{lib_dir}", f"-Wl,-rpath,{lib_dir}", "-lsystemc", "-lpthread"]


def _multiarch_lib_dirs() -> list[Path]:
    dirs = [Path("/usr/lib"), Path("/usr/local/lib"), Path("/usr/lib64")]
    machine = platform.machine()
    for triple in (f"{machine}-linux-gnu", "aarch64-linux-gnu", "x86_64-linux-gnu"):
        dirs.insert(0, Path("/usr/lib") / triple)
    return dirs


def systemc_paths() -> SystemCPaths:
    """Locates SystemC: ``$SYSTEMC_HOME`` when set, else the system's ``libsystemc-dev``."""
    home = os.environ.get("SYSTEMC_HOME")
    if home:
        root = Path(home)
        include = root / "include"
        candidates = [root / d / "libsystemc.so" for d in ("lib", "lib64", "lib-linux64")]
        library = next((c for c in candidates if c.exists()), None)
        if not (include / "systemc.h").exists() or library is None:
            raise SystemCNotFound(
                f"SYSTEMC_HOME={home} does not hold a SystemC installation: expected "
                f"{include}/systemc.h and libsystemc.so in {root}/lib (or lib64, lib-linux64)"
            )
        return SystemCPaths(include, library)
    include = Path("/usr/include")
    library = next(
        (d / "libsystemc.so" for d in _multiarch_lib_dirs() if (d / "libsystemc.so").exists()),
        None,
    )
    if not (include / "systemc.h").exists() or library is None:
        raise SystemCNotFound(
            "SystemC 2.3 was not found. Install it with 'apt-get install libsystemc-dev' "
            "(or run 'make setup'), or set SYSTEMC_HOME to your own SystemC build."
        )
    return SystemCPaths(include, library)


def cache_dir() -> Path:
    """The user's cache directory for attn-tlm (``$XDG_CACHE_HOME/attn-tlm``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attn-tlm"


def _compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemCNotFound(
            "no C compiler found (cc/gcc): install 'gcc' to build the loader stub"
        )
    return cc


def stub_key(cc: str) -> str:
    """Key of the stub library: its source, the compiler, the platform and Python's ABI."""
    version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout
    h = hashlib.sha256()
    for part in (STUB_SOURCE, cc, version, platform.machine(), sys.platform):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _stub_valid(path: Path) -> bool:
    """The cached stub is intact: its digest matches the one recorded when it was built.

    Checked without loading it, so that a damaged file never reaches the dynamic loader.
    """
    digest = path.with_suffix(".sha256")
    try:
        return digest.read_text().strip() == _file_digest(path)
    except OSError:
        return False


def stub_library() -> Path:
    """Returns the cached ``sc_main`` stub, building it when missing or damaged."""
    cc = _compiler()
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"sc_main_stub-{stub_key(cc)}.so"
    if path.exists() and _stub_valid(path):
        return path
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        src = Path(tmp) / "stub.c"
        src.write_text(STUB_SOURCE)
        out = Path(tmp) / "stub.so"
        proc = subprocess.run(
            [cc, "-shared", "-fPIC", "-O1", str(src), "-o", str(out)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise SystemCNotFound(f"building the sc_main stub with {cc} failed:\n{proc.stderr}")
        digest = Path(tmp) / "stub.sha256"
        digest.write_text(_file_digest(out))
        # Atomic renames: a racing worker sees the old files or the new ones, and a process
        # that has the old library mapped keeps its (unlinked) copy.
        os.replace(digest, path.with_suffix(".sha256"))
        os.replace(out, path)
    return path


# Signals that mean a crash. cppyy's runtime catches them to print a debugger backtrace, which
# takes seconds and ends in an exit code that hides the cause; a simulation process dies of the
# signal instead, so the worker's caller can name it.
_CRASH_SIGNALS = (signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT)


def _restore_crash_signals() -> None:
    libc = ctypes.CDLL(None)
    libc.signal.restype = ctypes.c_void_p
    libc.signal.argtypes = (ctypes.c_int, ctypes.c_void_p)
    for sig in _CRASH_SIGNALS:
        libc.signal(int(sig), None)  # a null handler is SIG_DFL


_prepared = False


def prepare_process() -> None:
    """What every simulation process needs before SystemC loads: the ``sc_main`` stub loaded
    with global visibility, the copyright banner off, crash signals at their default action."""
    global _prepared
    if _prepared:
        return
    os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")
    ctypes.CDLL(str(stub_library()), mode=ctypes.RTLD_GLOBAL)
    _restore_crash_signals()
    _prepared = True


def load_models() -> Any:
    """Loads SystemC, TLM and the models into cppyy once per process; returns ``cppyy.gbl``."""
    global _loaded
    if _loaded is not None:
        return _loaded
    paths = systemc_paths()
    prepare_process()

    import cppyy

    if paths.include_dir != Path("/usr/include"):
        cppyy.add_include_path(str(paths.include_dir))
    cppyy.add_include_path(str(INCLUDE_DIR))
    cppyy.cppdef("#define SC_CPLUSPLUS 201703L\n#define SC_INCLUDE_DYNAMIC_PROCESSES\n")
    cppyy.load_library(str(paths.library))
    for header in SYSTEM_HEADERS:
        cppyy.include(header)
    cppyy.include(MODELS_HEADER)
    gbl = cppyy.gbl
    sc = gbl.sc_core
    sc.sc_report_handler.set_actions(sc.SC_FATAL, sc.SC_DISPLAY | sc.SC_THROW)
    _restore_crash_signals()
    _loaded = gbl
    return gbl


def is_loaded() -> bool:
    """Whether this process has loaded SystemC (tests check that import alone does not)."""
    return _loaded is not None
