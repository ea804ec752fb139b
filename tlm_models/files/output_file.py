"""Output files written safely: only regular files, never half, never reported when not landed.

Every file the package writes for the user (timelines, waveforms, traces, CSV tables, reports,
STL exports) goes through here. The target is checked before anything is simulated
(:func:`check_output`): an existing path must be a regular file, or a symbolic link that ends at
one (the link is followed and its target replaced, so the link survives); a directory, FIFO,
socket or device node is refused, because renaming a file over it would replace the node (a
device node as root) and a FIFO's reader would get nothing. The content goes to a temporary
file in the target's directory, is flushed to disk and its size checked, and only then renamed
over the target: a full disk or an interrupted run leaves the old file as it was. Every
failure is a one-line :class:`UserError` naming the path.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal, TextIO, overload

from tlm_models.errors import UserError

__all__ = [
    "atomic_output",
    "check_output",
    "check_output_directory",
    "file_kind",
    "fsync_directory",
    "os_error",
    "output_target",
    "save_figure",
    "write_output",
]


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words (for errors)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def os_error(path: str | os.PathLike[str], doing: str, exc: OSError) -> UserError:
    """A one-line UserError for an OSError while ``doing`` something with ``path``."""
    reason = exc.strerror or type(exc).__name__
    return UserError(f"{os.fspath(path)}: cannot {doing}: {reason}")


def output_target(path: str | os.PathLike[str], what: str = "output") -> Path:
    """The regular file that writing ``path`` replaces (``path`` itself, or the file a symbolic
    link at ``path`` ends at); raises UserError for anything else."""
    name = os.fspath(path)
    if not name:
        raise UserError(f"an empty path for the {what}")
    target = Path(name)
    try:
        if target.is_symlink():
            target = Path(os.path.realpath(name, strict=True))
        info = os.stat(target)
    except FileNotFoundError:
        if os.path.islink(name):
            raise UserError(f"{name}: is a symbolic link to a missing file") from None
        info = None
    except OSError as exc:
        raise os_error(name, f"write the {what}", exc) from None
    if info is not None:
        if not stat.S_ISREG(info.st_mode):
            raise UserError(
                f"{name}: is {file_kind(info.st_mode)}; the {what} is written only to a "
                "regular file"
            )
        return target
    parent = target.parent
    try:
        parent_info = os.stat(parent)
    except OSError as exc:
        raise os_error(parent, f"write the {what} {name} there", exc) from None
    if not stat.S_ISDIR(parent_info.st_mode):
        raise UserError(f"{name}: {parent} is not a directory")
    return target


def check_output(path: str | os.PathLike[str] | None, what: str = "output") -> None:
    """Checks before a run that ``path`` can be written: a regular file (or a new one) in a
    directory where a file can be created (proved by creating and removing one)."""
    if path is None:
        return
    target = output_target(path, what)
    try:
        fd, probe = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise os_error(path, f"write the {what}", exc) from None
    os.close(fd)
    os.unlink(probe)


def check_output_directory(path: str | os.PathLike[str], what: str = "output directory") -> Path:
    """Creates ``path`` (and its parents) if needed and checks a file can be created in it."""
    directory = Path(path)
    try:
        if directory.exists() and not directory.is_dir():
            raise UserError(f"{directory}: exists and is not a directory ({what})")
        directory.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".write-check.", suffix=".tmp")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise os_error(directory, f"use it as the {what}", exc) from None
    return directory


def fsync_directory(directory: Path) -> None:
    """Forces a rename in ``directory`` to disk (best effort: not every file system can)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _new_file_mode(target: Path) -> int:
    """The mode of the replaced file, or what a new file would get (0o666 less the umask)."""
    with contextlib.suppress(OSError):
        return stat.S_IMODE(os.stat(target).st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@overload
def atomic_output(
    path: str | os.PathLike[str], what: str, binary: Literal[False] = ...
) -> contextlib.AbstractContextManager[TextIO]: ...
@overload
def atomic_output(
    path: str | os.PathLike[str], what: str, binary: Literal[True]
) -> contextlib.AbstractContextManager[BinaryIO]: ...
def atomic_output(
    path: str | os.PathLike[str], what: str, binary: bool = False
) -> contextlib.AbstractContextManager[IO[Any]]:
    """A file to write ``path``'s new content to; it replaces ``path`` when the block ends
    without an exception, after it is on disk and its size is where the writer left off (a
    writer that seeks back to patch a header seeks to the end again)."""
    return _atomic_output(path, what, binary)


@contextlib.contextmanager
def _atomic_output(path: str | os.PathLike[str], what: str, binary: bool) -> Iterator[IO[Any]]:
    target = output_target(path, what)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise os_error(path, f"write the {what}", exc) from None
    try:
        stream: IO[Any] = (
            os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")
        )
        with stream:
            yield stream
            stream.flush()
            written = os.lseek(fd, 0, os.SEEK_CUR)  # where the writer left off
            os.fsync(fd)
            if os.fstat(fd).st_size != written:
                raise UserError(f"{os.fspath(path)}: the {what} did not reach the disk in full")
        os.chmod(tmp, _new_file_mode(target))
        # Checked again: the path may have become something else while the content was made.
        target = output_target(path, what)
        os.replace(tmp, target)
        fsync_directory(target.parent)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise os_error(path, f"write the {what}", exc) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_output(path: str | os.PathLike[str], content: str | bytes, what: str) -> None:
    """Writes ``content`` to ``path`` through :func:`atomic_output`."""
    if isinstance(content, bytes):
        with atomic_output(path, what, binary=True) as f:
            f.write(content)
    else:
        with atomic_output(path, what) as f:
            f.write(content)


def save_figure(figure: Any, path: Path, dpi: float | None = None) -> None:
    """A matplotlib figure saved through :func:`write_output` (format from the suffix)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format=path.suffix.lstrip(".") or "png", dpi=dpi)
    write_output(path, buffer.getvalue(), "figure")
