"""Newline-delimited message streams on pipes, driven by the asyncio loop's fd callbacks: the stdio hot path.

Why this module steps below anyio
---------------------------------
The house rule is ``anyio`` for concurrency. This module is the one exception, for the pipes
of ``mcp-guard wrap`` (the client's stdin/stdout, the upstream child's stdin/stdout), on the
asyncio backend only. Waiting for a pipe through ``anyio.wait_readable`` costs, for every
message, registering and unregistering the fd with epoll (two ``epoll_ctl``), a future, and
two passes of the event loop (the reader callback, then the waiting task's step) before the
message is even read; a send takes a lock and walks the cancel scopes. Measured on the relay
throughput benchmark (``benchmarks/relay_throughput.py``, two cores): 55-65 µs from the
guard's wake-up to its forwarding write, per message, of which parsing, judging and
re-serializing were under 10; about 240 µs of guard CPU per sequential ``tools/call``, and
0.7x direct throughput. With this module: one loop pass and no ``epoll_ctl`` per message,
35-40 µs from wake-up to write, about 115 µs of CPU per call. Here:

- the fd stays registered while its consumer waits in ``receive()``; the reader callback
  reads what is there and splits it into lines (the framing and the line cap of
  :class:`~mcp_guard.relay.framing.LineStream`, which this class extends);
- a line that arrives while the consumer waits, with nothing queued before it, is first
  offered to a synchronous *line handler* (:meth:`PipeLineStream.set_line_handler`) in the
  callback itself: the relay parses, judges and writes it on in the same loop pass. A handler
  that cannot finish a line without waiting (it needs the guard's own listing, a write would
  have to wait, ...) declines it before doing anything, and the line goes to ``receive()``;
- writes go straight to the fd; what a full pipe does not take waits in an output queue that
  a writer callback flushes in order (lines never interleave, even when a sending task is
  cancelled midway), and :meth:`PipeLineStream.send` returns once the queue is empty.

Backpressure is as before: the fd is read only while the consumer waits in ``receive()``
(a declined line wakes it, and reading stops until it asks again), and the relay's handlers
decline every line while the stream they would write to has output queued, so a peer that
stops reading stops the guard reading the other side.

:func:`pipe_line_stream` returns this stream on asyncio for an fd the loop can poll, and the
generic :class:`~mcp_guard.relay.framing.LineStream` over
:class:`~mcp_guard.relay.framing.FdReceiveStream` and
:class:`~mcp_guard.relay.framing.FdSendStream` otherwise (trio; a regular file as stdin).
Both keep the :class:`~mcp_guard.relay.framing.MessageStream` contract.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
from collections.abc import Callable

import anyio

from ..wire.framing import DEFAULT_MAX_LINE
from .framing import CHUNK, FdReceiveStream, FdSendStream, LineStream, pollable

__all__ = ["DirectLink", "LineHandler", "PipeLineStream", "pipe_line_stream", "pollable_on_asyncio"]

LineHandler = Callable[[bytes], bool]
"""Takes one received line (no newline) in the reader callback: True when it handled the line, False to
leave it, untouched, to ``receive()``. What it raises is raised to the consumer by ``receive()``."""


class DirectLink:
    """A client-side line stream the relay's hot path may drive without waiting (see the module docstring).

    :class:`PipeLineStream` is one (``wrap`` on stdio); the HTTP front's in-memory client side
    (``http_front.direct``) is another. The relay offers it a synchronous line handler, and
    writes to it with :meth:`send_nowait` while it is :attr:`idle`.
    """

    def set_line_handler(self, handler: LineHandler | None) -> None:
        """Offer received lines to ``handler`` while the consumer waits in ``receive()`` (None: stop offering)."""
        raise NotImplementedError

    @property
    def idle(self) -> bool:
        """No output is waiting: a line sent now is passed on at once."""
        raise NotImplementedError

    def send_nowait(self, line: bytes) -> None:
        """Pass ``line`` on now, or queue it behind earlier output (never waits).

        Raises:
            anyio.BrokenResourceError, anyio.ClosedResourceError: the other side is gone, or this one closed.
        """
        raise NotImplementedError


def pollable_on_asyncio(fd: int) -> bool:
    """Whether an asyncio loop runs in this thread and can poll ``fd`` (a pipe, socket or tty; not a regular file)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    if not pollable(fd):
        return False
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)  # /dev/null, for one, is a character device epoll refuses
    except (OSError, ValueError):
        return False
    return True


def pipe_line_stream(read_fd: int, write_fd: int, *, max_line: int = DEFAULT_MAX_LINE) -> LineStream:
    """A line stream over two fds the caller keeps (they are not closed): a :class:`PipeLineStream`
    when :func:`pollable_on_asyncio` holds for ``read_fd``, else a generic :class:`LineStream`."""
    if pollable_on_asyncio(read_fd):
        return PipeLineStream(read_fd, write_fd, max_line=max_line)
    return LineStream(FdReceiveStream(read_fd), FdSendStream(write_fd), max_line=max_line)


class PipeLineStream(LineStream, DirectLink):
    """One newline-delimited message stream over a readable and a writable fd, on the asyncio loop's callbacks.

    The :class:`~mcp_guard.relay.framing.LineStream` contract (``receive``, ``send``,
    ``close_send``, ``aclose``; the line cap and :class:`~mcp_guard.relay.framing.LineTooLong`),
    plus the hot path's hooks: :meth:`set_line_handler`, :meth:`send_nowait`, :attr:`idle`
    and, for a child's output, :meth:`end_when_drained`. See the module docstring.

    Args:
        read_fd: read from; set non-blocking while in use (the loop must be able to poll it:
            see :func:`pollable_on_asyncio`).
        write_fd: written to; set non-blocking while in use when it is a pipe, socket or tty.
        max_line: the cap on one received line, in bytes.
        owned: close both fds on :meth:`aclose` (and ``write_fd`` on :meth:`close_send`).

    Raises:
        RuntimeError: no asyncio loop runs in this thread.
    """

    def __init__(self, read_fd: int, write_fd: int, *, max_line: int = DEFAULT_MAX_LINE, owned: bool = False) -> None:
        self._loop = asyncio.get_running_loop()
        self._in = FdReceiveStream(read_fd, owned=owned)
        self._out = FdSendStream(write_fd, owned=owned)
        super().__init__(self._in, self._out, max_line=max_line)
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._reading = False  # the reader callback is registered
        self._waiter: asyncio.Future[None] | None = None  # the consumer, waiting in receive()
        self._handler: LineHandler | None = None
        self._failure: BaseException | None = None  # raised by the handler; raised next by receive()
        self._at_end = False  # the fd reached its end (or the child exited and the pipe is drained)
        self._exited = False
        self._pending = bytearray()  # output the fd has not taken yet
        self._writing = False  # the writer callback is registered
        self._drain_waiters: list[asyncio.Future[None]] = []
        self._broken: BaseException | None = None
        self._send_closed = False

    # --- receiving ----------------------------------------------------------------------------

    def set_line_handler(self, handler: LineHandler | None) -> None:
        """Offer lines to ``handler`` in the reader callback while the consumer waits (None: stop offering)."""
        self._handler = handler

    async def receive(self) -> bytes:
        """The next non-empty line, without its newline (one the line handler did not take).

        Raises:
            anyio.EndOfStream: the peer closed its side (or, after :meth:`end_when_drained`,
                the pipe is drained).
            LineTooLong: the next line passed the cap.
            whatever the line handler raised.
        """
        while True:
            if self._failure is not None:  # (the handler's, on a line before any still queued)
                failure, self._failure = self._failure, None
                raise failure
            line = self._take()
            if line is not None:
                return line
            if self._eof:
                raise anyio.EndOfStream
            if self._at_end:
                rest = self._finish()
                if rest is not None:
                    return rest
                raise anyio.EndOfStream
            if not self._read():
                await self._wait()

    def end_when_drained(self) -> None:
        """The writer has gone (a child process exited): end once what is in the pipe is read, even when
        another process still holds the pipe's write end open."""
        self._exited = True
        if self._waiter is not None and not self._waiter.done():
            self._on_readable()

    def _read(self) -> bool:
        """Read what the fd has now: False when it has nothing (and its end has not come)."""
        try:
            data = os.read(self._read_fd, CHUNK)
        except BlockingIOError:
            if not self._exited:
                return False
            self._at_end = True
            return True
        except OSError:  # closed under us
            self._at_end = True
            return True
        if data:
            self._feed(data)
        else:
            self._at_end = True
        return True

    async def _wait(self) -> None:
        """Until the reader callback has something for the consumer."""
        waiter = self._waiter = self._loop.create_future()
        if not self._reading:
            self._loop.add_reader(self._read_fd, self._on_readable)
            self._reading = True
        try:
            await waiter
        finally:
            self._waiter = None
            self._stop_reading()

    def _stop_reading(self) -> None:
        if self._reading:
            self._reading = False
            with contextlib.suppress(Exception):  # (the fd may be closed already)
                self._loop.remove_reader(self._read_fd)

    def _on_readable(self) -> None:
        """The reader callback: read, offer the lines to the handler, wake the consumer for the rest."""
        waiter = self._waiter
        if waiter is None or waiter.done():
            self._stop_reading()
            return
        while self._read():
            handler = self._handler
            if handler is not None:
                lines = self._lines
                while lines and not waiter.done():
                    line = lines[-1]
                    if len(line) > self._max:
                        break  # receive() reports it
                    try:
                        handled = handler(line)
                    except BaseException as exc:  # raised to the consumer, as if it had failed on the line itself
                        lines.pop()
                        self._failure = exc
                        break
                    if not handled:
                        break
                    lines.pop()
            if self._lines or self._overflow is not None or self._at_end or self._failure is not None:
                self._stop_reading()
                if not waiter.done():
                    waiter.set_result(None)
                return
            if not self._exited or waiter.done():
                return
            # The child has exited: the fd may never be readable again; read on until the pipe is empty.

    # --- sending ------------------------------------------------------------------------------

    @property
    def idle(self) -> bool:
        """No output is waiting for the fd: a line sent now is written at once (unless the pipe is full)."""
        return not self._pending

    def send_nowait(self, line: bytes) -> None:
        """Write ``line`` and a newline now; what the fd does not take is queued behind earlier output.

        Raises:
            anyio.BrokenResourceError: the reader has gone (EPIPE), now or during an earlier flush.
            anyio.ClosedResourceError: after :meth:`close_send` or :meth:`aclose`.
        """
        if self._send_closed:
            raise anyio.ClosedResourceError
        if self._broken is not None:
            raise anyio.BrokenResourceError from self._broken
        data = line + b"\n"
        if self._pending:
            self._pending += data
            return
        try:
            written = os.write(self._write_fd, data)
        except BlockingIOError:
            written = 0
        except (BrokenPipeError, ConnectionResetError) as exc:
            self._broken = exc
            raise anyio.BrokenResourceError from exc
        if written < len(data):
            self._pending += data[written:]
            self._loop.add_writer(self._write_fd, self._on_writable)
            self._writing = True

    async def send(self, line: bytes) -> None:
        """Write ``line`` and a newline, after any output queued before it; return once all of it is written.

        Cancelling the wait leaves the line queued: it is still written whole.

        Raises:
            anyio.BrokenResourceError: the reader has gone (EPIPE).
            anyio.ClosedResourceError: after :meth:`close_send` or :meth:`aclose`.
        """
        self.send_nowait(line)
        if self._pending:
            await self._drained()

    async def _drained(self) -> None:
        while self._pending:
            waiter = self._loop.create_future()
            self._drain_waiters.append(waiter)
            try:
                await waiter
            finally:
                with contextlib.suppress(ValueError):
                    self._drain_waiters.remove(waiter)

    def _on_writable(self) -> None:
        try:
            written = os.write(self._write_fd, self._pending)
        except BlockingIOError:
            return
        except OSError as exc:  # EPIPE and the like: the reader has gone; the queue cannot be delivered
            self._broken = exc
            self._pending.clear()
            self._stop_writing(anyio.BrokenResourceError())
            return
        del self._pending[:written]
        if not self._pending:
            self._stop_writing(None)

    def _stop_writing(self, failure: BaseException | None) -> None:
        if self._writing:
            self._writing = False
            with contextlib.suppress(Exception):
                self._loop.remove_writer(self._write_fd)
        waiters, self._drain_waiters = self._drain_waiters, []
        for waiter in waiters:
            if not waiter.done():
                if failure is None:
                    waiter.set_result(None)
                else:
                    waiter.set_exception(failure)

    async def close_send(self) -> None:
        """Write what is queued (waiting while the pipe is full), then close the sending side (the peer sees EOF).

        When the wait is cancelled (or the reader has gone), the side is closed at once and
        what was queued is dropped. Receiving goes on.
        """
        if self._send_closed:
            return
        try:
            if self._pending and self._broken is None:
                with contextlib.suppress(anyio.BrokenResourceError):
                    await self._drained()
        finally:
            self._close_sending()

    def _close_sending(self) -> None:
        self._send_closed = True
        self._pending.clear()
        self._stop_writing(anyio.ClosedResourceError())
        self._out._release()

    async def aclose(self) -> None:
        """Close both directions at once (queued output is dropped; a waiting ``receive()`` ends)."""
        if not self._send_closed:
            self._close_sending()
        self._stop_reading()
        self._at_end = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)
        self._in._release()
