"""A call is judged only against a complete listing (red team 33): a client that listed the first page of a
paginated server alone must not have a name that another page lists again judged by the first page's schema
(fail open); the guard lists every page itself first, and refuses the name as listed more than once."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.harness import MemoryLink, ScriptedUpstream, name, running_guard

pytestmark = pytest.mark.anyio

PAGE_1 = [{"name": "a", "inputSchema": {"type": "object"}}]
PAGE_2 = [
    {"name": "a", "inputSchema": {"type": "object", "properties": {"x": {"type": "integer", "maximum": 5}}}},
    {"name": "b", "inputSchema": {"type": "object", "properties": {"x": {"type": "integer", "maximum": 5}}}},
]


class Paged(ScriptedUpstream):
    """Lists ``PAGE_1`` with a ``nextCursor``, then ``PAGE_2`` (or ``pages`` given)."""

    def __init__(self, pages: list[list[dict[str, Any]]]) -> None:
        super().__init__(PAGE_1 + PAGE_2)
        self.pages = pages

    async def handle(self, link: MemoryLink, message: dict[str, Any]) -> bool:
        if message["method"] != "tools/list":
            return await super().handle(link, message)
        cursor = (message.get("params") or {}).get("cursor")
        index = 0 if cursor is None else int(cursor)
        result: dict[str, Any] = {"tools": self.pages[index]}
        if index + 1 < len(self.pages):
            result["nextCursor"] = str(index + 1)
        await self.send(link, {"jsonrpc": "2.0", "id": message["id"], "result": result})
        return True

    def listings(self) -> int:
        return sum(1 for m in self.received if m.get("method") == "tools/list")


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_a_name_listed_again_on_a_page_the_client_did_not_list_is_refused(command: str) -> None:
    upstream = Paged([PAGE_1, PAGE_2])
    async with running_guard(command, upstream) as client:
        first = await client.request("tools/list")
        assert [t["name"] for t in first["result"]["tools"]] == [name(command, "a")] or command == "serve"
        refused = await client.call(name(command, "a"), {"x": 9})
        # wrap: refused as listed twice; serve: its collision rule withholds both (an unknown tool, -32602)
        text = refused["result"]["content"][0]["text"] if command == "wrap" else refused["error"]["message"]
        assert "more than once" in text if command == "wrap" else "unknown" in text.lower()
        assert upstream.calls() == []
        # The other tools are judged against the whole listing: b's bound holds, and a valid call goes.
        assert (await client.call(name(command, "b"), {"x": 9}))["result"]["isError"] is True
        assert "error" not in await client.call(name(command, "b"), {"x": 1})
        assert [m["params"]["name"] for m in upstream.calls()] == ["b"]


async def test_a_listing_of_one_page_needs_no_listing_of_the_guards_own() -> None:
    upstream = Paged([PAGE_2[1:]])
    async with running_guard("wrap", upstream) as client:
        await client.request("tools/list")
        assert "error" not in await client.call("b", {"x": 1})
        assert upstream.listings() == 1


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_names_that_collide_across_pages_once_shown_are_both_left_out(
    command: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Red team 33: with ``--present-for openai-strict``, ``t.a`` (page 1, shown as ``t_a``) and ``t_a`` (page 2)
    were both logged as not shown while a call to ``t_a`` still reached ``t.a``: the whole listing decides,
    as ``check --host`` and ``serve`` do, and the log says what is done."""
    first = [{"name": "t.a", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}]
    second = [{"name": "t_a", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}]
    upstream = Paged([first, second])
    caplog.set_level(logging.INFO, "mcp_guard")
    async with running_guard(command, upstream, host="openai-strict") as client:
        await client.request("tools/list")
        answer = await client.call(name(command, "t_a").replace(".", "_"), {"x": "s"})
        assert "error" in answer or answer["result"].get("isError") is True
        assert upstream.calls() == []
    if command == "wrap":  # (serve withholds the two by its own collision rule first: s__t_a)
        assert "t.a" in caplog.text and "not shown to openai-strict" in caplog.text
