"""Compiles a C++ test or example against the models and the system SystemC, cached by a hash of
its sources, the headers and the flags (a changed header forces a rebuild)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from tlm_models import INCLUDE_DIR
from tlm_models.runtime.kernel import systemc_paths

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


#: What the test suite compiles (test_cpp_models, test_vp_matches_replay,
#: test_memory_traffic_chain): ``python -m tests.cpp_build`` builds them first, saying so.
SOURCES = [
    *sorted((ROOT / "tests" / "cpp").glob("test_*.cpp")),
    ROOT / "examples" / "vp" / "main.cpp",
    ROOT / "examples" / "vp" / "memory_traffic.cpp",
]


def _flags(source: Path) -> list[str]:
    flags = [*CXXFLAGS, f"-I{INCLUDE_DIR}", f"-I{source.parent}", f"-I{TEST_HEADERS}"]
    return [*flags, f"-I{EXAMPLE_HEADERS}", *systemc_paths().cflags()]


def binary_path(source: Path, extra_sources: list[Path] | None = None) -> Path:
    """Where the binary of ``source`` (with these sources, headers and flags) is cached."""
    headers = sorted(INCLUDE_DIR.rglob("*.h")) + sorted(source.parent.glob("*.h"))
    headers += sorted(TEST_HEADERS.glob("*.h")) + sorted(EXAMPLE_HEADERS.glob("*.h"))
    digest = _digest([source, *(extra_sources or []), *headers], _flags(source))
    return BUILD_DIR / f"{source.stem}-{digest}"


def build_cpp_test(source: Path, extra_sources: list[Path] | None = None) -> Path:
    """Returns the path of the built binary for ``source``, building it when stale."""
    sc = systemc_paths()
    flags = _flags(source)
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    binary = binary_path(source, extra_sources)
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


def main() -> int:
    """Builds every C++ binary the tests run, one line per compile (``make test`` runs this
    first: pytest shows nothing while its collection compiles them, minutes on 2 cores)."""
    stale = [source for source in SOURCES if not binary_path(source).exists()]
    if not stale:
        return 0
    jobs = os.cpu_count() or 2
    print(
        f"compiling {len(stale)} C++ test programs (g++ -O2, {jobs} at a time, about 20-60 s "
        "each; cached under build/cpp-tests)",
        flush=True,
    )
    started = time.perf_counter()

    def build(source: Path) -> str:
        began = time.perf_counter()
        build_cpp_test(source)
        return f"  {source.relative_to(ROOT)} ({time.perf_counter() - began:.0f} s)"

    # On a terminal a status line counts the seconds while the compilers run (one program
    # took 97 s on a loaded machine: a minute and a half without a byte looks like a hang).
    terminal = sys.stdout.isatty()
    prefix = "\r\x1b[2K" if terminal else ""
    done = 0
    lock = threading.Lock()
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(1.0):
            with lock:
                elapsed = time.perf_counter() - started
                print(f"\r  compiling … {done}/{len(stale)} done, {elapsed:.0f} s", end="",
                      flush=True)  # fmt: skip

    ticker = threading.Thread(target=tick, name="cpp-build-ticker", daemon=True)
    if terminal:
        ticker.start()
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for line in as_completed(pool.submit(build, s) for s in stale):
                with lock:
                    done += 1
                    print(f"{prefix}{line.result()} [{done}/{len(stale)}]", flush=True)
    finally:
        stop.set()
        if terminal:
            ticker.join()
    print(f"{prefix}C++ test programs built in {time.perf_counter() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
