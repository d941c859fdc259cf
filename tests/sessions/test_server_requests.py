"""Requests an upstream sends the client (sampling, elicitation, roots) go under ids of the guard's own, in
``wrap`` and ``serve`` alike (``sessions.server_requests``, issue 23): the client's answer and its cancellation
reach the upstream that asked under that upstream's own id, and an upstream started again after it went away
can never receive the client's late answer to the gone upstream's request of the same id."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_guard.sessions.server_requests import MAX_GONE, ServerRequests
from tests.harness import TIMEOUT, MemoryLink, ScriptedUpstream, name, running_guard

pytestmark = pytest.mark.anyio

TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("ask", "die", "cancel")]

ASKED_ID = 7
"""The id the upstream gives its request to the client (every connection numbers afresh: the same id)."""


class Asking(ScriptedUpstream):
    """``ask``: asks the client ``roots/list`` under id 7, then answers the call; ``cancel``: cancels its own
    request 7; ``die``: the connection ends unanswered."""

    def __init__(self) -> None:
        super().__init__(TOOLS)

    async def handle(self, link: MemoryLink, message: dict[str, Any]) -> bool:
        if message.get("method") != "tools/call":
            return await super().handle(link, message)
        tool = message["params"]["name"]
        if tool == "die":
            return False
        if tool == "ask":
            await self.send(link, {"jsonrpc": "2.0", "id": ASKED_ID, "method": "roots/list"})
        elif tool == "cancel":
            notice = {"requestId": ASKED_ID, "reason": "no longer needed"}
            await self.send(link, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": notice})
        await self.answer_call(link, message)
        return True

    def answers(self, connection: int) -> list[dict[str, Any]]:
        return [m for m in self.by_connection[connection] if "method" not in m]

    def cancellations(self, connection: int) -> list[dict[str, Any]]:
        return [m for m in self.by_connection[connection] if m.get("method") == "notifications/cancelled"]


async def asked(client: Any) -> dict[str, Any]:
    """The next request the client was sent (a roots/list of the upstream's)."""
    while not any(m.get("method") == "roots/list" for m in client.notifications):
        await client.read()
    found = next(m for m in client.notifications if m.get("method") == "roots/list")
    client.notifications.remove(found)
    return found


async def notified(client: Any, method: str) -> dict[str, Any]:
    """The first notification ``method`` the client was sent (read on until it comes)."""
    while not any(m.get("method") == method for m in client.notifications):
        await client.read()
    return next(m for m in client.notifications if m.get("method") == method)


async def eventually(check: Any) -> None:
    with anyio.fail_after(TIMEOUT):
        while not check():
            await anyio.sleep(0.01)


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_the_client_answers_under_the_guards_id_and_the_upstream_gets_its_own(command: str) -> None:
    upstream = Asking()
    async with running_guard(command, upstream) as client:
        assert "result" in await client.call(name(command, "ask"))
        request = await asked(client)
        assert request["id"] != ASKED_ID and type(request["id"]) is str  # the guard's own id
        await client.send({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": []}})
        await eventually(lambda: upstream.answers(0))
        assert upstream.answers(0) == [{"jsonrpc": "2.0", "id": ASKED_ID, "result": {"roots": []}}]
        # A second answer under that id, and one under the upstream's own id, reach no one.
        await client.send({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": ["again"]}})
        await client.send({"jsonrpc": "2.0", "id": ASKED_ID, "result": {"roots": ["forged"]}})
        assert "result" in await client.request("ping")
        assert len(upstream.answers(0)) == 1


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_cancellations_of_an_upstreams_request_name_each_side_its_own_id(command: str) -> None:
    upstream = Asking()
    async with running_guard(command, upstream) as client:
        await client.call(name(command, "ask"))
        first = await asked(client)
        await client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": first["id"]}})
        await eventually(lambda: upstream.cancellations(0))
        assert upstream.cancellations(0)[0]["params"]["requestId"] == ASKED_ID
        await client.call(name(command, "ask"))
        second = await asked(client)
        assert second["id"] != first["id"]
        await client.call(name(command, "cancel"))
        cancelled = await notified(client, "notifications/cancelled")
        assert cancelled["params"]["requestId"] == second["id"]


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_a_late_answer_to_a_gone_upstream_never_reaches_the_next_one(command: str) -> None:
    upstream = Asking()
    async with (
        running_guard(command, upstream, backoff=(0.01, 0.01))
        if command == "wrap"
        else running_guard(command, upstream) as client
    ):
        await client.call(name(command, "ask"))
        gone = await asked(client)
        await client.call(name(command, "die"))  # the upstream goes away; the client is told its request is cancelled
        assert (await notified(client, "notifications/cancelled"))["params"]["requestId"] == gone["id"]
        await eventually(lambda: upstream.connections == 2 and client.guard.unready() == [])
        assert "result" in await client.call(name(command, "ask"))  # the new upstream asks under the same id 7
        fresh = await asked(client)
        assert fresh["id"] != gone["id"]
        await client.send({"jsonrpc": "2.0", "id": gone["id"], "result": {"roots": ["late"]}})
        await client.send({"jsonrpc": "2.0", "id": fresh["id"], "result": {"roots": ["fresh"]}})
        await eventually(lambda: upstream.answers(1))
        assert "result" in await client.request("ping")
        assert upstream.answers(1) == [{"jsonrpc": "2.0", "id": ASKED_ID, "result": {"roots": ["fresh"]}}]


def test_the_ids_of_gone_upstreams_are_bounded() -> None:
    requests: ServerRequests[str] = ServerRequests()
    sent = [requests.to_client("a", {"jsonrpc": "2.0", "id": n, "method": "ping"}) for n in range(MAX_GONE + 5)]
    assert len(requests.gone("a")) == MAX_GONE + 5 and len(requests) == 0
    assert not requests.was_gone(sent[0]) and requests.was_gone(sent[-1])  # the oldest were forgotten
    other = requests.to_client("b", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert requests.cancelled("a", 1) is None and requests.cancelled("b", 1) == other["id"]
    assert requests.answered({"jsonrpc": "2.0", "id": other["id"], "result": {}}) is None  # (cancelled: forgotten)


def test_an_upstreams_cancellation_goes_to_the_client_under_the_id_it_knows() -> None:
    requests: ServerRequests[str] = ServerRequests()
    asked = requests.to_client("a", {"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage"})
    notice = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "r"}}
    assert requests.cancellation("b", notice) is None  # not b's request
    relayed = requests.cancellation("a", notice)
    assert relayed == {**notice, "params": {"requestId": asked["id"], "reason": "r"}}
    assert requests.cancellation("a", notice) is None and len(requests) == 0  # no longer pending
    odd = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}}
    assert requests.cancellation("a", odd) is odd  # no valid requestId: goes on as it is
