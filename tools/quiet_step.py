"""Runs one set-up step and prints one line for it: what it does, then how long it took.

Used by the Makefile for pip, whose output on a warm cache is dozens of lines of no interest
(and, on machines whose pip configuration names absent indexes, "Location ... is ignored"
warnings). The step's full output is kept and printed only when the step fails, so real
errors stay visible. Standard library only: it runs before the virtual environment exists.

    python3 tools/quiet_step.py "installing Python packages" -- .venv/bin/pip install ...
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time


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
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    stop.set()
    seconds = time.monotonic() - started
    prefix = "\r\x1b[2K" if terminal else ""
    if done.returncode != 0:
        print(f"{prefix}setup: {what} FAILED after {seconds:.0f} s:", flush=True)
        sys.stdout.write(done.stdout.decode(errors="replace"))
        return done.returncode
    print(f"{prefix}setup: {what}: done in {seconds:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
