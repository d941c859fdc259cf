"""An upstream process's stderr, relayed line by line through the guard: prefixed, escaped, capped.

A server's stderr used to be the guard's stderr, so whatever the server wrote reached the
operator's log and terminal raw: ESC sequences, bidi overrides, and lines that looked like
the guard's own (``mcp-guard INFO: tools: 99 supported``). The brief's rule is that nothing a
client or server sends can start a log line or reach a terminal raw. Here the child's stderr
is a pipe the guard reads, and every line it writes is written to the guard's stderr as::

    upstream stderr: <the line, escaped>             (wrap)
    upstream NAME stderr: <the line, escaped>        (serve; NAME escaped too)

- escaped with :func:`mcp_guard.safe_text.escape` (bytes that are not UTF-8 as ``\\xNN``), so
  a line can neither break into two nor drive the terminal;
- capped at :data:`MAX_STDERR_LINE` bytes: a longer line is written cut, saying so, and the
  rest of it (up to its newline) is skipped;
- the child is never blocked by the guard: a reader thread drains the pipe continuously into
  a bounded queue (:data:`QUEUE_LINES` lines), a writer thread writes the queue to the guard's
  stderr; when the guard's stderr does not keep up (a full pipe, a stopped terminal) lines are
  dropped and counted, and the count is written once writing works again;
- when the child has exited, what it wrote is read to the end and written before the
  connection is left (:meth:`StderrRelay.finish`, bounded by its ``timeout``).

These lines are the server's, not the guard's: the guard cannot stop a server from writing
an argument value into them (the "logs never hold argument values" promise covers the guard's
own lines); the prefix marks them as the server's. They are written whatever the guard's
``--log-level``, as the server's stderr was before.

This module imports only the standard library and :mod:`mcp_guard.safe_text` (the stdio path
stays lean: ``tests/fronts/test_lean_imports.py``).
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import sys
import threading
import time
from typing import Final, TextIO

from ..safe_text import escape

__all__ = ["MAX_STDERR_LINE", "QUEUE_LINES", "StderrRelay"]

MAX_STDERR_LINE: Final = 8192
"""The longest stderr line written whole, in bytes; a longer one is cut (and says so)."""

QUEUE_LINES: Final = 1024
"""Lines waiting for the guard's stderr at most; more are dropped and counted."""

_CHUNK: Final = 65536


class StderrRelay:
    """Reads one child's stderr pipe and writes its lines, prefixed and escaped, to the guard's stderr.

    Args:
        fd: the read end of the child's stderr pipe; owned (closed when the relay ends).
        label: the prefix of every line (``"upstream stderr: "``, ``"upstream NAME stderr: "``).
        sink: where lines go; default the guard's ``sys.stderr`` at the time of writing.
        max_line: the cap on one line, in bytes.
        queue_lines: how many lines may wait for ``sink``.

    Two daemon threads: the reader (``os.read`` on ``fd``, never waiting on ``sink``) and the
    writer. :meth:`finish` reads what the child left and waits (bounded) for it to be written.
    """

    def __init__(
        self,
        fd: int,
        label: str,
        *,
        sink: TextIO | None = None,
        max_line: int = MAX_STDERR_LINE,
        queue_lines: int = QUEUE_LINES,
    ) -> None:
        self._fd = fd
        self._label = label
        self._sink = sink
        self._max_line = max_line
        self._queue: queue.Queue[str | None] = queue.Queue(queue_lines)
        self._stop = threading.Event()
        self._dropped = 0
        self._lines = 0
        self._dropped_lock = threading.Lock()
        self._buffer = bytearray()
        self._skipping = False  # inside a line already written cut: skip to its newline
        self._reader = threading.Thread(target=self._read, name="mcp-guard upstream stderr", daemon=True)
        self._writer = threading.Thread(target=self._write, name="mcp-guard upstream stderr writer", daemon=True)
        self._reader.start()
        self._writer.start()

    @property
    def dropped(self) -> int:
        """Lines dropped so far because the guard's stderr did not keep up."""
        return self._dropped

    @property
    def lines(self) -> int:
        """Lines the child has written to its stderr so far (read whole, cut, or dropped)."""
        return self._lines

    @property
    def label(self) -> str:
        """The prefix of every line written (``"upstream stderr: "``)."""
        return self._label

    def wait_read(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the pipe's end of file (every writer gone, all read); True
        when it came. Blocking, as :meth:`finish` is; it stops nothing."""
        self._reader.join(timeout)
        return not self._reader.is_alive()

    def finish(self, timeout: float = 1.0) -> bool:
        """Stop reading once the pipe has nothing more (end of file, or nothing left to read now), write
        the last partial line, and wait up to ``timeout`` seconds for the writer; True when all was
        written. Blocking: call it from a worker thread (``anyio.to_thread``) or after the loop."""
        self._stop.set()
        deadline = time.monotonic() + timeout
        self._reader.join(max(0.0, deadline - time.monotonic()))
        self._writer.join(max(0.0, deadline - time.monotonic()))
        return not self._writer.is_alive()

    # -- the reader thread ------------------------------------------------------------------

    def _read(self) -> None:
        try:
            while True:
                try:
                    ready, _, _ = select.select([self._fd], [], [], 0.05 if self._stop.is_set() else 0.5)
                except (OSError, ValueError):
                    break
                if not ready:
                    if self._stop.is_set():
                        break
                    continue
                try:
                    chunk = os.read(self._fd, _CHUNK)
                except OSError:
                    break
                if not chunk:
                    break
                self._take(chunk)
            if self._buffer and not self._skipping:
                self._line(bytes(self._buffer))
        finally:
            self._buffer.clear()
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._queue.put(None)  # (blocks only while the writer is behind; the writer ends on it)

    def _take(self, chunk: bytes) -> None:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            if self._skipping:
                self._skipping = False
            else:
                self._buffer += chunk[start:end]
                self._line(self._cut(bytes(self._buffer)))
            self._buffer.clear()
            start = end + 1
        if not self._skipping:
            self._buffer += chunk[start:]
            if len(self._buffer) > self._max_line:
                self._line(self._cut(bytes(self._buffer)))
                self._buffer.clear()
                self._skipping = True

    def _cut(self, line: bytes) -> bytes | str:
        if len(line) <= self._max_line:
            return line
        return escape(line[: self._max_line].decode("utf-8", "backslashreplace")) + (
            f" [line cut at {self._max_line:,} bytes; the rest of it was not written]"
        )

    def _line(self, line: bytes | str) -> None:
        self._lines += 1
        if isinstance(line, bytes):
            line = escape(line.removesuffix(b"\r").decode("utf-8", "backslashreplace"))
        try:
            self._queue.put_nowait(line)
        except queue.Full:
            with self._dropped_lock:
                self._dropped += 1

    # -- the writer thread ------------------------------------------------------------------

    def _write(self) -> None:
        reported = 0
        while True:
            line = self._queue.get()
            with self._dropped_lock:
                dropped = self._dropped
            if dropped > reported:
                self._emit(
                    f"{dropped - reported:,} line(s) dropped: the guard's stderr did not keep up ({dropped:,} in all)"
                )
                reported = dropped
            if line is None:
                return
            self._emit(line)

    def _emit(self, text: str) -> None:
        sink = self._sink if self._sink is not None else sys.stderr
        try:
            sink.write(f"{self._label}{text}\n")
            sink.flush()
        except (OSError, ValueError):
            pass
