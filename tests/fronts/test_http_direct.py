"""The HTTP front's hot path pieces: the in-memory client side (``fronts.http.direct``), the request
stream (``fronts.http.messages.Exchange``) and the HTTP parsers (``fronts.http.parsers``).

What must hold: a client message put while the relay waits is handed to its line handler in
the putter's own step, and one it declines (or any put while earlier ones are queued) reaches
``receive()`` in order; relay output is routed at once when the router can, else queued and
routed in order by ``run()`` (``idle`` False meanwhile); a request's response always finds
room in its stream, other messages wait for room; the front parses with httptools when it is
installed and with h11 when it is not.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Awaitable, Callable

import anyio
import pytest

from mcp_guard.fronts.http.config import EXCHANGE_BUFFER, INBOUND_BUFFER
from mcp_guard.fronts.http.direct import DirectClientSide
from mcp_guard.fronts.http.messages import Exchange, Item
from mcp_guard.fronts.http.parsers import header_deadline_protocol
from mcp_guard.streams.pipes import DirectLink

pytestmark = pytest.mark.anyio

HANG_GUARD = 10


class Router:
    """Records what the client side routes, and how (now or async)."""

    def __init__(self, take_now: Callable[[bytes], bool] = lambda line: True) -> None:
        self.take_now = take_now
        self.now: list[bytes] = []
        self.later: list[bytes] = []
        self.gate = anyio.Event()
        self.gate.set()

    def deliver_now(self, line: bytes) -> bool:
        if self.take_now(line):
            self.now.append(line)
            return True
        return False

    async def deliver(self, line: bytes) -> None:
        await self.gate.wait()
        self.later.append(line)


def side(router: Router) -> DirectClientSide:
    deliver: Callable[[bytes], Awaitable[None]] = router.deliver
    return DirectClientSide(deliver, router.deliver_now)


async def until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(HANG_GUARD):
        while not condition():
            await anyio.sleep(0)


async def test_it_is_a_direct_link_for_the_relays_hot_path() -> None:
    assert isinstance(side(Router()), DirectLink)


async def test_a_message_put_while_the_relay_waits_goes_to_the_line_handler_in_the_putters_step() -> None:
    client = side(Router())
    handled: list[bytes] = []
    client.set_line_handler(lambda line: handled.append(line) is None)
    received: list[bytes] = []
    async with anyio.create_task_group() as tg:

        async def relay() -> None:
            with contextlib.suppress(anyio.EndOfStream):
                received.append(await client.receive())

        tg.start_soon(relay)
        await anyio.sleep(0.01)  # the relay waits in receive()
        assert await client.put(b"one")
        assert handled == [b"one"]  # at once: no pass of the loop in between
        assert await client.put(b"two")
        assert handled == [b"one", b"two"]
        client.end()
    assert received == []  # the relay saw EOF only


async def test_declined_and_queued_messages_reach_receive_in_order() -> None:
    client = side(Router())
    handled: list[bytes] = []

    def handler(line: bytes) -> bool:
        if line == b"declined":
            return False
        handled.append(line)
        return True

    client.set_line_handler(handler)
    received: list[bytes] = []
    async with anyio.create_task_group() as tg:

        async def relay() -> None:
            try:
                while True:
                    received.append(await client.receive())
            except anyio.EndOfStream:
                pass

        tg.start_soon(relay)
        await anyio.sleep(0.01)
        assert await client.put(b"declined")  # queued for receive(): the relay is woken, not yet run
        assert await client.put(b"after")  # behind it, so never offered to the handler out of order
        client.end()
    assert received == [b"declined", b"after"]
    assert handled == []


async def test_a_put_while_the_relay_is_busy_is_queued_and_waits_for_room() -> None:
    client = side(Router())
    client.set_line_handler(lambda line: True)
    for i in range(INBOUND_BUFFER):
        assert await client.put(str(i).encode())  # nobody waits in receive(): queued
    with anyio.move_on_after(0.05) as waiting:
        await client.put(b"one too many")
    assert waiting.cancelled_caught  # full: the putter waits (backpressure on the HTTP side)
    assert await client.receive() == b"0"
    with anyio.fail_after(HANG_GUARD):
        assert await client.put(b"fits now")
    client.close()
    assert not await client.put(b"late")
    with pytest.raises(anyio.EndOfStream):
        await client.receive()


async def test_a_line_handlers_failure_is_raised_to_the_relay() -> None:
    client = side(Router())

    def handler(line: bytes) -> bool:
        raise RuntimeError("boom")

    client.set_line_handler(handler)
    async with anyio.create_task_group() as tg:
        failures: list[BaseException] = []

        async def relay() -> None:
            try:
                await client.receive()
            except RuntimeError as exc:
                failures.append(exc)

        tg.start_soon(relay)
        await anyio.sleep(0.01)
        assert await client.put(b"x")
    assert [str(f) for f in failures] == ["boom"]


async def test_output_is_routed_at_once_when_it_can_be_else_in_order_by_run() -> None:
    router = Router(take_now=lambda line: line.startswith(b"response"))
    client = side(router)
    async with anyio.create_task_group() as tg:
        tg.start_soon(client.run)
        client.send_nowait(b"response 1")
        assert router.now == [b"response 1"] and client.idle
        router.gate = anyio.Event()  # the async router waits (a full request stream, say)
        client.send_nowait(b"notification")
        assert not client.idle
        client.send_nowait(b"response 2")  # queued behind the notification, though it could go now
        assert router.now == [b"response 1"]
        await anyio.sleep(0.01)
        assert router.later == []
        router.gate.set()
        await until(lambda: client.idle)
        assert router.later == [b"notification", b"response 2"]
        with anyio.fail_after(HANG_GUARD):
            await client.send(b"notification 2")  # returns once routed
        assert router.later[-1] == b"notification 2"
        tg.cancel_scope.cancel()
    client.close()
    with pytest.raises(anyio.ClosedResourceError):
        client.send_nowait(b"after close")


async def test_a_response_always_finds_room_in_its_stream_and_other_messages_wait() -> None:
    exchange = Exchange(7)
    for i in range(EXCHANGE_BUFFER):
        assert exchange.offer(Item(str(i).encode()))
    assert not exchange.offer(Item(b"one too many"))
    with anyio.move_on_after(0.05) as waiting:
        await exchange.put(Item(b"one too many"))
    assert waiting.cancelled_caught
    assert exchange.offer(Item(b"the response", final=True))  # never waits: answering a request never blocks
    assert exchange.answered
    assert not exchange.offer(Item(b"after the response"))
    items = []
    while (item := await exchange.next()) is not None:
        items.append(item.data)
    assert items[-1] == b"the response" and len(items) == EXCHANGE_BUFFER + 1


async def test_a_put_waiting_for_room_fails_once_the_http_side_is_gone() -> None:
    exchange = Exchange(7)
    for i in range(EXCHANGE_BUFFER):
        exchange.offer(Item(str(i).encode()))
    results: list[bool] = []
    async with anyio.create_task_group() as tg:

        async def router() -> None:
            results.append(await exchange.put(Item(b"waits")))

        tg.start_soon(router)
        await anyio.sleep(0.01)
        exchange.receiver.close()
    assert results == [False]
    assert not exchange.offer(Item(b"x", final=True))


async def test_a_stream_ended_without_a_response_gives_none_after_what_is_queued() -> None:
    exchange = Exchange(None)
    exchange.offer(Item(b"progress"))
    exchange.sender.close()
    first = await exchange.next()
    assert first is not None and first.data == b"progress"
    with anyio.fail_after(HANG_GUARD):
        assert await exchange.next() is None


def test_the_front_parses_with_httptools_when_installed_and_h11_when_not(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("httptools")
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    assert issubclass(header_deadline_protocol(5.0), HttpToolsProtocol)
    assert issubclass(header_deadline_protocol(5.0, parser="h11"), H11Protocol)
    monkeypatch.setitem(sys.modules, "httptools", None)  # not installed
    assert issubclass(header_deadline_protocol(5.0), H11Protocol)
    with pytest.raises(ValueError, match="httptools is not installed"):
        header_deadline_protocol(5.0, parser="httptools")
