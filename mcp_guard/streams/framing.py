"""Newline-delimited JSON-RPC framing on byte streams, and the guard's own stdio.

MCP's stdio transport is one JSON-RPC message per line. The relay reads and writes lines
as bytes and leaves parsing to its caller, so a message it does not need to change is
passed on byte for byte. The splitting and the cap on one line (32 MiB by default, set by
``--max-message-bytes``; a 64 KiB limit is a known way for bridges to break on large
results) are the pure :class:`~mcp_guard.wire.framing.LineSplitter`; this module adds the
byte streams (file descriptors without threads, any anyio byte stream) around it.

:func:`claim_stdio` takes the process's fd 0 and 1 for the protocol and points fd 1 at
stderr for as long as the relay runs: a stray ``print`` anywhere in the process (or in a
library) then lands in the log instead of corrupting the protocol stream.

This module does not parse JSON and knows nothing of MCP.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from typing import Final, Protocol

import anyio
import anyio.abc
import anyio.lowlevel

from ..wire.framing import DEFAULT_MAX_LINE, LineSplitter

__all__ = [
    "CHUNK",
    "FdReceiveStream",
    "FdSendStream",
    "LineStream",
    "MessageStream",
    "claim_stdio",
    "pollable",
]

CHUNK: Final = 1 << 16
"""Bytes asked of the kernel per read of a pipe or socket."""


def pollable(fd: int) -> bool:
    """Whether ``fd`` is a pipe, socket or character device (readiness can be polled; regular files cannot)."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


class _Fd:
    """A file descriptor in non-blocking use; :meth:`_release` restores it and closes it when owned."""

    def __init__(self, fd: int, *, owned: bool = False) -> None:
        self._fd = fd
        self._owned = owned
        self._closed = False
        self._flags = os.get_blocking(fd)
        self._poll = pollable(fd)
        if self._poll:
            os.set_blocking(fd, False)

    def _release(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):
            os.set_blocking(self._fd, self._flags)
        if self._owned:
            with contextlib.suppress(OSError):
                os.close(self._fd)


class FdReceiveStream(_Fd, anyio.abc.ByteReceiveStream):
    """Reads a file descriptor without threads (a pipe, socket or tty is polled; a file is read).

    Raises ``anyio.EndOfStream`` at EOF. The fd is set non-blocking while in use; on
    :meth:`aclose` the original flags come back, and the fd is closed when ``owned``.
    """

    async def receive(self, max_bytes: int = CHUNK) -> bytes:
        """Up to ``max_bytes`` bytes, as soon as any are available."""
        while True:
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            if not data:
                raise anyio.EndOfStream
            if not self._poll:
                await anyio.lowlevel.checkpoint()
            return data

    async def aclose(self) -> None:
        """Restore the fd's blocking mode; close it when owned. Idempotent."""
        self._release()


class FdSendStream(_Fd, anyio.abc.ByteSendStream):
    """Writes a file descriptor without threads; waits while a pipe is full.

    Raises ``anyio.BrokenResourceError`` when the reader has gone (EPIPE), and
    ``anyio.ClosedResourceError`` after :meth:`aclose`, which closes the fd when ``owned``
    (the reader then sees EOF).
    """

    async def send(self, item: bytes) -> None:
        """Write all of ``item``, waiting while the pipe is full."""
        if self._closed:
            raise anyio.ClosedResourceError
        view = memoryview(item)
        while view:
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
                continue
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise anyio.BrokenResourceError from exc
            view = view[written:]

    async def aclose(self) -> None:
        """Restore the fd's blocking mode; close it when owned. Idempotent."""
        self._release()


class MessageStream(Protocol):
    """What the relay needs of an upstream: a stream of JSON-RPC messages as JSON bytes.

    :class:`LineStream` (stdio) and ``http_upstream.HttpUpstream`` (streamable HTTP) are two.
    ``receive()`` returns one message (or batch) and raises ``anyio.EndOfStream`` at the
    end; ``send(data)`` sends one and raises ``anyio.BrokenResourceError`` or
    ``anyio.ClosedResourceError`` when it can no longer be delivered; ``close_send()``
    tells the peer no more will come (receiving goes on); ``aclose()`` closes both ways.
    """

    async def receive(self) -> bytes:
        """The next message, without framing."""
        ...

    async def send(self, line: bytes) -> None:
        """Send one message (no newline)."""
        ...

    async def close_send(self) -> None:
        """No more messages will be sent."""
        ...

    async def aclose(self) -> None:
        """Close both directions."""
        ...


class LineStream(LineSplitter):
    """One newline-delimited message stream over a pair of byte streams.

    ``receive()`` returns one line without its ``\\n`` (a trailing ``\\r`` is kept; JSON
    parsers take it as white space) and skips empty lines; it raises ``anyio.EndOfStream``
    when the peer closes. A last line without a newline is still delivered. A line longer
    than ``max_line`` bytes raises :class:`LineTooLong` as soon as the cap is passed; the
    rest of that line is read and dropped as it comes (memory stays bounded), and the next
    ``receive()`` returns the line after it.
    ``send(line)`` writes ``line + b"\\n"`` atomically with respect to other senders.

    Args:
        receiver: the byte stream read from.
        sender: the byte stream written to.
        max_line: the cap on one received line, in bytes (default :data:`DEFAULT_MAX_LINE`).
    """

    def __init__(
        self,
        receiver: anyio.abc.ByteReceiveStream,
        sender: anyio.abc.ByteSendStream,
        *,
        max_line: int = DEFAULT_MAX_LINE,
    ) -> None:
        super().__init__(max_line)
        self._receiver = receiver
        self._sender = sender
        self._lock = anyio.Lock(fast_acquire=True)  # no loop pass when uncontended (the hot path)

    async def receive(self) -> bytes:
        """The next non-empty line, without its newline.

        Raises:
            anyio.EndOfStream: the peer closed its side.
            LineTooLong: the next line passed the cap (see the class docstring).
        """
        while True:
            line = self._take()
            if line is not None:
                return line
            if self._eof:
                raise anyio.EndOfStream
            try:
                chunk = await self._receiver.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                rest = self._finish()
                if rest is not None:
                    return rest
                raise anyio.EndOfStream from None
            self._feed(chunk)

    async def send(self, line: bytes) -> None:
        """Write ``line`` and a newline, atomically with respect to other senders."""
        async with self._lock:
            if len(line) < 1 << 16:
                await self._sender.send(line + b"\n")
            else:  # a big line is not copied to add its newline
                await self._sender.send(line)
                await self._sender.send(b"\n")

    async def close_send(self) -> None:
        """Close the sending side only (the peer sees EOF); receiving goes on."""
        async with self._lock:
            with contextlib.suppress(Exception):
                await self._sender.aclose()

    async def aclose(self) -> None:
        """Close both directions."""
        with contextlib.suppress(Exception):
            await self._sender.aclose()
        with contextlib.suppress(Exception):
            await self._receiver.aclose()


@contextlib.contextmanager
def claim_stdio() -> Iterator[tuple[int, int]]:
    """Take fd 0 and 1 for the protocol; divert fd 0 to /dev/null and fd 1 to stderr meanwhile.

    Yields:
        ``(read_fd, write_fd)``: private close-on-exec duplicates of the original stdin
        and stdout, which child processes do not inherit.

    The original descriptors are restored on exit.
    """
    import fcntl

    read_fd = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    write_fd = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    saved_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    saved_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(devnull, 0)
        os.dup2(2, 1)
        yield read_fd, write_fd
    finally:
        with contextlib.suppress(OSError):
            os.dup2(saved_in, 0)
        with contextlib.suppress(OSError):
            os.dup2(saved_out, 1)
        for fd in (devnull, saved_in, saved_out, read_fd, write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
