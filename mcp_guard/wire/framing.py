"""Newline-delimited JSON-RPC framing, without I/O: the line cap and the line splitter.

MCP's stdio transport is one JSON-RPC message per line. :class:`LineSplitter` turns the byte
chunks a stream delivers into lines, and bounds one line: past ``max_line`` bytes it keeps
a prefix (to recover the request id from) and drops the rest of that line as it comes, so
memory stays bounded whatever a peer sends. The byte streams that feed it (file
descriptors, anyio streams, the asyncio pipe path) are in :mod:`mcp_guard.streams.framing`
and :mod:`mcp_guard.streams.pipes`.

This module does not parse JSON, knows nothing of MCP, and imports no I/O library.
"""

from __future__ import annotations

from typing import Final

from ..errors import GuardError

__all__ = ["DEFAULT_MAX_LINE", "LineSplitter", "LineTooLong"]

DEFAULT_MAX_LINE: Final = 32 << 20
"""The default cap on one newline-delimited message, in bytes (32 MiB, as on HTTP)."""

PREFIX: Final = 1 << 16
"""How much of an over-long line is kept, in bytes, to find its request id."""


class LineTooLong(GuardError):
    """A peer sent a line longer than the stream's cap; the rest of that line is skipped, not buffered.

    Attributes:
        prefix: the line's first bytes (up to :data:`PREFIX`, 64 KiB), to recover its JSON-RPC id from.
        limit: the cap in bytes.
    """

    def __init__(self, prefix: bytes, limit: int) -> None:
        super().__init__(f"a message longer than {limit} bytes")
        self.prefix = prefix
        self.limit = limit


class LineSplitter:
    """Splits byte chunks into non-empty lines, with a cap on one line.

    Feed chunks with :meth:`_feed`, take lines with :meth:`_take` until it returns None, and
    call :meth:`_finish` once the peer has closed (it returns a last line that had no
    newline). Lines come without their ``\\n`` (a trailing ``\\r`` is kept: JSON parsers take
    it as white space); empty and all-white-space lines are skipped. A line longer than
    ``max_line`` bytes makes :meth:`_take` raise :class:`LineTooLong` in its place, after the
    lines before it; the rest of it is dropped as it arrives.

    The methods are underscored because they are the protected interface of the stream
    classes built on this one (``streams.framing.LineStream``, ``streams.pipes.PipeLineStream``),
    whose public face is ``receive()``.

    Args:
        max_line: the cap on one line, in bytes (default :data:`DEFAULT_MAX_LINE`).
    """

    def __init__(self, max_line: int = DEFAULT_MAX_LINE) -> None:
        self._buffer = bytearray()
        self._lines: list[bytes] = []  # stored reversed, so pop() yields them in order
        self._eof = False
        self._skipping = False  # inside an over-long line: drop bytes until its newline
        self._overflow: bytes | None = None  # an over-long line's prefix, reported after the lines before it
        self._max = max_line

    def _take(self) -> bytes | None:
        """The next line already split, or None when more input is needed.

        Raises:
            LineTooLong: the next line passed the cap.
        """
        if self._lines:
            line = self._lines.pop()
            if len(line) > self._max:
                raise LineTooLong(line[:PREFIX], self._max)
            return line
        if self._overflow is not None:
            prefix, self._overflow = self._overflow, None
            raise LineTooLong(prefix, self._max)
        return None

    def _feed(self, chunk: bytes) -> None:
        """Split ``chunk`` (appended to what is buffered) into lines for :meth:`_take`.

        Call it only when :meth:`_take` has returned None (the lines split before are replaced).
        A partial line that passes the cap is dropped at once; its prefix is reported by
        :meth:`_take` after the lines before it, and the rest of it is skipped as it comes.
        """
        if self._skipping:
            end = chunk.find(b"\n")
            if end < 0:
                return
            self._skipping = False
            chunk = chunk[end + 1 :]
        elif not self._buffer and chunk.endswith(b"\n") and chunk.find(b"\n") == len(chunk) - 1:
            if not chunk.isspace():  # the usual chunk: exactly one line, whole
                self._lines = [chunk[:-1]]
            return
        if chunk.find(b"\n") == -1:  # (not ``in``: see wire.meta.may_hold_guard_keys)
            self._buffer += chunk
            if len(self._buffer) > self._max:
                self._overflow = bytes(self._buffer[:PREFIX])
                self._buffer.clear()
                self._skipping = True
            return
        first = None
        if self._buffer:  # a line split across reads (usually a chunk starts a line and is split as it is)
            # Its end goes onto the buffer, which becomes the line: one copy of a big line, not two (a join
            # of buffer and chunk, then a split of that), and the buffer is freed at once.
            end = chunk.find(b"\n")
            self._buffer += memoryview(chunk)[:end]
            first = bytes(self._buffer)
            self._buffer.clear()
            chunk = chunk[end + 1 :]
        parts = chunk.split(b"\n")
        last = parts.pop()
        if last:
            self._buffer += last
        lines = [p for p in reversed(parts) if p and not p.isspace()]
        if first and not first.isspace():
            lines.append(first)  # (stored reversed: the first line is popped first)
        self._lines = lines
        if len(self._buffer) > self._max:
            self._overflow = bytes(self._buffer[:PREFIX])  # reported once the lines before it are read
            self._buffer.clear()
            self._skipping = True

    def _finish(self) -> bytes | None:
        """The peer closed: the last line if it had no newline (None when there is none); the splitter is at its end."""
        self._eof = True
        rest = bytes(self._buffer).strip()
        self._buffer.clear()
        if rest and not self._skipping:
            return rest
        return None
