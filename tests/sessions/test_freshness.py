"""When a 2026-07-28 listing goes stale (sessions.freshness.Listed), the one record of both commands."""

from __future__ import annotations

import math
from typing import Any

import anyio
import pytest

from mcp_guard.peer.requests import ListingFailed, RequestFailed
from mcp_guard.sessions.freshness import (
    ACKNOWLEDGED,
    FailedBefore,
    Listed,
    frames_heard,
    keep_listening,
    list_unless_current,
    renew,
)

pytestmark = pytest.mark.anyio


def test_a_listing_lasts_its_ttl_and_none_without_one() -> None:
    listed = Listed()
    assert not listed.fresh("tools", 0.0)  # never listed
    listed.listed("tools", 10.0, 5.0)
    assert listed.fresh("tools", 14.9) and not listed.fresh("tools", 15.0)
    assert listed.ttl_ms["tools"] == 5000 and listed.requested["tools"] == 10.0
    listed.listed("tools", 20.0, None)
    assert not listed.fresh("tools", 20.0) and listed.ttl_ms["tools"] == 0


def test_an_acknowledgement_makes_only_later_listings_last() -> None:
    """A change between a listing and the listen stream's acknowledgement reaches no stream: the listing
    made before the acknowledgement keeps its ttlMs; the next one lasts until a change."""
    listed = Listed()
    listed.listed("tools", 0.0, 0.0)
    listed.acknowledged({"tools"})
    assert not listed.fresh("tools", 0.0)
    listed.listed("tools", 1.0, 0.0)
    assert listed.fresh("tools", 1e9) and listed.expires["tools"] == math.inf
    before = listed.changes["tools"]
    listed.changed("tools")
    assert not listed.fresh("tools", 2.0) and listed.changes["tools"] == before + 1


def test_a_stream_that_ends_stales_only_the_kinds_it_reported() -> None:
    listed = Listed()
    listed.acknowledged({"tools"})
    listed.listed("tools", 0.0, None)
    listed.listed("prompts", 0.0, 60.0)
    listed.deaf()
    assert not listed.fresh("tools", 1.0)  # changes may have been missed
    assert listed.fresh("prompts", 1.0)  # it was on its ttlMs all along
    assert listed.listening == set()
    listed.listed("tools", 2.0, 30.0)
    assert listed.fresh("tools", 31.0) and not listed.fresh("tools", 32.0)  # back on its ttlMs


async def test_renew_lists_again_when_a_change_overtakes_the_listing() -> None:
    """A change reported while a listing is fetched, or while it is put in force, makes it again (at most TRIES)."""
    listed = Listed()
    fetched: list[int] = []

    async def fetch() -> tuple[int, float | None]:
        fetched.append(len(fetched))
        if len(fetched) == 1:
            listed.changed("tools")  # during the first fetch
        return len(fetched), 60.0

    async def put(listing: int, mark: int) -> int:
        if listing == 2:
            listed.changed("tools")  # while the second is put in force
        return listing

    assert await renew(listed, "tools", fetch, put) == 3
    assert listed.fresh("tools", listed.requested["tools"] + 1)


async def test_renew_gives_up_on_an_upstream_that_keeps_changing() -> None:
    listed = Listed()

    async def fetch() -> tuple[None, float | None]:
        listed.changed("prompts")
        return None, None

    async def put(listing: None, mark: int) -> None:
        raise AssertionError("never put in force")

    with pytest.raises(ListingFailed, match="prompts kept changing"):
        await renew(listed, "prompts", fetch, put)
    assert not listed.fresh("prompts", 0.0)


async def test_a_request_takes_a_listing_requested_after_it_arrived() -> None:
    """Two requests at once, no ttlMs: one listing serves both (the second waits for it); one that arrives
    after it was requested, or after a change, gets a listing of its own."""
    listed = Listed()
    gate = anyio.Event()
    fetches = 0

    async def fetch() -> tuple[int, float | None]:
        nonlocal fetches
        fetches += 1
        await gate.wait()
        return fetches, None

    async def put(listing: int, mark: int) -> int:
        return listing

    results: list[int | None] = []

    async def request(since: float) -> None:
        results.append(await list_unless_current(listed, "tools", since, fetch, put))

    async with anyio.create_task_group() as tg:
        since = anyio.current_time()
        tg.start_soon(request, since)
        tg.start_soon(request, since)
        await anyio.sleep(0.01)
        gate.set()
    assert fetches == 1 and sorted(results, key=str) == [1, None]  # the second took the first's listing
    await anyio.sleep(0.001)
    since = anyio.current_time()
    await anyio.sleep(0.001)
    assert await list_unless_current(listed, "tools", anyio.current_time(), fetch, put) == 2  # arrived later
    assert await list_unless_current(listed, "tools", since, fetch, put) is None  # listing 2 came after it
    listed.changed("tools")
    assert await list_unless_current(listed, "tools", since, fetch, put) == 3  # a change: listed again


async def test_a_failed_listing_fails_the_requests_that_waited_for_it_once() -> None:
    listed = Listed()

    async def fetch() -> tuple[int, float | None]:
        raise RequestFailed("the upstream did not answer within 3 s")

    async def put(listing: int, mark: int) -> int:
        return listing

    since = anyio.current_time()
    with pytest.raises(ListingFailed, match="did not answer") as first:
        await list_unless_current(listed, "tools", since, fetch, put)
    assert not isinstance(first.value, FailedBefore)
    with pytest.raises(FailedBefore, match="did not answer"):  # it waited for that one: not tried again
        await list_unless_current(listed, "tools", since, fetch, put)
    await anyio.sleep(0.001)
    with pytest.raises(ListingFailed) as later:  # a later request tries again
        await list_unless_current(listed, "tools", anyio.current_time(), fetch, put)
    assert not isinstance(later.value, FailedBefore)


def test_a_listen_streams_frames_are_heard_by_the_record() -> None:
    """The acknowledgement's flags become the kinds listened to; a list_changed stales its kind; anything
    else (a resource update, an unknown kind, a look-alike method) changes nothing."""
    listed = Listed()
    flags = {"toolsListChanged": True, "promptsListChanged": False, "resourceSubscriptions": ["x"]}
    assert listed.heard(ACKNOWLEDGED, {"notifications": flags}) is None
    assert listed.listening == {"tools"}
    listed.listed("tools", 0.0, None)
    assert listed.fresh("tools", 1e9)
    for method in ("notifications/resources/updated", "notifications/roots/list_changed", "tools/list_changed"):
        assert listed.heard(method, {}) is None
    assert listed.fresh("tools", 1e9)
    assert listed.heard("notifications/tools/list_changed", {}) == "tools"
    assert not listed.fresh("tools", 0.0)


async def test_the_guards_own_listen_stream_asks_for_its_kinds_hears_its_frames_and_ends_deaf() -> None:
    """``keep_listening`` and ``frames_heard``: the one listen-stream code of ``wrap`` and ``serve``."""
    listed = Listed()
    listed.listen_scope = anyio.CancelScope()
    changes: list[str] = []
    heard = frames_heard(listed, changes.append, "upstream s: ")
    asked: list[dict[str, Any]] = []

    async def listen(params: dict[str, Any]) -> dict[str, Any] | None:
        asked.append(params)
        heard(ACKNOWLEDGED, {"notifications": {"toolsListChanged": True}})  # prompts not honoured
        assert listed.listening == {"tools"}
        heard("notifications/prompts/list_changed", {})
        heard("notifications/tools/list_changed", {})
        return {"jsonrpc": "2.0", "id": "x", "result": {}}  # the upstream ended the stream

    await keep_listening(listed, listen, {"v": 1}, ("tools", "prompts"), "upstream s: ")
    assert asked == [{"_meta": {"v": 1}, "notifications": {"toolsListChanged": True, "promptsListChanged": True}}]
    assert changes == ["prompts", "tools"]  # (each change heard is made stale and told, in order)
    assert not listed.listening  # ended: deaf, its listings last their ttlMs again
