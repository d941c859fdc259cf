"""The HTTP front end to end: ``python -m mcp_guard wrap --http 127.0.0.1:0`` in front of real servers.

Clients are the SDK's own streamable HTTP client (``mcp.Client`` with a URL) and raw ``httpx``
requests, so every status code and header the front sends is seen as it is. Upstreams are
the Sigma fixture server (``fixtures/sigma/server.py``, the SDK's low-level server) and
``http_peer_server.py``, a raw server that sends messages outside a request's answer
(server-to-client requests, progress, unsolicited notifications) and records what it got.

The guard picks a free port and names it on stderr (``serving MCP streamable HTTP at URL``);
its stderr goes to a file that the tests poll. Upstream processes are the guard's children,
found in ``/proc``.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client, MCPError

from mcp_guard.fronts.http import (
    HttpConfig,
    HttpFront,
    is_loopback,
    parse_listen_address,
    parse_origin,
)
from mcp_guard.fronts.http.security import read_host_origin
from mcp_guard.wire.messages import ALREADY_INITIALIZED
from tests.e2e.http_guard import (
    ACCEPT,
    INIT,
    MODERN,
    SIGMA_SERVER,
    TIMEOUT,
    Guard,
    alive,
    call,
    children,
    eventually,
    http_client,
    in_process_front,
    messages_of,
    modern,
    needs_proc,
    open_guard,
    open_session,
    post,
    request,
    sse_events,
    text_of,
)

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PEER_SERVER = HERE / "http_peer_server.py"
FORGING_SERVER = HERE / "forging_server.py"
FAULTY_SERVER = HERE / "faulty_server.py"

PROMPT = 10.0
"""Hang guard for answers that must come without waiting for a timeout (the guard's own is 30 s)."""


def _raise_fd_limit() -> None:
    """1000 concurrent connections need about 2000 descriptors (client and guard, which inherits the limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 8192 if hard == resource.RLIM_INFINITY else min(hard, 8192)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


_raise_fd_limit()


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module scope, so one guard process can serve many tests."""
    return "asyncio"


# ---------------------------------------------------------------------------------------------
# The shared guards


@pytest.fixture(scope="module")
async def sigma(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Guard]:
    """One guard over the Sigma fixture server, shared by the tests that do not count processes."""
    async with open_guard(tmp_path_factory.mktemp("sigma")) as guard:
        yield guard


@pytest.fixture(scope="module")
async def peer(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Guard, Path]]:
    """One guard over ``http_peer_server.py``, and the file recording what the upstreams received."""
    tmp = tmp_path_factory.mktemp("peer")
    record = tmp / "record.jsonl"
    async with open_guard(tmp, upstream=PEER_SERVER, env={"RECORD_FILE": str(record)}) as guard:
        yield guard, record


# ---------------------------------------------------------------------------------------------
# Unit checks of the address parsing


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8080", ("127.0.0.1", 8080)),
        (":8080", ("127.0.0.1", 8080)),
        ("localhost:0", ("localhost", 0)),
        ("0.0.0.0:9000", ("0.0.0.0", 9000)),
        ("[::1]:8080", ("::1", 8080)),
    ],
)
def test_listen_address_defaults_to_loopback(text: str, expected: tuple[str, int]) -> None:
    """``--http 8080`` and ``--http :8080`` bind 127.0.0.1; a host is taken as given."""
    assert parse_listen_address(text) == expected


@pytest.mark.parametrize("text", ["", "host", "host:", "1.2.3.4:65536", "[::1]8080", "[]:80", "x:-1"])
def test_listen_address_without_a_valid_port_is_refused(text: str) -> None:
    """No port, a port out of range, or a broken IPv6 form: ValueError."""
    with pytest.raises(ValueError):
        parse_listen_address(text)


def test_loopback_hosts() -> None:
    """Loopback names and addresses, and the others."""
    assert all(is_loopback(h) for h in ("localhost", "127.0.0.1", "127.8.9.1", "::1", "LOCALHOST"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "192.168.1.5", "example.com", ""))


@pytest.mark.parametrize(
    ("allowed", "origin", "ok"),
    [
        ("http://app.test:*", "http://app.test", True),  # any port includes the default one
        ("http://app.test:*", "http://app.test:5173", True),
        ("http://app.test:*", "https://app.test", False),
        ("http://app.test:*", "http://app.test.evil:80", False),
        ("http://app.test:*", "http://app.test:80/path", False),
        ("http://app.test", "http://app.test:80", True),  # one origin, written two ways
        ("http://app.test:80", "http://app.test", True),
        ("http://app.test", "http://app.test:8080", False),
        ("https://APP.test/", "https://app.TEST", True),
        ("https://app.test:8443", "https://app.test:8443", True),
        ("https://app.test:8443", "https://app.test", False),
        ("http://[::2]:*", "http://[::2]:9000", True),
        ("vscode-webview://abc", "vscode-webview://abc", True),
    ],
)
def test_allowed_origins(allowed: str, origin: str, ok: bool) -> None:
    """``--allowed-origin`` entries match origins as RFC 6454 compares them (scheme, host, port)."""
    front = HttpFront(["true"], HttpConfig(allowed_origins=(allowed,)))
    head = read_host_origin([(b"host", b"127.0.0.1"), (b"origin", origin.encode())], b"/mcp")
    refusal = front.security.refusal(head, None)
    assert (refusal is None) is ok, (allowed, origin)


@pytest.mark.parametrize(
    ("allowed", "host", "ok"),
    [
        ("app.test", "app.test:8080", True),
        ("app.test:80", "app.test", True),  # no port in Host: the default one
        ("app.test:443", "app.test", True),  # ... or https's, behind a TLS proxy
        ("app.test:8080", "app.test", False),
        ("app.test:8080", "app.test:8081", False),
    ],
)
def test_allowed_hosts(allowed: str, host: str, ok: bool) -> None:
    """``--allowed-host NAME`` takes any port; ``NAME:PORT`` that port, a Host without one meaning the default."""
    front = HttpFront(["true"], HttpConfig(allowed_hosts=(allowed,)))
    assert (front.security.refusal(read_host_origin([(b"host", host.encode())], b"/mcp"), None) is None) is ok


def test_allowed_origin_entries_must_be_origins() -> None:
    """A malformed --allowed-origin is a configuration error, not a pattern that silently never matches."""
    assert parse_origin("http://app.test") == ("http", "app.test", 80)
    assert parse_origin("http://app.test:*", pattern=True) == ("http", "app.test", "*")
    assert parse_origin("http://app.test:*") is None  # a wildcard is no Origin header value
    for bad in ("app.test", "http://app.test/path", "null", "http://user@app.test", "http://app.test:1:*"):
        with pytest.raises(ValueError, match="is not an origin"):
            HttpConfig(allowed_origins=(bad,))


# ---------------------------------------------------------------------------------------------
# The SDK's client through the guard


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_sdk_client_lists_and_calls_through_the_http_front(sigma: Guard, mode: Literal["legacy", "auto"]) -> None:
    """Tools listed annotated; a valid call forwarded; invalid and unsupported calls refused; both eras."""
    with anyio.fail_after(TIMEOUT):
        async with Client(sigma.url, mode=mode) as client:
            assert client.protocol_version == ("2025-11-25" if mode == "legacy" else MODERN)
            listed = await client.list_tools()
            verdicts = {t.name: (t.meta or {})["mcp-guard/schema"]["supported"] for t in listed.tools}
            assert len(verdicts) == 15
            assert verdicts["add"] is True and verdicts["read"] is True
            assert verdicts["fetch_page"] is False and verdicts["broken_tool"] is False

            added = await client.call_tool("add", {"a": 40, "b": 2})
            assert not added.is_error
            assert isinstance(added.content[0], types.TextContent) and added.content[0].text == "42"

            refused = await client.call_tool("add", {"a": "40", "b": 2})
            assert refused.is_error
            rejection = (refused.meta or {})["mcp-guard/rejection"]
            assert rejection["kind"] == "validation"
            assert [i["instance_path"] for i in rejection["issues"]] == ["/a"]

            unsupported = await client.call_tool("fetch_page", {"url": "https://example.com"})
            assert unsupported.is_error
            assert (unsupported.meta or {})["mcp-guard/rejection"]["kind"] == "unsupported_capability"

            with pytest.raises(MCPError) as excinfo:
                await client.call_tool("no_such_tool", {})
            assert excinfo.value.error.code == -32602


@needs_proc
async def test_two_sessions_each_get_their_own_upstream(tmp_path: Path) -> None:
    """Two SDK sessions at once: two upstream processes; each session ends (DELETE) with its own."""
    async with open_guard(tmp_path) as guard:
        assert children(guard.process.pid) == set()
        with anyio.fail_after(TIMEOUT):
            async with Client(guard.url, mode="legacy") as first:
                one = children(guard.process.pid)
                assert len(one) == 1
                async with Client(guard.url, mode="legacy") as second:
                    both = children(guard.process.pid)
                    assert len(both) == 2 and one < both
                    a, b = (
                        await first.call_tool("add", {"a": 1, "b": 2}),
                        await second.call_tool("add", {"a": 3, "b": 4}),
                    )
                    assert isinstance(a.content[0], types.TextContent) and a.content[0].text == "3"
                    assert isinstance(b.content[0], types.TextContent) and b.content[0].text == "7"
                (second_pid,) = both - one
                # The second client sent DELETE on leaving: its upstream stops, the first one's runs on.
                await eventually(lambda: not alive(second_pid), "the second session's upstream to stop")
                # (a zombie until the guard reaps it: /proc lists it as a child a moment longer)
                await eventually(lambda: children(guard.process.pid) == one, "the guard to reap it")
                again = await first.call_tool("add", {"a": 5, "b": 5})
                assert isinstance(again.content[0], types.TextContent) and again.content[0].text == "10"
            await eventually(lambda: not children(guard.process.pid), "every upstream to stop")
        assert "session" in guard.log and "ended" in guard.log


# ---------------------------------------------------------------------------------------------
# Sessions, raw


async def test_session_id_is_issued_and_required(sigma: Guard) -> None:
    """``Mcp-Session-Id`` on the initialize answer; 400 without it, 404 for an unknown one; 202 for notifications."""
    async with http_client() as client:
        with anyio.fail_after(TIMEOUT):
            answer = await post(client, sigma, request(1, "initialize", INIT))
            assert answer.status_code == 200
            assert answer.headers["content-type"] == "application/json"
            session = answer.headers["mcp-session-id"]
            assert len(session) >= 32 and all(0x21 <= ord(c) <= 0x7E for c in session)
            assert answer.json()["id"] == 1

            note = await post(client, sigma, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
            assert (note.status_code, note.content) == (202, b"")
            assert note.headers["mcp-session-id"] == session

            listed = await post(client, sigma, request(2, "tools/list"), session)
            assert listed.status_code == 200 and listed.headers["mcp-session-id"] == session
            (message,) = messages_of(listed)
            assert message["id"] == 2 and len(message["result"]["tools"]) == 15

            missing = await post(client, sigma, request(3, "tools/list"))
            assert missing.status_code == 400
            assert missing.json()["error"]["code"] == -32600

            unknown = await post(client, sigma, request(4, "tools/list"), "0" * 32)
            assert unknown.status_code == 404

            versioned = await post(client, sigma, request(5, "ping"), session, {"mcp-protocol-version": "2025-11-25"})
            assert versioned.status_code == 200 and versioned.json() == {"jsonrpc": "2.0", "id": 5, "result": {}}
            unsupported = await post(client, sigma, request(6, "ping"), session, {"mcp-protocol-version": "1999-01-01"})
            assert unsupported.status_code == 400


async def test_a_second_initialize_in_a_session_is_refused(sigma: Guard) -> None:
    """A session is initialized once (red team 37 F8): an ``initialize`` carrying its ``Mcp-Session-Id`` gets 400 and
    -32600 under its id, reaches no relay, and the session goes on."""
    async with http_client() as client:
        with anyio.fail_after(TIMEOUT):
            session = await open_session(client, sigma)
            again = await post(
                client, sigma, request(7, "initialize", {**INIT, "protocolVersion": "2024-11-05"}), session
            )
            assert again.status_code == 400 and again.headers["mcp-session-id"] == session
            assert again.json() == {
                "jsonrpc": "2.0",
                "id": 7,
                "error": {"code": -32600, "message": ALREADY_INITIALIZED},
            }
            pinged = await post(client, sigma, request(8, "ping"), session, {"mcp-protocol-version": "2025-11-25"})
            assert pinged.status_code == 200 and pinged.json() == {"jsonrpc": "2.0", "id": 8, "result": {}}


async def test_delete_ends_the_session(sigma: Guard) -> None:
    """DELETE answers 200; afterwards the session id answers 404 to POST, GET and DELETE."""
    async with http_client() as client:
        with anyio.fail_after(TIMEOUT):
            session = await open_session(client, sigma)
            assert (await post(client, sigma, request(1, "ping"), session)).status_code == 200
            deleted = await client.delete(sigma.url, headers={"mcp-session-id": session})
            assert deleted.status_code == 200
            assert (await post(client, sigma, request(2, "ping"), session)).status_code == 404
            get = await client.get(sigma.url, headers={"accept": "text/event-stream", "mcp-session-id": session})
            assert get.status_code == 404
            assert (await client.delete(sigma.url, headers={"mcp-session-id": session})).status_code == 404
            assert (await client.delete(sigma.url)).status_code == 400


async def test_same_ids_in_two_sessions_stay_apart(sigma: Guard) -> None:
    """Two sessions use the same ids at the same time; each answer goes to its own session's request."""
    async with http_client() as client:
        with anyio.fail_after(TIMEOUT):
            sessions = [await open_session(client, sigma) for _ in range(2)]
            answers: dict[tuple[int, int], dict[str, Any]] = {}

            async def one(s: int, i: int) -> None:
                response = await post(client, sigma, call(i, "read", {"path": f"/s{s}/{i}"}), sessions[s])
                (answers[s, i],) = messages_of(response)

            async with anyio.create_task_group() as tg:
                for i in range(20):
                    for s in range(2):
                        tg.start_soon(one, s, i)
    for (s, i), message in answers.items():
        assert message["id"] == i
        assert text_of(message) == f'read ran with arguments: {{"path":"/s{s}/{i}"}}'
    assert len(answers) == 40


# ---------------------------------------------------------------------------------------------
# Request checks


async def test_dns_rebinding_protection(sigma: Guard) -> None:
    """A foreign Host or Origin gets 403; loopback hosts and origins pass; no Origin passes."""
    async with http_client() as client:
        with anyio.fail_after(TIMEOUT):
            evil_host = await post(client, sigma, request(1, "initialize", INIT), headers={"host": "evil.example"})
            assert evil_host.status_code == 403
            assert evil_host.json()["error"]["code"] == -32600
            rebound = await post(
                client,
                sigma,
                request(1, "initialize", INIT),
                headers={"host": f"evil.example:{sigma.host.split(':')[1]}"},
            )
            assert rebound.status_code == 403
            for origin in ("http://evil.example", "null", "http://localhost.evil.example:8080", "file://"):
                refused = await post(client, sigma, request(1, "initialize", INIT), headers={"origin": origin})
                assert refused.status_code == 403, origin
            port = sigma.host.split(":")[1]
            for host, origin in (
                (f"localhost:{port}", "http://localhost:5173"),
                (f"127.0.0.1:{port}", "http://127.0.0.1"),
                (f"[::1]:{port}", "https://[::1]:443"),
            ):
                answer = await post(
                    client, sigma, request(1, "initialize", INIT), headers={"host": host, "origin": origin}
                )
                assert answer.status_code == 200, (host, origin)
                await client.delete(sigma.url, headers={"mcp-session-id": answer.headers["mcp-session-id"]})
    # The line says which check refused (trial3 T6), never the header's value.
    assert "refused an HTTP request: forbidden (the Host header is not an allowed host)" in sigma.log
    assert "refused an HTTP request: forbidden (the Origin header is not an allowed origin)" in sigma.log
    assert "evil.example" not in sigma.log
    assert "over HTTP (profile standard, outputs enforce)" in sigma.log  # as stdio's start-up line (trial3 T6)


async def test_http_level_refusals(sigma: Guard) -> None:
    """Path, method, Accept, Content-Type, batches, bad JSON and non-messages each get their HTTP error."""
    async with http_client() as client:
        with anyio.fail_after(TIMEOUT):
            session = await open_session(client, sigma)
            other_path = await client.post(sigma.url.replace("/mcp", "/other"), content=b"{}", headers=ACCEPT)
            assert other_path.status_code == 404
            put = await client.put(sigma.url, content=b"{}", headers=ACCEPT)
            assert put.status_code == 405 and put.headers["allow"] == "GET, POST, DELETE"
            json_only = await post(client, sigma, request(1, "ping"), session, {"accept": "application/json"})
            assert json_only.status_code == 406
            wrong_type = await post(client, sigma, request(1, "ping"), session, {"content-type": "text/plain"})
            assert wrong_type.status_code == 415
            batch = await post(client, sigma, [request(1, "ping"), request(2, "ping")], session)
            assert batch.status_code == 400 and batch.json()["error"]["code"] == -32600
            broken = await post(client, sigma, b'{"jsonrpc":"2.0","id":7,"method":"ping"', session)
            assert broken.status_code == 400
            assert broken.json()["error"]["code"] == -32700
            assert broken.json()["error"]["message"].startswith("Parse error: the body is not valid JSON (")
            long_integer = b'{"jsonrpc":"2.0","id":8,"method":"ping","params":{"n":' + b"3" * 5000 + b"}}"
            too_long = await post(client, sigma, long_integer, session)
            assert too_long.status_code == 400 and too_long.json()["id"] == 8
            assert too_long.json()["error"]["code"] == -32700
            assert "integer literal of more than 4,300 digits" in too_long.json()["error"]["message"]
            assert "3333333333" not in too_long.text
            control = await post(client, sigma, b'{"jsonrpc":"2.0","id":"SECRET\x1b', session)
            assert control.status_code == 400
            assert "(Invalid control character at character " in control.json()["error"]["message"]  # one "at"
            # Logged as stdio logs a line (trial3 T5): why, never the text (bounded: the 1st, 2nd, 4th... time).
            logged = [line for line in sigma.log.splitlines() if "request body that does not parse" in line]
            assert logged and "with -32700: it " in logged[0], logged
            assert "SECRET" not in sigma.log and "3333333333" not in sigma.log
            not_message = await post(client, sigma, {"hello": 1}, session)
            assert not_message.status_code == 400
            bad_id = await post(client, sigma, request(True, "ping"), session)
            assert bad_id.status_code == 400
            get_json = await client.get(sigma.url, headers={"accept": "application/json", "mcp-session-id": session})
            assert get_json.status_code == 406
            # Still usable after all that.
            ok = await post(client, sigma, request(9, "ping"), session)
            assert ok.json() == {"jsonrpc": "2.0", "id": 9, "result": {}}


async def test_one_get_stream_per_session(sigma: Guard) -> None:
    """GET opens an SSE stream carrying the session id; a second one at the same time gets 409."""
    async with http_client() as client:
        with anyio.fail_after(TIMEOUT):
            session = await open_session(client, sigma)
            headers = {"accept": "text/event-stream", "mcp-session-id": session}
            async with client.stream("GET", sigma.url, headers=headers) as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"] == "text/event-stream"
                assert stream.headers["mcp-session-id"] == session
                second = await client.get(sigma.url, headers=headers)
                assert second.status_code == 409
            assert (await client.get(sigma.url, headers={"accept": "text/event-stream"})).status_code == 400
            await client.delete(sigma.url, headers={"mcp-session-id": session})


# ---------------------------------------------------------------------------------------------
# The 2026-07-28 era: no session


async def test_2026_requests_need_no_session(sigma: Guard) -> None:
    """server/discover and calls without a session; the client's ids come back; header mismatches are 400."""
    async with http_client() as client:
        with anyio.fail_after(TIMEOUT):
            discover, headers = modern(request("d-1", "server/discover"))
            found = await post(client, sigma, discover, headers=headers)
            assert found.status_code == 200
            assert "mcp-session-id" not in found.headers
            (answer,) = messages_of(found)
            assert answer["id"] == "d-1" and MODERN in answer["result"]["supportedVersions"]

            valid, headers = modern(call(7, "add", {"a": 2, "b": 3}))
            (answer,) = messages_of(await post(client, sigma, valid, headers=headers))
            assert answer["id"] == 7 and text_of(answer) == "5"

            invalid, headers = modern(call(8, "add", {"a": 2}))
            (answer,) = messages_of(await post(client, sigma, invalid, headers=headers))
            assert answer["id"] == 8 and answer["result"]["isError"] is True
            assert answer["result"]["_meta"]["mcp-guard/rejection"]["kind"] == "validation"

            unknown, headers = modern(call(9, "no_such_tool", {}))
            response = await post(client, sigma, unknown, headers=headers)
            assert response.status_code == 400  # -32602, mapped as the spec's table says
            assert response.json()["id"] == 9 and response.json()["error"]["code"] == -32602

            mismatch, headers = modern(call(10, "add", {"a": 1, "b": 1}))
            response = await post(client, sigma, mismatch, headers={**headers, "mcp-name": "read"})
            assert response.status_code == 400 and response.json()["error"]["code"] == -32020
            response = await post(client, sigma, mismatch, headers={**headers, "mcp-method": "tools/list"})
            assert response.status_code == 400 and response.json()["error"]["code"] == -32020
            no_header = {k: v for k, v in headers.items() if k != "mcp-protocol-version"}
            response = await post(client, sigma, mismatch, headers=no_header)
            assert response.status_code == 400 and response.json()["error"]["code"] == -32020

            get = await client.get(sigma.url, headers={"accept": "text/event-stream", "mcp-protocol-version": MODERN})
            assert get.status_code == 405
            note = await post(
                client,
                sigma,
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}},
                headers={"mcp-protocol-version": MODERN},
            )
            assert note.status_code == 202


async def test_2026_concurrent_requests_with_colliding_ids(sigma: Guard) -> None:
    """200 clients' requests, all with id 1, on the one shared upstream: each gets its own answer."""
    answers: dict[int, tuple[int, dict[str, Any]]] = {}
    async with http_client() as client:

        async def one(i: int) -> None:
            message, headers = modern(call(1, "read", {"path": f"/modern/{i}"}))
            response = await post(client, sigma, message, headers=headers)
            (answers[i],) = [(response.status_code, m) for m in messages_of(response)]

        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:
                for i in range(200):
                    tg.start_soon(one, i)
    assert len(answers) == 200
    for i, (status, message) in answers.items():
        assert status == 200 and message["id"] == 1
        assert text_of(message) == f'read ran with arguments: {{"path":"/modern/{i}"}}'


# ---------------------------------------------------------------------------------------------
# Size and concurrency


async def test_16_mib_argument_passes_both_ways(sigma: Guard) -> None:
    """A 16 MiB argument reaches the upstream and its 16 MiB echo comes back whole."""
    content = "0123456789abcdef" * (1 << 20)
    async with http_client() as client:
        with anyio.fail_after(TIMEOUT * 2):
            session = await open_session(client, sigma)
            response = await post(client, sigma, call(1, "write", {"path": "/big", "content": content}), session)
    assert response.status_code == 200
    (message,) = messages_of(response)
    assert message["id"] == 1 and message["result"]["isError"] is False
    expected = "write ran with arguments: " + json.dumps({"path": "/big", "content": content}, separators=(",", ":"))
    assert text_of(message) == expected
    assert len(response.content) > 16 * 1024 * 1024


async def test_1000_concurrent_calls_each_answered_to_its_own_request(sigma: Guard) -> None:
    """1000 concurrent tools/call in one session, ids ``i`` and ``"i"``: all answered, each with its own echo."""
    answers: dict[tuple[bool, int], tuple[int, list[dict[str, Any]]]] = {}
    limits = httpx.Limits(max_connections=1100, max_keepalive_connections=1100)
    async with http_client(limits=limits) as client:
        with anyio.fail_after(TIMEOUT * 3):
            session = await open_session(client, sigma)

            async def one(request_id: int | str) -> None:
                tag = f"/{type(request_id).__name__}/{request_id}"
                response = await post(client, sigma, call(request_id, "read", {"path": tag}), session)
                answers[isinstance(request_id, str), int(request_id)] = (response.status_code, messages_of(response))

            async with anyio.create_task_group() as tg:
                for i in range(500):
                    tg.start_soon(one, i)
                    tg.start_soon(one, str(i))
            await client.delete(sigma.url, headers={"mcp-session-id": session})
    assert len(answers) == 1000
    for (is_str, i), (status, messages) in answers.items():
        assert status == 200
        (message,) = messages
        assert message["id"] == (str(i) if is_str else i)  # "1" and 1 are different requests
        tag = f"/{'str' if is_str else 'int'}/{i}"
        assert text_of(message) == f'read ran with arguments: {{"path":"{tag}"}}'


async def test_message_cap(tmp_path: Path) -> None:
    """Past --max-message-bytes: a body gets 413, an upstream answer becomes an error for its request."""
    cap = 1 << 20
    async with open_guard(tmp_path, "--max-message-bytes", str(cap)) as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            session = await open_session(client, guard)
            too_big = await post(client, guard, call(1, "write", {"path": "/x", "content": "x" * cap}), session)
            assert too_big.status_code == 413
            assert too_big.json()["error"]["code"] == -32600
            fits = await post(client, guard, call(2, "write", {"path": "/x", "content": "x" * (cap - 1000)}), session)
            (message,) = messages_of(fits)
            assert message["id"] == 2 and text_of(message).startswith("write ran with arguments: ")
            # Quotes double in the request and double again in the echo: 600 kB in, 1.2 MB out.
            quotes = '"' * 300_000
            grown = await post(client, guard, call(3, "write", {"path": "/x", "content": quotes}), session)
            (message,) = messages_of(grown)
            assert message["id"] == 3 and message["error"]["code"] == -32603
            # (the relay's pipe from the upstream has the same cap: it answers before the front would)
            assert f"longer than {cap} bytes" in message["error"]["message"]
            after = await post(client, guard, request(4, "ping"), session)
            assert after.json() == {"jsonrpc": "2.0", "id": 4, "result": {}}
        assert "refused a request body larger than the message limit" in guard.log


# ---------------------------------------------------------------------------------------------
# Admission: the session cap under concurrency, refused initialize requests, slow bodies


@needs_proc
async def test_the_session_cap_holds_under_concurrent_initialize(tmp_path: Path) -> None:
    """30 initialize requests at once with --max-sessions 10: 10 sessions and 10 upstreams, 20 refusals (503)."""
    async with open_guard(tmp_path, "--max-sessions", "10") as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            statuses: list[int] = []

            async def initialize(n: int) -> None:
                statuses.append((await post(client, guard, request(n, "initialize", INIT))).status_code)

            async with anyio.create_task_group() as tg:
                for n in range(30):
                    tg.start_soon(initialize, n)
            assert sorted(statuses) == [200] * 10 + [503] * 20
            assert len([pid for pid in children(guard.process.pid) if alive(pid)]) == 10
            # The cap stays taken while the ten are open.
            assert (await post(client, guard, request(99, "initialize", INIT))).status_code == 503


@needs_proc
async def test_a_refused_initialize_opens_no_session(tmp_path: Path) -> None:
    """Refused by the guard (no params): nothing starts. Refused by the upstream (the SDK needs clientInfo):
    the error carries no session id, and the upstream the answer needed is stopped."""
    async with open_guard(tmp_path, "--max-sessions", "1") as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            bare = await post(client, guard, request(1, "initialize"))
            assert bare.status_code == 400 and bare.json()["error"]["code"] == -32602
            assert "mcp-session-id" not in bare.headers and children(guard.process.pid) == set()
            refused = await post(client, guard, request(2, "initialize", {"protocolVersion": "2025-11-25"}))
            (answer,) = messages_of(refused)
            assert "error" in answer and "mcp-session-id" not in refused.headers
            await eventually(
                lambda: not any(alive(pid) for pid in children(guard.process.pid)), "the refused session's upstream"
            )
            # The one slot (--max-sessions 1) was given back: a good initialize opens a session.
            assert await open_session(client, guard)
        assert "initialize was answered with an error; ending the session" in guard.log


async def test_a_body_that_trickles_in_is_cut_off_and_others_are_served(tmp_path: Path) -> None:
    """Bodies sent a byte at a time are answered 408 after --http-body-timeout (never held for ever), and
    requests are served meanwhile."""
    async with open_guard(tmp_path, "--http-body-timeout", "3") as guard, http_client() as client:
        host, port = guard.host.rsplit(":", 1)
        body = json.dumps(request(1, "ping")).encode()
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: {guard.host}\r\nAccept: application/json, text/event-stream\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        answers: list[bytes] = []

        async def trickle() -> None:
            async with await anyio.connect_tcp(host, int(port)) as stream:
                await stream.send(head)
                reply = b""
                with anyio.move_on_after(TIMEOUT):
                    for byte in body[:-1]:  # never complete
                        await stream.send(bytes([byte]))
                        with anyio.move_on_after(0.5):
                            reply += await stream.receive()
                            break
                    while not reply.endswith(b"}"):
                        reply += await stream.receive()
                answers.append(reply)

        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:
                for _ in range(50):
                    tg.start_soon(trickle)
                await anyio.sleep(0.5)
                session = await open_session(client, guard)
                pong = await post(client, guard, request(2, "ping"), session)
                assert pong.json() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        assert len(answers) == 50
        for reply in answers:
            assert reply.startswith(b"HTTP/1.1 408 "), reply[:100]
            assert b"the request body did not arrive within 3 s (--http-body-timeout)" in reply
        assert "--http-body-timeout" in guard.log


# ---------------------------------------------------------------------------------------------
# Routing messages outside a request's answer (http_peer_server.py)


async def test_server_request_travels_on_the_post_stream(peer: tuple[Guard, Path]) -> None:
    """A server-to-client request during a call comes on the call's SSE stream; the client's answer is 202."""
    guard, _record = peer
    async with http_client() as client:
        with anyio.fail_after(TIMEOUT):
            session = await open_session(client, guard)
            body = json.dumps(call(5, "ask", {})).encode()
            headers = {**ACCEPT, "mcp-session-id": session}
            async with client.stream("POST", guard.url, content=body, headers=headers) as stream:
                assert stream.headers["content-type"] == "text/event-stream"
                events = sse_events(stream)
                asked = await anext(events)
                assert asked["method"] == "ping" and isinstance(asked["id"], str)
                reply = await post(client, guard, {"jsonrpc": "2.0", "id": asked["id"], "result": {}}, session)
                assert reply.status_code == 202
                answer = await anext(events)
                assert answer["id"] == 5 and text_of(answer) == "asked: {}"
                assert [m async for m in events] == []


async def test_progress_goes_only_to_its_own_request(peer: tuple[Guard, Path]) -> None:
    """Two calls at once in one session with their own progress tokens: each stream carries only its own."""
    guard, _record = peer
    streams: dict[str, list[dict[str, Any]]] = {}
    async with http_client() as client:
        with anyio.fail_after(TIMEOUT):
            session = await open_session(client, guard)

            async def one(request_id: int, token: str | int, tag: str) -> None:
                message = call(request_id, "progress", {"tag": tag}, meta={"progressToken": token})
                streams[tag] = messages_of(await post(client, guard, message, session))

            async with anyio.create_task_group() as tg:
                for n in range(6):
                    tg.start_soon(one, n, f"tok-{n}" if n % 2 else n, f"tag-{n}")
    for n in range(6):
        messages = streams[f"tag-{n}"]
        *progress, answer = messages
        assert answer["id"] == n and text_of(answer) == f"tag-{n}"
        assert [m["method"] for m in progress] == ["notifications/progress"] * 3
        assert {m["params"]["message"] for m in progress} == {f"tag-{n}"}
        assert {m["params"]["progressToken"] for m in progress} == {f"tok-{n}" if n % 2 else n}


async def test_unrelated_notification_goes_to_the_get_stream(peer: tuple[Guard, Path]) -> None:
    """A notification sent after the call was answered arrives on the session's GET stream."""
    guard, _record = peer
    async with http_client() as client:
        with anyio.fail_after(TIMEOUT):
            session = await open_session(client, guard)
            headers = {"accept": "text/event-stream", "mcp-session-id": session}
            async with client.stream("GET", guard.url, headers=headers) as stream:
                answer = await post(client, guard, call(1, "later", {}), session)
                assert answer.headers["content-type"] == "application/json"
                assert text_of(answer.json()) == "now"
                note = await anext(sse_events(stream))
                assert note == {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"level": "info", "data": "later"},
                }


async def test_notification_without_a_stream_waits_for_one(peer: tuple[Guard, Path]) -> None:
    """With no stream open the notification is kept, and delivered once a GET stream opens."""
    guard, _record = peer
    async with http_client() as client:
        with anyio.fail_after(TIMEOUT):
            session = await open_session(client, guard)
            answer = await post(client, guard, call(1, "later", {}), session)
            assert text_of(answer.json()) == "now"
            await anyio.sleep(0.5)  # the notification comes 0.2 s after the answer, to no open stream
            headers = {"accept": "text/event-stream", "mcp-session-id": session}
            async with client.stream("GET", guard.url, headers=headers) as stream:
                note = await anext(sse_events(stream))
                assert note["method"] == "notifications/message" and note["params"]["data"] == "later"


async def test_cancelled_request_is_answered_and_a_late_answer_dropped(peer: tuple[Guard, Path]) -> None:
    """A client's cancellation ends the stream with -32800 and reaches the upstream; a late answer is dropped.

    While the upstream may still answer the cancelled request, its id cannot be used again (409);
    once the late answer has come and gone, it can, and gets its own answer.
    """
    guard, record = peer
    async with http_client() as client:
        with anyio.fail_after(TIMEOUT):
            session = await open_session(client, guard)
            body = json.dumps(call("c-1", "ask", {})).encode()
            headers = {**ACCEPT, "mcp-session-id": session}
            async with client.stream("POST", guard.url, content=body, headers=headers) as stream:
                events = sse_events(stream)
                asked = await anext(events)
                cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "c-1"}}
                assert (await post(client, guard, cancel, session)).status_code == 202
                ended = await anext(events)
                assert ended["id"] == "c-1" and ended["error"]["code"] == -32800
            early = await post(client, guard, call("c-1", "echo", {}), session)
            assert early.status_code == 409 and early.json()["id"] == "c-1"
            # The upstream answers the cancelled call once its question is answered: that answer is dropped.
            assert (
                await post(client, guard, {"jsonrpc": "2.0", "id": asked["id"], "result": {}}, session)
            ).status_code == 202
            echoed = await post(client, guard, call("c-2", "echo", {"n": 2}), session)
            assert messages_of(echoed) == [
                {
                    "jsonrpc": "2.0",
                    "id": "c-2",
                    "result": {"content": [{"type": "text", "text": '{"n":2}'}], "isError": False},
                }
            ]
            reused = await post(client, guard, call("c-1", "echo", {"n": 1}), session)
            assert reused.status_code == 200
            (answer,) = messages_of(reused)
            assert answer["id"] == "c-1" and text_of(answer) == '{"n":1}'
    lines = [json.loads(line) for line in record.read_bytes().splitlines()]
    # It reached the upstream naming the call by the id the guard sent it under (its own, not "c-1").
    asked_ids = [m["id"] for m in lines if m.get("method") == "tools/call" and m["params"]["name"] == "ask"]
    assert asked_ids and all(i.startswith("mcp-guard-") for i in asked_ids)
    assert any({**cancel, "params": {"requestId": i}} in lines for i in asked_ids)


async def test_2026_closed_stream_cancels_upstream(peer: tuple[Guard, Path]) -> None:
    """Closing a 2026-07-28 response stream sends notifications/cancelled for the upstream's id of that request."""
    guard, record = peer

    def recorded() -> list[dict[str, Any]]:
        return [json.loads(line) for line in record.read_bytes().splitlines()] if record.exists() else []

    async with http_client() as client:
        with anyio.fail_after(TIMEOUT):
            message, headers = modern(call("mine", "slow", {"seconds": 30, "marker": "cancel-me"}))
            before = len(recorded())

            def arrived() -> bool:
                return any(
                    m.get("method") == "tools/call" and m["params"]["arguments"].get("marker") == "cancel-me"
                    for m in recorded()[before:]
                )

            async with anyio.create_task_group() as tg:
                # The answer's headers wait for the first message (up to the keep-alive window), so the
                # request is cancelled in flight: that closes the connection.
                tg.start_soon(post, client, guard, message, None, headers)
                await eventually(arrived, "the call to reach the upstream")
                tg.cancel_scope.cancel()
            forwarded = next(
                m
                for m in recorded()[before:]
                if m.get("method") == "tools/call" and m["params"]["arguments"].get("marker") == "cancel-me"
            )
            assert forwarded["id"] != "mine"  # the shared upstream sees an id of the guard's
            await eventually(
                lambda: any(
                    m.get("method") == "notifications/cancelled" and m["params"]["requestId"] == forwarded["id"]
                    for m in recorded()
                ),
                "the cancellation to reach the upstream",
            )


async def test_2026_progress_tokens_collide_across_clients(peer: tuple[Guard, Path]) -> None:
    """Concurrent 2026-07-28 calls with the same id and progress token each get only their own progress."""
    guard, _record = peer
    streams: dict[int, list[dict[str, Any]]] = {}
    async with http_client() as client:

        async def one(n: int) -> None:
            message, headers = modern(call(1, "progress", {"tag": f"m-{n}"}, meta={"progressToken": "p"}))
            streams[n] = messages_of(await post(client, guard, message, headers=headers))

        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:
                for n in range(8):
                    tg.start_soon(one, n)
    for n in range(8):
        *progress, answer = streams[n]
        assert answer["id"] == 1 and text_of(answer) == f"m-{n}"
        assert len(progress) == 3
        assert all(m["params"]["progressToken"] == "p" and m["params"]["message"] == f"m-{n}" for m in progress)


# ---------------------------------------------------------------------------------------------
# Token, idle sessions, shutdown, command line


async def test_bearer_token(tmp_path: Path) -> None:
    """With --http-token-env, requests without the right bearer token get 401; the token is never logged."""
    token = "tok-" + os.urandom(12).hex()
    async with (
        open_guard(tmp_path, "--http-token-env", "GUARD_TEST_TOKEN", env={"GUARD_TEST_TOKEN": token}) as guard,
        http_client() as client,
    ):
        with anyio.fail_after(TIMEOUT):
            missing = await post(client, guard, request(1, "initialize", INIT))
            assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
            wrong = await post(
                client, guard, request(1, "initialize", INIT), headers={"authorization": f"Bearer {token}x"}
            )
            assert wrong.status_code == 401
            basic = await post(
                client, guard, request(1, "initialize", INIT), headers={"authorization": f"Basic {token}"}
            )
            assert basic.status_code == 401
            auth = {"authorization": f"Bearer {token}"}
            right = await post(client, guard, request(1, "initialize", INIT), headers=auth)
            assert right.status_code == 200
            session = right.headers["mcp-session-id"]
            assert (await post(client, guard, request(2, "ping"), session)).status_code == 401
            assert (await post(client, guard, request(2, "ping"), session, auth)).status_code == 200
        assert token not in guard.log


@needs_proc
async def test_idle_session_is_ended(tmp_path: Path) -> None:
    """A session idle past --session-idle-timeout ends: its upstream stops and its id answers 404."""
    async with open_guard(tmp_path, "--session-idle-timeout", "1") as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            session = await open_session(client, guard)
            (upstream,) = children(guard.process.pid)
            await eventually(lambda: not alive(upstream), "the idle session's upstream to stop")
            assert (await post(client, guard, request(1, "ping"), session)).status_code == 404
        assert "idle for 1 s" in guard.log


@needs_proc
async def test_a_busy_session_outlives_the_idle_timeout_and_ends_once_idle(tmp_path: Path) -> None:
    """The idle time counts from the last request's end: requests every 0.3 s keep a session with
    --session-idle-timeout 1 open for 2.4 s; once they stop, it ends (the idle timer is lazy)."""
    async with open_guard(tmp_path, "--session-idle-timeout", "1") as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            session = await open_session(client, guard)
            (upstream,) = children(guard.process.pid)
            for i in range(8):
                await anyio.sleep(0.3)
                assert (await post(client, guard, request(i + 1, "ping"), session)).status_code == 200, i
            assert alive(upstream)
            await eventually(lambda: not alive(upstream), "the now idle session's upstream to stop")
            assert (await post(client, guard, request(99, "ping"), session)).status_code == 404
        assert "idle for 1 s" in guard.log


@needs_proc
async def test_idle_shared_2026_upstream_is_stopped_and_started_again(tmp_path: Path) -> None:
    """The shared 2026-07-28 upstream stops after --session-idle-timeout without a request; the next starts it."""
    async with open_guard(tmp_path, "--session-idle-timeout", "1") as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            discover, headers = modern(request("d-1", "server/discover"))
            assert (await post(client, guard, discover, headers=headers)).status_code == 200
            (upstream,) = children(guard.process.pid)
            await eventually(lambda: not alive(upstream), "the idle shared upstream to stop")
            valid, headers = modern(call(7, "add", {"a": 2, "b": 3}))
            (answer,) = messages_of(await post(client, guard, valid, headers=headers))
            assert text_of(answer) == "5"
            assert len(children(guard.process.pid)) == 1
        assert "2026-07-28 channel idle for 1 s; ending it" in guard.log


@needs_proc
async def test_shared_upstream_that_does_not_speak_2026_is_stopped_after_discover(tmp_path: Path) -> None:
    """server/discover answered -32601 (an SDK client's auto probe, a handshake-era server): the shared upstream
    stops once no 2026-07-28 request is in flight, not when the guard exits; requests in flight finish first."""
    env = {"RECORD_FILE": str(tmp_path / "record.jsonl")}
    async with open_guard(tmp_path, upstream=FAULTY_SERVER, env=env) as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            slow, slow_headers = modern(call("s-1", "slow", {"seconds": 2}))
            answers: list[dict[str, Any]] = []

            async def slow_call() -> None:
                answers.extend(messages_of(await post(client, guard, slow, headers=slow_headers)))

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow_call)
                await eventually(lambda: len(children(guard.process.pid)) == 1, "the shared upstream to start")
                (upstream,) = children(guard.process.pid)
                discover, headers = modern(request("d-1", "server/discover"))
                (refused,) = messages_of(await post(client, guard, discover, headers=headers))
                assert refused["error"]["code"] == -32601
                assert alive(upstream)  # the slow call is still in flight
            assert [m["result"]["content"][0]["text"] for m in answers if m.get("id") == "s-1"] == ["slow ok"]
            await eventually(lambda: not alive(upstream), "the shared upstream to stop")
            ping, headers = modern(request("p-1", "ping"))
            (answer,) = messages_of(await post(client, guard, ping, headers=headers))
            assert answer == {"jsonrpc": "2.0", "id": "p-1", "result": {}}
        assert "answered server/discover with error -32601, so it does not speak the 2026-07-28 era" in guard.log


@needs_proc
async def test_sigterm_stops_every_upstream(tmp_path: Path) -> None:
    """SIGTERM: the guard ends every session and the shared 2026-07-28 upstream, then exits 0."""
    async with open_guard(tmp_path) as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            for _ in range(2):
                await open_session(client, guard)
            discover, headers = modern(request(1, "server/discover"))
            assert (await post(client, guard, discover, headers=headers)).status_code == 200
            upstreams = children(guard.process.pid)
            assert len(upstreams) == 3
            guard.process.send_signal(signal.SIGTERM)
            await guard.process.wait()
        assert guard.process.returncode == 0
        assert not any(alive(pid) for pid in upstreams)


async def test_upstream_exit_mid_call(tmp_path: Path) -> None:
    """The upstream exits during a call: the call is answered with an error; the session's next
    request starts the upstream again, with the handshake replayed."""
    async with open_guard(tmp_path, upstream=FORGING_SERVER) as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            session = await open_session(client, guard)
            response = await post(client, guard, call(1, "exit_now", {}), session)
            (answer,) = messages_of(response)
            assert answer["id"] == 1 and answer["error"]["code"] == -32603
            again = await post(client, guard, call(2, "echo", {}), session)
            assert again.status_code == 200
            results = [m for m in messages_of(again) if m.get("id") == 2]
            assert results and results[0]["result"]["content"] == [{"type": "text", "text": "ok"}]
            await eventually(lambda: "upstream restarted (restart 1)" in guard.log, "the restart to be logged")


async def test_calls_held_for_a_listing_the_upstream_dies_on_are_answered(tmp_path: Path) -> None:
    """The upstream answers initialize and exits on tools/list: calls waiting for the guard's listing, in a
    session and in the 2026-07-28 era, all get -32603 saying the upstream went away (no hang). A call that waited
    behind another (red team 37: in order) may find the upstream found unable to start by then, and say that."""
    env = {"EXIT_ON_LIST": "1", "RECORD_FILE": str(tmp_path / "record.jsonl")}
    answers: dict[Any, dict[str, Any]] = {}
    async with open_guard(tmp_path, upstream=FAULTY_SERVER, env=env) as guard, http_client() as client:
        with anyio.fail_after(PROMPT):
            session = await open_session(client, guard)

            async def one(message: dict[str, Any], session: str | None, headers: dict[str, str] | None) -> None:
                for answer in messages_of(await post(client, guard, message, session, headers)):
                    if "id" in answer and "method" not in answer:
                        answers[answer["id"]] = answer

            async with anyio.create_task_group() as tg:
                for request_id in (2, 3):
                    tg.start_soon(one, call(request_id, "echo", {}), session, None)
                for request_id in ("m7", "m8"):
                    message, headers = modern(call(request_id, "echo", {}))
                    tg.start_soon(one, message, None, headers)
    assert sorted(map(str, answers)) == ["2", "3", "m7", "m8"]
    for answer in answers.values():
        assert answer["error"]["code"] == -32603, answer
        text = answer["error"]["message"]
        listing = text.startswith("mcp-guard could not list the upstream's tools") and "went away" in text
        assert listing or "could not be started (the upstream ended before it answered any request" in text, answer


def test_missing_upstream_command_fails_at_start() -> None:
    """An upstream command that does not exist stops the guard at once (status 1), before it listens."""
    done = subprocess.run(
        [sys.executable, "-m", "mcp_guard", "wrap", "--http", "0", "--", "mcp-guard-no-such-command"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 1
    assert "upstream command not found: mcp-guard-no-such-command" in done.stderr
    assert "serving" not in done.stderr


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        (["--http", "nonsense"], "--http"),
        (["--http", "99999"], "--http"),
        (["--allowed-host", "example.com"], "--allowed-host only applies with --http"),
        (["--http", "0", "--http-token-env", "MCP_GUARD_SURELY_UNSET"], "MCP_GUARD_SURELY_UNSET"),
        (["--http", "0", "--max-message-bytes", "10"], "error: --max-message-bytes: must be at least 1024"),
        (["--http", "0", "--max-sessions", "0"], "argument --max-sessions: must be a positive whole number: '0'"),
        (  # red team, stop 33: it said "must be more than 0.0", and 0 (never) is accepted
            ["--http", "0", "--session-idle-timeout", "-1"],
            "--session-idle-timeout: must be a positive number of seconds, or 0 for never: '-1'",
        ),
        (["--http", "0", "--session-idle-timeout", "inf"], "or 0 for never: 'inf'"),
        (["--http", "0", "--allowed-origin", "app.test:*"], "error: --allowed-origin: 'app.test:*' is not an origin"),
    ],
)
def test_command_line_usage_errors(arguments: list[str], complaint: str) -> None:
    """Bad HTTP options are usage errors (status 2) that name the problem."""
    env = {k: v for k, v in os.environ.items() if k != "MCP_GUARD_SURELY_UNSET"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_guard",
            "wrap",
            "--profile",
            "standard",
            *arguments,
            "--",
            sys.executable,
            str(SIGMA_SERVER),
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=ROOT,
        env=env,
        check=False,
    )
    assert done.returncode == 2
    assert "Value error" not in done.stderr and "allowed_origins" not in done.stderr  # the option as typed (trial T8)
    assert complaint in done.stderr


# ---------------------------------------------------------------------------------------------
# Request headers that trickle in (uvicorn's h11 server has no deadline of its own)


@asynccontextmanager
async def front_in_process(config: HttpConfig) -> AsyncIterator[str]:
    """Serve an :class:`HttpFront` over the Sigma server with ``serve_front`` in this process; yield ``HOST:PORT``."""
    async with in_process_front(config) as (host, port, _protocol):
        yield f"{host}:{port}"


async def trickled(host: str, head: bytes, *, after: bytes = b"", pause: float = 0.05) -> tuple[bytes, int]:
    """Send ``after`` at once, then ``head`` a byte per ``pause`` seconds until the guard answers or closes.

    Returns what the guard sent and how many bytes of ``head`` went out before it did.
    """
    name, port = host.rsplit(":", 1)
    reply = b""
    sent = 0
    async with await anyio.connect_tcp(name, int(port)) as stream:
        if after:
            await stream.send(after)
            while b"\r\n\r\n" not in reply:
                reply += await stream.receive()
            reply = b""
        with anyio.fail_after(TIMEOUT):
            while sent < len(head):
                await stream.send(head[sent : sent + 1])
                sent += 1
                with anyio.move_on_after(pause):
                    reply += await stream.receive()
                    break
            with suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                while True:
                    reply += await stream.receive()
    return reply, sent


async def test_request_headers_that_trickle_in_are_cut_off_and_others_are_served() -> None:
    """A request head sent a byte at a time is answered 408 once ``header_timeout`` has passed, on a new
    connection and on a kept-alive one after a first response; requests are served meanwhile."""
    async with front_in_process(HttpConfig(port=0, header_timeout=1.0)) as host, http_client() as client:
        head = (f"POST /mcp HTTP/1.1\r\nHost: {host}\r\nAccept: application/json\r\n" + "X-Pad: x\r\n" * 40).encode()
        first = f"GET /mcp HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n".encode()
        results: list[tuple[bytes, int]] = []

        async def one(after: bytes) -> None:
            results.append(await trickled(host, head, after=after))

        async with anyio.create_task_group() as tg:
            for i in range(20):
                tg.start_soon(one, first if i % 2 else b"")
            await anyio.sleep(0.3)
            served = await client.get(f"http://{host}/mcp", headers={"accept": "text/event-stream"})
            assert served.status_code == 400  # no session: answered at once, not held behind the trickles
    assert len(results) == 20
    for reply, sent in results:
        assert reply.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), reply[:80]
        assert b"the request headers did not arrive within 1 s" in reply
        assert sent < len(head)  # cut off while the head was still coming (it takes about 20 s to send)
