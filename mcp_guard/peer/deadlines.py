"""Deadlines of forwarded requests (``--request-timeout``): one sweeper, restarted by progress.

Both ``wrap`` and ``serve`` answer a forwarded request the upstream has not answered within the
timeout with an error, and cancel it upstream. :class:`Deadlines` keeps when each one is due, in
due order (a dict kept sorted by moving a restarted one to the end: every deadline is ``now +
timeout``), restarts one on each ``notifications/progress`` for its ``progressToken``, and
:meth:`Deadlines.expired` yields the keys as they fall due: one task per upstream, not one per
request. Times are ``time.monotonic()`` (the clock asyncio's loop reads; cheap on the hot path);
waits are relative, so any anyio backend serves. What an expiry does is the owner's.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import anyio

from ..wire.jsonrpc import id_key, valid_id

__all__ = ["Deadlines"]

Key = tuple[bool, Any]


class Deadlines:
    """When each timed request of one upstream is due.

    Args:
        timeout: seconds a request may wait for its answer, counted again from each progress
            notification for it.
    """

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._due: dict[Key, tuple[float, Key | None]] = {}  # request key -> (deadline, progress token key)
        self._progress: dict[Key, Key] = {}  # progress token key -> request key
        self._added = anyio.Event()

    def __len__(self) -> int:
        return len(self._due)

    def start(self, key: Key, params: Any) -> None:
        """Time the request ``key`` (its ``params._meta.progressToken``, if any, restarts it)."""
        meta = params.get("_meta") if type(params) is dict else None
        token = meta.get("progressToken") if type(meta) is dict else None
        token_key = id_key(token) if token is not None and valid_id(token) else None
        if key in self._due:  # an id used again
            self.done(key)
        self._due[key] = (time.monotonic() + self.timeout, token_key)
        if token_key is not None:
            self._progress[token_key] = key
        if not self._added.is_set():
            self._added.set()

    def done(self, key: Key) -> None:
        """The request ``key`` is answered or given up: no longer timed."""
        entry = self._due.pop(key, None)
        if entry is not None and entry[1] is not None:
            self._progress.pop(entry[1], None)

    def progressed(self, params: Any) -> None:
        """A ``notifications/progress`` (its ``params``): the request it belongs to gets its whole timeout again."""
        token = params.get("progressToken") if type(params) is dict else None
        key = self._progress.get(id_key(token)) if valid_id(token) else None
        entry = self._due.pop(key, None) if key is not None else None
        if entry is not None and key is not None:  # moved to the end: deadlines stay in order
            self._due[key] = (time.monotonic() + self.timeout, entry[1])

    def clear(self) -> None:
        """The upstream went away: nothing is timed any more."""
        self._due.clear()
        self._progress.clear()

    async def expired(self) -> AsyncIterator[Key]:
        """Yield each request key as its deadline passes (no longer timed then), in due order; forever."""
        while True:
            if not self._due:
                self._added = anyio.Event()
                await self._added.wait()
                continue
            key, (deadline, _token) = next(iter(self._due.items()))
            delay = deadline - time.monotonic()
            if delay > 0:
                await anyio.sleep(delay)
                continue
            self.done(key)
            yield key
