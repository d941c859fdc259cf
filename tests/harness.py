"""The in-memory harness for session tests: a client, the guard (``wrap``'s relay or ``serve``'s
gateway session), and scripted upstreams, wired with memory streams; no processes.

- :class:`MemoryLink` and :func:`link_pair`: one line connection (a ``LineLink``) in memory. A
  line starting with :data:`TOO_LONG` is read as an over-long line (``LineTooLong``) holding the rest.
- :class:`Client`: the test's side of the guard's client link (answers by id, notifications kept).
- :class:`ScriptedUpstream`: a connector whose connections answer ``initialize``,
  ``tools/list``, ``ping``, batches, and ``tools/call`` of :data:`TOOLS`, with a hook the test
  sets to script what a call does (a hostile or broken server), and :meth:`ScriptedUpstream.handle`
  for a subclass to answer more (``tests/sessions/test_session.py``'s faults).
- :func:`running_guard`: a ``Session`` of ``wrap`` (routed by :class:`~mcp_guard.sessions.relay.Relay`, no renaming) or
  ``serve`` (a session routed by :class:`~mcp_guard.sessions.gateway.Gateway`, of one server ``s``, its tools
  named ``s__NAME``) over one scripted upstream, so one test runs against both commands.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcp_guard.peer.upstream import LineLink
from mcp_guard.sessions.session import Session
from mcp_guard.wire.framing import LineTooLong

TIMEOUT = 10.0
"""Hang guard for one wait in a test."""

INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}

TOO_LONG = b"\x00too-long:"
"""A line starting so is read by the receiving side as an over-long line (``LineTooLong``) holding the rest."""

ECHO = {
    "name": "echo",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": False},
}
TOOLS = [ECHO, {"name": "hang", "inputSchema": {"type": "object"}}]


class MemoryLink:
    """One end of an in-memory line connection (a ``LineLink``)."""

    def __init__(self, inbox: MemoryObjectReceiveStream[bytes], outbox: MemoryObjectSendStream[bytes]) -> None:
        self.inbox = inbox
        self.outbox = outbox

    async def receive(self) -> bytes:
        try:
            line = await self.inbox.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise anyio.EndOfStream from None
        if line.startswith(TOO_LONG):
            raise LineTooLong(line[len(TOO_LONG) :], 1000)
        return line

    async def send(self, line: bytes) -> None:
        await self.outbox.send(line)

    async def close_send(self) -> None:
        await self.outbox.aclose()

    async def aclose(self) -> None:
        await self.outbox.aclose()
        await self.inbox.aclose()


def link_pair(size: int = 1000) -> tuple[MemoryLink, MemoryLink]:
    """Two connected ends; each side buffers ``size`` lines."""
    a_send, a_receive = anyio.create_memory_object_stream[bytes](size)
    b_send, b_receive = anyio.create_memory_object_stream[bytes](size)
    return MemoryLink(a_receive, b_send), MemoryLink(b_receive, a_send)


class Client:
    """The test's side of the guard's client link.

    Attributes:
        guard_link: the end the guard reads and writes.
        link: the test's end.
        answers: responses read and not yet taken, by id (a second one for an id is kept in ``extra``).
        extra: responses that arrived for an id already answered (a client must never see any).
        notifications: notifications and server requests read meanwhile.
    """

    def __init__(self) -> None:
        self.guard_link, self.link = link_pair()
        self.notifications: list[dict[str, Any]] = []
        self.answers: dict[Any, dict[str, Any]] = {}
        self.seen: list[dict[str, Any]] = []
        self.guard: Any = None  # the guard serving it (set by running_guard)
        self._counter = 0

    async def send(self, message: Any) -> None:
        await self.link.send(json.dumps(message).encode())

    async def send_raw(self, line: bytes) -> None:
        await self.link.send(line)

    async def read(self) -> dict[str, Any]:
        with anyio.fail_after(TIMEOUT):
            message = json.loads(await self.link.receive())
        assert type(message) is dict
        if "method" in message:
            self.notifications.append(message)
        else:
            self.seen.append(message)
        return message

    async def answer(self, request_id: Any) -> dict[str, Any]:
        """The response to ``request_id`` (others and notifications meanwhile are kept)."""
        while request_id not in self.answers:
            got = await self.read()
            if "method" not in got:
                self.answers.setdefault(got.get("id"), got)
        return self.answers.pop(request_id)

    def answers_to(self, request_id: Any) -> list[dict[str, Any]]:
        """Every response read so far whose id is ``request_id`` (the JSON type must match too)."""
        return [m for m in self.seen if type(m.get("id")) is type(request_id) and m.get("id") == request_id]

    async def request(self, method: str, params: Any = None, request_id: Any = None) -> dict[str, Any]:
        if request_id is None:
            self._counter += 1
            request_id = self._counter
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return await self.answer(request_id)

    async def call(self, name: str, arguments: Any = None, request_id: Any = None) -> dict[str, Any]:
        return await self.request("tools/call", {"name": name, "arguments": arguments or {}}, request_id)

    async def initialize(self) -> dict[str, Any]:
        response = await self.request("initialize", INIT)
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response


CallScript = Callable[["ScriptedUpstream", MemoryLink, dict[str, Any]], Awaitable[None]]
"""What a scripted upstream does with a ``tools/call`` (the message as it got it): answer, lie, die, ..."""


class ScriptedUpstream:
    """A connector whose connections are scripted MCP servers (handshake era).

    Attributes:
        tools: what ``tools/list`` answers.
        on_call: what a ``tools/call`` does (default: :meth:`answer_call`).
        received: every message of every connection, in order.
        by_connection: the messages of each connection, in order.
        connections: connections made.
        links: the server side of each connection.
        tasks: the task each connection was entered in and left in (two entries per connection).
        version: the protocol version ``initialize`` answers (None: the one the client asked).
    """

    def __init__(self, tools: list[Any] | None = None, on_call: CallScript | None = None) -> None:
        self.tools = TOOLS if tools is None else tools
        self.on_call = on_call
        self.received: list[dict[str, Any]] = []
        self.by_connection: list[list[dict[str, Any]]] = []
        self.connections = 0
        self.links: list[MemoryLink] = []
        self.tasks: list[int] = []
        self.version: str | None = None  # what initialize answers (None: the version the client asked)

    def calls(self) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("method") == "tools/call"]

    def starting(self) -> None:
        """Called as each connection is made; raise ``UpstreamStartError`` to refuse it."""

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[LineLink]:
        self.connections += 1
        self.starting()
        guard_side, server_side = link_pair()
        self.links.append(server_side)
        self.by_connection.append([])
        self.tasks.append(anyio.get_current_task().id)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.serve, server_side)
            try:
                yield guard_side
            finally:
                self.tasks.append(anyio.get_current_task().id)  # left in the task it was entered in
                tg.cancel_scope.cancel()
                await guard_side.aclose()

    @staticmethod
    async def send(link: MemoryLink, message: dict[str, Any]) -> None:
        await link.send(json.dumps(message).encode())

    @staticmethod
    async def answer_call(link: MemoryLink, message: dict[str, Any]) -> None:
        """The honest answer to a call: ``"NAME ok"``."""
        text = f"{message['params']['name']} ok"
        result = {"content": [{"type": "text", "text": text}]}
        await ScriptedUpstream.send(link, {"jsonrpc": "2.0", "id": message["id"], "result": result})

    async def serve(self, link: MemoryLink) -> None:
        """One connection: each message (a batch: each element, answered as one batch) goes to
        :meth:`handle`, until the guard closes its side or ``handle`` ends the connection."""
        received = self.by_connection[-1]
        while True:
            try:
                message = json.loads(await link.receive())
            except anyio.EndOfStream:
                await link.aclose()  # like a server exiting at the end of its input
                return
            if type(message) is list:  # a batch: answers {} to each request, in one batch
                self.received.extend(message)
                received.extend(message)
                answers = [{"jsonrpc": "2.0", "id": m["id"], "result": {}} for m in message if "id" in m]
                await link.send(json.dumps(answers).encode())
                continue
            self.received.append(message)
            received.append(message)
            if message.get("id") is None or message.get("method") is None:
                continue
            if not await self.handle(link, message):
                await link.aclose()  # the server exits
                return

    async def handle(self, link: MemoryLink, message: dict[str, Any]) -> bool:
        """Answer one request; False ends the connection. A subclass answers more methods, or faults."""
        method, request_id = message["method"], message["id"]
        if method == "tools/call":
            if message["params"]["name"] != "hang":
                if self.on_call is not None:
                    await self.on_call(self, link, message)
                else:
                    await self.answer_call(link, message)
            return True
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": {}}
        if method == "initialize":
            caps = {"tools": {"listChanged": True}}
            params = message.get("params")
            asked = params.get("protocolVersion") if type(params) is dict else None
            version = self.version or asked or INIT["protocolVersion"]  # (as servers do: the version asked)
            reply["result"] = {"protocolVersion": version, "capabilities": caps, "serverInfo": {}}
        elif method == "tools/list":
            reply["result"] = {"tools": self.tools}
        await self.send(link, reply)
        return True


@asynccontextmanager
async def running_guard(
    command: str, upstream: ScriptedUpstream, *, initialize: bool = True, host: str | None = None, **options: Any
) -> AsyncIterator[Client]:
    """The guard of ``command`` (``"wrap"`` or ``"serve"``) over ``upstream``, initialized (unless not
    ``initialize``); yields the client, whose ``guard`` is the ``Session`` (its ``routing`` the Relay or the
    Gateway). ``host``: the model host its listings are shown to (``wrap --present-for``, ``guard.presentFor``).

    The client's tool names are ``name(command, tool)``. On exit the client closes its side and
    the guard is waited for (it must stop its upstream).
    """
    from mcp_guard.calls.tool_table import ToolTable
    from mcp_guard.config import parse_config
    from mcp_guard.sessions.gateway import serve_session
    from mcp_guard.sessions.relay import wrap_session

    client = Client()
    options.setdefault("drain_timeout", 0.2)
    guard: Session
    if command == "wrap":
        from mcp_guard.hosts import host_profile

        table = ToolTable(host=host_profile(host) if host is not None else None)
        guard = wrap_session(client.guard_link, upstream.connect, table, **options)
    else:
        document: dict[str, Any] = {"mcpServers": {"s": {"command": "unused"}}}
        if host is not None:
            document["guard"] = {"presentFor": host}
        config = parse_config(json.dumps(document), environ={})
        guard = serve_session(client.guard_link, config, connectors={"s": upstream.connect}, **options)
    client.guard = guard
    done = anyio.Event()

    async def run() -> None:
        await guard.run()
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        if initialize:
            await client.initialize()
        yield client
        await client.link.close_send()
        with anyio.fail_after(TIMEOUT):
            await done.wait()  # the guard ends once the client closed, and stops its upstream


def name(command: str, tool: str) -> str:
    """The name the client calls ``tool`` by: as listed (``wrap``), or ``s__tool`` (``serve``)."""
    return tool if command == "wrap" else f"s__{tool}"
