"""The guard's own listen streams (``peer.listens.OwnListens``): one mechanism for ``wrap`` and ``serve``."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_guard.peer.listens import OwnListens
from mcp_guard.peer.requests import OwnRequests, RequestFailed
from mcp_guard.wire.jsonrpc import id_key
from mcp_guard.wire.meta import SUBSCRIPTION_ID_KEY

pytestmark = pytest.mark.anyio


class Upstream:
    """Records what the guard sends; ``down`` makes sending fail as with no upstream."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.down = False

    async def send(self, message: dict[str, Any]) -> None:
        if self.down:
            raise RequestFailed("no upstream")
        self.sent.append(message)


def frame(stream: Any, method: str = "notifications/tools/list_changed") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": {"_meta": {SUBSCRIPTION_ID_KEY: stream}}}


async def opened(upstream: Upstream) -> Any:
    with anyio.fail_after(5):
        while not any(m.get("method") == "subscriptions/listen" for m in upstream.sent):
            await anyio.sleep(0)
    return next(m["id"] for m in upstream.sent if m.get("method") == "subscriptions/listen")


async def test_frames_reach_their_streams_handler_only_and_a_stream_given_up_is_cancelled_upstream() -> None:
    own, upstream = OwnRequests(), Upstream()
    listens: OwnListens[str] = OwnListens(own, upstream.send)
    async with anyio.create_task_group() as tg:
        tg.start_soon(listens.listen, {"notifications": {"toolsListChanged": True}}, "table-a")
        stream = await opened(upstream)
        assert len(listens) == 1
        assert listens.handler_of(frame(stream)) == (
            "table-a",
            "notifications/tools/list_changed",
            frame(stream)["params"],
        )
        assert listens.handler_of(frame("another")) is None  # no stream of the guard's
        assert listens.handler_of({**frame(stream), "id": 1}) is None  # a request is no frame
        assert listens.handler_of({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}) is None
        tg.cancel_scope.cancel()  # the guard gives the stream up
    assert len(listens) == 0 and own.pending == {}
    assert upstream.sent[-1] == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": stream, "reason": "mcp-guard no longer needs this stream"},
    }


async def test_a_stream_the_upstream_ends_returns_its_response_and_is_not_cancelled() -> None:
    own, upstream = OwnRequests(), Upstream()
    listens: OwnListens[str] = OwnListens(own, upstream.send)
    result: list[Any] = []

    async def run() -> None:
        result.append(await listens.listen({}, "t"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        stream = await opened(upstream)
        response = {"jsonrpc": "2.0", "id": stream, "error": {"code": -32601, "message": "no such method"}}
        assert own.answer(id_key(stream), response)
    assert result == [response]
    assert [m.get("method") for m in upstream.sent] == ["subscriptions/listen"]


async def test_no_upstream_means_no_stream() -> None:
    own, upstream = OwnRequests(), Upstream()
    upstream.down = True
    listens: OwnListens[str] = OwnListens(own, upstream.send)
    assert await listens.listen({}, "t") is None
    assert len(listens) == 0 and own.pending == {}
