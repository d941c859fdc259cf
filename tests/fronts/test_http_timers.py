"""The HTTP front's per-request deadlines without a loop timer each (``fronts.http.fast.Ticker``), its
one-pass request headers (``fronts.http.fields.request_headers``) and its one write per whole response
(``fronts.http.parsers.HeadHeld``).

What must hold: a deadline fires once, at the first tick at or after it is due (never before, at
most ``TICK`` seconds late), and never once discarded; the ticker holds one loop timer however
many deadlines it holds, and none once they are all gone; the headers read in one pass give what
``starlette``'s ``Headers.get`` gives (the first of repeated ones), and the Host, Origin and token
checks give one verdict for one request (Host and Origin are read from the raw lines:
``test_host_origin.py``).
"""

from __future__ import annotations

import asyncio

import anyio
import pytest
from starlette.datastructures import Headers

from mcp_guard.fronts.http.config import HttpConfig
from mcp_guard.fronts.http.fast import TICK, Ticker, ticker
from mcp_guard.fronts.http.fields import request_headers
from mcp_guard.fronts.http.parsers import HeadHeld
from mcp_guard.fronts.http.security import Security, read_host_origin

pytestmark = pytest.mark.anyio


class CountingLoop:
    """Counts a loop's timers scheduled through ``call_later``."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.timers = 0

    def call_later(self, delay: float, callback: object) -> asyncio.TimerHandle:
        self.timers += 1
        return self.loop.call_later(delay, callback)  # type: ignore[arg-type]

    def time(self) -> float:
        return self.loop.time()


async def test_deadlines_fire_once_at_a_tick_after_they_are_due_and_never_once_discarded() -> None:
    loop = asyncio.get_running_loop()
    counting = CountingLoop(loop)
    ticks = Ticker(counting)  # type: ignore[arg-type]
    fired: dict[int, float] = {}
    start = loop.time()
    for key in range(100):
        ticks.add(key, start + (TICK if key % 2 else 2 * TICK), lambda key=key: fired.setdefault(key, loop.time()))
    for key in range(0, 100, 4):
        ticks.discard(key)
    assert counting.timers == 1  # one timer for all of them
    await anyio.sleep(4 * TICK)
    expected = {key for key in range(100) if key % 4}
    assert set(fired) == expected
    for key, when in fired.items():
        due = start + (TICK if key % 2 else 2 * TICK)
        assert due <= when <= due + 2 * TICK, (key, when - due)
    timers = counting.timers
    await anyio.sleep(3 * TICK)
    assert counting.timers == timers  # nothing held: no timer runs
    ticks.add("again", loop.time(), lambda: fired.setdefault(-1, loop.time()))
    await anyio.sleep(2 * TICK)
    assert -1 in fired and counting.timers == timers + 1


async def test_a_key_added_again_keeps_its_last_deadline_only() -> None:
    loop = asyncio.get_running_loop()
    ticks = ticker(loop)
    assert ticker(loop) is ticks  # one per loop
    calls: list[str] = []
    ticks.add("k", loop.time() + 100, lambda: calls.append("old"))
    ticks.add("k", loop.time(), lambda: calls.append("new"))
    await anyio.sleep(3 * TICK)
    assert calls == ["new"]


@pytest.mark.parametrize(
    "raw",
    [
        [(b"host", b"127.0.0.1:8000"), (b"accept", b"application/json, text/event-stream")],
        [(b"host", b"127.0.0.1:8000"), (b"host", b"evil.test")],  # repeated: the first counts (Host: refused)
        [(b"host", b"evil.test"), (b"host", b"127.0.0.1:8000")],
        [(b"host", b"localhost"), (b"origin", b"http://evil.test"), (b"origin", b"http://localhost")],
        [(b"host", b"localhost"), (b"authorization", b"Bearer s3cret"), (b"authorization", b"Bearer no")],
        [(b"origin", b"http://localhost")],  # no Host
        [(b"host", b"caf\xe9.test")],  # latin-1
    ],
)
def test_request_headers_give_what_headers_get_gives_and_the_same_verdicts(raw: list[tuple[bytes, bytes]]) -> None:
    scope = {"type": "http", "headers": raw}
    ours, theirs = request_headers(scope), Headers(scope=scope)
    for name in ("host", "origin", "authorization", "accept", "content-type", "mcp-session-id"):
        assert ours.get(name) == theirs.get(name), name
    for config in (HttpConfig(port=8000), HttpConfig(port=8000, token="s3cret")):  # type: ignore[arg-type]
        security = Security(config)
        head = read_host_origin(raw, b"/mcp")
        first = security.refusal(head, ours.get("authorization"))
        assert first == security.refusal(head, theirs.get("authorization"))  # (the second from the kept verdict)


class Written:
    """A transport that records its writes."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


def test_a_whole_response_is_one_write_and_a_continue_or_a_stream_head_is_not_held() -> None:

    head = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-type: application/json\r\n\r\n"
    transport = Written()
    held = HeadHeld(transport)  # type: ignore[arg-type]
    held.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    assert transport.writes == [b"HTTP/1.1 100 Continue\r\n\r\n"]  # at once: the client waits for it
    held.write(head)
    assert transport.writes[1:] == []
    held.write(b"{}")
    assert transport.writes[1:] == [head + b"{}"]
    held.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")  # a body part that looks like a head: not held
    assert len(transport.writes) == 3

    stream = Written()
    held = HeadHeld(stream)  # type: ignore[arg-type]
    sse = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    held.write(sse)
    assert stream.writes == [sse]  # an SSE stream's head goes out before its first event

    for end in ("flush", "close"):  # a HEAD request (no body write), or a close: the head still goes out
        quiet = Written()
        held = HeadHeld(quiet)  # type: ignore[arg-type]
        held.write(head)
        assert quiet.writes == []
        getattr(held, end)()
        assert quiet.writes == [head]
        assert held.is_closing() is (end == "close")

    big = Written()
    held = HeadHeld(big)  # type: ignore[arg-type]
    held.write(head)
    body = b"x" * (1 << 20)
    held.write(body)
    assert big.writes == [head, body]  # a big body is not copied to join it
