"""One simulation per process: run a function in a fresh worker and get plain data back.

SystemC elaborates once per process, and a crash or fatal in a model must not take the caller
down. Workers fork from a forkserver whose parent has already loaded SystemC and the compiled
models (``tlm_models.runtime.warm``, preloaded through
``tlm_models.runtime.forkserver_preload``); a run then costs the fork and its own work.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from multiprocessing.context import ForkServerContext
from typing import Any, Protocol, TypeVar

from tlm_models.errors import SimulationError, UserError

T = TypeVar("T")

_context: ForkServerContext | None = None

# The worker each calling thread is waiting on, so that a sweep interrupted by Ctrl-C can kill
# it from the main thread even while that thread is blocked in a call that an asynchronous
# exception cannot reach (starting the process through the forkserver).
_running: dict[int, multiprocessing.process.BaseProcess] = {}
_running_lock = threading.Lock()


def kill_worker_of(thread_ident: int) -> None:
    """Kills the worker process that thread ``thread_ident`` is running, if any."""
    with _running_lock:
        proc = _running.get(thread_ident)
    if proc is not None:
        with contextlib.suppress(Exception):  # not started yet or already gone
            if proc.is_alive():
                proc.kill()


def _forkserver() -> ForkServerContext:
    global _context
    if _context is None:
        ctx = multiprocessing.get_context("forkserver")
        assert isinstance(ctx, ForkServerContext)
        ctx.set_forkserver_preload(["tlm_models.runtime.forkserver_preload"])
        _context = ctx
    return _context


def forkserver_started() -> bool:
    """Whether this process has started its forkserver (a later run only forks a worker)."""
    return _context is not None


def _die_with_parent() -> None:
    """Ends this worker when its parent (the forkserver) ends, and lets the forkserver end when
    the caller process is gone, however it ended: a killed run must not leave simulations
    running.

    The forkserver stops when every holder of its "alive" pipe has closed it; multiprocessing
    hands that pipe to every worker too (for nested process pools, which workers do not use),
    so a running worker would keep the forkserver alive after the caller died, and the worker
    itself waits for the forkserver to die: neither would ever end.
    """
    from multiprocessing import forkserver

    server: Any = getattr(forkserver, "_forkserver", None)
    alive_fd = getattr(server, "_forkserver_alive_fd", None)
    if server is not None and isinstance(alive_fd, int):
        with contextlib.suppress(OSError):
            os.close(alive_fd)
        server._forkserver_alive_fd = None
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() == 1:  # the forkserver was gone before the death signal was armed
        os._exit(1)


def _keep_stdout_clean() -> None:
    """Sends whatever the simulation prints (SystemC reports go to stdout) to stderr: the
    caller's stdout may be a JSON document, and results travel back over the pipe anyway."""
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())


class ProgressSink(Protocol):
    """Receives a worker's progress reports, and ticks while the caller waits."""

    def update(self, sim_ns: float, ops: int) -> None: ...

    def tick(self) -> None: ...


def _child_main(
    conn: multiprocessing.connection.Connection,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    progress: bool = False,
) -> None:
    _die_with_parent()
    _keep_stdout_clean()
    if progress:
        from tlm_models.replay.replayer import report_progress_to

        report_progress_to(lambda sim_ns, ops: conn.send(("progress", sim_ns, ops)))
    try:
        result = fn(*args, **kwargs)
        message: tuple[Any, ...] = ("ok", result)
    except UserError as exc:
        message = ("user_error", str(exc), "")
    except BaseException as exc:
        message = ("error", f"{type(exc).__name__}: {exc}", traceback.format_exc())
    try:
        conn.send(message)
    except BrokenPipeError:
        os._exit(1)  # the caller is gone: nobody to report to
    except Exception as exc:  # an unpicklable result is the caller's bug: report it
        conn.send(("error", f"result could not be sent back: {exc}", ""))
    conn.close()
    sys.stdout.flush()
    sys.stderr.flush()
    # A cppyy process takes ~0.3 s to tear down normally; results are already sent.
    os._exit(0)


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "did not exit"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        what = {
            "SIGSEGV": "segmentation fault",
            "SIGABRT": "abort",
            "SIGKILL": "killed",
            "SIGBUS": "bus error",
            "SIGFPE": "arithmetic error",
        }.get(name, "")
        return f"{name} ({what})" if what else name
    return f"exit code {code}"


@contextlib.contextmanager
def _without_main(fn: Callable[..., Any]) -> Iterator[None]:
    """Starts workers without running the caller's ``__main__`` again in them.

    multiprocessing imports the main script in every child it starts (as ``__mp_main__``), so
    that functions defined there can be unpickled. A script that calls ``simulate`` at module
    level, without an ``if __name__ == '__main__':`` guard, would then call it again in the
    child while the child is still starting, and the child dies ('bootstrapping phase').
    A worker runs a function of an importable module, never one of ``__main__``: the child
    needs nothing from the script, so it is not told about it. Only ``fn`` defined in
    ``__main__`` (a caller's own job) keeps the import."""
    from multiprocessing import spawn

    if getattr(fn, "__module__", None) == "__main__":
        yield
        return
    original = spawn.get_preparation_data

    def without_main(name: str) -> dict[str, Any]:
        data = original(name)
        data.pop("init_main_from_path", None)
        data.pop("init_main_from_name", None)
        return data

    with _main_lock:
        spawn.get_preparation_data = without_main
        try:
            yield
        finally:
            spawn.get_preparation_data = original


#: Starts from several threads (a sweep's) swap the preparation function one at a time.
_main_lock = threading.Lock()


def _start(
    proc: multiprocessing.process.BaseProcess,
    progress: ProgressSink | None,
    fn: Callable[..., Any] | None = None,
) -> None:
    """Starts ``proc`` (which runs ``fn``). The first start in a process also starts the
    forkserver, which loads SystemC and the models first (seconds): ``progress`` keeps
    ticking meanwhile."""
    if progress is None:
        with _without_main(fn or _start):
            proc.start()
        return
    started = threading.Event()

    def tick() -> None:
        while not started.wait(0.25):
            progress.tick()

    ticker = threading.Thread(target=tick, name="worker-start", daemon=True)
    ticker.start()
    try:
        with _without_main(fn or _start):
            proc.start()
    finally:
        started.set()
        ticker.join()


def run_in_worker(
    fn: Callable[..., T],
    *args: Any,
    timeout: float | None = None,
    progress: ProgressSink | None = None,
    **kwargs: Any,
) -> T:
    """Runs ``fn(*args, **kwargs)`` in a fresh worker process and returns its result.

    ``fn`` must be a module-level function and its result picklable. A crash (signal),
    a SystemC fatal or an exception in the worker raises ``SimulationError`` naming the cause;
    a ``UserError`` raised by ``fn`` is raised again here as a ``UserError``. ``progress``
    receives the replay's progress reports and a tick every 50 ms while waiting.
    """
    ctx = _forkserver()
    parent_conn, child_conn = ctx.Pipe(duplex=False)
    proc = ctx.Process(
        target=_child_main,
        args=(child_conn, fn, args, kwargs, progress is not None),
        daemon=True,
    )
    ident = threading.get_ident()
    with _running_lock:
        _running[ident] = proc
    try:
        _start(proc, progress, fn)
    except BaseException:
        with _running_lock:
            _running.pop(ident, None)
        with contextlib.suppress(Exception):
            if proc.is_alive():
                proc.kill()
        raise
    child_conn.close()
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        while True:
            if parent_conn.poll(0.05):
                try:
                    message = parent_conn.recv()
                except EOFError:
                    message = None
                if message is not None and message[0] == "progress":
                    if progress is not None:
                        progress.update(message[1], message[2])
                    continue
                break
            if progress is not None:
                progress.tick()
            if not proc.is_alive():
                # It may have sent just before exiting.
                message = None
                while parent_conn.poll(0):
                    try:
                        message = parent_conn.recv()
                    except EOFError:
                        break
                    if message[0] != "progress":
                        break
                    message = None
                break
            if deadline is not None and time.monotonic() > deadline:
                proc.kill()
                proc.join()
                raise SimulationError(f"{_name(fn)}: worker timed out after {timeout} s")
    except BaseException:
        if proc.is_alive():
            proc.kill()
        proc.join()
        raise
    finally:
        with _running_lock:
            _running.pop(ident, None)
        parent_conn.close()
    proc.join()
    if message is None:
        raise SimulationError(f"{_name(fn)}: worker crashed: {_describe_exit(proc.exitcode)}")
    status = message[0]
    if status == "ok":
        result: T = message[1]
        return result
    if status == "user_error":
        raise UserError(message[1])
    detail = f"\n{message[2]}" if os.environ.get("ATTN_TLM_DEBUG") and message[2] else ""
    raise SimulationError(f"{_name(fn)}: {message[1]}{detail}")


def _name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", repr(fn))
