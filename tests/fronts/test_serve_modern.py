"""``mcp-guard serve`` in the 2026-07-28 era, end to end: prompts, resources, completion, listen streams.

The upstreams are two instances of ``tests/e2e/library_server.py`` (an SDK 2.x low-level server
that speaks both eras; ``server-everything`` answers ``server/discover`` with -32601, so it cannot
serve here) under the names ``alpha`` and ``beta``, plus the Sigma fixture (tools only). The
client is the SDK's own ``mcp.Client`` in ``mode="auto"`` (it lands in 2026-07-28, and validates
every result against that era's schema: ``resultType``, ``ttlMs``, ``cacheScope``), over stdio and
over ``serve --http``; a raw JSON-RPC client checks the wire where the SDK would hide it. The
forging server (raw, stdlib) replaces its tools without telling anyone, or tells only its listen
streams: a call is never judged against a schema the upstream has replaced.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.subscriptions import PromptsListChanged, ResourceUpdated, ToolsListChanged

from tests.e2e.http_guard import guard_process
from tests.fronts.test_serve import MODERN_META, READ_TIMEOUT, ROOT, SIGMA, rejection_kind, serve, write_config

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

LIBRARY = ROOT / "tests" / "e2e" / "library_server.py"
FORGING = ROOT / "tests" / "e2e" / "forging_server.py"
TIMEOUT = 60.0


def library(name: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(LIBRARY), "--name", name]}


def two_libraries(tmp_path: Path, guard: dict[str, Any] | None = None) -> Path:
    servers = {
        "alpha": library("alpha"),
        "beta": library("beta"),
        "sigma": {"command": sys.executable, "args": [str(SIGMA)]},
    }
    return write_config(tmp_path / "gw.json", servers, guard or {})


def gateway(config: Path) -> StdioServerParameters:
    command = ["-m", "mcp_guard", "serve", "--config", str(config)]
    return StdioServerParameters(command=sys.executable, args=command, env=dict(os.environ), cwd=str(ROOT))


async def check_routing(client: Client) -> None:
    """What both fronts must do for a 2026-07-28 client: lists merged, requests routed, collisions withheld."""
    assert client.session.protocol_version == "2026-07-28"
    tools = {t.name for t in (await client.list_tools()).tools}
    assert {"alpha__echo", "beta__echo", "sigma__read"} <= tools

    prompts = (await client.list_prompts()).prompts
    assert [p.name for p in prompts] == ["alpha__greet", "beta__greet"]
    assert (prompts[1].meta or {})["mcp-guard/origin"] == {"server": "beta", "prompt": "greet"}
    got = await client.get_prompt("beta__greet", {"who": "Ada"})
    assert got.messages[0].content == types.TextContent(type="text", text="Hello Ada, from beta.")
    with pytest.raises(MCPError) as unknown:
        await client.get_prompt("gamma__greet", {"who": "Ada"})
    assert unknown.value.error.code == -32602

    resources = [str(r.uri) for r in (await client.list_resources()).resources]
    assert resources == ["alpha://doc/readme", "beta://doc/readme"]  # shared://common: listed by both, withheld
    templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
    assert templates == ["alpha://item/{id}", "beta://item/{id}"]
    read = await client.read_resource("beta://doc/readme")
    assert read.contents[0].text == "readme of beta"  # type: ignore[union-attr]
    item = await client.read_resource("alpha://item/42")  # by alpha's template alone
    assert item.contents[0].text == "item 42 of alpha"  # type: ignore[union-attr]
    with pytest.raises(MCPError) as withheld:
        await client.read_resource("shared://common")
    assert withheld.value.error.code == -32602 and "more than one server" in withheld.value.error.message

    who = await client.complete(
        types.PromptReference(type="ref/prompt", name="alpha__greet"), {"name": "who", "value": "al"}
    )
    assert who.completion.values == ["alice", "albert"]
    ref = types.ResourceTemplateReference(type="ref/resource", uri="beta://item/{id}")
    ids = await client.complete(ref, {"name": "id", "value": "4"})
    assert ids.completion.values == ["42"]

    echoed = await client.call_tool("beta__echo", {"text": "hi"})
    assert not echoed.is_error and echoed.content[0] == types.TextContent(type="text", text="beta: hi")
    refused = await client.call_tool("alpha__echo", {"text": 5})
    assert refused.is_error and (refused.meta or {})["mcp-guard/rejection"]["kind"] == "validation"


async def test_prompts_resources_and_completion_of_two_upstreams_over_stdio(tmp_path: Path) -> None:
    with anyio.fail_after(TIMEOUT):
        async with Client(gateway(two_libraries(tmp_path))) as client:
            await check_routing(client)


async def test_listen_streams_over_stdio(tmp_path: Path) -> None:
    """The client's listen stream: list changes of the merged lists, and resource updates of the URIs the
    upstream serving each one acknowledged; a tool replaced upstream is judged by its new schema."""
    uris = ["alpha://doc/readme", "beta://item/42", "shared://common", "nowhere://x"]
    with anyio.fail_after(TIMEOUT):
        async with (
            Client(gateway(two_libraries(tmp_path))) as client,
            client.listen(tools_list_changed=True, prompts_list_changed=True, resource_subscriptions=uris) as sub,
        ):
            assert sub.honored.tools_list_changed and sub.honored.prompts_list_changed
            assert not sub.honored.resources_list_changed  # not asked for
            assert sub.honored.resource_subscriptions == ["alpha://doc/readme", "beta://item/42"]
            events = sub.__aiter__()

            await client.call_tool("beta__touch", {"uri": "beta://item/42"})
            assert await events.__anext__() == ResourceUpdated("beta://item/42")
            await client.call_tool("alpha__touch", {"uri": "alpha://doc/readme"})
            assert await events.__anext__() == ResourceUpdated("alpha://doc/readme")

            await client.call_tool("alpha__add_prompt", {})
            assert await events.__anext__() == PromptsListChanged()
            assert [p.name for p in (await client.list_prompts()).prompts] == [
                "alpha__greet",
                "alpha__extra",
                "beta__greet",
            ]

            assert not (await client.call_tool("alpha__echo", {"text": "hi"})).is_error
            await client.call_tool("alpha__retype", {})  # echo takes an integer from now on
            assert await events.__anext__() == ToolsListChanged()
            refused = await client.call_tool("alpha__echo", {"text": "hi"})
            assert refused.is_error and (refused.meta or {})["mcp-guard/rejection"]["kind"] == "validation"
            assert not (await client.call_tool("alpha__echo", {"text": 7})).is_error
            assert not (await client.call_tool("beta__echo", {"text": "hi"})).is_error  # beta unchanged


async def test_the_wire_carries_what_the_era_requires(tmp_path: Path) -> None:
    """Raw: discover and list results carry resultType, ttlMs, cacheScope; the guard's cursors page prompts;
    the subscribe pair (absent from this era) is -32601; a cancelled listen stream gets no answer."""
    config = two_libraries(tmp_path, {"pageSize": 1})
    async with serve(config) as client:
        discovered = await client.request("server/discover", {"_meta": MODERN_META})
        result = discovered["result"]
        assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == ("complete", 0, "private")
        assert "2026-07-28" in result["supportedVersions"]
        assert {"tools", "prompts", "resources", "completions"} <= set(result["capabilities"])

        names: list[str] = []
        cursor = None
        for _ in range(10):
            params: dict[str, Any] = {"_meta": MODERN_META, **({"cursor": cursor} if cursor else {})}
            page = (await client.request("prompts/list", params))["result"]
            assert (page["resultType"], page["ttlMs"], page["cacheScope"]) == ("complete", 0, "private")
            names += [p["name"] for p in page["prompts"]]
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        assert names == ["alpha__greet", "beta__greet"]
        stale = await client.request("resources/list", {"_meta": MODERN_META, "cursor": "forged.cursor"})
        assert stale["error"]["code"] == -32602

        subscribe = await client.request("resources/subscribe", {"uri": "alpha://doc/readme", "_meta": MODERN_META})
        assert subscribe["error"]["code"] == -32601

        listen = {"_meta": MODERN_META, "notifications": {"resourceSubscriptions": ["beta://doc/readme"]}}
        await client.send({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": listen})
        with anyio.fail_after(READ_TIMEOUT):
            ack = await client.read()
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1"
        assert ack["params"]["notifications"] == {"resourceSubscriptions": ["beta://doc/readme"]}
        touch = {"name": "beta__touch", "arguments": {"uri": "beta://doc/readme"}, "_meta": MODERN_META}
        touched = await client.request("tools/call", touch)
        assert touched["result"]["content"][0]["text"] == "touched beta://doc/readme"
        with anyio.fail_after(READ_TIMEOUT):
            while not client.notifications:
                client.notifications.append(await client.read())
        update = client.notifications.pop()
        assert update["method"] == "notifications/resources/updated"
        assert update["params"]["uri"] == "beta://doc/readme"
        assert update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1"

        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "listen-1"}}
        await client.send(cancel)
        await client.request("tools/call", touch)  # no longer subscribed: nothing arrives for it
        pinged = await client.request("ping")
        assert "result" in pinged
        assert not [m for m in client.notifications if m.get("method") == "notifications/resources/updated"]
        assert not [m for m in client.notifications if m.get("id") == "listen-1"]


async def test_a_listen_stream_opens_its_upstreams_streams_at_once(tmp_path: Path) -> None:
    """A client's listen for resources of two upstreams: the guard asks both at once. Each library acknowledges
    only once the other was asked too (``--listen-rendezvous``, at most 10 s, then honouring nothing): asked
    one after the other, the first gave up, and the acknowledgement waited for the sum of the upstreams."""
    folder = tmp_path / "rendezvous"
    folder.mkdir()
    servers = {
        name: {**library(name), "args": [*library(name)["args"], "--listen-rendezvous", str(folder)]}
        for name in ("alpha", "beta")
    }
    config = write_config(tmp_path / "gw.json", servers, {})
    uris = ["alpha://doc/readme", "beta://doc/readme"]
    async with serve(config) as client:
        listen = {"_meta": MODERN_META, "notifications": {"resourceSubscriptions": uris}}
        await client.send({"jsonrpc": "2.0", "id": "listen-2", "method": "subscriptions/listen", "params": listen})
        with anyio.fail_after(READ_TIMEOUT):
            ack = await client.read()
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"] == {"resourceSubscriptions": uris}
        assert sorted(p.name for p in folder.iterdir()) == ["alpha", "beta"]


def forging(tmp_path: Path, **env: str) -> dict[str, Any]:
    tools = [
        {"name": "echo", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}},
        {"name": "other", "inputSchema": {"type": "object"}},
    ]
    flipped = [{"name": "echo", "inputSchema": {"type": "object", "properties": {"x": {"type": "integer"}}}}, tools[1]]
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    (tmp_path / "flipped.json").write_text(json.dumps(flipped))
    files = {"TOOLS_FILE": str(tmp_path / "tools.json"), "FLIP_TOOLS_FILE": str(tmp_path / "flipped.json")}
    return {"command": sys.executable, "args": [str(FORGING)], "env": {**files, **env}}


@pytest.mark.parametrize(
    "env",
    [{}, {"TTL_MS": "600000", "LISTEN": "1"}],
    ids=["no ttlMs, no listen stream", "ttlMs of 10 minutes, changes told on the listen stream"],
)
async def test_a_replaced_schema_is_never_the_one_a_call_is_judged_by(tmp_path: Path, env: dict[str, str]) -> None:
    """The upstream replaces ``echo``'s schema (``x``: string → integer). Without ``ttlMs`` the gateway lists
    again before each call; with a long ``ttlMs`` it relies on its listen stream, which tells it of the change."""
    config = write_config(tmp_path / "gw.json", {"f": forging(tmp_path, **env)}, {})
    async with serve(config) as client:
        call = {"name": "f__echo", "arguments": {"x": "s"}, "_meta": MODERN_META}
        for _ in range(2):  # the second one is judged by a listing the envelope already held
            assert (await client.request("tools/call", call))["result"]["isError"] is False
        await client.send({"jsonrpc": "2.0", "method": "test/flip"})  # passed on to every upstream
        other = await client.request("tools/call", {"name": "f__other", "_meta": MODERN_META})
        assert other["result"]["isError"] is False  # a round trip: the upstream has flipped (and said so)
        assert rejection_kind(await client.request("tools/call", call)) == "validation"
        fixed = await client.request("tools/call", {**call, "arguments": {"x": 3}})
        assert fixed["result"]["isError"] is False
    stderr = (tmp_path / "guard.stderr").read_text()
    assert ("upstream f: listening to its list changes (tools)" in stderr) == bool(env)


@asynccontextmanager
async def serve_http(config: Path, stderr_path: Path) -> AsyncIterator[str]:
    """``serve --http 127.0.0.1:0``; yields the URL; SIGTERM at the end (exit status 0)."""
    argv = [sys.executable, "-m", "mcp_guard", "serve", "--config", str(config), "--http", "127.0.0.1:0"]
    async with guard_process(argv, stderr_path) as (process, url):
        yield url
    assert process.returncode == 0, stderr_path.read_text()


async def test_prompts_resources_and_listen_over_streamable_http(tmp_path: Path) -> None:
    """``serve --http``: 2026-07-28 requests (no session) share one gateway session; the same routing, and a
    resource update reaches the client's listen stream (an SSE response) under its own id."""
    config = two_libraries(tmp_path)
    async with serve_http(config, tmp_path / "serve.stderr") as url:
        with anyio.fail_after(TIMEOUT):
            async with Client(url) as client:
                await check_routing(client)
                async with client.listen(resource_subscriptions=["alpha://item/2"]) as sub:
                    assert sub.honored.resource_subscriptions == ["alpha://item/2"]
                    await client.call_tool("alpha__touch", {"uri": "alpha://item/2"})
                    assert await sub.__aiter__().__anext__() == ResourceUpdated("alpha://item/2")
            async with Client(url) as again:  # a second client: the shared session still routes
                got = await again.get_prompt("alpha__greet", {"who": "Bo"})
                assert got.messages[0].content == types.TextContent(type="text", text="Hello Bo, from alpha.")
