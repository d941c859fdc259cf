"""The upstream side's seam, and the stdio upstream: spawning and stopping an MCP server process.

The seam
--------
A :class:`~mcp_guard.sessions.relay.Relay` does not hold an upstream stream; it holds a
*connector* (:data:`Connector`): a callable with no arguments that returns an async context
manager yielding a :class:`LineLink`, one connection to the upstream. Entering it connects
(spawns a process, opens an HTTP session, ...); leaving it disconnects and frees everything
(stops the process and its process group). The relay enters and leaves each connection in
one task of its own, and calls the connector again whenever it needs a new connection (a
respawn after the upstream went away), so respawning works the same for every transport.

A :class:`LineLink` carries one JSON-RPC message (or batch) per line, as bytes without the
newline:

- ``receive()`` returns the next line; it raises ``anyio.EndOfStream`` once the upstream
  has gone away (process exited and its output drained, connection closed). It must not
  block forever after that: this is how the relay learns that pending requests will never
  be answered.
- ``send(line)`` writes one line; it raises ``anyio.BrokenResourceError`` (or
  ``ClosedResourceError``, or ``OSError``) when the upstream can no longer be written.
- ``close_send()`` tells the upstream no more messages come (stdio: EOF on its stdin, the
  MCP way to ask a server to exit); answers still come in on ``receive()``.
- ``aclose()`` closes both directions.

Entering a connector raises :class:`UpstreamStartError` (or any other ``Exception``) when no
connection can be made; the relay answers the waiting requests with an error and tries
again later.

The stdio upstream
------------------
:func:`stdio_connector` (and :func:`spawn_upstream` below it) runs the server command as a
child process. The child gets the user's whole environment (the SDK's ``stdio_client``
would pass only HOME, LOGNAME, PATH, SHELL, TERM and USER), its own process group, and a
stderr pipe whose lines the guard writes to its own stderr prefixed and escaped
(:mod:`~mcp_guard.peer.child_stderr`). When the child process exits, its output is read to the end
of what it wrote and then ends (``EndOfStream``), even when a process it started still holds
the pipe open. Shutdown follows the MCP lifecycle: close its stdin, wait
:data:`EXIT_GRACE_SECONDS`, then terminate the whole process group by the rule of the SDK's
``terminate_posix_process_tree`` (SIGTERM, then SIGKILL; :func:`_terminate_group`); processes the server left behind
in its group are terminated too, even when the server itself exited cleanly: both signals go
to the group (``os.killpg`` on the server's pid, which is its group's id), so they reach the
group's members after the server itself has exited and been reaped. When the connection is
left because the guard is stopping (its task is cancelled: the client closed, the calls it
left were decided and the server had :data:`EXIT_WAIT_SECONDS` to exit; or a stop signal
came, which ``stop_signals`` holds until the stop is over), the grace has been had: its stdin
is closed, and unless it exits within :data:`STOP_EXIT_SECONDS` the group gets SIGTERM, and
SIGKILL :data:`KILL_GRACE_SECONDS` later, so the server is gone before an MCP client, which
sends the guard SIGTERM 2 s and SIGKILL 4 s after closing its stdin, kills the guard. The log
line says which stop it was: a stop signal (``streams.ends.stop_signal``) or a server that did
not exit after its stdin closed. Processes that leave the group on purpose (``setsid``) escape, and
nothing is cleaned up when the guard itself is killed with SIGKILL.

This module does not read or write messages; ``sessions.relay`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager

import anyio
import anyio.abc
import anyio.to_thread

from ..safe_text import escape
from ..streams.ends import UpstreamStartError, exit_text, stop_signal, tell_end
from ..streams.framing import FdReceiveStream, FdSendStream, LineStream, MessageStream
from ..streams.pipes import PipeLineStream, pollable_on_asyncio
from ..wire.framing import DEFAULT_MAX_LINE
from .child_stderr import StderrRelay
from .spawn import StartedProcess, start_process

__all__ = [
    "EXIT_GRACE_SECONDS",
    "EXIT_WAIT_SECONDS",
    "KILL_GRACE_SECONDS",
    "PENDING_DRAIN_SECONDS",
    "STOP_EXIT_SECONDS",
    "ChildProcess",
    "Connector",
    "LineLink",
    "Upstream",
    "UpstreamStartError",
    "spawn_upstream",
    "stdio_connector",
    "stop_upstream",
]

log = logging.getLogger("mcp_guard")

EXIT_GRACE_SECONDS = 2.0
"""How long the upstream may take to exit after its stdin closes, before SIGTERM (and SIGTERM before SIGKILL)."""

EXIT_WAIT_SECONDS = 1.0
"""When the client has gone: seconds the upstream gets to exit after its input closed, before it is stopped."""

PENDING_DRAIN_SECONDS = 10.0
"""After the client closed its side, how long the requests it sent before (forwarded, held for a listing,
waiting for a start) may take to be answered (``wrap``: the upstream's input closed) before the
upstream is stopped; ``--request-timeout`` shortens it. The requests still open then are answered with
-32603 saying so (trial T4: ``printf ... | mcp-guard wrap -- slow-server`` gets the server's answers)."""

KILL_GRACE_SECONDS = 1.0
"""When the guard is stopping: seconds between the SIGTERM the upstream's group gets and SIGKILL."""

STOP_EXIT_SECONDS = 0.1
"""When the guard is stopping (a stop signal, or the client's drain over): seconds the upstream gets to exit on
its stdin's EOF (the MCP way) before its group gets SIGTERM; a server that does exit is not signalled."""


LineLink = MessageStream
"""One upstream connection (a process's stdio, or a streamable HTTP session): the contract of
:class:`~mcp_guard.streams.framing.MessageStream`, under the name the relay's seam uses."""


Connector = Callable[[], AbstractAsyncContextManager[LineLink]]
"""Makes one upstream connection per call: ``async with connect() as link: ...`` (see the module docstring)."""


class _ChildOutput(FdReceiveStream):
    """The read end of a child's stdout pipe: ends once the child has exited and the pipe is drained.

    A process the child started may hold the pipe's write end open after the child exits;
    without this the reader would never see EOF, and requests sent to the dead server would
    never be answered. :func:`spawn_upstream` uses it where ``pipes.PipeLineStream`` (which
    does the same with ``end_when_drained``) cannot be used: off asyncio. On asyncio the wait
    for data is a bare ``add_reader`` future that :meth:`child_exited` can resolve; on other
    backends it is ``anyio.wait_readable`` in a cancel scope.
    """

    def __init__(self, fd: int) -> None:
        super().__init__(fd, owned=True)
        self._exited = False
        self._future: asyncio.Future[None] | None = None
        self._scope: anyio.CancelScope | None = None

    async def receive(self, max_bytes: int = 1 << 16) -> bytes:
        """Up to ``max_bytes`` bytes as soon as any are available; ``EndOfStream`` at EOF or after exit."""
        while True:
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                if self._exited:
                    raise anyio.EndOfStream from None  # the child is gone and all it wrote has been read
                await self._wait()
                continue
            except OSError:
                raise anyio.EndOfStream from None  # closed under us
            if not data:
                raise anyio.EndOfStream
            return data

    async def _wait(self) -> None:
        """Until the pipe is readable or the child has exited."""
        try:
            loop = _asyncio_loop()
        except RuntimeError:  # not asyncio
            with anyio.CancelScope() as self._scope:
                await anyio.wait_readable(self._fd)
            self._scope = None
            return
        future = self._future = loop.create_future()
        loop.add_reader(self._fd, _resolve, future)
        try:
            await future
        finally:
            loop.remove_reader(self._fd)
            self._future = None

    def child_exited(self) -> None:
        """The child process has exited: end after what is already in the pipe."""
        self._exited = True
        if self._future is not None:
            _resolve(self._future)
        if self._scope is not None:
            self._scope.cancel()


_asyncio_loop = asyncio.get_running_loop
"""The running asyncio loop (RuntimeError on other backends); a name of its own so tests can take the other path."""


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class ChildProcess(anyio.abc.Process):
    """A started ``subprocess.Popen`` as an anyio process (pid, return code, wait, signals).

    The pipes are the guard's own (``stdin``, ``stdout`` and ``stderr`` are None). On asyncio
    (Linux) the exit is awaited on a pidfd (``os.pidfd_open``) in the event loop, without a
    thread; elsewhere :meth:`wait` polls every 50 ms. Reading :attr:`returncode` reaps the
    process once it has exited (``Popen.poll``).
    """

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self._exited: anyio.Event | None = None
        self._watched = False

    @property
    def pid(self) -> int:
        """The process id (also its process group's id: ``start_new_session``)."""
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        """The exit status (negative: the signal that ended it), or None while it runs."""
        return self._popen.poll()

    @property
    def stdin(self) -> None:
        """None: the guard holds the pipes."""
        return None

    @property
    def stdout(self) -> None:
        """None: the guard holds the pipes."""
        return None

    @property
    def stderr(self) -> None:
        """None: the guard holds the pipes."""
        return None

    async def wait(self) -> int:
        """Until the process has exited; its exit status."""
        while (status := self._popen.poll()) is None:
            if not self._watched:
                self._watched, self._exited = True, self._watch()
            if self._exited is None or self._exited.is_set():  # no pidfd, or not asyncio
                await anyio.sleep(0.05)
            else:
                await self._exited.wait()
        return status

    def _watch(self) -> anyio.Event | None:
        """An event set when the process exits (a pidfd in the asyncio loop), or None where there is none."""
        try:
            loop = _asyncio_loop()
            fd = os.pidfd_open(self._popen.pid)
        except (RuntimeError, AttributeError, OSError):  # not asyncio; no pidfd_open (not Linux, old kernel)
            return None
        exited = anyio.Event()

        def readable() -> None:
            loop.remove_reader(fd)
            os.close(fd)
            exited.set()

        loop.add_reader(fd, readable)
        return exited

    def terminate(self) -> None:
        """SIGTERM to the process (not its group), unless it has exited."""
        self._popen.terminate()

    def kill(self) -> None:
        """SIGKILL to the process (not its group), unless it has exited."""
        self._popen.kill()

    def send_signal(self, signal: int) -> None:
        """``signal`` to the process, unless it has exited."""
        self._popen.send_signal(signal)

    async def aclose(self) -> None:
        """Wait for the process to exit (killed when this wait is cancelled), as anyio's processes do."""
        try:
            await self.wait()
        except BaseException:
            self.kill()
            with anyio.CancelScope(shield=True):
                await self.wait()
            raise


class Upstream:
    """A running upstream process and the line stream over its stdin/stdout.

    Attributes:
        process: the process (pid, return code).
        stream: newline-delimited JSON-RPC to and from it.
    """

    def __init__(self, process: anyio.abc.Process, stream: LineStream) -> None:
        self.process = process
        self.stream = stream


def stdio_connector(
    command: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    *,
    max_line: int = DEFAULT_MAX_LINE,
    name: str | None = None,
    started: StartedProcess | UpstreamStartError | None = None,
) -> Connector:
    """A :data:`Connector` that spawns ``command`` (see :func:`spawn_upstream`) on every connection.

    ``name`` is the server's name in ``serve`` (its log and stderr lines say it), None in ``wrap``.
    ``started`` is the first connection's process, started already (``spawn.start_early``: ``wrap``
    starts it before its event loop runs), or the error its start raised; later connections spawn.

    Raises (on entering a connection):
        UpstreamStartError: the command cannot be started.
    """
    command = list(command)
    first = [started] if started is not None else []

    @contextlib.asynccontextmanager
    async def connect() -> AsyncIterator[LineLink]:
        early = first.pop() if first else None
        if isinstance(early, UpstreamStartError):
            raise early
        async with spawn_upstream(command, env, cwd, max_line=max_line, name=name, started=early) as upstream:
            if early is not None:
                early.release_signals()  # (the caller holds them now: ``stop_signals``)
            yield upstream.stream

    return connect


@contextlib.asynccontextmanager
async def spawn_upstream(
    command: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    *,
    max_line: int = DEFAULT_MAX_LINE,
    name: str | None = None,
    started: StartedProcess | None = None,
) -> AsyncIterator[Upstream]:
    """Run ``command`` as the upstream; stop it (and its process group) on exit.

    The pipes are the guard's own (plain fds read and written like the client side's; a
    ``pipes.PipeLineStream`` on asyncio), not anyio's process streams, whose every send costs
    an event-loop pass; the process is a :class:`ChildProcess` (``spawn.start_process``
    starts it). Its exit is logged (info) with its status.

    Args:
        command: the executable and its arguments.
        env: extra variables, merged over ``os.environ``.
        cwd: working directory, default the guard's.
        max_line: the cap on one message from the upstream, in bytes (``framing.LineTooLong``).
        name: the server's name (``serve``): its log lines start ``upstream NAME: `` and its
            stderr lines ``upstream NAME stderr: ``; None (``wrap``): ``upstream stderr: ``.
        started: the process, started already by :func:`~mcp_guard.peer.spawn.start_process` from
            ``command``, ``env`` and ``cwd``; None: it is started here.

    Raises:
        UpstreamStartError: the command cannot be started.
    """
    if started is None:
        started = start_process(command, env, cwd)
    label = "" if name is None else f"upstream {name}: "
    process = ChildProcess(started.popen)
    to_child, from_child, errors_from_child = started.to_child, started.from_child, started.errors_from_child
    stderr_relay = StderrRelay(
        errors_from_child, "upstream stderr: " if name is None else f"upstream {escape(name)} stderr: "
    )
    stream: LineStream
    if pollable_on_asyncio(from_child):
        stream = PipeLineStream(from_child, to_child, max_line=max_line, owned=True)
        child_exited = stream.end_when_drained
    else:
        output = _ChildOutput(from_child)
        stream = LineStream(output, FdSendStream(to_child, owned=True), max_line=max_line)
        child_exited = output.child_exited
    log.debug("%sstarted the upstream (pid %d)", label, process.pid)
    exited = anyio.Event()

    async def watch() -> None:
        status = await process.wait()
        log.info("%sthe upstream (pid %d) exited with status %d", label, process.pid, status)
        exited.set()
        child_exited()

    async def tell(wait: float) -> str:
        # Its output ended: its exit (a moment later, as a rule) gives the status (streams.ends).
        with anyio.move_on_after(wait):
            await exited.wait()
        if exited.is_set():  # what it wrote as it exited is read (counted) first
            await anyio.to_thread.run_sync(stderr_relay.wait_read, 0.3)
        return exit_text(process.returncode if exited.is_set() else None, stderr_relay.lines, stderr_relay.label)

    tell_end(stream, tell)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            try:
                yield Upstream(process, stream)
            finally:
                tg.cancel_scope.cancel()
    finally:
        # Cancelled: the guard is stopping (its drain time is over, or a signal came): no grace is left.
        stopping = anyio.current_effective_deadline() == -math.inf
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(0.2 if stopping else EXIT_GRACE_SECONDS):  # (queued output gets this long)
                await stream.close_send()  # EOF on the upstream's stdin: the MCP way to ask it to exit
            await stop_upstream(process, grace=0.0 if stopping else EXIT_GRACE_SECONDS, label=label)
            await stream.aclose()
            # What the server wrote to its stderr last (a traceback) is written before the connection is left.
            await anyio.to_thread.run_sync(stderr_relay.finish, 0.2 if stopping else 1.0)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def _terminate_group(process: anyio.abc.Process, kill_after: float, label: str = "") -> None:
    """SIGTERM to the upstream's process group at once, SIGKILL to what is left after ``kill_after`` seconds.

    The rule of the ``mcp`` SDK's ``terminate_posix_process_tree`` (the leader's pid is the group's id,
    ``start_new_session``; only ESRCH proves the group gone), written here because importing ``mcp``
    costs the stdio path ~0.4 s (issue 14 item 1) and, paid at a stop signal, delayed the SIGKILL past a
    client's patience.
    """
    pgid = process.pid
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    except PermissionError:
        log.warning("%sno permission to signal some of the upstream's process group; waiting for it anyway", label)
    with anyio.move_on_after(kill_after):
        while _group_alive(pgid):
            _ = process.returncode  # (reaps the leader where the backend does so on reading)
            await anyio.sleep(0.05)
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def stop_upstream(process: anyio.abc.Process, *, grace: float = EXIT_GRACE_SECONDS, label: str = "") -> None:
    """Stop the upstream whose stdin is closed, and everything left in its process group.

    Waits ``grace`` seconds (default :data:`EXIT_GRACE_SECONDS`) for it to exit by itself, then
    terminates its process group (SIGTERM, then SIGKILL after as long again). ``grace`` 0: the guard
    is stopping; it waits :data:`STOP_EXIT_SECONDS`, and SIGKILL follows after :data:`KILL_GRACE_SECONDS`.
    The log line names a stop signal the guard got (``streams.ends.stop_signal``) as the reason. When it did exit but
    processes it started remain in its group (a server's helper, a wrapper's child), those are
    terminated the same way: nothing the upstream started outlives the guard's use of it.
    ``label`` starts its log lines (``"upstream NAME: "`` in ``serve``).
    """
    kill_after = grace or KILL_GRACE_SECONDS
    with anyio.move_on_after(grace or STOP_EXIT_SECONDS):  # (stopping: one that is exiting already is not signalled)
        await process.wait()
    if process.returncode is None or _group_alive(process.pid):  # start_new_session: its pid is its group's id
        signalled = stop_signal() if not grace else None
        if process.returncode is None and signalled is not None:
            log.info("%sthe guard was stopped (%s); terminating the upstream", label, signalled)
        elif process.returncode is None:
            log.info("%supstream did not exit after its stdin closed; terminating it", label)
        else:
            log.info("%sthe upstream left processes behind in its process group; terminating them", label)
        await _terminate_group(process, kill_after, label)
    with anyio.move_on_after(EXIT_GRACE_SECONDS):
        await process.wait()
    with contextlib.suppress(Exception):
        await process.aclose()
