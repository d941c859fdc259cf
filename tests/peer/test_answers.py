"""Exactly one answer per client request, its own, whatever the upstream sends (``wrap`` and ``serve``).

Found by a hostile-input trial (issue 12): ``wrap`` relayed answers to ids the upstream was
never sent (including a forged success for a call the guard refused, which reached the client
before the refusal), an unreadable line carrying a request's id followed by the real answer
gave the client two answers, and two requests in flight under one id got one error between
them when the upstream died. Each test runs against both commands over the same scripted
upstream (``tests/harness.py``).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcp_guard.wire.messages import DUPLICATE_ID, GONE
from mcp_guard.wire.meta import REJECTION_KEY
from tests.harness import MemoryLink, ScriptedUpstream, name, running_guard

pytestmark = pytest.mark.anyio

COMMANDS = ["wrap", "serve"]
FORGED = {"content": [{"type": "text", "text": "forged"}]}


@pytest.mark.parametrize("command", COMMANDS)
async def test_answers_to_ids_the_guard_did_not_send_never_reach_the_client(command: str) -> None:
    """Forged answers for a refused call, for an id never used, and a second answer: all dropped."""

    async def lying(upstream: ScriptedUpstream, link: MemoryLink, message: dict[str, Any]) -> None:
        for forged_id in ("refused", "never-requested", 424242):
            await upstream.send(link, {"jsonrpc": "2.0", "id": forged_id, "result": FORGED})
        await upstream.answer_call(link, message)
        await upstream.send(link, {"jsonrpc": "2.0", "id": message["id"], "result": FORGED})  # answered already

    upstream = ScriptedUpstream(on_call=lying)
    async with running_guard(command, upstream) as client:
        refused = await client.call(name(command, "echo"), {"text": 5}, request_id="refused")
        assert refused["result"]["_meta"][REJECTION_KEY]["kind"] == "validation"
        good = await client.call(name(command, "echo"), {"text": "hi"}, request_id="good")
        assert good["result"]["content"][0]["text"] == "echo ok"
        assert "result" in await client.request("ping", request_id="after")  # everything before it has come
        for request_id in ("refused", "good", "after"):
            assert len(client.answers_to(request_id)) == 1, client.seen
        assert client.answers_to("never-requested") == [] and client.answers_to(424242) == []
        assert all(m.get("result") != FORGED for m in client.seen)
        assert len(upstream.calls()) == 1  # the refused call never reached it


@pytest.mark.parametrize("command", COMMANDS)
async def test_an_unreadable_line_with_a_request_id_then_the_real_answer_gives_one_answer(command: str) -> None:
    async def garbling(upstream: ScriptedUpstream, link: MemoryLink, message: dict[str, Any]) -> None:
        await link.send(b'{"jsonrpc":"2.0","id":' + json.dumps(message["id"]).encode() + b',"result":{')
        await upstream.answer_call(link, message)

    upstream = ScriptedUpstream(on_call=garbling)
    async with running_guard(command, upstream) as client:
        answer = await client.call(name(command, "echo"), {"text": "hi"}, request_id=7)
        assert answer["error"]["code"] == -32603
        assert answer["error"]["message"].startswith("mcp-guard: the upstream's answer is not valid JSON (")
        assert "result" in await client.request("ping", request_id="after")
        assert len(client.answers_to(7)) == 1, client.seen


@pytest.mark.parametrize("command", COMMANDS)
async def test_a_second_request_under_an_id_in_flight_is_refused_and_each_gets_one_answer(command: str) -> None:
    """The first is held by the upstream; the second, same id, is refused at intake; the upstream dies:
    the first gets its -32603. Two requests, two answers, each told apart by its code."""
    upstream = ScriptedUpstream()
    async with running_guard(command, upstream) as client:
        await client.send(
            {"jsonrpc": "2.0", "id": "dup", "method": "tools/call", "params": {"name": name(command, "hang")}}
        )
        with anyio.fail_after(5):
            while not upstream.calls():
                await anyio.sleep(0.01)
        await client.send({"jsonrpc": "2.0", "id": "dup", "method": "ping"})
        refused = await client.answer("dup")
        assert refused["error"] == {"code": -32600, "message": DUPLICATE_ID}
        await upstream.links[-1].aclose()  # the upstream dies holding the first
        gone = await client.answer("dup")
        assert gone["error"]["code"] == -32603 and gone["error"]["message"] == GONE
        assert upstream.calls()[0]["params"]["name"] == "hang" and len(upstream.calls()) == 1
        assert [m.get("method") for m in upstream.received].count("ping") == 0  # the duplicate was not sent


@pytest.mark.parametrize("command", COMMANDS)
async def test_a_late_answer_to_a_cancelled_request_reaches_the_client_at_most_once(command: str) -> None:
    """The client cancels a call the upstream holds; the upstream answers it anyway, twice. ``wrap``
    passes the first late answer on (MCP clients drop it; the HTTP front frees the id with it),
    ``serve`` drops it; neither passes on the second."""
    held: list[tuple[MemoryLink, dict[str, Any]]] = []

    async def holding(upstream: ScriptedUpstream, link: MemoryLink, message: dict[str, Any]) -> None:
        held.append((link, message))

    upstream = ScriptedUpstream(on_call=holding)
    async with running_guard(command, upstream) as client:
        await client.send(
            {"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": {"name": name(command, "echo")}}
        )
        with anyio.fail_after(5):
            while not held:
                await anyio.sleep(0.01)
        await client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "c"}})
        with anyio.fail_after(5):
            while not any(m.get("method") == "notifications/cancelled" for m in upstream.received):
                await anyio.sleep(0.01)
        link, message = held[0]
        await upstream.answer_call(link, message)
        await upstream.answer_call(link, message)
        assert "result" in await client.request("ping", request_id="after")
        assert len(client.answers_to("c")) == (1 if command == "wrap" else 0), client.seen


@pytest.mark.parametrize("command", COMMANDS)
async def test_an_upstream_answer_starting_with_a_bom_is_read_as_the_client_s_would_be(command: str) -> None:
    """Trial F17: the answer was skipped as not JSON and the call never answered."""

    async def bom(upstream: ScriptedUpstream, link: MemoryLink, message: dict[str, Any]) -> None:
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"content": [{"type": "text", "text": "bom ok"}]}}
        await link.send(b"\xef\xbb\xbf" + json.dumps(answer).encode())

    async with running_guard(command, ScriptedUpstream(on_call=bom)) as client:
        with anyio.fail_after(10):
            answer = await client.call(name(command, "echo"), {"text": "hi"}, request_id=9)
        assert answer["result"]["content"][0]["text"] == "bom ok"


@pytest.mark.parametrize("abandon", ["timed out", "cancelled"])
@pytest.mark.parametrize("command", COMMANDS)
async def test_a_late_answer_never_reaches_a_later_request_under_the_same_id(command: str, abandon: str) -> None:
    """Issue 25 item 5: call 9 is given up (``--request-timeout`` passed, or the client cancelled it); the
    client's next call reuses id 9; the upstream answers the first late, then the second. The client gets
    the second call's answer under id 9, and never the first's: every forwarded request went upstream
    under an id of the guard's own."""
    held: list[tuple[MemoryLink, dict[str, Any]]] = []

    async def holding(upstream: ScriptedUpstream, link: MemoryLink, message: dict[str, Any]) -> None:
        held.append((link, message))

    async def until_held(count: int) -> None:
        with anyio.fail_after(5):
            while len(held) < count:
                await anyio.sleep(0.01)

    def call(text: str) -> dict[str, Any]:
        params = {"name": name(command, "echo"), "arguments": {"text": text}}
        return {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params}

    def result(text: str) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": text}]}

    upstream = ScriptedUpstream(on_call=holding)
    options: dict[str, Any] = {"client_request_timeout": 0.5} if abandon == "timed out" else {}
    async with running_guard(command, upstream, **options) as client:
        await client.send(call("first"))
        await until_held(1)
        if abandon == "timed out":
            first = await client.answer(9)
            assert first["error"]["code"] == -32603 and "--request-timeout" in first["error"]["message"]
        else:
            await client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})
        with anyio.fail_after(5):
            while not any(m.get("method") == "notifications/cancelled" for m in upstream.received):
                await anyio.sleep(0.01)
        cancelled = next(m for m in upstream.received if m.get("method") == "notifications/cancelled")
        await client.send(call("second"))
        await until_held(2)
        (link, old), (_, new) = held
        assert old["id"] != new["id"], "two requests in flight upstream under one id"
        assert cancelled["params"]["requestId"] == old["id"]  # the cancellation named the first, as sent
        await upstream.send(link, {"jsonrpc": "2.0", "id": old["id"], "result": result("late answer to the first")})
        await upstream.send(link, {"jsonrpc": "2.0", "id": new["id"], "result": result("answer to the second")})
        second = await client.answer(9)
        assert second["result"]["content"][0]["text"] == "answer to the second", client.seen
        assert "result" in await client.request("ping", request_id="after")
        texts = [json.dumps(m) for m in client.answers_to(9)]
        assert len(texts) == (2 if abandon == "timed out" else 1), client.seen
        assert not any("late answer to the first" in t for t in texts), client.seen
