"""The HTTP front's parsers end to end (an in-process front over the Sigma server): httptools where
installed, h11 otherwise, each with the deadline and the 16 KiB cap on request heads
(``fronts.http.parsers``)."""

from __future__ import annotations

import logging

import pytest

from mcp_guard.fronts.http import HttpConfig
from mcp_guard.fronts.http.parsers import MAX_HEAD_BYTES
from tests.e2e.http_guard import exchange, in_process_front, use_parser

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def health(host: str, port: int) -> bytes:
    return f"GET /health HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode()


async def test_a_request_head_over_16_kib_is_answered_431_and_others_are_served() -> None:
    pytest.importorskip("httptools")
    async with in_process_front(HttpConfig(port=0)) as (host, port, _protocol):
        pad = "X-Pad: " + "x" * 1000 + "\r\n"
        head = f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n" + pad * (MAX_HEAD_BYTES // len(pad) + 4)
        reply = await exchange(host, port, head.encode())  # never ended: the head is still coming
        assert reply.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), reply[:80]
        assert b"connection: close" in reply
        served = await exchange(host, port, health(host, port))
        assert served.startswith(b"HTTP/1.1 200 "), served[:80]
        under = f"GET /health HTTP/1.1\r\nHost: {host}:{port}\r\n" + pad * 12 + "Connection: close\r\n\r\n"
        assert (await exchange(host, port, under.encode())).startswith(b"HTTP/1.1 200 ")  # 12 KiB: fine


@pytest.mark.parametrize("parser", ["httptools", "h11"])
async def test_a_trickled_request_head_is_cut_off_under_either_parser(
    parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_parser(parser, monkeypatch)
    async with in_process_front(HttpConfig(port=0, header_timeout=1.0)) as (host, port, protocol):
        from uvicorn.protocols.http.h11_impl import H11Protocol

        assert issubclass(protocol, H11Protocol) is (parser == "h11")
        head = (f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n" + "X-Pad: x\r\n" * 40).encode()
        reply = await exchange(host, port, head, pause=0.05)
        assert reply.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), reply[:80]
        served = await exchange(host, port, health(host, port))
        assert served.startswith(b"HTTP/1.1 200 "), served[:80]


INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
)


def post_initialize(host: str, port: int, extra: str) -> bytes:
    """A whole ``initialize`` POST with ``extra`` header lines (each ending in CRLF) in its head."""
    return (
        f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\n{extra}Content-Length: {len(INITIALIZE)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode() + INITIALIZE


@pytest.mark.parametrize("parser", ["httptools", "h11"])
async def test_a_whole_request_head_over_16_kib_is_answered_431_under_either_parser(
    parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One long header, or many headers together, past 16 KiB: 431 and no session, even when the whole
    request arrives at once (red team, stop 33: 17,000 to 100,000 bytes in one header opened a session)."""
    use_parser(parser, monkeypatch)
    async with in_process_front(HttpConfig(port=0)) as (host, port, _protocol):
        for size in (17_000, 70_000, 100_000):
            reply = await exchange(host, port, post_initialize(host, port, f"X-Big: {'b' * size}\r\n"))
            assert reply.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), (size, reply[:80])
            assert b"connection: close" in reply.lower()
            assert b"16 KiB (16384 bytes)" in reply
            assert b"mcp-session-id" not in reply.lower()
        many = "".join(f"X-Pad-{i}: {'p' * 500}\r\n" for i in range(34))  # 34 * 512 bytes: 17 KiB together
        reply = await exchange(host, port, post_initialize(host, port, many))
        assert reply.startswith(b"HTTP/1.1 431 "), reply[:80]
        under = "".join(f"X-Pad-{i}: {'p' * 500}\r\n" for i in range(30))  # 15 KiB: served
        reply = await exchange(host, port, post_initialize(host, port, under))
        assert reply.startswith(b"HTTP/1.1 200 "), reply[:80]
        assert b"mcp-session-id" in reply.lower()
        pad = "X-Pad: " + "x" * 1000 + "\r\n"  # and an incomplete head past the cap (still arriving)
        head = f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n" + pad * (MAX_HEAD_BYTES // len(pad) + 4)
        reply = await exchange(host, port, head.encode())
        assert reply.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), reply[:80]
        served = await exchange(host, port, health(host, port))
        assert served.startswith(b"HTTP/1.1 200 "), served[:80]


class Kept(logging.Handler):
    """A log handler that keeps every record it is given."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.mark.parametrize("parser", ["httptools", "h11"])
async def test_a_431_is_logged_once_by_the_guard_and_not_by_uvicorn(
    parser: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """uvicorn logged its own "Invalid HTTP request received." beside the guard's line for each head refused
    as too large (a second line per refusal, in uvicorn's words, outside the guard's escaping; to stderr
    through the guard's handlers, which the front gives uvicorn's loggers): the guard's line is the only
    one, and it holds none of the request's bytes."""
    use_parser(parser, monkeypatch)
    kept = Kept()
    ours = logging.getLogger("mcp_guard")
    ours.addHandler(kept)  # (before the front starts: it gives uvicorn's loggers the guard's handlers)
    try:
        async with in_process_front(HttpConfig(port=0)) as (host, port, _protocol):
            secret = "s3cr3t-header-value"
            heads = [
                post_initialize(host, port, f"X-Big: {secret}{'b' * 17_000}\r\n"),  # whole, one long header
                post_initialize(host, port, "".join(f"X-{secret}-{i}: {'p' * 500}\r\n" for i in range(34))),
                (f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n" + f"X-Pad: {secret}{'x' * 1000}\r\n" * 20).encode(),
            ]  # (the last: a head still arriving when it passes the cap)
            capfd.readouterr()
            del kept.records[:]
            for head in heads:
                reply = await exchange(host, port, head)
                assert reply.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), reply[:80]
            records = [(r.name, r.getMessage()) for r in kept.records if r.levelno >= logging.WARNING]
    finally:
        ours.removeHandler(kept)
    assert records == [("mcp_guard", f"closed a connection whose request head exceeds {MAX_HEAD_BYTES} bytes")] * 3
    stderr = capfd.readouterr().err
    assert "Invalid HTTP request" not in stderr and secret not in stderr, stderr
