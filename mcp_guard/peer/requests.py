"""The guard's own requests to one upstream: ids, the pending map, answers, and list paging.

The guard asks an upstream things of its own (the replayed ``initialize``, listings,
``server/discover``, ``subscriptions/listen``). Their ids are strings with a random nonce
(``mcp-guard-<nonce>-<n>``), minted here and nowhere else, so they never meet a client's id.
An answer is matched to its request by :meth:`OwnRequests.answer`; an unreadable line that
carried the id fails it (:meth:`OwnRequests.fail`); an upstream that went away fails them all
(:meth:`OwnRequests.fail_all`). Nothing here sends or reads a line: the owner does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

import anyio

from ..errors import GuardError
from ..wire.jsonrpc import id_key

__all__ = ["MAX_LIST_PAGES", "IdMint", "ListingFailed", "OwnRequests", "PendingRequest", "RequestFailed", "list_pages"]

MAX_LIST_PAGES: Final = 10_000
"""A guard-initiated listing that pages more often than this is abandoned (a cursor loop)."""


class RequestFailed(GuardError):
    """A request of the guard's own got no usable answer (error, timeout, upstream gone)."""


class ListingFailed(RequestFailed):
    """The guard could not list the upstream's tools itself (error, timeout, upstream gone)."""


@dataclass
class PendingRequest:
    """A request of the guard's own awaiting its answer: ``event`` is set once ``response`` or
    ``failure`` (why there is none; ``None`` with no response: the upstream went away) is filled in."""

    event: anyio.Event = field(default_factory=anyio.Event)
    response: dict[str, Any] | None = None
    failure: str | None = None


class IdMint:
    """Ids the guard gives messages of its own: ``mcp-guard-<nonce>-<n>``, a random nonce per mint.

    Used for the guard's own requests, for requests it forwards under a new id, and for an
    upstream's requests to the client under an id of the session's: never equal to a peer's id
    by chance.
    """

    def __init__(self) -> None:
        self._nonce = os.urandom(8).hex()  # (secrets.token_hex without its imports: issue 14)
        self._counter = 0

    def new_id(self) -> str:
        """A fresh id."""
        self._counter += 1
        return f"mcp-guard-{self._nonce}-{self._counter}"


class OwnRequests(IdMint):
    """The guard's own requests in flight at one upstream (and the mint of their ids).

    Attributes:
        pending: request key (``jsonrpc.id_key``) → :class:`PendingRequest`.
    """

    def __init__(self) -> None:
        super().__init__()
        self.pending: dict[tuple[bool, Any], PendingRequest] = {}

    def open(self, request_id: Any) -> PendingRequest:
        """Note a request of the guard's own as in flight; its answer is awaited on the returned record."""
        pending = self.pending[id_key(request_id)] = PendingRequest()
        return pending

    def close(self, request_id: Any) -> None:
        """The request is no longer awaited (answered, timed out, or given up)."""
        self.pending.pop(id_key(request_id), None)

    def answer(self, key: tuple[bool, Any], response: dict[str, Any]) -> bool:
        """An upstream response with ``key``: whether it answered a request of the guard's own (then taken)."""
        pending = self.pending.pop(key, None)
        if pending is None:
            return False
        pending.response = response
        pending.event.set()
        return True

    def fail(self, key: tuple[bool, Any] | None, reason: str) -> bool:
        """The answer to ``key`` cannot be read: whether it was the guard's own request (then failed so)."""
        pending = self.pending.pop(key, None) if key is not None else None
        if pending is None:
            return False
        pending.failure = reason
        pending.event.set()
        return True

    def fail_all(self, reason: str | None = None) -> None:
        """The upstream went away: every request of the guard's own ends now (with ``reason``, when given)."""
        for pending in self.pending.values():
            if reason is not None and pending.failure is None and pending.response is None:
                pending.failure = reason
            pending.event.set()


async def list_pages(
    request: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]],
    method: str,
    member: str,
    meta: dict[str, Any] | None = None,
    *,
    failure: type[Exception] = ListingFailed,
) -> tuple[list[Any], float | None]:
    """Every page of a list method (``tools/list``, ``prompts/list``, ...), following ``nextCursor``.

    Args:
        request: sends one request of the guard's own and returns its ``result``.
        method: the list method; member: the result's list (``tools``, ``prompts``, ...).
        meta: ``_meta`` for each page's request (a 2026-07-28 envelope), or None.
        failure: the exception raised when the listing cannot be completed.

    Returns:
        The items of every page, and the pages' shortest ``ttlMs`` in seconds (None: not given).

    Raises:
        ``failure``: a page without the list, a cursor seen before (a loop), more than
            :data:`MAX_LIST_PAGES` pages; and whatever ``request`` raises.
    """
    items: list[Any] = []
    ttl: float | None = None
    cursor: Any = None
    seen: set[str] = set()
    for _page in range(MAX_LIST_PAGES):
        params: dict[str, Any] = {}
        if cursor is not None:
            params["cursor"] = cursor
        if meta:
            params["_meta"] = meta
        result = await request(method, params)
        page = result.get(member)
        if type(page) is not list:
            raise failure(f"the upstream's {method} result has no `{member}` list")
        items.extend(page)
        page_ttl = result.get("ttlMs")
        if (type(page_ttl) is int or type(page_ttl) is float) and page_ttl >= 0:
            seconds = float(page_ttl) / 1000
            ttl = seconds if ttl is None else min(ttl, seconds)
        cursor = result.get("nextCursor")
        if cursor is None:
            return items, ttl
        marker = json.dumps(cursor, sort_keys=True)
        if marker in seen:
            raise failure(f"the upstream's {method} cursors loop")
        seen.add(marker)
    raise failure(f"the upstream's {method} has more than {MAX_LIST_PAGES} pages")
