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
  :class:`~mcp_guard.streams.framing.LineStream`, which this class extends);
- a line that arrives while the consumer waits, with nothing queued before it, is first
  offered to a synchronous *line handler* (:meth:`PipeLineStream.set_line_handler`) in the
  callback itself: the relay parses, judges and writes it on in the same loop pass. A handler
  that cannot finish a line without waiting (it needs the guard's own listing, a write would
  have to wait, ...) declines it before doing anything, and the line goes to ``receive()``;
- writes go straight to the fd; what a full pipe does not take waits in an output queue that
  a writer callback flushes in order (lines never interleave, even when a sending task is
  cancelled midway), and :meth:`PipeLineStream.send` returns once the queue is empty;
- a big line (issue 14 item 4: a 16 MiB argument) is copied as little as can be: split out of
  the reads once, offered to the handler as its text (its bytes freed first, see
  :data:`LineHandler`), and written from that text a slice at a time, or from the bytes by
  ``writev`` with its newline; what the pipe does not take is queued as is, never copied.

Backpressure is as before: the fd is read only while the consumer waits in ``receive()``
(a declined line wakes it, and reading stops until it asks again), and the relay's handlers
decline every line while the stream they would write to has output queued, so a peer that
stops reading stops the guard reading the other side.

:func:`pipe_line_stream` returns this stream on asyncio for an fd the loop can poll, and the
generic :class:`~mcp_guard.streams.framing.LineStream` over
:class:`~mcp_guard.streams.framing.FdReceiveStream` and
:class:`~mcp_guard.streams.framing.FdSendStream` otherwise (trio; a regular file as stdin).
Both keep the :class:`~mcp_guard.streams.framing.MessageStream` contract.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
from collections import deque
from collections.abc import Callable
from typing import Final

import anyio

from ..wire.framing import DEFAULT_MAX_LINE
from ..wire.jsonrpc import Spliced
from ..wire.repeated import collector_paused
from .framing import CHUNK, FdReceiveStream, FdSendStream, LineStream, pollable

__all__ = ["BIG_LINE", "DirectLink", "LineHandler", "PipeLineStream", "pipe_line_stream", "pollable_on_asyncio"]

BIG_LINE: Final = 1 << 16
"""A line sent of at least this many bytes is written (and what the fd does not take of it queued) without
being copied: the line and its newline go out by one ``writev``. Shorter lines are joined to their newline,
and queued output of them is kept in one buffer."""

_IOV: Final = 64
"""Queued pieces given to one ``writev``."""

_SLICE: Final = 1 << 20
"""Characters of a queued text line encoded at a time (so a big text is never encoded whole)."""


def _text_of(line: bytes | str) -> str:
    """The text of a line (``UnicodeDecodeError`` when it is not UTF-8)."""
    return line if isinstance(line, str) else line.decode("utf-8")


class _Text:
    """A text line in the output queue (a ``str``, or a ``jsonrpc.Spliced`` one), encoded :data:`_SLICE`
    characters at a time as the fd takes it."""

    __slots__ = ("piece", "segments")

    def __init__(self, text: str | Spliced) -> None:
        self.segments = text.segments() if isinstance(text, Spliced) else [(text, 0, len(text))]
        self.segments.reverse()  # (taken from the end)
        self.piece = memoryview(b"")

    def current(self) -> memoryview | None:
        """The bytes to write next (never empty), or None once all of it is written."""
        while not self.piece:
            if not self.segments:
                return None
            text, pos, end = self.segments[-1]
            stop = min(pos + _SLICE, end)
            if stop >= end:
                self.segments.pop()
            else:
                self.segments[-1] = (text, stop, end)
            self.piece = memoryview(text[pos:stop].encode("utf-8"))
        return self.piece


LineHandler = Callable[[bytes | str], bool]
"""Takes one received line (no newline) in the reader callback: True when it handled the line, False to
leave it, untouched, to ``receive()``. What it raises is raised to the consumer by ``receive()``.
A line of at least :data:`BIG_LINE` bytes that is valid UTF-8 comes decoded, as a ``str``, its bytes
already freed: a parser needs the text, and a big message then is not held three times at once (its
bytes, its text and the value parsed from it). It can be sent on as it is (:meth:`PipeLineStream.send_nowait`
takes a ``str``); declined, it goes to ``receive()`` as the same bytes again."""


class DirectLink:
    """A client-side line stream the relay's hot path may drive without waiting (see the module docstring).

    :class:`PipeLineStream` is one (``wrap`` on stdio); the HTTP front's in-memory client side
    (``fronts.http.direct``) is another. The relay offers it a synchronous line handler, and
    writes to it with :meth:`send_nowait` while it is :attr:`idle`.
    """

    def set_line_handler(self, handler: LineHandler | None) -> None:
        """Offer received lines to ``handler`` while the consumer waits in ``receive()`` (None: stop offering)."""
        raise NotImplementedError

    @property
    def idle(self) -> bool:
        """No output is waiting: a line sent now is passed on at once."""
        raise NotImplementedError

    async def send(self, line: bytes | str | Spliced) -> None:
        """Pass ``line`` (a ``str`` or ``jsonrpc.Spliced`` is its UTF-8 text) on, after any output queued
        before it; return once it is passed on."""
        raise NotImplementedError

    def send_nowait(self, line: bytes | str | Spliced) -> None:
        """Pass ``line`` (a ``str`` or ``jsonrpc.Spliced`` is its UTF-8 text) on now, or queue it behind
        earlier output (never waits).

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

    The :class:`~mcp_guard.streams.framing.LineStream` contract (``receive``, ``send``,
    ``close_send``, ``aclose``; the line cap and :class:`~mcp_guard.streams.framing.LineTooLong`),
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
        # Output the fd has not taken yet, in order: big lines as views of themselves (never copied) or
        # as their text (encoded a slice at a time), the rest joined in buffers.
        self._pending: deque[bytearray | memoryview | _Text] = deque()
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
                    if len(lines[-1]) > self._max:
                        break  # receive() reports it
                    line: bytes | str = lines.pop()
                    big = len(line) >= BIG_LINE
                    if big:
                        with contextlib.suppress(UnicodeDecodeError):
                            line = _text_of(line)  # (its bytes go: see LineHandler)
                    try:
                        # Parsing, judging and re-serializing a big message (a 10,000-tool listing: some 600,000
                        # objects, none in a cycle) is synchronous, and its objects are freed before the cyclic
                        # collector may run again: paused, no pass walks them, and CPython counts each freed
                        # object against the allocations that trigger one (issue 14 item 5).
                        if big:
                            with collector_paused():
                                handled = handler(line)
                        else:
                            handled = handler(line)  # (no context manager for a small line: every line comes here)
                    except BaseException as exc:  # raised to the consumer, as if it had failed on the line itself
                        self._failure = exc
                        break
                    if not handled:
                        lines.append(line.encode("utf-8") if isinstance(line, str) else line)
                        break
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

    def send_nowait(self, line: bytes | str | Spliced) -> None:
        """Write ``line`` (a ``str`` or ``jsonrpc.Spliced`` in UTF-8) and a newline now; what the fd does not
        take is queued behind earlier output. Text is encoded a slice at a time as the fd takes it, never whole.

        Raises:
            anyio.BrokenResourceError: the reader has gone (EPIPE), now or during an earlier flush.
            anyio.ClosedResourceError: after :meth:`close_send` or :meth:`aclose`.
        """
        if self._send_closed:
            raise anyio.ClosedResourceError
        if self._broken is not None:
            raise anyio.BrokenResourceError from self._broken
        if isinstance(line, (str, Spliced)):
            self._pending.append(_Text(line))
            self._join(b"\n")
            if not self._writing:
                self._on_writable()  # as much as the fd takes now
                if self._broken is not None:
                    raise anyio.BrokenResourceError from self._broken
                if self._pending:
                    self._loop.add_writer(self._write_fd, self._on_writable)
                    self._writing = True
            return
        if self._pending:
            self._queue(line, 0)
            return
        try:
            if len(line) < BIG_LINE:
                written = os.write(self._write_fd, line + b"\n")
            else:
                written = os.writev(self._write_fd, (line, b"\n"))
        except BlockingIOError:
            written = 0
        except (BrokenPipeError, ConnectionResetError) as exc:
            self._broken = exc
            raise anyio.BrokenResourceError from exc
        if written <= len(line):
            self._queue(line, written)
            self._loop.add_writer(self._write_fd, self._on_writable)
            self._writing = True

    def _queue(self, line: bytes, written: int) -> None:
        """Queue what is left of ``line`` and its newline after its first ``written`` bytes went out."""
        pending = self._pending
        rest = memoryview(line)[written:]
        if len(rest) >= BIG_LINE:
            pending.append(rest)
        elif rest:
            self._join(rest)
        self._join(b"\n")

    def _join(self, data: bytes | memoryview) -> None:
        pending = self._pending
        if pending and type(pending[-1]) is bytearray:
            pending[-1] += data
        else:
            pending.append(bytearray(data))

    async def send(self, line: bytes | str | Spliced) -> None:
        """Write ``line`` (a ``str`` or ``jsonrpc.Spliced``: its UTF-8 text, encoded a slice at a time) and a
        newline, after any output queued before it; return once all of it is written.

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
        pending = self._pending
        while pending and isinstance(pending[0], _Text) and pending[0].current() is None:
            pending.popleft()  # a text written whole
        if not pending:
            self._stop_writing(None)
            return
        head = pending[0]
        try:
            if isinstance(head, _Text):
                piece = head.current()
                assert piece is not None
                head.piece = piece[os.write(self._write_fd, piece) :]
                return
            pieces: list[bytearray | memoryview] = []
            for item in pending:
                if isinstance(item, _Text) or len(pieces) == _IOV:
                    break
                pieces.append(item)
            written = os.write(self._write_fd, pieces[0]) if len(pieces) == 1 else os.writev(self._write_fd, pieces)
        except BlockingIOError:
            return
        except OSError as exc:  # EPIPE and the like: the reader has gone; the queue cannot be delivered
            self._broken = exc
            pending.clear()
            self._stop_writing(anyio.BrokenResourceError())
            return
        while written:
            first = pending[0]
            assert not isinstance(first, _Text)
            if written < len(first):
                if type(first) is bytearray:
                    del first[:written]
                else:
                    pending[0] = first[written:]
                break
            written -= len(first)
            pending.popleft()
        if not pending:
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
