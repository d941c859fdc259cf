"""A request that waits for its upstream's next start, in ``wrap`` and ``serve`` (the in-memory harness).

docs/wrap.md: "When a start fails, the requests waiting for it get an error"; docs/gateway.md: a request to a
server that is down "waits for the restart when that is at most 1 s away (or under way) ... otherwise (or when
that start fails) it gets -32603". Red team 37 F10: ``serve`` held such a call through a failed start whose next
one was again at most 1 s away, and answered it only when the second failed. The starts are counted here, and
gated (a start under way waits for the test), so nothing depends on how fast the machine is.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcp_guard.peer.upstream import LineLink, UpstreamStartError
from tests.harness import TIMEOUT, Client, MemoryLink, ScriptedUpstream, name, running_guard

pytestmark = pytest.mark.anyio

TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("echo", "die")]


class GatedUpstream(ScriptedUpstream):
    """A scripted upstream whose ``die`` call ends the connection unanswered; once ``failing``, every start
    waits for a :meth:`release` of the test's (counted in ``attempts``) and then fails (counted in ``failed``)."""

    def __init__(self) -> None:
        super().__init__(TOOLS, on_call=self.dying)
        self.failing = False
        self.attempts = 0
        self.failed = 0
        self.gate = anyio.Semaphore(0)

    def release(self) -> None:
        self.gate.release()

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[LineLink]:
        if self.failing:
            self.attempts += 1
            await self.gate.acquire()
        async with super().connect() as link:
            yield link

    def starting(self) -> None:
        if self.failing:
            self.failed += 1
            raise UpstreamStartError("the fake upstream refuses to start")

    @staticmethod
    async def dying(upstream: ScriptedUpstream, link: MemoryLink, message: dict[str, Any]) -> None:
        if message["params"]["name"] == "die":
            await link.aclose()  # gone: the guard reads the end of the stream
        else:
            await upstream.answer_call(link, message)


def waiting(command: str, client: Client, monkeypatch: pytest.MonkeyPatch) -> anyio.Event:
    """An event set once the guard holds the client's next request for the upstream's start: ``wrap`` queued it
    (``Relay.client_message`` returned), ``serve`` began to wait for the server (``Whereabouts.restarted``)."""
    taken = anyio.Event()
    routing = client.guard.routing
    if command == "wrap":
        original = routing.client_message

        async def client_message(message: Any) -> None:
            await original(message)
            taken.set()

        monkeypatch.setattr(routing, "client_message", client_message)
    else:
        whereabouts = routing.whereabouts
        restarted = whereabouts.restarted

        async def waits(server: str) -> bool:
            taken.set()
            return bool(await restarted(server))

        monkeypatch.setattr(whereabouts, "restarted", waits)
    return taken


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_a_request_waiting_for_a_start_is_answered_when_that_start_fails(
    command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connection dies (one short-lived start: the next is 0.5 s away); the restart is under way when a call
    comes, and fails: the call is answered then, though the start after it is again at most 1 s away (1.0 s)."""
    upstream = GatedUpstream()
    async with running_guard(command, upstream) as client:
        assert "result" in await client.request("tools/list")
        upstream.failing = True  # (the connection up now is not started again: only the restarts fail)
        assert (await client.call(name(command, "die")))["error"]["code"] == -32603
        with anyio.fail_after(TIMEOUT):
            while upstream.attempts < 1:  # restart 1 under way, held at the gate
                await anyio.sleep(0.01)
        taken = waiting(command, client, monkeypatch)
        await client.send(
            {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name(command, "echo")}}
        )
        with anyio.fail_after(TIMEOUT):
            await taken.wait()
        upstream.release()  # restart 1 fails; restart 2 is then 1.0 s away, and is held at the gate for good
        answer = await client.answer(7)
        assert answer["error"]["code"] == -32603, answer
        assert upstream.failed == 1  # answered at the failure of the start it waited for, not after the next
        text = answer["error"]["message"]
        if command == "wrap":
            assert "could not be restarted (the fake upstream refuses to start)" in text, text
        else:
            assert "the server `s` of this tool is not running right now" in text, text
            assert "its last start failed: the fake upstream refuses to start" in text, text
        for _ in range(5):
            upstream.release()  # (the starts still to come fail at once, for the guard's way out)
