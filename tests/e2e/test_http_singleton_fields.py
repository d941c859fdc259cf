"""A field that is not a list, sent twice, is a 400 naming it; a list field's lines are one value.

RFC 9110 section 5.3: a sender must not repeat a field whose definition is not a list; the
front reads ``Authorization``, ``Content-Type``, ``Content-Length``, ``Mcp-Session-Id``,
``MCP-Protocol-Version`` (and the SDK's ladder ``Mcp-Method``, ``Mcp-Name``), so which of two
lines one check judged and another acted on cannot be left to chance (the red team's request
with two ``Authorization`` lines was served with the first). ``Accept`` is a list: its lines
split over two fields still accept both types. Sent as raw bytes (no HTTP client sends such
requests) to an in-process front with a bearer token, under either HTTP parser.
"""

from __future__ import annotations

import json

import pytest
from pydantic import SecretStr

from mcp_guard.fronts.http import HttpConfig
from tests.e2e.http_guard import exchange, in_process_front, status_of, use_parser

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


TOKEN = "s3cret-token"
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fields-test", "version": "0"}}
BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}).encode()
GOOD_AUTH = ("Authorization", f"Bearer {TOKEN}")
BAD_AUTH = ("Authorization", "Bearer wrong")
ACCEPT = ("Accept", "application/json, text/event-stream")
JSON = ("Content-Type", "application/json")
LENGTH = ("Content-Length", str(len(BODY)))

# (what, header lines, the field a 400 must name; None: served)
CASES: tuple[tuple[str, tuple[tuple[str, str], ...], str | None], ...] = (
    ("one of each", (GOOD_AUTH, ACCEPT, JSON, LENGTH), None),
    (
        "Accept split over two lines",
        (GOOD_AUTH, ("Accept", "application/json"), ("Accept", "text/event-stream"), JSON, LENGTH),
        None,
    ),
    ("two Authorization lines, the good one first", (GOOD_AUTH, BAD_AUTH, ACCEPT, JSON, LENGTH), "Authorization"),
    ("two Authorization lines, the good one last", (BAD_AUTH, GOOD_AUTH, ACCEPT, JSON, LENGTH), "Authorization"),
    ("two equal Authorization lines", (GOOD_AUTH, GOOD_AUTH, ACCEPT, JSON, LENGTH), "Authorization"),
    ("two Content-Type lines", (GOOD_AUTH, ACCEPT, JSON, ("Content-Type", "text/plain"), LENGTH), "Content-Type"),
    (
        "two Mcp-Session-Id lines",
        (GOOD_AUTH, ACCEPT, JSON, ("Mcp-Session-Id", "a"), ("Mcp-Session-Id", "b"), LENGTH),
        "Mcp-Session-Id",
    ),
    (
        "two MCP-Protocol-Version lines",
        (
            GOOD_AUTH,
            ACCEPT,
            JSON,
            ("MCP-Protocol-Version", "2025-11-25"),
            ("mcp-protocol-version", "2026-07-28"),
            LENGTH,
        ),
        "MCP-Protocol-Version",
    ),
    (
        "two Mcp-Method lines",
        (GOOD_AUTH, ACCEPT, JSON, ("Mcp-Method", "initialize"), ("Mcp-Method", "x"), LENGTH),
        "Mcp-Method",
    ),
    ("two equal Content-Length lines", (GOOD_AUTH, ACCEPT, JSON, LENGTH, LENGTH), "Content-Length"),
    ("two Content-Length lines", (GOOD_AUTH, ACCEPT, JSON, LENGTH, ("Content-Length", "2")), "Content-Length"),
)


async def send_raw(host: str, port: int, lines: tuple[tuple[str, str], ...]) -> tuple[int, bytes]:
    """POST the ``initialize`` body with exactly ``lines`` (plus Host, Connection); the status and reply."""
    head = [("Host", f"{host}:{port}"), *lines, ("Connection", "close")]
    data = ("POST /mcp HTTP/1.1\r\n" + "".join(f"{n}: {v}\r\n" for n, v in head) + "\r\n").encode("latin-1") + BODY
    reply = await exchange(host, port, data)
    return status_of(reply), reply


@pytest.mark.parametrize("parser", ["httptools", "h11"])
async def test_a_repeated_singleton_field_is_400_naming_it(parser: str, monkeypatch: pytest.MonkeyPatch) -> None:
    use_parser(parser, monkeypatch)
    config = HttpConfig(port=0, token=SecretStr(TOKEN), session_idle_timeout=5)
    async with in_process_front(config) as (host, port, _protocol):
        for what, lines, field in CASES:
            status, reply = await send_raw(host, port, lines)
            if field is None:
                assert status == 200 and b'"result"' in reply, (what, reply[:400])
                continue
            if parser == "h11" and what == "two equal Content-Length lines":
                # h11 takes identical values as one field (RFC 9110 section 8.6 lets a recipient do so).
                assert status in (200, 400), (what, reply[:400])
                continue
            assert status == 400, (what, reply[:400])
            # The front's JSON-RPC error naming the field, or (under a parser that checks it) the parser's 400.
            if b'"error"' in reply or field != "Content-Length":
                assert f"more than one {field} header".encode() in reply, (what, reply[:400])
                error = json.loads(reply.partition(b"\r\n\r\n")[2])["error"]
                # The 2026-07-28 spec's code for its routing headers (as the SDK's ladder answers), else -32600.
                routing = field in ("MCP-Protocol-Version", "Mcp-Method", "Mcp-Name")
                assert error["code"] == (-32020 if routing else -32600), (what, error)
            assert TOKEN.encode() not in reply and b"wrong" not in reply, (what, reply[:400])
