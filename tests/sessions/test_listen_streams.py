"""``subscriptions/listen`` streams through the guard (MCP 2026-07-28; red team 34).

A client's own stream goes upstream under an id of the guard's (``peer.inflight``), and the upstream stamps
every frame of it with that id (``_meta`` ``io.modelcontextprotocol/subscriptionId``): ``wrap`` stamps
each frame again with the client's id, which is what the client matches frames by (the SDK's
``Client.listen()`` waited for an acknowledgement that never came). A 2026-07-28 envelope ``wrap``
drops (more than ``MAX_ENVELOPES``) takes its listen stream of the guard's own with it, and the upstream
is told (``notifications/cancelled``): a client cannot make the upstream hold streams without bound.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_guard.wire.meta import MAX_ENVELOPES, SUBSCRIPTION_ID_KEY
from tests.harness import MemoryLink, ScriptedUpstream, name, running_guard

pytestmark = pytest.mark.anyio

MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
TOOLS = [{"name": "echo", "inputSchema": {"type": "object"}}]


class Listening(ScriptedUpstream):
    """A 2026-07-28 upstream that offers ``subscriptions/listen``: it acknowledges each stream (stamped with the
    stream's request id) and keeps it open; :meth:`changed` sends ``tools/list_changed`` on every open one."""

    def __init__(self) -> None:
        super().__init__(TOOLS)
        self.streams: list[tuple[MemoryLink, Any]] = []

    async def handle(self, link: MemoryLink, message: dict[str, Any]) -> bool:
        if message["method"] == "subscriptions/listen":
            self.streams.append((link, message["id"]))
            frame = {
                "jsonrpc": "2.0",
                "method": "notifications/subscriptions/acknowledged",
                "params": {"_meta": {SUBSCRIPTION_ID_KEY: message["id"]}, "notifications": {"toolsListChanged": True}},
            }
            await self.send(link, frame)
            return True
        if message["method"] == "tools/list":
            result = {"tools": self.tools, "resultType": "complete", "ttlMs": 60_000}
            await self.send(link, {"jsonrpc": "2.0", "id": message["id"], "result": result})
            return True
        return await super().handle(link, message)

    async def changed(self) -> None:
        for link, stream in self.streams:
            frame = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            await self.send(link, {**frame, "params": {"_meta": {SUBSCRIPTION_ID_KEY: stream}}})

    def cancelled(self) -> list[Any]:
        return [m["params"]["requestId"] for m in self.received if m.get("method") == "notifications/cancelled"]


async def frame_of(client: Any, method: str) -> dict[str, Any]:
    with anyio.fail_after(5):
        while True:
            found = [m for m in client.notifications if m.get("method") == method]
            if found:
                client.notifications.remove(found[0])
                return found[0]
            await client.read()


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_a_clients_listen_stream_is_acknowledged_under_its_own_id(command: str) -> None:
    upstream = Listening()
    async with running_guard(command, upstream, initialize=False) as client:
        params = {"_meta": MODERN, "notifications": {"toolsListChanged": True}}
        await client.send({"jsonrpc": "2.0", "id": "L1", "method": "subscriptions/listen", "params": params})
        acknowledged = await frame_of(client, "notifications/subscriptions/acknowledged")
        assert acknowledged["params"]["_meta"][SUBSCRIPTION_ID_KEY] == "L1"
        if command == "wrap":  # (serve serves the client's streams itself)
            upstream_id = upstream.streams[0][1]
            assert upstream_id != "L1"  # it went upstream under an id of the guard's ...
            await upstream.changed()
            changed = await frame_of(client, "notifications/tools/list_changed")
            assert changed["params"]["_meta"][SUBSCRIPTION_ID_KEY] == "L1"  # ... and its frames come back under L1
            assert not any(upstream_id in str(m) for m in client.notifications + client.seen)
        await client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "L1"}})
        assert "result" in await client.request("ping", {"_meta": MODERN})
        assert client.answers_to("L1") == []  # a cancelled stream is not answered


async def test_a_frame_naming_no_stream_of_the_clients_is_dropped() -> None:
    upstream = Listening()
    async with running_guard("wrap", upstream, initialize=False) as client:
        await client.request("ping", {"_meta": MODERN})
        frame = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        await upstream.send(upstream.links[0], {**frame, "params": {"_meta": {SUBSCRIPTION_ID_KEY: "nobody"}}})
        assert "result" in await client.request("ping", {"_meta": MODERN})
        assert not [m for m in client.notifications if m.get("method") == "notifications/tools/list_changed"]


async def test_an_envelope_wrap_drops_takes_its_listen_stream_with_it() -> None:
    upstream = Listening()
    envelopes = MAX_ENVELOPES + 3
    async with running_guard("wrap", upstream, initialize=False) as client:
        for n in range(envelopes):
            meta = {**MODERN, "io.modelcontextprotocol/clientCapabilities": {"experimental": {f"x{n}": {}}}}
            answer = await client.request("tools/call", {"name": name("wrap", "echo"), "arguments": {}, "_meta": meta})
            assert "result" in answer
        with anyio.fail_after(5):
            while len(upstream.streams) < envelopes or len(upstream.cancelled()) < envelopes - MAX_ENVELOPES:
                await anyio.sleep(0.01)
        await anyio.sleep(0.05)
        cancelled = upstream.cancelled()
        streams = [stream for _, stream in upstream.streams]
        assert len(cancelled) == envelopes - MAX_ENVELOPES  # the tables dropped, oldest first, and no others
        assert cancelled == streams[: len(cancelled)]
