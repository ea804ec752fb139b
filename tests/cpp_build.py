"""Compiles a C++ test or example against the models and the system SystemC, cached by a hash of
its sources, the headers and the flags (a changed header forces a rebuild)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
from pathlib import Path

from tlm_models import INCLUDE_DIR
from tlm_models.kernel import systemc_paths

ROOT = Path(__file__).resolve().parent.parent
BUILD_DIR = ROOT / "build" / "cpp-tests"
# Test fixtures (check.h, mock engines, test targets) that benchmarks include too.
TEST_HEADERS = ROOT / "tests" / "cpp"
# The example VP's parts (vp_families.h), which the tests of third-party habits reuse.
EXAMPLE_HEADERS = ROOT / "examples" / "vp"
CXXFLAGS = ["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror"]


def _digest(paths: list[Path], flags: list[str]) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(str(p).encode())
        h.update(p.read_bytes())
    h.update(" ".join(flags).encode())
    return h.hexdigest()[:16]


def build_cpp_test(source: Path, extra_sources: list[Path] | None = None) -> Path:
    """Returns the path of the built binary for ``source``, building it when stale."""
    sc = systemc_paths()
    flags = [*CXXFLAGS, f"-I{INCLUDE_DIR}", f"-I{source.parent}", f"-I{TEST_HEADERS}"]
    flags.append(f"-I{EXAMPLE_HEADERS}")
    flags += sc.cflags()
    headers = sorted(INCLUDE_DIR.rglob("*.h")) + sorted(source.parent.glob("*.h"))
    headers += sorted(TEST_HEADERS.glob("*.h")) + sorted(EXAMPLE_HEADERS.glob("*.h"))
    digest = _digest([source, *(extra_sources or []), *headers], flags)
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    binary = BUILD_DIR / f"{source.stem}-{digest}"
    if binary.exists():
        return binary
    # Parallel test workers collect the same tests: one builds, the others wait for it.
    with (BUILD_DIR / f"{source.stem}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if binary.exists():
            return binary
        return _compile(source, extra_sources, flags, sc.ldflags(), binary)


def _compile(
    source: Path,
    extra_sources: list[Path] | None,
    flags: list[str],
    ldflags: list[str],
    binary: Path,
) -> Path:
    tmp = binary.with_suffix(f".tmp{os.getpid()}")
    cmd = [
        "g++",
        *flags,
        str(source),
        *map(str, extra_sources or []),
        "-o",
        str(tmp),
        *ldflags,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"build of {source.name} failed:\n{' '.join(cmd)}\n{proc.stderr}")
    tmp.replace(binary)
    return binary
