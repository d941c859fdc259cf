"""Starting an upstream server process: its pipes, its own session, the user's environment.

No event loop is needed (nothing here imports ``anyio`` or ``asyncio``), so ``wrap`` starts its
upstream as soon as its command line is read, and the server's own start-up (often the larger
part of the time to the ``initialize`` answer) runs while the guard loads the rest of itself
(issue 14 item 1). :func:`~mcp_guard.peer.upstream.spawn_upstream` takes such a start over, or
starts the process itself by the same rule (every restart, and ``serve``).

The process is started as ``asyncio``'s subprocess support starts one (``subprocess.Popen``,
``close_fds``, signals restored to their defaults) with ``start_new_session``: it leads its
own process group, which the guard signals as a whole when it stops it (``peer.upstream``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence

from ..start_signals import STOP_SIGNALS
from ..streams.ends import UpstreamStartError

__all__ = ["STOP_SIGNALS", "StartedProcess", "UpstreamStartError", "start_early", "start_process"]

# The signals that stop a front: a supervisor's or MCP client's SIGTERM, a closed terminal's SIGHUP, Ctrl-C
# (``start_signals`` holds them from the CLI's start, :func:`start_early` from the upstream's start, and
# ``stop_signals`` while a front runs).


class StartedProcess:
    """A started upstream process and the guard's ends of its three pipes.

    Attributes:
        popen: the process (``start_new_session``: its pid is its process group's id).
        to_child: the write end of its stdin pipe (a file descriptor the taker owns).
        from_child: the read end of its stdout pipe.
        errors_from_child: the read end of its stderr pipe.
        held: the stop signals received since :func:`start_early` began holding them (in order).
    """

    def __init__(self, popen: subprocess.Popen[bytes], to_child: int, from_child: int, errors_from_child: int) -> None:
        self.popen = popen
        self.to_child = to_child
        self.from_child = from_child
        self.errors_from_child = errors_from_child
        self.held: list[int] = []

    def release_signals(self) -> None:
        """Raise again the stop signals held since the early start (``stdio_connector`` calls this once the
        first connection has taken the process over, inside ``stop_signals.held_stop_signals``, which then
        stops the front and this process as for a signal that came later)."""
        held, self.held = self.held, []
        for signum in held:
            signal.raise_signal(signum)


def start_process(
    command: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | None = None
) -> StartedProcess:
    """Start ``command`` with its stdin, stdout and stderr on new pipes, in a session of its own.

    Args:
        command: the executable and its arguments (a name without ``/`` is looked up on the
            child's ``PATH``).
        env: extra variables, merged over ``os.environ`` (the child gets the user's whole environment).
        cwd: its working directory, default the guard's.

    Raises:
        UpstreamStartError: no command, the executable is not found, ``cwd`` is not a folder, or
            the start failed (``OSError``: not executable, ...); no pipe is left open then.
    """
    if not command:
        raise UpstreamStartError("no upstream command given")
    environment = dict(os.environ)
    if env:
        environment.update(env)
    executable = command[0]
    if os.sep not in executable and shutil.which(executable, path=environment.get("PATH")) is None:
        raise UpstreamStartError(f"upstream command not found: {executable}")
    if cwd is not None and not os.path.isdir(cwd):
        raise UpstreamStartError(f"cannot start upstream {executable}: its working folder {cwd} does not exist")
    child_in, to_child = os.pipe()
    from_child, child_out = os.pipe()
    errors_from_child, child_err = os.pipe()
    try:
        popen = subprocess.Popen(
            list(command),
            stdin=child_in,
            stdout=child_out,
            stderr=child_err,
            env=environment,
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        for fd in (to_child, from_child, errors_from_child):
            os.close(fd)
        raise UpstreamStartError(f"cannot start upstream {executable}: {exc.strerror or exc}") from exc
    finally:
        os.close(child_in)
        os.close(child_out)
        os.close(child_err)
    return StartedProcess(popen, to_child, from_child, errors_from_child)


def start_early(command: Sequence[str]) -> StartedProcess | UpstreamStartError:
    """``wrap``'s first start of its upstream, made before the event loop runs: the started
    process, or the :class:`UpstreamStartError` the first connection raises (and logs) in its place.

    From before the start, :data:`STOP_SIGNALS` are held (recorded in ``StartedProcess.held``, to be
    released by the first connection): a signal that comes while the guard still loads stops the guard
    and this upstream's whole process group as one that comes later does, instead of killing the guard
    at once and leaving the server running. When the start fails the signals' handlers are restored
    (and one that came meanwhile is raised again). Call it on the main thread.
    """
    held: list[int] = []

    def hold(signum: int, _frame: object) -> None:
        held.append(signum)

    previous = {signum: signal.signal(signum, hold) for signum in STOP_SIGNALS}
    try:
        started = start_process(command)
    except UpstreamStartError as exc:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for came in held:
            signal.raise_signal(came)
        return exc
    started.held = held
    return started
