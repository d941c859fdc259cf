"""Calls the guard holds (for its own listing of the tools, or its upstream's start), red team 37: their ids, their
order, their end when the client closes; and the batch gate on the protocol version the session agreed on."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcp_guard.wire.messages import BATCH_VERSION
from tests.harness import INIT, ScriptedUpstream, name, running_guard
from tests.sessions.test_client_requests import gated_guard, text_of, until

pytestmark = pytest.mark.anyio


def call(request_id: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def cancel(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}


async def lines(client: Any, count: int) -> list[dict[str, Any]]:
    """The next ``count`` answers read from the client's link (a batch's counted one by one)."""
    answers: list[dict[str, Any]] = []
    with anyio.fail_after(5):
        while len(answers) < count:
            line = json.loads(await client.link.receive())
            answers += [m for m in (line if type(line) is list else [line]) if "method" not in m]
    return answers


async def test_a_cancelled_held_call_frees_its_id_at_once_and_is_never_sent_as_the_new_one() -> None:
    """F2 (wrap): the cancelled call was held for the guard's own listing; the client's next request under its id
    was refused -32600 "still in flight". Now it is held in turn, and answered; the cancelled one is never sent."""
    async with gated_guard("wrap") as (upstream, client):
        upstream.list_gate = anyio.Event()  # the guard's own listing waits
        await client.send(call(4, "slow"))
        await until(lambda: upstream.count("tools/list") == 1)
        await client.send(cancel(4))
        await client.send(call(4, "fast"))
        await client.request("ping")  # (both read: ping goes on while a call is held)
        upstream.list_gate.set()
        assert text_of(await client.answer(4)) == "fast ok"
        await client.request("ping")
        assert [c["params"]["name"] for c in upstream.calls()] == ["fast"]
        assert len(client.answers_to(4)) == 1
        assert upstream.count("notifications/cancelled") == 0  # never sent: nothing to cancel upstream


async def test_serve_frees_the_id_of_a_request_cancelled_before_the_gateway_answered_initialize() -> None:
    """F2 (serve): requests sent right behind ``initialize`` wait for its answer; one cancelled there kept its id."""
    async with gated_guard("serve", initialize=False) as (upstream, client):
        upstream.list_gate = anyio.Event()  # the gateway's first listing waits, and initialize with it
        await client.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": INIT})
        await until(lambda: upstream.count("tools/list") == 1)
        await client.send(call(4, name("serve", "slow")))
        await client.send(cancel(4))
        await client.send(call(4, name("serve", "fast")))
        await client.send({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
        await client.send(cancel(5))
        await client.send({"jsonrpc": "2.0", "id": 5, "method": "ping"})  # the listing's answer must not reach it
        await anyio.sleep(0.05)
        upstream.list_gate.set()
        assert "result" in await client.answer("init")
        assert text_of(await client.answer(4)) == "fast ok"
        assert (await client.answer(5))["result"] == {}
        await client.request("ping")
        assert [c["params"]["name"] for c in upstream.calls()] == ["fast"]
        assert len(client.answers_to(4)) == 1 and len(client.answers_to(5)) == 1


async def test_a_batch_that_cancels_its_own_call_does_not_send_it() -> None:
    """F2b: ``[call 7, cancel 7, call 7]`` (2025-03-26): the first went upstream, its answer reached the client
    under 7 although cancelled, and the second 7 was refused. Now only the second is sent, and answered."""
    async with gated_guard("wrap", BATCH_VERSION) as (upstream, client):
        assert "result" in await client.request("tools/list")
        await client.send([call(7, "slow"), cancel(7), call(7, "fast")])
        (answer,) = await lines(client, 1)
        assert answer["id"] == 7 and "result" in answer  # (the harness answers a batch {})
        await client.request("ping")
        assert [c["params"]["name"] for c in upstream.calls()] == ["fast"]
        assert client.answers_to(7) == [] and upstream.count("notifications/cancelled") == 0


async def test_calls_held_for_the_guards_listing_reach_the_server_in_the_clients_order() -> None:
    """F3: ten pipelined calls, the first held for the guard's own listing, reached the server as 0 1 7 8 9 2 3 4
    5 6 (later calls overtook the held ones). Now everything after a held call waits behind it, in order; a ping
    goes on meanwhile, and a cancellation of a call waiting behind drops it."""
    async with gated_guard("wrap") as (upstream, client):
        upstream.list_gate = anyio.Event()
        await client.send(call(0, "fast", n=0))
        await until(lambda: upstream.count("tools/list") == 1)
        for n in range(1, 5):
            await client.send(call(n, "fast", n=n))
        assert "result" in await client.request("ping", request_id="p")  # not held up by the held call
        await client.send(cancel(3))  # waiting behind: dropped, never sent, never answered
        upstream.list_gate.set()
        for n in range(5, 10):
            await client.send(call(n, "fast", n=n))
        for n in (0, 1, 2, 4, 5, 6, 7, 8, 9):
            assert text_of(await client.answer(n)) == "fast ok"
        assert [c["params"]["arguments"]["n"] for c in upstream.calls()] == [0, 1, 2, 4, 5, 6, 7, 8, 9]
        assert client.answers_to(3) == []


async def test_a_held_call_is_answered_truthfully_when_the_client_closes_before_the_listing() -> None:
    """F6: the client closed while a call waited for the guard's own listing, which the server never answered:
    the call got "the upstream server went away (it exited with status 0)", though the guard had closed its
    input. Now it is answered after the drain's wait, saying the client closed before the guard could list."""
    async with gated_guard("wrap", client_request_timeout=0.5) as (upstream, client):
        upstream.list_gate = anyio.Event()  # never set: the server never answers the guard's listing
        await client.send(call(4, "fast"))
        await client.send(call(5, "fast"))  # behind it
        await until(lambda: upstream.count("tools/list") == 1)
        started = anyio.current_time()
        await client.link.close_send()
        answers = {a["id"]: a for a in await lines(client, 2)}
        waited = anyio.current_time() - started
        for request_id in (4, 5):
            text = answers[request_id]["error"]["message"]
            assert "client closed its side before the guard could list the upstream's tools" in text
            assert "went away" not in text
        assert 0.4 < waited < 3.0  # (the drain's wait here: --request-timeout 0.5 s)
        assert upstream.calls() == []


@pytest.mark.parametrize(("server", "allowed"), [("2025-06-18", False), (BATCH_VERSION, True)])
async def test_batches_follow_the_version_the_server_answered_not_the_one_the_client_asked(
    server: str, allowed: bool
) -> None:
    """F7: a client asking 2025-03-26 of a server that answered 2025-06-18 had its batch forwarded (and ignored:
    its calls hung). The gate reads the ``initialize`` result."""
    upstream = ScriptedUpstream()
    upstream.version = server
    async with running_guard("wrap", upstream, initialize=False) as client:
        answer = await client.request("initialize", {**INIT, "protocolVersion": BATCH_VERSION})
        assert answer["result"]["protocolVersion"] == server
        await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert "result" in await client.request("tools/list")
        await client.send([call(2, "echo"), call(3, "echo")])
        answers = await lines(client, 2)
        assert sorted(a["id"] for a in answers) == [2, 3]
        if allowed:
            assert all("result" in a for a in answers) and len(upstream.calls()) == 2
        else:
            assert {a["error"]["code"] for a in answers} == {-32600} and upstream.calls() == []
