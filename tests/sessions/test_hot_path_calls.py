"""``wrap``'s hot path for a ``tools/call`` (``hot_path.ClientHotPath.line``, the relay's ``hot``, over real
pipes): the call is routed, then serialized once. As it came, it goes as parsed under the guard's upstream id;
mapped back (``--present-for``) or traced, what goes is its forward (the server's form, the trace context in ``_meta``);
a forward that cannot be serialized once judged is refused as the async path refuses it, never sent as it came.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcp_guard.calls.tool_table import ToolTable
from mcp_guard.hosts import host_profile
from mcp_guard.sessions import hot_path, upstream_side
from mcp_guard.sessions.relay import Relay, wrap_session
from mcp_guard.streams.pipes import PipeLineStream
from mcp_guard.wire.jsonrpc import INVALID_PARAMS, Uncarriable, dumps

pytestmark = pytest.mark.anyio

GREP = {
    "name": "grep",
    "inputSchema": {
        "type": "object",
        "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["pattern"],
    },
}
STRICT_ARGUMENTS = {"pattern": "x", "path": None, "limit": None}
"""The call as an OpenAI strict model sends it: every optional property, ``null`` meaning absent."""
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # (the pipe streams are asyncio's: the hot path's condition)


def pipe_pair() -> tuple[PipeLineStream, PipeLineStream]:
    a_read, a_write = os.pipe()
    b_read, b_write = os.pipe()
    return PipeLineStream(a_read, b_write, owned=True), PipeLineStream(b_read, a_write, owned=True)


class Upstream:
    """An in-process server on pipes: answers ``initialize``, ``tools/list`` and each call; keeps every line."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[PipeLineStream]:
        guard_side, server_side = pipe_pair()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.serve, server_side)
            try:
                yield guard_side
            finally:
                tg.cancel_scope.cancel()
                await guard_side.aclose()
                await server_side.aclose()

    async def serve(self, link: PipeLineStream) -> None:
        while True:
            try:
                line = await link.receive()
            except anyio.EndOfStream:
                return
            self.lines.append(line)
            message = json.loads(line)
            if "id" not in message or "method" not in message:
                continue
            result: dict[str, Any] = {"content": [{"type": "text", "text": "ok"}]}
            if message["method"] == "initialize":
                result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {}}
            elif message["method"] == "tools/list":
                result = {"tools": [GREP]}
            await link.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode())

    def calls(self) -> list[dict[str, Any]]:
        return [m for m in map(json.loads, self.lines) if m.get("method") == "tools/call"]


class Trace:
    """A call's trace (``calls.observer.CallTrace``): its context for the round trip, and how it ended."""

    def __init__(self) -> None:
        self.ends: list[str] = []

    def judged(self, started_ns: int, kind: str | None, pointers: Sequence[str]) -> None:
        pass

    def forwarding(self) -> dict[str, str]:
        return {"traceparent": TRACEPARENT}

    def ended(self, outcome: str, kind: str | None) -> None:
        self.ends.append(outcome)


class Tracer:
    """Opens a :class:`Trace` per call (``calls.observer.CallTracer``)."""

    def __init__(self) -> None:
        self.traces: list[Trace] = []

    def call_started(self, *args: Any) -> Trace:
        self.traces.append(Trace())
        return self.traces[-1]

    def refused(self, *args: Any) -> None:
        pass


class Rig:
    def __init__(self, host: str | None) -> None:
        self.upstream = Upstream()
        guard_side, self.client = pipe_pair()
        self.session = wrap_session(
            guard_side, self.upstream.connect, ToolTable(host=host_profile(host) if host else None)
        )
        self.relay = self.session.routing
        assert isinstance(self.relay, Relay)

    async def answer(self, request_id: Any) -> dict[str, Any]:
        while True:
            message: dict[str, Any] = json.loads(await self.client.receive())
            if message.get("id") == request_id and "method" not in message:
                return message

    async def request(self, request_id: str, method: str, params: Any) -> dict[str, Any]:
        await self.client.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
        return await self.answer(request_id)

    async def call_now(self, request_id: int, arguments: Any, meta: Any = None) -> tuple[bytes, dict[str, Any]]:
        """A call given to the hot path (asserted taken); its line and its answer."""
        params: dict[str, Any] = {"name": "grep", "arguments": arguments}
        if meta is not None:
            params["_meta"] = meta
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()
        await anyio.sleep(0)  # (the relay's reader back in receive())
        assert self.relay.hot is not None and self.relay.hot(line)
        return line, await self.answer(request_id)


@asynccontextmanager
async def running(host: str | None) -> AsyncIterator[Rig]:
    rig = Rig(host)
    async with anyio.create_task_group() as tg:
        tg.start_soon(rig.session.run)
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        await rig.request("i", "initialize", init)
        await rig.client.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        await rig.request("l", "tools/list", {})
        yield rig
        await rig.client.close_send()
        tg.cancel_scope.cancel()


async def test_a_call_as_it_came_goes_as_parsed_under_the_upstream_id() -> None:
    async with running(None) as rig:
        line, answer = await rig.call_now(7, {"pattern": "x"})
    assert answer["result"]["content"][0]["text"] == "ok"
    (sent,) = rig.upstream.calls()
    assert sent["id"] != 7 and rig.upstream.lines[-1] == dumps({**json.loads(line), "id": sent["id"]})


async def test_a_call_mapped_back_goes_in_the_servers_form_once_judged() -> None:
    async with running("openai-strict") as rig:
        _, answer = await rig.call_now(7, STRICT_ARGUMENTS)
    assert answer["result"]["content"][0]["text"] == "ok" and answer["id"] == 7
    (sent,) = rig.upstream.calls()
    assert sent["params"] == {"name": "grep", "arguments": {"pattern": "x"}}  # null: absent
    assert sent["id"] != 7 and not rig.relay.peer.inflight  # (answered: nothing left in flight)


@pytest.mark.parametrize("host", [None, "openai-strict"])
async def test_a_traced_call_keeps_its_trace_context_and_ends_its_trace(host: str | None) -> None:
    async with running(host) as rig:
        tracer = rig.relay.pipeline.tracer = Tracer()
        arguments = STRICT_ARGUMENTS if host else {"pattern": "x"}
        _, answer = await rig.call_now(7, arguments, {"progressToken": 1})
    assert answer["result"]["content"][0]["text"] == "ok"
    (sent,) = rig.upstream.calls()
    assert sent["params"] == {
        "name": "grep",
        "arguments": {"pattern": "x"},
        "_meta": {"progressToken": 1, "traceparent": TRACEPARENT},
    }
    (trace,) = tracer.traces
    assert trace.ends == ["ok"]


@pytest.mark.parametrize("host", [None, "openai-strict"])
async def test_a_judged_call_that_cannot_be_serialized_is_refused_and_never_sent_as_it_came(
    host: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(message: Any) -> bytes:
        if type(message) is dict and message.get("method") == "tools/call":
            raise Uncarriable("ValueError")
        return dumps(message)

    async with running(host) as rig:
        monkeypatch.setattr(hot_path, "dumps", failing)
        monkeypatch.setattr(upstream_side, "dumps", failing)  # (the async path's forward, which answers it)
        monkeypatch.setattr(hot_path, "forwarded_line", lambda *args: failing({"method": "tools/call"}))
        _, answer = await rig.call_now(7, STRICT_ARGUMENTS if host else {"pattern": "x"})
        assert answer["error"]["code"] == INVALID_PARAMS and "not forwarded" in answer["error"]["message"]
        assert not rig.upstream.calls() and not rig.relay.peer.inflight
        monkeypatch.undo()
        _, answer = await rig.call_now(8, {"pattern": "y"})  # the relay goes on
    assert answer["result"]["content"][0]["text"] == "ok"
    assert [c["params"]["arguments"] for c in rig.upstream.calls()] == [{"pattern": "y"}]
