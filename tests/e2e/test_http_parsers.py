"""The HTTP front's parsers end to end (an in-process front over the Sigma server): httptools where
installed, h11 otherwise, each with the deadline on request heads, and httptools with the 16 KiB
cap on them that h11 has of its own (``fronts.http.parsers``)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path

import anyio
import pytest

from mcp_guard.fronts.http import HttpConfig, HttpFront, serve_front
from mcp_guard.fronts.http.parsers import MAX_HEAD_BYTES

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[2]
SIGMA_SERVER = ROOT / "fixtures" / "sigma" / "server.py"
TIMEOUT = 60.0


@asynccontextmanager
async def front(config: HttpConfig) -> AsyncIterator[tuple[str, int, type]]:
    """Serve an :class:`HttpFront` over the Sigma server in this process; yield its host, port and protocol class."""
    guard = HttpFront([sys.executable, str(SIGMA_SERVER)], config, profile="standard")
    async with anyio.create_task_group() as tg:
        tg.start_soon(serve_front, guard, "in-process front")
        with anyio.fail_after(TIMEOUT):
            while guard.server is None or not guard.server.started:
                await anyio.sleep(0.02)
        host, port = guard.address.split("/")[2].rsplit(":", 1)
        try:
            yield host, int(port), guard.server.config.http_protocol_class
        finally:
            guard.server.should_exit = True


async def exchange(host: str, port: int, data: bytes, *, pause: float = 0.0) -> bytes:
    """Send ``data`` (a byte per ``pause`` seconds when given); everything the front sends until it closes."""
    reply = b""
    async with await anyio.connect_tcp(host, port) as stream:
        with anyio.fail_after(TIMEOUT):
            if pause:
                for i in range(len(data)):
                    await stream.send(data[i : i + 1])
                    with anyio.move_on_after(pause):
                        reply += await stream.receive()
                        break
            else:
                with suppress(anyio.BrokenResourceError):
                    await stream.send(data)
            with suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                while True:
                    reply += await stream.receive()
    return reply


def health(host: str, port: int) -> bytes:
    return f"GET /health HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode()


async def test_a_request_head_over_16_kib_is_answered_431_and_others_are_served() -> None:
    pytest.importorskip("httptools")
    async with front(HttpConfig(port=0)) as (host, port, _protocol):
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
    if parser == "httptools":
        pytest.importorskip("httptools")
    else:
        monkeypatch.setitem(sys.modules, "httptools", None)  # as if not installed: the front falls back to h11
    async with front(HttpConfig(port=0, header_timeout=1.0)) as (host, port, protocol):
        from uvicorn.protocols.http.h11_impl import H11Protocol

        assert issubclass(protocol, H11Protocol) is (parser == "h11")
        head = (f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n" + "X-Pad: x\r\n" * 40).encode()
        reply = await exchange(host, port, head, pause=0.05)
        assert reply.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), reply[:80]
        served = await exchange(host, port, health(host, port))
        assert served.startswith(b"HTTP/1.1 200 "), served[:80]
