"""One sweep at a time per directory: a lock held while a sweep writes its results.

Two sweeps into one directory would each run every configuration the other had not yet
recorded (simulating each twice) and interleave their appends and CSV rewrites. The lock is an
advisory ``flock`` on DIR/.sweep.lock, which the kernel releases when the holding process ends
however it ends (killed, crashed), so a stale lock cannot block a resume. The file keeps the
holder's process id for the message; it is never removed (removing it would let a third sweep
lock a new file while the second still holds the old one).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from tlm_models.errors import UserError
from tlm_models.files.output_file import os_error

__all__ = ["LOCK_FILE", "sweep_lock"]

LOCK_FILE = ".sweep.lock"


@contextlib.contextmanager
def sweep_lock(directory: Path) -> Iterator[None]:
    """Holds ``directory``'s sweep lock for the block; UserError at once if another sweep
    holds it."""
    path = directory / LOCK_FILE
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        raise os_error(path, "lock the sweep directory", exc) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            who = f" (process {holder})" if holder.isdigit() else ""
            raise UserError(
                f"{directory}: another sweep{who} is running into this directory; wait for it "
                "to finish (then run this one again to resume) or give another --out"
            ) from None
        except OSError as exc:
            raise os_error(path, "lock the sweep directory", exc) from None
        with contextlib.suppress(OSError):  # the process id only serves the message
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield
    finally:
        os.close(fd)  # releases the lock
