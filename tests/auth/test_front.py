"""The HTTP front as an OAuth 2.1 resource server, in process, with a test authorization server on loopback.

What must hold (issue 27 items 1 and 4): the protected resource metadata is served without a
token (RFC 9728, both paths); every other request is verified before any session work (401 with
``resource_metadata``, 403 ``insufficient_scope``, 400 for a malformed header); a verified
request's principal reaches the ``Call`` of its ``tools/call`` in wrap's relay and serve's gateway,
in both eras; a handshake-era session answers only its own principal; the client's token never
reaches an upstream; log lines name the failed check, never the token.

The front is driven through httpx's ASGI transport (its lifespan run by the test), so the
``Call`` can be seen: ``Pipeline.check`` (the entry of wrap's and serve's pipelines) is wrapped to
record the principal of every call it judges.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcp_guard.auth.principal import Principal
from mcp_guard.calls.call import Call
from mcp_guard.calls.pipeline import Pipeline
from mcp_guard.config import GatewayConfig, parse_config
from mcp_guard.fronts.http import HttpConfig, HttpFront
from mcp_guard.oauth_config import OAuthSettings
from mcp_guard.sessions.gateway import serve_session
from mcp_guard.streams.framing import LineStream
from tests.auth.issuer import Issuer, running_issuer
from tests.e2e.test_http_upstream import http_server

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
RECORDING = HERE.parent / "e2e" / "recording_server.py"
BASE = "http://127.0.0.1:8931"
RESOURCE = f"{BASE}/mcp"
METADATA = f"{BASE}/.well-known/oauth-protected-resource/mcp"
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "auth-test", "version": "0"}}
MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "auth-test", "version": "0"},
}
HANG_GUARD = 30


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with running_issuer() as running:
        yield running


@pytest.fixture
def judged(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Principal | None]]:
    """(tool, principal) of every call the pipeline judges (``Pipeline.check``: wrap's entry, and serve's
    within ``Pipeline.admit``)."""
    seen: list[tuple[str, Principal | None]] = []
    check = Pipeline.check

    def recording_check(self: Pipeline, call: Call) -> Any:
        seen.append((call.route.tool, call.principal))
        return check(self, call)

    monkeypatch.setattr(Pipeline, "check", recording_check)
    return seen


def oauth(issuer: Issuer) -> HttpConfig:
    return HttpConfig(oauth=OAuthSettings(issuer=issuer.url, resource=RESOURCE, scopes=("mcp:tools",)))


def gateway_factory(config: GatewayConfig) -> Any:
    def session(client: LineStream) -> Any:
        gateway = serve_session(client, config)

        class Runner:
            async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
                task_status.started()
                await gateway.run()

            def unready(self) -> list[str]:
                return gateway.unready()

        return Runner()

    return session


@asynccontextmanager
async def front(config: HttpConfig, gateway: GatewayConfig | None = None) -> AsyncIterator[httpx.AsyncClient]:
    """The front (wrap over the recording stdio server, or serve over ``gateway``) behind an httpx client."""
    factory = gateway_factory(gateway) if gateway is not None else None
    app = HttpFront([sys.executable, str(RECORDING)], config, profile="standard", session_factory=factory)
    started, stop = anyio.Event(), anyio.Event()

    async def lifespan() -> None:
        messages = iter([{"type": "lifespan.startup"}])

        async def receive() -> dict[str, Any]:
            message = next(messages, None)
            if message is None:
                await stop.wait()
                return {"type": "lifespan.shutdown"}
            return message

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "lifespan.startup.complete":
                started.set()

        await app({"type": "lifespan"}, receive, send)

    async with anyio.create_task_group() as tg:
        tg.start_soon(lifespan)
        await started.wait()
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE, timeout=HANG_GUARD) as client:
            client.app = app  # type: ignore[attr-defined]
            yield client
        stop.set()


def bearer(token: str) -> dict[str, str]:
    return {**ACCEPT, "authorization": f"Bearer {token}"}


async def post(client: httpx.AsyncClient, message: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
    return await client.post("/mcp", content=json.dumps(message), headers=headers)


def body(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a JSON or one-event SSE answer."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])  # type: ignore[no-any-return]
    return response.json()  # type: ignore[no-any-return]


async def open_session(client: httpx.AsyncClient, token: str) -> dict[str, str]:
    answer = await post(client, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}, bearer(token))
    assert answer.status_code == 200, answer.text
    headers = {**bearer(token), "mcp-session-id": answer.headers["mcp-session-id"]}
    await post(client, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    return headers


def call(request_id: int, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def modern_headers(token: str, name: str) -> dict[str, str]:
    return {**bearer(token), "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": name}


# --- the metadata and the refusals -------------------------------------------------------------


async def test_the_protected_resource_metadata_is_served_without_a_token(issuer: Issuer) -> None:
    async with front(oauth(issuer)) as client:
        for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
            answer = await client.get(path)
            assert answer.status_code == 200
            assert answer.json() == {
                "resource": RESOURCE,
                "authorization_servers": [issuer.url],
                "bearer_methods_supported": ["header"],
                "scopes_supported": ["mcp:tools"],
            }
        assert (await client.get(path, headers={"host": "evil.example"})).status_code == 403  # DNS rebinding


async def test_every_request_without_a_valid_token_is_refused_before_any_session_work(
    issuer: Issuer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "mcp_guard")
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
    expired = issuer.token(RESOURCE, exp=1)
    async with front(oauth(issuer)) as client:
        app: HttpFront = client.app  # type: ignore[attr-defined]
        answer = await post(client, initialize, ACCEPT)
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"] == f'Bearer scope="mcp:tools", resource_metadata="{METADATA}"'
        answer = await post(client, initialize, bearer(expired))
        assert answer.status_code == 401
        challenge = answer.headers["www-authenticate"]
        assert challenge.startswith('Bearer error="invalid_token", error_description="')
        assert challenge.endswith(f'resource_metadata="{METADATA}"')
        answer = await post(client, initialize, bearer(issuer.token(RESOURCE, scope="read")))
        assert answer.status_code == 403
        assert 'error="insufficient_scope"' in answer.headers["www-authenticate"]
        assert 'scope="mcp:tools"' in answer.headers["www-authenticate"]
        answer = await post(client, initialize, {**ACCEPT, "authorization": "Bearer a b"})
        assert answer.status_code == 400 and 'error="invalid_request"' in answer.headers["www-authenticate"]
        answer = await post(client, initialize, bearer("x" * (1 << 20)))
        assert answer.status_code == 401 and 'error="invalid_token"' in answer.headers["www-authenticate"]
        for method, path in (("GET", "/mcp"), ("DELETE", "/mcp"), ("GET", "/health"), ("GET", "/metrics")):
            answer = await client.request(method, path, headers=ACCEPT)
            assert answer.status_code == 401, (method, path)
        answer = await post(client, call(5, "bash", {"command": "ls"}, ENVELOPE), modern_headers(expired, "bash"))
        assert answer.status_code == 401  # the 2026-07-28 era too
        assert app.registry.sessions == {} and app.registry.modern is None  # no session was opened, no upstream started
    log = caplog.text
    assert "the expired check failed" in log and "the scope check failed" in log and "the header check failed" in log
    assert expired not in log and expired.split(".")[1] not in log


# --- the principal reaches the Call ----------------------------------------------------------------


@pytest.mark.parametrize("shared", [False, True], ids=["own-upstream", "shared-upstream"])
async def test_the_principal_reaches_wraps_call_in_both_eras_and_a_session_is_its_owners(
    issuer: Issuer, judged: list[tuple[str, Principal | None]], shared: bool
) -> None:
    alice = issuer.token(RESOURCE, sub="alice", groups=["support"])
    bob = issuer.token(RESOURCE, sub="bob")
    config = oauth(issuer).model_copy(update={"shared_upstream": shared})
    async with front(config) as client:
        session = await open_session(client, alice)
        for request_id in (2, 4):  # held while the relay lists the tools, then on the hot path
            answer = await post(client, call(request_id, "bash", {"command": "ls"}), session)
            assert answer.status_code == 200 and body(answer)["result"]["isError"] is False, answer.text
        stolen = {**session, "authorization": f"Bearer {bob}"}
        answer = await post(client, call(3, "bash", {"command": "ls"}), stolen)
        assert answer.status_code == 404  # another principal's token: as if the session did not exist
        assert (await client.delete("/mcp", headers=stolen)).status_code == 404
        answer = await post(client, call(7, "bash", {"command": "ls"}, ENVELOPE), modern_headers(bob, "bash"))
        assert answer.status_code == 200 and "result" in body(answer), answer.text
    subjects = [(tool, p.subject if p else None) for tool, p in judged]
    assert subjects == [("bash", "alice"), ("bash", "alice"), ("bash", "bob")]
    first = judged[0][1]
    assert first is not None and first.groups == frozenset({"support"}) and first.issuer == issuer.url


async def test_the_principal_reaches_serves_call_in_both_eras_over_a_stdio_upstream(
    issuer: Issuer, judged: list[tuple[str, Principal | None]]
) -> None:
    servers = {"r": {"command": sys.executable, "args": [str(RECORDING)]}}
    config = parse_config(json.dumps({"mcpServers": servers, "guard": {"profile": "standard"}}))
    carol = issuer.token(RESOURCE, sub="carol", client_id="desk")
    async with front(oauth(issuer), config) as client:
        session = await open_session(client, carol)
        answer = await post(client, call(2, "r__bash", {"command": "ls"}), session)
        assert answer.status_code == 200 and body(answer)["result"]["isError"] is False, answer.text
        answer = await post(client, call(9, "r__bash", {"command": "ls"}, ENVELOPE), modern_headers(carol, "r__bash"))
        assert answer.status_code == 200 and "result" in body(answer), answer.text
    principals = [(tool, p.subject, p.client_id) for tool, p in judged if p is not None]
    assert principals == [("bash", "carol", "desk"), ("bash", "carol", "desk")] and len(judged) == 2


async def test_the_clients_token_never_reaches_an_http_upstream(
    issuer: Issuer, tmp_path: Path, judged: list[tuple[str, Principal | None]]
) -> None:
    """serve over the SDK's streamable HTTP server, which records whether a request carried Authorization."""
    token = issuer.token(RESOURCE, sub="dave")
    with http_server(tmp_path) as upstream:
        servers = {"h": {"url": upstream.url}}
        config = parse_config(json.dumps({"mcpServers": servers, "guard": {"profile": "standard"}}))
        async with front(oauth(issuer), config) as client:
            session = await open_session(client, token)
            answer = await post(client, call(2, "h__add", {"a": 1, "b": 2}), session)
            assert answer.status_code == 200 and "result" in body(answer), answer.text
            answer = await post(client, call(3, "h__add", {"a": 1, "b": 2}, ENVELOPE), modern_headers(token, "h__add"))
            assert answer.status_code == 200 and "result" in body(answer), answer.text
        records = upstream.records()
    assert len(records) >= 3 and all(r.get("authorization") is False for r in records), records
    assert [p.subject for _, p in judged if p is not None] == ["dave", "dave"]
