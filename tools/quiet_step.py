"""Runs one set-up step and prints one line for it: what it does, then how long it took.

Used by the Makefile for pip, whose output on a warm cache is dozens of lines of no interest
(and, on machines whose pip configuration names absent indexes, "Location ... is ignored"
warnings). The step's full output is kept and printed only when the step fails, so real
errors stay visible. Standard library only: it runs before the virtual environment exists.

    python3 tools/quiet_step.py "installing Python packages" -- .venv/bin/pip install ...
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time

#: pip's line when it compiles a package for want of a wheel, and when it fetches a file.
_BUILDING = re.compile(r"Building wheel for (\S+)")
_DOWNLOADING = re.compile(r"Downloading (\S+) \((\d+(?:\.\d+)?) MB\)")
#: Downloads at least this large are announced (at 10 MB/s they take a second or more).
BIG_DOWNLOAD_MB = 10.0


def long_wait(line: str) -> str:
    """A line for a step of pip's output that may take long, or "": a package compiled from
    source (its index has no wheel for this Python and machine), a large download."""
    building = _BUILDING.search(line)
    if building:
        return (
            f"building {building.group(1)} from source (the package index has no wheel for "
            "it here; C++ bindings take minutes)"
        )
    download = _DOWNLOADING.search(line)
    if download and float(download.group(2)) >= BIG_DOWNLOAD_MB:
        return f"downloading {download.group(1)} ({download.group(2)} MB)"
    return ""


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: quiet_step.py WHAT -- COMMAND ...", file=sys.stderr)
        return 2
    what, command = argv[0], argv[2:]
    terminal = sys.stdout.isatty()
    started = time.monotonic()
    print(f"setup: {what} …", end="" if terminal else "\n", flush=True)
    stop = threading.Event()

    def tick() -> None:  # the elapsed time moves on a terminal, so the step is seen alive
        while not stop.wait(1.0):
            print(f"\rsetup: {what} … {time.monotonic() - started:.0f} s", end="", flush=True)

    if terminal:
        threading.Thread(target=tick, daemon=True).start()
    prefix = "\r\x1b[2K" if terminal else ""
    output: list[str] = []
    said: set[str] = set()  # pip repeats "Building wheel for X" (started, still running, done)
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
    ) as child:
        assert child.stdout is not None
        for line in child.stdout:
            output.append(line)
            note = long_wait(line)
            if note and note not in said:  # a wait of minutes gets a line (the step goes on)
                said.add(note)
                print(f"{prefix}setup:   {note}", flush=True)
    stop.set()
    seconds = time.monotonic() - started
    if child.returncode != 0:
        print(f"{prefix}setup: {what} FAILED after {seconds:.0f} s:", flush=True)
        sys.stdout.write("".join(output))
        return child.returncode
    print(f"{prefix}setup: {what}: done in {seconds:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
