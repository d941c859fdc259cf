"""A guard that cannot start answers its client while the client is talking (``streams.refusal``, fault 37 A)."""

from __future__ import annotations

import json
import time

import anyio
import pytest

from mcp_guard.streams.refusal import answer_every_request
from tests.harness import link_pair

pytestmark = pytest.mark.anyio

TEXT = "mcp-guard: the upstream server could not be started (cause); mcp-guard exits"


def request(number: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": number, "method": "ping"}).encode()


async def test_a_client_that_keeps_talking_is_answered_past_the_grace_and_a_silent_one_is_left() -> None:
    """Requests sent one after another, each when the last was answered, are all answered though they
    span more than the grace (the window starts again with each line); then ``grace`` of silence ends it."""
    guard, client = link_pair()
    grace = 0.6
    done = anyio.Event()

    async def refuse() -> None:
        await answer_every_request(guard, TEXT, grace, 30.0)
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(refuse)
        started = time.monotonic()
        for number in range(4):
            last = time.monotonic()
            await client.send(request(number))
            with anyio.fail_after(5):
                answer = json.loads(await client.receive())
            assert answer == {"jsonrpc": "2.0", "id": number, "error": {"code": -32603, "message": TEXT}}
            await anyio.sleep(grace / 3)
        assert time.monotonic() - started > grace * 4 / 3 and not done.is_set()
        with anyio.fail_after(5):
            await done.wait()
    assert grace <= time.monotonic() - last < 5


async def test_a_client_that_never_stops_talking_is_left_at_the_bound() -> None:
    """However often the client sends, the guard leaves ``bound`` seconds after the failure."""
    guard, client = link_pair()
    done = anyio.Event()

    async def refuse() -> None:
        await answer_every_request(guard, TEXT, 0.5, 1.0)
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(refuse)
        started = time.monotonic()
        number = 0
        with anyio.fail_after(5):
            while not done.is_set():
                await client.send(request(number))
                number += 1
                await anyio.sleep(0.1)
    assert 1.0 <= time.monotonic() - started < 5 and number >= 8


async def test_a_client_that_closes_its_side_ends_it_at_once_and_notifications_are_not_answered() -> None:
    """End of the client's stream: it returns at once, every request before it answered (a batch's
    members each), notifications and unparsable lines not."""
    guard, client = link_pair()
    await client.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())
    await client.send(b"{not json")
    await client.send(json.dumps([{"jsonrpc": "2.0", "id": "b", "method": "tools/list"}]).encode())
    await client.close_send()
    with anyio.fail_after(1):
        await answer_every_request(guard, TEXT, 10.0, 30.0)
    assert json.loads(await client.receive())["id"] == "b"
    with pytest.raises(anyio.WouldBlock):  # one answer: the notification and the bad line get none
        client.inbox.receive_nowait()
