"""The client's requests from intake to answer (``sessions.client_requests``, issue 23): one object for ``wrap`` and
``serve``. A second request under the id of an open one is refused; a cancelled request frees its id at once; the
upstream's late answer to it never reaches the request the client sends next under that id, even while that one
waits for the guard's own listing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import pytest

from mcp_guard.sessions.client_requests import NOT_OPEN, WAITING, ClientRequests
from mcp_guard.wire.messages import BATCH_VERSION
from tests.harness import INIT, MemoryLink, ScriptedUpstream, name, running_guard

pytestmark = pytest.mark.anyio

TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("slow", "fast")]


class Gated(ScriptedUpstream):
    """``slow`` is answered once :attr:`call_gate` is set; with :attr:`list_gate` cleared, ``tools/list`` waits
    for it too. Everything else is answered at once."""

    def __init__(self) -> None:
        super().__init__(TOOLS)
        self.call_gate = anyio.Event()
        self.list_gate: anyio.Event | None = None
        self.links_seen: list[MemoryLink] = []

    async def handle(self, link: MemoryLink, message: dict[str, Any]) -> bool:
        self.links_seen.append(link)
        method = message["method"]
        if method == "tools/call" and message["params"]["name"] == "slow":

            async def later() -> None:
                await self.call_gate.wait()
                await self.answer_call(link, message)

            self.spawn(later)
            return True
        if method == "tools/list" and self.list_gate is not None:
            gate = self.list_gate

            async def listed() -> None:
                await gate.wait()
                await super(Gated, self).handle(link, message)

            self.spawn(listed)
            return True
        return await super().handle(link, message)

    def spawn(self, func: Any) -> None:
        assert self.group is not None
        self.group.start_soon(func)

    def count(self, method: str) -> int:
        return sum(1 for m in self.received if m.get("method") == method)

    group: anyio.abc.TaskGroup | None = None


@asynccontextmanager
async def gated_guard(
    command: str, version: str | None = None, *, initialize: bool = True, **options: Any
) -> AsyncIterator[tuple[Gated, Any]]:
    """A :class:`Gated` upstream behind ``command``: ``(upstream, client)``; its tasks cancelled at the end.
    ``version``: the protocol version the client initializes with (default: the harness's); ``initialize``: False,
    the client does not; ``options``: the guard's (``running_guard``)."""
    upstream = Gated()
    async with anyio.create_task_group() as group:
        upstream.group = group
        async with running_guard(command, upstream, initialize=initialize and version is None, **options) as client:
            if initialize and version is not None:
                assert "result" in await client.request("initialize", {**INIT, "protocolVersion": version})
                await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            yield upstream, client
        group.cancel_scope.cancel()


async def until(predicate: Any) -> None:
    with anyio.fail_after(5):
        while not predicate():
            await anyio.sleep(0.005)


def text_of(answer: dict[str, Any]) -> str:
    return str(answer["result"]["content"][0]["text"])


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_a_second_request_under_an_open_id_is_refused_and_the_first_gets_its_own_answer(command: str) -> None:
    async with gated_guard(command) as (upstream, client):
        slow = {"name": name(command, "slow"), "arguments": {}}
        await client.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": slow})
        await until(lambda: len(upstream.calls()) == 1)
        await client.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": slow})
        refused = await client.answer(5)
        assert refused["error"]["code"] == -32600
        assert len(upstream.calls()) == 1  # the second never went upstream
        upstream.call_gate.set()
        assert text_of(await client.answer(5)) == "slow ok"
        # Answered: the id is free again.
        assert text_of(await client.call(name(command, "fast"), request_id=5)) == "fast ok"
        assert len(client.answers_to(5)) == 3


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_a_cancelled_calls_late_answer_never_reaches_the_next_request_under_its_id(command: str) -> None:
    async with gated_guard(command) as (upstream, client):
        slow = {"name": name(command, "slow"), "arguments": {}}
        await client.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": slow})
        await until(lambda: len(upstream.calls()) == 1)
        await client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}})
        await until(lambda: upstream.count("notifications/cancelled") == 1)
        (notice,) = [m for m in upstream.received if m.get("method") == "notifications/cancelled"]
        assert notice["params"]["requestId"] == upstream.calls()[0]["id"] != 5  # named by its upstream id
        # The server's tools changed: the next call waits for the guard's own listing, which waits here
        # (serve lists at the notice, wrap at the call).
        upstream.list_gate = anyio.Event()
        listed = upstream.count("tools/list")
        notice = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        await upstream.send(upstream.links_seen[-1], notice)
        if command == "serve":
            await until(lambda: upstream.count("tools/list") > listed)
        fast = {"name": name(command, "fast"), "arguments": {}}
        await client.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": fast})
        await until(lambda: upstream.count("tools/list") > listed)  # the new request 5 waits for this listing
        upstream.call_gate.set()  # the late answer to the cancelled 5 comes now
        await anyio.sleep(0.1)
        upstream.list_gate.set()
        assert text_of(await client.answer(5)) == "fast ok"
        await client.request("ping")
        assert [text_of(m) for m in client.answers_to(5)] == ["fast ok"]


def test_the_states_of_one_request() -> None:
    requests: ClientRequests[str] = ClientRequests()
    assert requests.admit(1) and requests.admit("1")  # 1 and "1" are two ids
    assert not requests.admit(1)  # open: a second is refused
    assert requests.waiting() == [1, "1"] and len(requests) == 2
    assert requests.sent(1, "up-1")
    assert requests.waiting() == ["1"] and requests.open_ids() == [1, "1"]
    assert requests.withdraw(1) == "up-1"  # sent: closed, cancelled at its owner
    assert 1 not in requests and requests.admit(1)  # the id is free at once
    held = requests.ticket(1)
    assert held is not None and requests.holds(1, held)
    assert requests.withdraw(1) is WAITING  # not sent: withdrawn, never sent, and its id free at once (red team 37)
    assert not requests.holds(1, held) and requests.open_ids() == ["1"] and requests.waiting() == ["1"]
    again = requests.admit(1)  # the client's next request under that id
    assert again is not None and again is not held
    assert not requests.holds(1, held)  # whoever held the withdrawn one learns it: the id is another request's now
    assert not requests.sent(1, "up-2", held) and requests.ticket(1) is again  # and cannot send it as the new one
    assert requests.sent(1, "up-3", again)
    assert requests.withdraw(1) == "up-3"
    assert requests.withdraw(1) is NOT_OPEN and requests.withdraw("other") is NOT_OPEN


def test_an_answer_closes_its_request_and_one_to_a_withdrawn_request_is_dropped() -> None:
    requests: ClientRequests[str] = ClientRequests()
    requests.admit(7)
    assert requests.close(7) and 7 not in requests
    assert requests.close(7)  # an id no open request has is answered (the guard's own error, a late answer)
    requests.admit(8)
    requests.sent(8, "up")
    going = requests.unsent(8)  # its answer is going out: a cancellation now withdraws it instead
    assert going is not None and requests.withdraw(8) is WAITING
    assert not requests.close(8, going) and 8 not in requests  # the answer is dropped, the id freed
    later = requests.admit(8)
    assert not requests.close(8, going) and requests.ticket(8) is later  # nor does it close a later request
    assert requests.close(8, later) and len(requests) == 0


async def test_two_requests_under_one_id_in_one_batch_are_one_forwarded_and_one_refused() -> None:
    """Red team 34: both elements of ``[call 6, call 6]`` went upstream and both were answered under id 6."""
    async with gated_guard("wrap", BATCH_VERSION) as (upstream, client):
        call = {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "fast", "arguments": {}}}
        await client.send([call, call])
        answers: list[dict[str, Any]] = []
        with anyio.fail_after(5):
            while len(answers) < 2:  # (batches: read as lines, the harness reads single messages)
                line = json.loads(await client.link.receive())
                answers += line if type(line) is list else [line]
        await client.request("ping")
        assert len(upstream.calls()) == 1  # one went upstream (the harness answers a batch {})
        assert sorted("error" in a for a in answers) == [False, True]
        assert next(a for a in answers if "error" in a)["error"]["code"] == -32600
        assert client.answers_to(6) == []  # and nothing more under id 6


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", None])
async def test_a_batch_is_refused_unless_the_session_speaks_2025_03_26(version: str | None) -> None:
    """Red team 35: wrap forwarded a batch to an SDK server of 2025-06-18, which ignored it: the valid call in it
    was never answered. Only 2025-03-26 has batches: each request of one is refused under its id, nothing sent."""
    async with gated_guard("wrap", version) as (upstream, client):
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "fast", "arguments": {}}}
        note = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
        await client.send([call, {**call, "id": "eight"}, note])
        with anyio.fail_after(5):
            answer = json.loads(await client.link.receive())
        assert [a["id"] for a in answer] == [7, "eight"]
        assert {a["error"]["code"] for a in answer} == {-32600} and "2025-03-26" in answer[0]["error"]["message"]
        await client.send([note])
        with anyio.fail_after(5):
            alone = json.loads(await client.link.receive())
        assert alone["id"] is None and alone["error"]["code"] == -32600
        await client.request("ping")
        assert upstream.calls() == [] and upstream.count("notifications/roots/list_changed") == 0
