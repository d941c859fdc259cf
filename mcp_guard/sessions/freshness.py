"""When an upstream's listings go stale: one record per upstream connection and 2026-07-28 envelope.

In the 2026-07-28 era ``notifications/*/list_changed`` reaches only ``subscriptions/listen``
streams, so a listing is fresh until its ``ttlMs`` has passed (absent: 0, stale at once), or for
as long as a listen stream of the guard's own reports the changes of its kind. Both commands keep
their listings' freshness in a :class:`Listed`: ``wrap`` one per tool table (kind ``tools``),
``serve`` one per envelope and upstream connection (every kind). The listing procedure (:func:`renew`,
:func:`list_unless_current`) and the guard's own listen stream (:func:`keep_listening`) are one code for both;
their I/O is the caller's (the functions given them).

A listen stream's acknowledgement makes only the listings requested *after* it last for ever: a
listing made before it (the stream is opened after the first listing) may have missed a change
that came between the listing and the acknowledgement, so it still lasts its ``ttlMs``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final, TypeVar

import anyio

from ..peer.requests import ListingFailed, RequestFailed

__all__ = [
    "ACKNOWLEDGED",
    "KINDS",
    "LISTEN_FLAGS",
    "TRIES",
    "FailedBefore",
    "Listed",
    "frames_heard",
    "keep_listening",
    "list_unless_current",
    "renew",
]

log = logging.getLogger("mcp_guard")

T = TypeVar("T")
R = TypeVar("R")

TRIES: Final = 3
"""Listings of one kind a change may overtake in a row before :func:`renew` gives up."""

KINDS: Final = ("tools", "prompts", "resources")
"""The list kinds of ``notifications/{kind}/list_changed``; ``resources`` covers resource templates too."""

LISTEN_FLAGS: Final = {
    "tools": "toolsListChanged",
    "prompts": "promptsListChanged",
    "resources": "resourcesListChanged",
}
"""The ``subscriptions/listen`` filter flag of each list kind (MCP 2026-07-28, subscriptions)."""

ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
"""The first frame of a listen stream: the filter flags the server honours, under ``notifications``."""


class Listed:
    """When each listing of one upstream connection (for one 2026-07-28 envelope) goes stale.

    Args:
        connection: the upstream connection these listings came from (``UpstreamPeer.connection``).

    Attributes:
        connection: as given.
        expires: per kind, when its listing stops being fresh (``anyio.current_time()``;
            ``inf`` while a listen stream reports its changes; absent: never listed).
        requested: per kind, when the listing now in force was requested (``anyio.current_time()``;
            absent once a change made it stale).
        ttl_ms: per kind, the ``ttlMs`` the upstream gave (0 when it gave none).
        changes: per kind, bumped by each change the upstream reported (a listing that a
            change overtook is made again).
        failed: per kind, when its last listing failed (``anyio.current_time()``; a request that
            waited for that listing is not held up by another try), and ``failure``, why.
        listening: the kinds the guard's own listen stream at this upstream acknowledged.
        listen_scope: that stream's cancel scope (``None``: none opened on this connection).
    """

    def __init__(self, connection: int = 0) -> None:
        self.connection = connection
        self.expires: dict[str, float] = {}
        self.requested: dict[str, float] = {}
        self.ttl_ms: dict[str, int] = {}
        self.changes: dict[str, int] = dict.fromkeys(KINDS, 0)
        self.failed: dict[str, float] = {}
        self.failure: dict[str, str] = {}
        self._locks: dict[str, anyio.Lock] = {}
        self.listening: set[str] = set()
        self.listen_scope: anyio.CancelScope | None = None

    def fresh(self, kind: str, now: float) -> bool:
        """Whether the listing of ``kind`` may still be used at ``now`` (``anyio.current_time()``)."""
        return self.expires.get(kind, -math.inf) > now

    def current(self, kind: str, since: float, now: float) -> bool:
        """Whether the listing of ``kind`` may serve a request that arrived at ``since``: it is fresh, or it
        was requested after the request arrived (and no change came since), as good as one of its own."""
        return self.fresh(kind, now) or self.requested.get(kind, -math.inf) >= since

    def lock(self, kind: str) -> anyio.Lock:
        """One listing of ``kind`` at a time: a request that needs one waits for the one under way."""
        lock = self._locks.get(kind)
        if lock is None:
            lock = self._locks[kind] = anyio.Lock()
        return lock

    def failed_now(self, kind: str, reason: str) -> None:
        """A listing of ``kind`` failed (``reason``): nothing is served from the one before."""
        self.failed[kind], self.failure[kind] = anyio.current_time(), reason
        self.expires.pop(kind, None)
        self.requested.pop(kind, None)
        self.ttl_ms.pop(kind, None)

    def listed(self, kind: str, started: float, ttl: float | None) -> None:
        """A listing of ``kind`` requested at ``started`` (``ttl`` seconds, or None: not given) is in."""
        self.requested[kind] = started
        self.ttl_ms[kind] = round(ttl * 1000) if ttl is not None else 0
        self.expires[kind] = math.inf if kind in self.listening else started + (ttl or 0.0)

    def acknowledged(self, kinds: set[str]) -> None:
        """The guard's listen stream acknowledged ``kinds``: their next listings last until a change."""
        self.listening |= kinds

    def heard(self, method: str, params: dict[str, Any]) -> str | None:
        """A frame of the guard's own listen stream at this upstream: its acknowledgement (the kinds whose
        flags it honours are listened to from now on: :meth:`acknowledged`), or a ``list_changed`` of a
        kind (:meth:`changed`). Returns that kind, stale now, or None."""
        if method == ACKNOWLEDGED:
            honored = params.get("notifications")
            if type(honored) is dict:
                self.acknowledged({k for k, flag in LISTEN_FLAGS.items() if honored.get(flag) is True})
            return None
        kind = method.removeprefix("notifications/").removesuffix("/list_changed")
        if kind not in KINDS or method != f"notifications/{kind}/list_changed":
            return None
        self.changed(kind)
        return kind

    def changed(self, kind: str) -> None:
        """The upstream said ``kind`` changed: list it again before use."""
        self.changes[kind] += 1
        self.expires[kind] = -math.inf
        self.requested.pop(kind, None)

    def silence(self) -> None:
        """The record is dropped (its envelope or table is): its listen stream, if any, is cancelled."""
        if self.listen_scope is not None:
            self.listen_scope.cancel()

    def deaf(self) -> None:
        """The listen stream ended: the kinds it reported may have missed changes, and are listed again (the
        others kept their ``ttlMs`` all along)."""
        for kind in self.listening:
            if kind in self.expires:
                self.expires[kind] = -math.inf
                self.requested.pop(kind, None)
        self.listening.clear()


async def renew(
    listed: Listed,
    kind: str,
    fetch: Callable[[], Awaitable[tuple[T, float | None]]],
    put: Callable[[T, int], Awaitable[R]],
) -> R:
    """List ``kind`` into ``listed`` until no change the upstream reports overtakes the listing.

    ``fetch()`` makes one listing (every page: ``peer.requests.list_pages``) and returns it with its
    ``ttlMs`` in seconds (None: not given); ``put(listing, mark)`` puts it in force (it may wait: a big
    tool listing is classified in the worker thread) and returns what the caller wants back; ``mark``
    is :attr:`Listed.changes` of ``kind`` when the listing was requested (a ``put`` that waits can tell
    whether a change came meanwhile). A listing that a change overtook, before or while it was put in
    force, may describe what the upstream has replaced: it is made again, at most :data:`TRIES` times.
    ``wrap`` (sessions.listings) and ``serve`` (sessions.modern_era) list through this one procedure.

    Raises:
        ListingFailed: the upstream kept changing (``TRIES`` listings overtaken in a row).
        Whatever ``fetch`` and ``put`` raise.
    """
    for _attempt in range(TRIES):
        mark = listed.changes[kind]
        started = anyio.current_time()
        listing, ttl = await fetch()
        if listed.changes[kind] != mark:
            continue  # the upstream said it changed meanwhile: this listing may be stale already
        listed.listed(kind, started, ttl)
        result = await put(listing, mark)
        if listed.changes[kind] == mark:
            return result
    raise ListingFailed(f"the upstream's {kind} kept changing while the guard listed them")


class FailedBefore(ListingFailed):
    """The listing a request waited for (requested after it arrived) failed: it is not tried again for it."""


async def list_unless_current(
    listed: Listed,
    kind: str,
    since: float,
    fetch: Callable[[], Awaitable[tuple[T, float | None]]],
    put: Callable[[T, int], Awaitable[R]],
) -> R | None:
    """List ``kind`` into ``listed`` for a request that arrived at ``since`` (``anyio.current_time()``),
    unless a listing that serves it is in: ``put``'s result, or None when none was made.

    One listing of a kind at a time (:meth:`Listed.lock`): a request that finds one under way waits
    for it and takes its outcome, when it was requested after the request arrived
    (:meth:`Listed.current`): its listing, or its failure (:class:`FailedBefore`, not tried again for
    it, so a hung upstream holds each request up once). Otherwise it lists (:func:`renew`). ``wrap``'s
    tool tables and ``serve``'s envelopes wait for each other's listings through this one function.

    Raises:
        FailedBefore: a listing requested after ``since`` failed (its reason).
        ListingFailed: this listing failed (:func:`renew`; ``fetch``'s ``RequestFailed`` is one).
    """
    async with listed.lock(kind):
        if listed.current(kind, since, anyio.current_time()):
            return None
        if listed.failed.get(kind, -math.inf) >= since:
            raise FailedBefore(listed.failure.get(kind, "the listing the guard was waiting for did not complete"))
        try:
            return await renew(listed, kind, fetch, put)
        except RequestFailed as exc:
            listed.failed_now(kind, str(exc))
            if isinstance(exc, ListingFailed):
                raise
            raise ListingFailed(str(exc)) from exc


def frames_heard(listed: Listed, on_change: Callable[[str], None], label: str) -> Callable[[str, dict[str, Any]], None]:
    """The handler of the frames of the guard's own listen stream for ``listed`` (``handler(method, params)``):
    each is heard by the record (:meth:`Listed.heard`); a change of a kind it listens to calls ``on_change(kind)``
    (``wrap``: the table is emptied; ``serve``: that kind is listed again); the acknowledgement is logged,
    ``label`` first (``"upstream NAME: "``)."""

    def heard(method: str, params: dict[str, Any]) -> None:
        kind = listed.heard(method, params)
        if kind is not None:
            on_change(kind)
        elif method == ACKNOWLEDGED:
            shown = ", ".join(sorted(listed.listening)) or "nothing"
            log.info("%slistening to its list changes (%s) on a listen stream", label, shown)

    return heard


async def keep_listening(
    listed: Listed,
    listen: Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]],
    meta: dict[str, Any],
    kinds: Iterable[str],
    label: str,
) -> None:
    """Keep the guard's own ``subscriptions/listen`` stream for ``listed`` (one upstream connection and
    2026-07-28 envelope ``meta``), asking for the changes of ``kinds``, until it ends or ``listed.listen_scope``
    (set by the caller before it spawns this) is cancelled. ``listen(params)`` opens it at the upstream, its frames
    going to a :func:`frames_heard` handler (``peer.listens.OwnListens.listen``), and returns the response that
    ended it (None: the upstream went away). Whatever ends it, the record is deaf again
    (:meth:`Listed.deaf`: changes may have been missed, so its listings last their ``ttlMs`` again). Both
    commands: ``wrap`` per tool table (``tools``), ``serve`` per envelope and upstream (what it offers)."""
    scope = listed.listen_scope
    assert scope is not None, "the caller sets listen_scope before it spawns the stream"
    flags = {LISTEN_FLAGS[k]: True for k in KINDS if k in kinds}
    response: dict[str, Any] | None = None
    try:
        with scope:  # (cancelled when the envelope is dropped: the upstream is told, OwnListens.listen)
            response = await listen({"_meta": meta, "notifications": flags})
    finally:
        listed.deaf()
    if response is not None and "error" in response:
        log.debug("%soffers no subscriptions/listen; its lists are renewed by their ttlMs", label)
    elif response is not None and not scope.cancel_called:
        log.info("%sended the guard's listen stream; its lists are renewed by their ttlMs", label)
