"""Big messages handled off the event loop, their outcomes applied on it in the order they came.

No message waits behind another's judgement (issue 25 items 1 and 4). Parsing a 30 MB tool
listing, classifying its schemas and writing it on, or judging a call whose argument has
1,000,000 keys, takes seconds: done in the reader's turn of the event loop, a ``ping`` read
after it (and, over HTTP, every other session) waited that long. So a line of at least
:data:`OFFLOAD_MIN` bytes is a job of an :class:`Ordered` queue: its heavy work runs in a worker
thread (:meth:`Ordered.in_thread`; the work is Python code, or C calls of bounded size, so the
interpreter lock passes to the loop every few milliseconds), while the reader goes on reading.

What may pass a pending job, and what keeps its place behind it (:func:`keeps_place`): JSON-RPC
lets responses come in any order, and requests are independent of each other, so a response or
a request read later goes ahead at once (a ``ping`` is answered while a listing is judged). A
notification keeps its place: it may be about a message before it (``notifications/cancelled``
for the call being judged, ``list_changed`` after a listing), so it is a job too, run after the
jobs before it. So is a batch.

This module does not parse or judge; its owners (``peer.connection`` for the upstream's lines,
the sessions for the client's) say what a job does.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import anyio
import anyio.to_thread

from ..wire.repeated import LISTING_MARK

__all__ = ["LISTING_MIN", "OFFLOAD_MIN", "Ordered", "keeps_place", "upstream_job"]

OFFLOAD_MIN: Final = 1 << 16
"""Lines of at least this many bytes (characters, for a line given as its text) are parsed and judged
off the loop. A shorter line costs at most a few milliseconds to parse, and its judgement is bounded
by the core's work budget."""

LISTING_MIN: Final = 1 << 13
"""Upstream lines of at least this many bytes that may carry tool schemas (they hold ``"inputSchema"``) are jobs
too: a listing's owner classifies its schemas in the worker thread, and makes there the validator of a
schema of thousands of values (``ToolTable.prepare``), which the first call to its tool would otherwise make
on the loop (an ``anyOf`` of 1,000 branches fits in 45 KB: under load a ``ping`` waited 0.5 s for it)."""

_MARK_BYTES: Final = LISTING_MARK.encode()

T = TypeVar("T")


def upstream_job(line: bytes | str) -> bool:
    """Whether an upstream line is a job (handled off the loop): :data:`OFFLOAD_MIN` or more, or a listing of
    :data:`LISTING_MIN` or more (one substring search: ``find``, see ``wire.meta.may_hold_guard_keys``)."""
    size = len(line)
    if size >= OFFLOAD_MIN:
        return True
    if size < LISTING_MIN:
        return False
    return LISTING_MARK in line if isinstance(line, str) else line.find(_MARK_BYTES) != -1


def keeps_place(message: Any) -> bool:
    """Whether a parsed message must wait behind the jobs before it: a notification, or a batch (not a
    response or a request, which JSON-RPC lets go in any order)."""
    return type(message) is not dict or "id" not in message


class Ordered:
    """Jobs run one at a time, in the order submitted, by :meth:`run` (one task of the owner's).

    Attributes:
        busy: a job is pending or running (a message that :func:`keeps_place` must then be a job too).
    """

    def __init__(self) -> None:
        self._jobs: deque[Callable[[], Awaitable[None]]] = deque()
        self._wake = anyio.Event()
        self._closed = False
        self._limiter = anyio.CapacityLimiter(1)  # one worker thread: jobs' work is done in order too

    @property
    def busy(self) -> bool:
        """A job is pending or running."""
        return bool(self._jobs)

    def submit(self, job: Callable[[], Awaitable[None]]) -> None:
        """Run ``job()`` after every job submitted before it (returns at once)."""
        self._jobs.append(job)
        self._wake.set()

    async def run(self) -> None:
        """Run the jobs as they come, until :meth:`close` and the last of them has run."""
        jobs = self._jobs
        while True:
            while jobs:
                await jobs[0]()
                jobs.popleft()
            if self._closed:
                return
            self._wake = anyio.Event()
            await self._wake.wait()

    def close(self) -> None:
        """No more jobs: :meth:`run` returns once those submitted have run."""
        self._closed = True
        self._wake.set()

    async def in_thread(self, func: Callable[..., T], *args: Any) -> T:
        """``func(*args)`` in the worker thread (cancelling the wait abandons the thread's result)."""
        return await anyio.to_thread.run_sync(func, *args, limiter=self._limiter, abandon_on_cancel=True)
