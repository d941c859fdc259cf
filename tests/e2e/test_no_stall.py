"""No message waits behind another's judgement (issue 25 items 1 and 4), end to end under load.

``python -m mcp_guard wrap`` (and ``serve``, for a call) in front of ``heavy_server.py``, with a busy
loop burning one of the machine's cores meanwhile. While the guard judges something big (a listing of one schema of
1,000,000 properties; a call whose argument has 100,000 keys against a schema of many
branches), the client pings every 50 ms: each ping is forwarded upstream and answered through
the same upstream reader, so each answer shows that neither reader, nor the loop, waited for
the judgement. Before ``peer.offload`` the pings waited seconds (the listing: 4 s on a loaded
2-core machine; the call: the whole check, 6 to 85 s before the budget charged its branches).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from anyio.abc import Process

from mcp_guard.calls.pinning import LockFile, tool_digest
from tests.e2e.http_guard import (
    ACCEPT,
    Guard,
    guard_process,
    http_client,
    open_guard,
    open_session,
    parse_sse,
    post,
    request,
)
from tests.fronts.test_serve import MODERN_META

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
HEAVY_SERVER = HERE / "heavy_server.py"

PING_BOUND = 2.0
"""Seconds a ping may take, round trip, while something big is judged: generous, so that only a stall breaks
it (a ping behind the judgement waited its whole length: 4 s and more for the listing, on the loaded
machine). The goal, 0.5 s, is what the test prints; measured under two busy loops on 2 cores, the worst
ping took 0.17 s (the listing) and 0.06 s (the call). What the test asserts first is progress: pings are
answered, one after another, before the big answer's first byte comes."""
STALL_SHARE = 0.5
"""A ping that waited this share of the judgement (from the first ping to the big answer's first byte) or more
waited for it: the bound is ``max(PING_BOUND, STALL_SHARE * window)``, so that a machine loaded enough to make
the judgement itself slow (load 8-12 on 2 cores: a 2.03 s ping in a judgement many times longer) does not fail
a test whose point is that no ping waits for the judgement."""
MIN_PINGS = 4
"""Pings that must be answered while the big message is judged (sent one after another, 50 ms apart)."""
BIG = 1 << 16
"""Bytes of an answer line past which the client parses it only when asked (not while timing pings)."""
JUDGED_WITHIN = 300.0
"""Seconds the big message's own answer may take (it is judged, just not in the way of others)."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def busy_core() -> Iterator[None]:
    """A process burning a core for the test's length (the parallel load the bound must hold under)."""
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        burner.kill()
        burner.wait()


class Client:
    """A raw JSON-RPC client on the guard's stdin/stdout that notes when each answer arrived."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.big: dict[Any, bytes] = {}  # big answers, as they came
        self.big_began = float("inf")  # when the first byte of a big answer came
        self.answers: dict[Any, dict[str, Any]] = {}
        self.arrived: dict[Any, float] = {}
        self._changed = anyio.Event()

    async def read(self) -> None:
        """Read answers until the guard's stdout ends, noting when each line came (a big one is parsed
        only when asked for: parsing it here would hold this loop, and the pings it times)."""
        assert self.process.stdout is not None
        buffer = bytearray()
        began = 0.0  # when the first byte of the line in the buffer came
        with suppress(anyio.EndOfStream, anyio.ClosedResourceError):
            while True:
                start = len(buffer)
                buffer += await self.process.stdout.receive(1 << 20)
                now = time.monotonic()
                began = began if start else now
                end = buffer.find(b"\n", start)
                while end >= 0:
                    self._arrived(bytes(buffer[:end]), now, began)
                    del buffer[: end + 1]
                    began = now
                    end = buffer.find(b"\n")

    def _arrived(self, line: bytes, when: float, began: float) -> None:
        if len(line) > BIG:
            self.big_began = began
            found = re.search(rb'"id":\s*"([^"]*)"', line[:4096])  # (the guard writes the id first)
            assert found is not None
            request_id: Any = found.group(1).decode()
            self.big[request_id] = line
        else:
            message = json.loads(line)
            if "id" not in message and type(message.get("method")) is str:
                request_id = message["method"]  # a notification: noted by its method (the last one's time)
            elif "id" not in message or "method" in message:
                return
            else:
                request_id = message["id"]
            self.answers[request_id] = message
        self.arrived[request_id] = when
        self._changed.set()
        self._changed = anyio.Event()

    async def send(self, message: dict[str, Any] | bytes) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        assert self.process.stdin is not None
        await self.process.stdin.send(data + b"\n")

    async def answer(self, request_id: Any, timeout: float) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            while request_id not in self.arrived:
                await self._changed.wait()
        if request_id in self.big:
            self.answers[request_id] = json.loads(self.big.pop(request_id))
        return self.answers[request_id]

    async def request(self, request_id: Any, method: str, params: Any = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return await self.answer(request_id, 60)

    async def pings_until(self, request_id: Any) -> Trips:
        """Ping every 50 ms until ``request_id`` is answered: the round trip, in seconds, of each ping
        answered before the first byte of a big answer came (one answered after it waited for that
        answer's bytes to pass the guard's pipe to the client: lines never interleave)."""
        trips: list[float] = []
        first = time.monotonic()
        with anyio.fail_after(JUDGED_WITHIN):
            while request_id not in self.arrived:
                ping = f"ping-{len(trips)}"
                sent = time.monotonic()
                await self.send({"jsonrpc": "2.0", "id": ping, "method": "ping"})
                await self.answer(ping, JUDGED_WITHIN)
                trips.append(self.arrived[ping] - sent)
                await anyio.sleep(0.05)
        kept = [trip for i, trip in enumerate(trips) if self.arrived[f"ping-{i}"] < self.big_began]
        return Trips(kept, window=min(self.big_began, self.arrived[request_id]) - first)


@asynccontextmanager
async def guard(
    env: dict[str, str],
    command: str = "wrap",
    tmp_path: Path | None = None,
    *,
    initialize: bool = True,
    outputs: str = "enforce",
) -> AsyncIterator[Client]:
    """``wrap --profile extended --outputs OUTPUTS`` (or ``serve`` with that profile and outputs, its one
    server ``h``) over the heavy server, initialized (unless not ``initialize``: a 2026-07-28 client makes no
    handshake); the client's reader running."""
    if command == "wrap":
        argv = [sys.executable, "-m", "mcp_guard", "wrap", "--profile", "extended", "--outputs", outputs]
        argv += ["--", sys.executable, str(HEAVY_SERVER)]
    else:
        assert tmp_path is not None
        config = tmp_path / "gateway.json"
        server = {"command": sys.executable, "args": [str(HEAVY_SERVER)], "env": env}
        settings = {"profile": "extended", "outputs": outputs}
        config.write_text(json.dumps({"mcpServers": {"h": server}, "guard": settings}))
        argv = [sys.executable, "-m", "mcp_guard", "serve", "--config", str(config)]
    process = await anyio.open_process(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env},
        cwd=ROOT,
    )
    client = Client(process)
    async with process, anyio.create_task_group() as tg:
        tg.start_soon(client.read)
        if initialize:
            init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
            await client.request("init", "initialize", init)
            await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        try:
            yield client
        finally:
            with anyio.CancelScope(shield=True):
                assert process.stdin is not None
                await process.stdin.aclose()
                with anyio.move_on_after(10):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
            tg.cancel_scope.cancel()


class Trips(list[float]):
    """Ping round trips (seconds), and ``window``: seconds from the first ping to the big answer's first byte."""

    def __init__(self, trips: list[float], *, window: float) -> None:
        super().__init__(trips)
        self.window = window


def assert_not_stalled(trips: Trips) -> None:
    """The first ping went out behind the big message itself, and its answer comes behind the big
    message's bytes (the client's pipe to the guard, the upstream's pipe back: one line after
    another); every later ping finds the guard judging, and none may wait for that (:data:`STALL_SHARE`)."""
    print("ping round trips (s):", [round(t, 3) for t in trips], "window (s):", round(trips.window, 3))
    assert len(trips) >= MIN_PINGS, trips  # answered while the big message was judged, each before its answer
    bound = max(PING_BOUND, STALL_SHARE * trips.window)
    assert max(trips[1:]) < bound, [(i, round(t, 3)) for i, t in enumerate(trips) if t >= bound]


@pytest.mark.parametrize("command", ["wrap", "serve", "serve-2026"])
async def test_pings_are_answered_while_a_listing_of_a_million_properties_is_judged(
    busy_core: None, command: str, tmp_path: Path
) -> None:
    """``serve`` answers from its catalog, built when the upstream came up (its JSON text and classification
    made in the worker thread: ``MergedLists.put_tools``); the page it answers is written as JSON in the
    worker thread too (``sessions.client_writer``: 1.2 s on the loop before). ``serve-2026``: a 2026-07-28
    client, whose envelope's merged lists the guard makes when it asks (``ModernEra._list_kind``: its
    classification held the loop before)."""
    modern = command == "serve-2026"
    params = {"_meta": MODERN_META} if modern else {}
    env = {"HEAVY_PROPERTIES": "1000000"}
    async with guard(env, command.removesuffix("-2026"), tmp_path, initialize=not modern) as client:
        await client.send({"jsonrpc": "2.0", "id": "list", "method": "tools/list", "params": params})
        trips = await client.pings_until("list")
        (tool,) = (await client.answer("list", 60))["result"]["tools"]
        verdict = tool["_meta"]["mcp-guard/schema"]
        assert verdict["supported"] is False
        assert "more than 10000 subschemas" in verdict["issues"][0]["message"]
        assert len(tool["inputSchema"]["properties"]) == 1_000_000
    assert_not_stalled(trips)


@pytest.mark.parametrize("tool", ["any_of", "all_of"])
@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_pings_are_answered_while_a_hostile_call_is_judged(
    busy_core: None, tool: str, command: str, tmp_path: Path
) -> None:
    async with guard({}, command, tmp_path) as client:
        await client.request("list", "tools/list")
        arguments = ",".join(f'"k{i}":{i}' for i in range(100_000))
        name = tool if command == "wrap" else f"h__{tool}"
        await client.send(
            f'{{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{{"name":"{name}",'
            f'"arguments":{{{arguments}}}}}}}'.encode()
        )
        trips = await client.pings_until("call")
        result = (await client.answer("call", 60))["result"]
        assert result["isError"] is True
        assert "work budget" in result["content"][0]["text"]
    assert_not_stalled(trips)


PINNED_PROPERTIES = 100_000
"""Properties of the pinned tool whose listing is compared with the lock: its digest (canonical JSON, in
Python) took 1.8 s on the loop of an idle machine, and saying what changed in it as long again, twice."""


async def test_pings_are_answered_while_a_big_listing_is_compared_with_the_lock(
    busy_core: None, tmp_path: Path
) -> None:
    """``serve`` with a lock file that pins ``big`` with one property changed, its upstream listing again (its
    tools changed): the listing's digest, and what changed in it, are made in the worker thread with its
    classification (``Catalog.prepare``, ``calls.pinning.PreparedPins``) while pings pass; the client is
    then told the tools changed, and ``big`` is shown with its pinned definition."""
    properties = {f"p{i}": {"type": "string"} for i in range(PINNED_PROPERTIES)}
    definition = {
        "name": "big",
        "inputSchema": {"type": "object", "properties": {**properties, "p7": {"type": "integer"}}},
    }
    lock = LockFile(tools={"h/big": tool_digest(definition)}, definitions={"h/big": definition})
    lock.write(tmp_path / "gateway.json.lock")
    changed = "notifications/tools/list_changed"
    async with guard({"HEAVY_PROPERTIES": str(PINNED_PROPERTIES), "HEAVY_RELIST": "1"}, "serve", tmp_path) as client:
        await client.request("list", "tools/list")
        client.arrived.pop(changed, None)
        client.big_began = float("inf")  # (the first listing's: only the second one matters now)
        await client.request("relist", "tools/call", {"name": "h__relist", "arguments": {}})
        trips = await client.pings_until(changed)  # (the upstream listed again, compared, and the client told)
        tools = {t["name"]: t for t in (await client.request("list-2", "tools/list"))["result"]["tools"]}
        assert tools["h__relist"]["description"] == "listing 2"
        assert tools["h__big"]["_meta"]["mcp-guard/pin"] == {"status": "changed", "listed": "pinned"}
        assert tools["h__big"]["inputSchema"]["properties"]["p7"] == {"type": "integer"}  # the pinned definition
    assert_not_stalled(trips)


RESULT_ITEMS = 1_000_000
"""Objects in the big result's ``structuredContent`` (26 MB of JSON): its check against the tool's
``outputSchema``, and the walk for forged ``mcp-guard/`` keys, took 1.5 s on the loop of an idle machine."""


@pytest.mark.parametrize(("command", "outputs"), [("wrap", "enforce"), ("serve", "report")])
async def test_pings_are_answered_while_a_big_result_is_checked_against_its_output_schema(
    busy_core: None, command: str, outputs: str, tmp_path: Path
) -> None:
    """A ``tools/call`` answered with 1,000,000 objects of ``structuredContent``: the result is parsed by a
    decoder that lets the interpreter lock go (``wire.jsonrpc.YIELDING_MIN``), cleaned of forged guard keys
    and checked against the ``outputSchema`` in the worker thread (``peer.connection``,
    ``calls.outputs.prejudge_result``), while pings pass it; the result then reaches the client judged.
    Before, under one busy loop on 2 cores, a ping waited 3.9 s (``wrap``) and 1.9 s (``serve``)."""
    env = {"HEAVY_RESULT": str(RESULT_ITEMS)}
    async with guard(env, command, tmp_path, outputs=outputs) as client:
        await client.request("list", "tools/list")
        name = "out" if command == "wrap" else "h__out"
        await client.send({"jsonrpc": "2.0", "id": "call", "method": "tools/call", "params": {"name": name}})
        trips = await client.pings_until("call")
        result = (await client.answer("call", 60))["result"]
        assert "isError" not in result
        assert len(result["structuredContent"]["items"]) == RESULT_ITEMS
        if outputs == "report":
            assert result["_meta"]["mcp-guard/output"] == {"checked": True, "valid": True, "issues": []}
    assert_not_stalled(trips)


@asynccontextmanager
async def http_guard(command: str, tmp_path: Path, env: dict[str, str]) -> AsyncIterator[Guard]:
    """``wrap --http`` (``open_guard``), or ``serve --config C --http`` with the heavy server as its one
    server ``h``, on a free loopback port; stopped (SIGTERM) on exit."""
    if command == "wrap":
        async with open_guard(tmp_path, "--profile", "extended", upstream=HEAVY_SERVER, env=env) as wrapped:
            yield wrapped
        return
    config = tmp_path / "gateway.json"
    server = {"command": sys.executable, "args": [str(HEAVY_SERVER)], "env": env}
    config.write_text(json.dumps({"mcpServers": {"h": server}, "guard": {"profile": "extended"}}))
    argv = [sys.executable, "-m", "mcp_guard", "serve", "--config", str(config), "--http", "127.0.0.1:0"]
    log_path = tmp_path / "serve.log"
    async with guard_process(argv, log_path) as (process, url):
        yield Guard(process, url, log_path)


async def pings_of_two_sessions(
    client: httpx.AsyncClient, guard: Guard, sessions: list[str], big: dict[str, Any] | bytes
) -> tuple[dict[str, Any], Trips]:
    """POST ``big`` in session A; meanwhile pings go out, one after another, in session A (to its relay, which
    judges the big message) and in session B (its own relay and upstream, on the same event loop). The big
    message's answer, and the round trips of the pings answered before that answer began (its headers came)."""
    began = float("inf")
    answers: list[dict[str, Any]] = []

    async def post_big() -> None:
        nonlocal began
        headers = {**ACCEPT, "mcp-session-id": sessions[0]}
        body = big if isinstance(big, bytes) else json.dumps(big).encode()
        async with client.stream("POST", guard.url, content=body, headers=headers) as response:
            began = time.monotonic()
            data = await response.aread()
            sse = response.headers["content-type"].startswith("text/event-stream")
            answers.append(parse_sse(data.decode())[-1] if sse else json.loads(data))

    trips: list[tuple[float, float]] = []  # (sent, answered)
    first = time.monotonic()
    async with anyio.create_task_group() as tg:
        tg.start_soon(post_big)
        with anyio.fail_after(JUDGED_WITHIN):
            while not answers:
                session = sessions[len(trips) % 2]
                sent = time.monotonic()
                pong = await post(client, guard, request(f"ping-{len(trips)}", "ping"), session)
                assert pong.json()["result"] == {}
                trips.append((sent, time.monotonic()))
                await anyio.sleep(0.05)
    kept = [answered - sent for sent, answered in trips if answered < began]
    return answers[0], Trips(kept, window=began - first)


async def test_pings_of_two_http_sessions_are_answered_while_one_lists_a_big_schema(
    tmp_path: Path, busy_core: None
) -> None:
    """``wrap --http``: session A lists one schema of 300,000 properties (the stdio case has the million; this
    keeps the test short, and a stall still shows: pings answered while it is judged), while pings go out in
    sessions A and B. Only the pings answered before the listing's answer began count: there must be
    several, none waiting for the judgement."""
    async with http_guard("wrap", tmp_path, {"HEAVY_PROPERTIES": "300000"}) as guard, http_client() as client:
        sessions = [await open_session(client, guard) for _ in range(2)]
        answer, trips = await pings_of_two_sessions(client, guard, sessions, request("list", "tools/list"))
        (tool,) = answer["result"]["tools"]
        assert tool["_meta"]["mcp-guard/schema"]["supported"] is False
    assert_not_stalled(trips)


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_pings_of_two_http_sessions_are_answered_while_one_makes_a_hostile_call(
    tmp_path: Path, busy_core: None, command: str
) -> None:
    """``wrap --http`` and ``serve --http``: session A calls ``all_of`` (50 branches) with 100,000 keys, judged
    for seconds under load before the offload, while pings go out in sessions A and B; several are answered
    before the call's answer begins, none waiting for its judgement."""
    async with http_guard(command, tmp_path, {}) as guard, http_client() as client:
        sessions = [await open_session(client, guard) for _ in range(2)]
        for session in sessions:
            listed = await post(client, guard, request("list", "tools/list"), session)
            assert listed.status_code == 200, listed.text
        name = "all_of" if command == "wrap" else "h__all_of"
        arguments = ",".join(f'"k{i}":{i}' for i in range(100_000))
        call = (
            f'{{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{{"name":"{name}",'
            f'"arguments":{{{arguments}}}}}}}'
        ).encode()
        answer, trips = await pings_of_two_sessions(client, guard, sessions, call)
        result = answer["result"]
        assert result["isError"] is True
        assert "work budget" in result["content"][0]["text"]
    assert_not_stalled(trips)


# --- order: what is judged off the loop keeps its place before an end read after it ---------------


async def test_a_big_answer_followed_at_once_by_the_upstreams_end_reaches_the_client() -> None:
    """The upstream writes a big listing (judged in the worker thread) and exits at once: the end, read
    while the listing is judged, is handled after it, so the client gets the listing, annotated, not
    "went away" (``UpstreamPeer._lines``); the session goes on with the restarted upstream."""
    async with guard({"HEAVY_PROPERTIES": "20000", "HEAVY_EXIT_AFTER": "tools/list"}) as client:
        listed = await client.request("list", "tools/list")
        assert "error" not in listed, listed["error"]
        (tool,) = listed["result"]["tools"]
        assert tool["name"] == "big" and "mcp-guard/schema" in tool["_meta"]  # judged, then passed on
        assert len(tool["inputSchema"]["properties"]) == 20_000
        assert (await client.request("ping", "ping"))["result"] == {}  # the upstream was started again


async def test_a_big_call_followed_at_once_by_the_clients_end_is_judged_forwarded_and_answered() -> None:
    """The client writes a big call (parsed and judged in the worker thread) and closes its side in the
    same breath: the call is forwarded before the upstream's input is closed, and its answer reaches
    the client before the guard exits (the client's end waits for the jobs before it: ``Relay.run``)."""
    async with guard({}) as client:
        await client.request("list", "tools/list")
        call = {"name": "all_of", "arguments": {"pad": "x" * 200_000}}
        line = json.dumps({"jsonrpc": "2.0", "id": "call", "method": "tools/call", "params": call}).encode()
        assert client.process.stdin is not None
        await client.process.stdin.send(line + b"\n")
        await client.process.stdin.aclose()
        answer = await client.answer("call", 60)
        assert answer["result"] == {"content": [{"type": "text", "text": ""}]}
