"""The gateway session in process: scripted upstreams behind connectors over memory streams, no processes.

Each :class:`FakeServer` is a connector whose connections are handshake-era MCP servers with
switchable faults (exit before answering ``initialize``, an over-long line, a ``list_changed``
storm, calls that hang or die). The client is the test's side of a memory line link.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_guard.calls.journal import Journal
from mcp_guard.calls.observer import CallObserver
from mcp_guard.calls.pinning import LockFile
from mcp_guard.config import parse_config
from mcp_guard.peer.upstream import UpstreamStartError
from mcp_guard.sessions.gateway import Gateway, serve_session
from tests.harness import INIT, TIMEOUT, TOO_LONG, Client, MemoryLink, ScriptedUpstream

pytestmark = pytest.mark.anyio


ECHO = {
    "name": "echo",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": False},
}
OPEN = {"type": "object"}
TOOLS = [ECHO, {"name": "hang", "inputSchema": OPEN}, {"name": "die", "inputSchema": OPEN}]


class FakeServer(ScriptedUpstream):
    """A connector whose connections are scripted MCP servers (the harness's, with switchable faults).

    Attributes:
        faults: switched on by name: ``fail_start`` (connecting fails), ``exit_at_start``
            (the connection ends when ``initialize`` arrives, unanswered), ``storm`` (every
            ``tools/list`` answer is followed by ``notifications/tools/list_changed``).
        received: every message of every connection, in order.
        connections: connections made.
    """

    def __init__(
        self,
        tools: list[Any] | None = None,
        *,
        prompts: list[Any] | None = None,
        resources: list[Any] | None = None,
        templates: list[Any] | None = None,
        faults: set[str] | None = None,
    ) -> None:
        super().__init__(TOOLS if tools is None else tools)
        self.prompts = prompts
        self.resources = resources
        self.templates = templates
        self.faults = faults or set()
        self.init_error: dict[str, Any] | None = None

    def count(self, method: str) -> int:
        return sum(1 for m in self.received if m.get("method") == method)

    def starting(self) -> None:
        if "fail_start" in self.faults:
            raise UpstreamStartError("the fake server refuses to start")

    async def handle(self, link: MemoryLink, message: dict[str, Any]) -> bool:
        method, request_id = message["method"], message["id"]
        if method == "initialize" and "exit_at_start" in self.faults:
            return False  # exits before answering
        if method == "initialize" and self.init_error is not None:
            await self.send(link, {"jsonrpc": "2.0", "id": request_id, "error": self.init_error})
            return True
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        if method == "server/discover" and "handshake_only" in self.faults:
            error = {"code": -32601, "message": "Method not found"}
            await self.send(link, {"jsonrpc": "2.0", "id": request_id, "error": error})
            return True
        if method == "server/discover" and "modern" in self.faults:
            versions = ["2026-07-28"]
            reply["result"] = {
                "supportedVersions": versions,
                "capabilities": {"tools": {}},
                "resultType": "complete",
            }
        elif method == "initialize":
            caps: dict[str, Any] = {"tools": {"listChanged": True}}
            if self.prompts is not None:
                caps["prompts"] = {}
            if self.resources is not None or self.templates is not None:
                caps["resources"] = {}
            reply["result"] = {"protocolVersion": INIT["protocolVersion"], "capabilities": caps, "serverInfo": {}}
        elif method == "tools/list":
            reply["result"] = {"tools": self.tools}
        elif method == "prompts/list":
            reply["result"] = {"prompts": self.prompts or []}
        elif method == "resources/list":
            reply["result"] = {"resources": self.resources or []}
        elif method == "resources/templates/list":
            reply["result"] = {"resourceTemplates": self.templates or []}
        elif method == "tools/call":
            name = message["params"]["name"]
            if name == "hang":
                return True
            if name == "die":
                return False
            if name == "huge":
                text = json.dumps({**reply, "result": {"content": [{"type": "text", "text": "y" * 2000}]}})
                await link.send(TOO_LONG + text[:200].encode())
                return True
            if name == "progress":  # progress every 20 ms for a second, then the answer
                token = message["params"]["_meta"]["progressToken"]
                for i in range(50):
                    await anyio.sleep(0.02)
                    notice = {"progressToken": token, "progress": i}
                    await self.send(link, {"jsonrpc": "2.0", "method": "notifications/progress", "params": notice})
            if name == "garbled":
                await link.send(b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() + b',"result":{')
                return True
            reply["result"] = {"content": [{"type": "text", "text": f"{name} ok"}]}
        else:
            reply["result"] = {}
        await self.send(link, reply)
        if method == "tools/list" and "storm" in self.faults:
            await self.send(link, {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return True


def gateway_config(
    servers: dict[str, FakeServer], guard: dict[str, Any] | None = None, path: Path | None = None
) -> Any:
    data = {"mcpServers": {name: {"command": "unused"} for name in servers}, "guard": guard or {}}
    return parse_config(json.dumps(data), path=path, environ={})


@asynccontextmanager
async def running(
    servers: dict[str, FakeServer],
    guard: dict[str, Any] | None = None,
    *,
    lock: LockFile | None = None,
    journal: Journal | None = None,
    **options: Any,
) -> AsyncIterator[tuple[Gateway, Client]]:
    client = Client()
    options.setdefault("drain_timeout", 0.2)
    session = serve_session(
        client.guard_link,
        gateway_config(servers, guard),
        lock=lock,
        journal=journal,
        connectors={name: server.connect for name, server in servers.items()},
        **options,
    )
    gateway = session.routing
    assert isinstance(gateway, Gateway)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        yield gateway, client
        await client.link.close_send()
        with anyio.fail_after(TIMEOUT):
            while any(link.upstream is not None for link in gateway.links):
                await anyio.sleep(0.01)
        tg.cancel_scope.cancel()


# --- F2: an upstream that exits at once ------------------------------------------------------


async def test_an_upstream_exiting_before_initialize_fails_its_setup_at_once() -> None:
    """The link's own ``initialize`` fails when its reader ends: no 30 s wait for anybody."""
    servers = {"dead": FakeServer(faults={"exit_at_start"}), "ok": FakeServer()}
    async with running(servers, request_timeout=60.0, start_timeout=60.0) as (_session, client):
        with anyio.fail_after(5):
            init = await client.initialize()
        assert init["result"]["capabilities"]["tools"] == {"listChanged": True}
        listed = await client.request("tools/list")
        assert {t["name"] for t in listed["result"]["tools"]} == {"ok__echo", "ok__hang", "ok__die"}
        assert servers["dead"].count("initialize") >= 1


# --- F3: over-long and unreadable lines from an upstream ------------------------------------


async def test_an_over_long_answer_is_skipped_and_answered_and_the_upstream_stays(tmp_path: Path) -> None:
    """As ``wrap`` does: the junk line is skipped, its request gets the size error, the upstream keeps serving."""
    server = FakeServer([*TOOLS, {"name": "huge", "inputSchema": OPEN}, {"name": "garbled", "inputSchema": OPEN}])
    with Journal(tmp_path / "j.jsonl", fsync=False) as journal:
        async with running({"f": server}, journal=journal) as (_session, client):
            await client.initialize()
            huge = await client.call("f__huge")
            assert huge["error"]["code"] == -32603
            assert "longer than 1000 bytes (--max-message-bytes)" in huge["error"]["message"]
            garbled = await client.call("f__garbled")
            assert garbled["error"]["code"] == -32603 and "not valid JSON" in garbled["error"]["message"]
            echoed = await client.call("f__echo", {"text": "x"})
            assert echoed["result"]["content"][0]["text"] == "echo ok"
            assert server.connections == 1
    outcomes = [json.loads(x) for x in (tmp_path / "j.jsonl").read_text().splitlines()]
    results = [(r["tool"], r["result"]) for r in outcomes if r["event"] == "outcome"]
    assert results == [("huge", "protocol_error"), ("garbled", "protocol_error"), ("echo", "ok")]


async def test_an_over_long_client_line_is_answered_and_the_session_goes_on() -> None:
    async with running({"f": FakeServer()}) as (_session, client):
        await client.initialize()
        await client.send_raw(TOO_LONG + b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"f__echo"')
        refused = await client.answer(7)
        assert refused["error"]["code"] == -32600 and "longer than" in refused["error"]["message"]
        assert "result" in await client.call("f__echo", {"text": "x"})


# --- F8: tools, prompts and resources of a server that is down -------------------------------


async def wait_for(predicate: Any) -> None:
    with anyio.fail_after(TIMEOUT):
        while not predicate():
            await anyio.sleep(0.01)


@pytest.mark.parametrize("guard", [None, {"presentFor": "openai-strict"}], ids=["as-listed", "present-for"])
async def test_requests_to_a_server_that_is_down_say_so(guard: dict[str, Any] | None) -> None:
    """A name the client was shown (or with a never-started server's prefix) gets -32603 naming the server
    (also when the tools are shown to a model host: guard.presentFor)."""
    flaky = FakeServer(prompts=[{"name": "greet"}], resources=[{"uri": "f://only", "name": "only"}])
    servers = {"f": flaky, "dead": FakeServer(faults={"fail_start"}), "ok": FakeServer()}
    async with running(servers, guard) as (session, client):
        await client.initialize()
        assert "f__echo" in {t["name"] for t in (await client.request("tools/list"))["result"]["tools"]}
        flaky.faults.add("fail_start")  # it dies, and does not come back
        assert (await client.call("f__die"))["error"]["code"] == -32603
        await wait_for(lambda: not session.links[0].ready)
        for method, params, what in [
            ("tools/call", {"name": "f__echo", "arguments": {"text": "x"}}, "tool"),
            ("prompts/get", {"name": "f__greet"}, "prompt"),
            ("resources/read", {"uri": "f://only"}, "resource"),
            ("tools/call", {"name": "dead__echo", "arguments": {}}, "tool"),
        ]:
            answer = await client.request(method, params)
            server = "dead" if "dead" in json.dumps(params) else "f"
            assert answer["error"]["code"] == -32603, (method, answer)
            assert f"the server `{server}` of this {what} is not running" in answer["error"]["message"]
        assert (await client.call("ok__nope"))["error"] == {"code": -32602, "message": "Unknown tool: ok__nope"}
        assert "result" in await client.call("ok__echo", {"text": "x"})


async def test_a_call_while_a_server_restarts_waits_for_it_and_a_refusal_is_journaled(tmp_path: Path) -> None:
    """wrap's rule in serve (trial T5): a restart under HOLD_MAX s away is waited for; a call to a server
    that stays down is answered -32603 and journaled ``rejected``/``server_unavailable``."""
    flaky = FakeServer()
    ended: list[tuple[str, str, str, str | None]] = []

    class Recorder(CallObserver):
        def call_ended(self, server: str, tool: str, outcome: str, kind: str | None, seconds: float | None) -> None:
            ended.append((server, tool, outcome, kind))

    with Journal(tmp_path / "j.jsonl", fsync=False) as journal:
        async with running({"f": flaky}, journal=journal) as (session, client):
            session.pipeline.observer = Recorder()  # what /metrics counts
            await client.initialize()
            assert "f__echo" in {t["name"] for t in (await client.request("tools/list"))["result"]["tools"]}
            assert (await client.call("f__die"))["error"]["code"] == -32603
            await wait_for(lambda: not session.links[0].ready)
            echoed = await client.call("f__echo", {"text": "x"})  # the restart is 0.5 s away: it waits
            assert echoed["result"]["content"][0]["text"] == "echo ok"
            flaky.faults.add("fail_start")
            assert (await client.call("f__die"))["error"]["code"] == -32603
            await wait_for(lambda: not session.links[0].ready)
            refused = await client.call("f__echo", {"text": "x"})
            assert "is not running right now" in refused["error"]["message"]
            # Why, in the guard's words (red team 35: "went away or could not start" for a hung initialize).
            failure = session.links[0].failure
            assert failure and f"its last start failed: {failure}" in refused["error"]["message"]
    outcomes = [json.loads(x) for x in (tmp_path / "j.jsonl").read_text().splitlines()]
    results = [(r["tool"], r["result"], r.get("kind")) for r in outcomes if r["event"] == "outcome"]
    assert results == [
        ("die", "upstream_died", None),
        ("echo", "ok", None),
        ("die", "upstream_died", None),
        ("f__echo", "rejected", "server_unavailable"),
    ]
    # Counted in the metrics too, under the one label of names no server listed (the client chose it: trial3 T4).
    assert ended[-1] == ("f", "_unknown", "rejected", "server_unavailable")


async def test_requests_before_initialize_say_so() -> None:
    async with running({"g": FakeServer()}) as (_session, client):
        for method, params in [("tools/call", {"name": "g__echo", "arguments": {}}), ("tools/list", {})]:
            answer = await client.request(method, params)
            assert answer["error"]["code"] == -32603
            assert "has not sent initialize" in answer["error"]["message"]
        assert "result" in await client.request("ping")
        await client.initialize()
        assert "result" in await client.call("g__echo", {"text": "x"})


# --- F9: list_changed storms ---------------------------------------------------------------------


async def test_a_list_changed_storm_is_coalesced() -> None:
    """A server that announces a change after every listing: re-listed once per interval, not in a loop."""
    storm = FakeServer(faults={"storm"})
    async with running({"st": storm, "g": FakeServer()}, relist_interval=0.2) as (_session, client):
        await client.initialize()
        await anyio.sleep(1.0)
        listings = storm.count("tools/list")
        assert 2 <= listings <= 12, listings  # without coalescing: thousands in this second
        assert "result" in await client.call("g__echo", {"text": "x"})
        assert "result" in await client.call("st__echo", {"text": "x"})


async def test_changes_of_several_kinds_at_once_are_all_listed() -> None:
    server = FakeServer(prompts=[{"name": "a"}])
    async with running({"f": server}) as (session, client):
        await client.initialize()
        server.tools = [*TOOLS, {"name": "new", "inputSchema": OPEN}]
        server.prompts = [{"name": "a"}, {"name": "b"}]
        for kind in ("tools", "prompts"):
            await server.send(server.links[-1], {"jsonrpc": "2.0", "method": f"notifications/{kind}/list_changed"})
        await wait_for(lambda: len(session.catalog.tools) == 4 and len(session.view.prompts) == 2)


# --- F10: each fact logged once per change ----------------------------------------------------------


@pytest.fixture
def log_lines() -> Any:
    """The ``mcp_guard`` logger's messages (attached directly: the CLI may have turned propagation off)."""
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    logger = logging.getLogger("mcp_guard")
    handler, level = Keep(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield lines
    logger.removeHandler(handler)
    logger.setLevel(level)


async def test_facts_are_logged_once_per_change(log_lines: list[str]) -> None:
    lock = LockFile({"a/echo": "sha256:" + "0" * 64, "a/gone": "sha256:" + "1" * 64})
    a, b = FakeServer(), FakeServer(prompts=[{"name": "p"}])
    servers = {"a": a, "b": b, "c": FakeServer([], prompts=[{"name": "p"}])}
    async with running(servers, {"nameFormat": "x{tool}"}, lock=lock) as (_session, client):
        await client.initialize()
        for _ in range(3):  # b re-lists its tools and prompts: nothing it lists changed
            for kind in ("tools", "prompts"):
                await b.send(b.links[-1], {"jsonrpc": "2.0", "method": f"notifications/{kind}/list_changed"})
            await anyio.sleep(0.05)
        assert "result" in await client.request("ping")
        await wait_for(lambda: b.count("tools/list") >= 2)
    counted = {
        "gone": sum("pinned tool no longer listed: a/gone" in x for x in log_lines),
        "counts a": sum(x.startswith("upstream a: tools: ") for x in log_lines),
        "collision": sum(x.startswith("prompt name collision: `xp`") for x in log_lines),
        "tool collision": sum(x.startswith("name collision: `xecho`") for x in log_lines),
    }
    assert counted == {"gone": 1, "counts a": 1, "collision": 1, "tool collision": 1}, log_lines


# --- F13: a resource template listed by several servers --------------------------------------------


async def test_a_template_of_several_servers_is_logged_and_said_withheld(log_lines: list[str]) -> None:
    template = [{"uriTemplate": "tmpl://{id}", "name": "t"}]
    servers = {"a": FakeServer(templates=template), "b": FakeServer(templates=template)}
    async with running(servers) as (_session, client):
        await client.initialize()
        listed = await client.request("resources/templates/list")
        assert listed["result"]["resourceTemplates"] == []
        read = await client.request("resources/read", {"uri": "tmpl://42"})
        assert read["error"]["code"] == -32602
        assert (
            "matches the resource template tmpl://{id}, which several servers list (a, b)" in (read["error"]["message"])
        )
    assert log_lines.count("resource template listed by several servers, withheld: tmpl://{id} (a, b)") == 1


# --- F15: cancellation and the client's exit --------------------------------------------------------


def journal_results(path: Path) -> list[tuple[str, str]]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [(r["tool"], r["result"]) for r in records if r["event"] == "outcome"]


async def test_a_cancelled_call_is_never_answered_and_is_journaled_cancelled(tmp_path: Path) -> None:
    server = FakeServer()
    path = tmp_path / "j.jsonl"
    with Journal(path, fsync=False) as journal:
        async with running({"f": server}, journal=journal) as (_session, client):
            await client.initialize()
            await client.send({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "f__hang"}})
            await wait_for(lambda: server.count("tools/call") == 1)
            await client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 6}})
            await wait_for(lambda: server.count("notifications/cancelled") == 1)
            upstream_id = next(m["id"] for m in server.received if m.get("method") == "tools/call")
            cancel = next(m for m in server.received if m.get("method") == "notifications/cancelled")
            assert cancel["params"]["requestId"] == upstream_id  # under the link's own id
            assert (await client.call("f__die"))["error"]["code"] == -32603  # the server goes away ...
            assert "result" in await client.request("ping")
            assert 6 not in client.answers  # ... and the cancelled call still gets no answer
    assert journal_results(path) == [("hang", "cancelled"), ("die", "upstream_died")]


async def test_calls_cut_off_by_the_client_leaving_are_journaled_cancelled(tmp_path: Path) -> None:
    server = FakeServer()
    path = tmp_path / "j.jsonl"
    with Journal(path, fsync=False) as journal:
        async with running({"f": server}, journal=journal) as (_session, client):
            await client.initialize()
            await client.send({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "f__hang"}})
            await wait_for(lambda: server.count("tools/call") == 1)
    assert journal_results(path) == [("hang", "cancelled")]


# --- F16: --request-timeout bounds forwarded requests, as for wrap -----------------------------------


async def test_request_timeout_bounds_calls_and_progress_extends_it(tmp_path: Path) -> None:
    server = FakeServer([*TOOLS, {"name": "progress", "inputSchema": OPEN}])
    path = tmp_path / "j.jsonl"
    with Journal(path, fsync=False) as journal:
        async with running({"f": server}, journal=journal, client_request_timeout=0.5) as (_session, client):
            await client.initialize()
            hung = await client.call("f__hang")
            assert hung["error"]["code"] == -32603
            assert "did not answer within 0.5 s (--request-timeout)" in hung["error"]["message"]
            await wait_for(lambda: server.count("notifications/cancelled") == 1)
            params = {"name": "f__progress", "arguments": {}, "_meta": {"progressToken": "p1"}}
            slow = await client.request("tools/call", params)  # 1 s in all, never 0.5 s without progress
            assert slow["result"]["content"][0]["text"] == "progress ok"
    assert journal_results(path) == [("hang", "timed_out"), ("progress", "ok")]


# --- F18: what the log says when a server's setup fails --------------------------------------------


async def test_setup_failures_are_logged_as_what_happened(log_lines: list[str]) -> None:
    """The HTTP transport's own errors (HTTP 401, connection refused) are said as such, not as error codes."""
    unauthorized, refused, plain = FakeServer(), FakeServer(), FakeServer()
    unauthorized.init_error = {
        "code": -32603,
        "message": "mcp-guard: the upstream answered HTTP 401 Unauthorized (check the headers given with --header "
        "or --header-env)",
    }
    refused.init_error = {"code": -32603, "message": "mcp-guard: cannot reach the upstream at http://h/mcp: refused"}
    plain.init_error = {"code": -32600, "message": "Unauthorized: a valid bearer token is required"}
    servers = {"auth": unauthorized, "down": refused, "plain": plain, "ok": FakeServer()}
    async with running(servers) as (_session, client):
        await client.initialize()
    failures = {x for x in log_lines if "could not set it up" in x}
    assert {
        "upstream auth: could not set it up: the upstream answered HTTP 401 Unauthorized (check the headers in the "
        "config's `headers`)",
        "upstream down: could not set it up: cannot reach the upstream at http://h/mcp: refused",
        "upstream plain: could not set it up: the upstream answered initialize with error -32600 (Unauthorized: a "
        "valid bearer token is required)",
    } <= failures


# --- F19, F24: what is wrong with a message that is not one -----------------------------------------


async def test_parse_errors_and_invalid_requests_say_why() -> None:
    async with running({"g": FakeServer()}) as (_session, client):
        await client.initialize()
        digits = "1" * 5000
        await client.send_raw(b'{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"g__echo",')
        parsed = await client.answer(24)  # the id is read even though the line breaks off after it
        assert parsed["error"]["code"] == -32700 and "not valid JSON" in parsed["error"]["message"]
        line = '{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"name":"g__echo","arguments":{"n":%s}}}'
        await client.send_raw((line % digits).encode())
        too_long = await client.answer(25)
        assert too_long["error"]["code"] == -32700
        assert "integer literal of more than 4,300 digits" in too_long["error"]["message"]
        await client.send_raw(b'{"jsonrpc":"1.0","id":6,"method":"ping"}')
        old = await client.answer(6)
        assert old["error"] == {
            "code": -32600,
            "message": 'Invalid Request: `jsonrpc` must be "2.0" (the only JSON-RPC version MCP speaks)',
        }
        await client.send_raw(b"42")
        number = await client.answer(None)
        assert number["error"]["message"] == "Invalid Request: a JSON-RPC message is an object, not a number"
        await client.send_raw(b"[]")
        batch = await client.answer(None)
        assert batch["error"]["code"] == -32600 and "batches (arrays) are not supported" in batch["error"]["message"]
        assert "result" in await client.request("ping")


# --- smoke trial: a 2026-07-28 client, one upstream of each era --------------------------------

MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


async def test_a_2026_client_gets_the_era_fields_from_a_handshake_era_upstream() -> None:
    """The SDK's auto-mode client refused a handshake-era upstream's call result (no ``resultType``)."""
    new, old = FakeServer(faults={"modern"}), FakeServer(faults={"handshake_only"})
    async with running({"new": new, "old": old}) as (_session, client):
        discovered = await client.request("server/discover", {"_meta": MODERN})
        stamp = discovered["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]
        assert stamp["name"] == "mcp-guard-gateway"  # where the SDK reads a 2026-era server's identity
        for name in ("old__echo", "new__echo"):
            answer = await client.request("tools/call", {"name": name, "arguments": {"text": "x"}, "_meta": MODERN})
            assert answer["result"]["resultType"] == "complete", answer
            assert answer["result"]["content"][0]["text"] == "echo ok"
        legacy = FakeServer(faults={"handshake_only"})
    async with running({"old": legacy}) as (_session, client):
        await client.initialize()
        answer = await client.call("old__echo", {"text": "x"})
        assert "resultType" not in answer["result"]  # a handshake-era client's results are untouched


async def test_a_request_sent_just_before_the_client_leaves_is_still_answered() -> None:
    """``printf REQUEST | mcp-guard serve``: the answer used to be dropped with the session."""
    server = FakeServer(faults={"modern"})
    async with running({"s": server}, drain_timeout=5.0) as (_session, client):
        await client.send({"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {"_meta": MODERN}})
        await client.send({"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"_meta": MODERN}})
        await client.link.close_send()
        assert "result" in await client.answer(7)
        assert [t["name"] for t in (await client.answer(8))["result"]["tools"]] == ["s__echo", "s__hang", "s__die"]


async def test_a_config_with_no_server_is_served_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    """issue 13 item 3: ``serve`` with an empty ``mcpServers`` says so, and answers with empty lists."""
    caplog.set_level(logging.WARNING, logger="mcp_guard")
    async with running({}) as (_session, client):
        with anyio.fail_after(5):
            assert "result" in await client.initialize()
        assert (await client.request("tools/list"))["result"]["tools"] == []
    assert any("the config enables no server" in r.getMessage() for r in caplog.records)


class FlippingServer(FakeServer):
    """``tools/call`` of ``flip`` tightens ``s`` (``x``: maxLength 5 -> 1), says ``list_changed``, then answers;
    its listings after that take 0.3 s."""

    flipped = False

    async def handle(self, link: MemoryLink, message: dict[str, Any]) -> bool:
        if message["method"] == "tools/call" and message["params"]["name"] == "flip":
            self.tools = [tool_s(1), {"name": "flip", "inputSchema": OPEN}]
            await self.send(link, {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            await self.send(link, {"jsonrpc": "2.0", "id": message["id"], "result": {"content": []}})
            self.flipped = True
            return True
        if message["method"] == "tools/list" and self.flipped:
            await anyio.sleep(0.3)  # a server slow to list: the window in which the old listing is stale
        return await super().handle(link, message)


def tool_s(max_length: int) -> dict[str, Any]:
    properties = {"x": {"type": "string", "maxLength": max_length}}
    return {"name": "s", "inputSchema": {"type": "object", "properties": properties}}


@pytest.mark.parametrize("attempt", range(5))
async def test_a_call_after_list_changed_is_judged_against_the_new_listing(attempt: int) -> None:
    """Trial F8: the server tightened ``s`` and said so before answering ``flip``; the next call waits for
    the new listing and is refused by it, every time (it reached the server about 1 run in 4)."""
    server = FlippingServer([tool_s(5), {"name": "flip", "inputSchema": OPEN}])
    async with running({"f": server}) as (_session, client):
        await client.initialize()
        assert "result" in await client.call("f__flip")
        refused = await client.call("f__s", {"x": "abc"})
        assert refused["result"]["isError"] is True, refused
        assert refused["result"]["_meta"]["mcp-guard/rejection"]["kind"] == "validation"
    assert not any(m.get("params", {}).get("name") == "s" for m in server.calls())
