"""The Sigma fixture tools over the SDK's streamable HTTP transport, for the HTTP upstream tests.

An SDK low-level :class:`mcp.server.Server` served by uvicorn on a free loopback port: the
first stdout line is ``{"port": N}``; nothing else goes to stdout. It serves both protocol
eras (the ``MCP-Protocol-Version`` header of each request decides), and lists the Sigma
fixture tools exactly as the tool files hold them (``fixtures/sigma/server.py``'s
``load_tools``), plus test tools:

- ``progress`` ``{"steps": n}``: sends ``n`` progress notifications, then answers.
- ``ask``: asks the client (elicitation, handshake era) and answers with its reply.
- ``notify``: sends ``notifications/tools/list_changed`` on the session's standalone stream.
- ``hold`` / ``release``: ``hold`` answers only once ``release`` has been called.
- ``break_stream``: closes its own response stream (with ``--event-store``), then answers:
  the client must resume with ``Last-Event-ID``.
- ``region`` ``{"region": s, "q": s}``: its ``region`` carries ``x-mcp-header: Region``.

As in the stdio fixture, no call is validated: ``add`` sums, every other Sigma tool echoes
its arguments (``write ran with arguments: {...}``).

Options: ``--json-response`` (answers as JSON, not SSE), ``--stateless`` (no sessions),
``--event-store`` (resumable streams), ``--bearer TOKEN`` (401 without
``Authorization: Bearer TOKEN``), ``--record FILE`` (per HTTP request, one JSON line when it
arrives: ``seq``, method, the ``Mcp-*``/``MCP-*``/``Last-Event-ID`` headers, whether
``Authorization`` was sent; and one when it ends: ``seq``, body size, status),
``--max-body-bytes N`` (default 64 MiB; the SDK's default is 4 MiB).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import socket
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http import EventStore

HERE = Path(__file__).resolve().parent
SIGMA_SERVER = HERE.parents[1] / "fixtures" / "sigma" / "server.py"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def _sigma() -> Any:
    spec = importlib.util.spec_from_file_location("sigma_fixture_server", SIGMA_SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SIGMA = _sigma()

TEST_TOOLS: list[dict[str, Any]] = [
    {
        "name": "progress",
        "description": "Sends `steps` progress notifications, then answers.",
        "inputSchema": {
            "type": "object",
            "properties": {"steps": {"type": "integer", "minimum": 1}},
            "required": ["steps"],
        },
    },
    {"name": "ask", "description": "Asks the client for a colour.", "inputSchema": {"type": "object"}},
    {
        "name": "big",
        "description": "Answers with `size` bytes of text.",
        "inputSchema": {"type": "object", "properties": {"size": {"type": "integer", "minimum": 0}}},
    },
    {"name": "notify", "description": "Sends tools/list_changed.", "inputSchema": {"type": "object"}},
    {"name": "hold", "description": "Answers once `release` was called.", "inputSchema": {"type": "object"}},
    {"name": "release", "description": "Lets `hold` answer.", "inputSchema": {"type": "object"}},
    {"name": "break_stream", "description": "Closes its response stream first.", "inputSchema": {"type": "object"}},
    {
        "name": "region",
        "description": "Mirrors `region` into a header.",
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "q": {"type": "string"}},
            "required": ["region"],
        },
    },
]


class MemoryEventStore(EventStore):
    """Every event kept in memory, numbered; replay sends what followed an id on the same stream."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    async def store_event(self, stream_id: str, message: Any) -> str:
        self.events.append((stream_id, message))
        return str(len(self.events))

    async def replay_events_after(self, last_event_id: str, send_callback: Any) -> str | None:
        if not last_event_id.isdigit() or not 0 < int(last_event_id) <= len(self.events):
            return None
        stream_id = self.events[int(last_event_id) - 1][0]
        for number, (stream, message) in enumerate(self.events[int(last_event_id) :], start=int(last_event_id) + 1):
            if stream == stream_id and message is not None:
                await send_callback(_event_message(message, str(number)))
        return stream_id


def _event_message(message: Any, event_id: str) -> Any:
    from mcp.server.streamable_http import EventMessage

    return EventMessage(message, event_id)


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def build_server() -> Server[Any]:
    """The Sigma tools plus the test tools; no call is validated."""
    raw = SIGMA.load_tools() + TEST_TOOLS
    tools = [types.Tool.model_validate(t) for t in raw]
    names = {t.name for t in tools}
    released = anyio.Event()

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        nonlocal released
        if params.name not in names:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        arguments = params.arguments or {}
        if params.name == "add":
            result: types.CallToolResult = SIGMA._add(arguments)
            return result
        if params.name == "big":
            size = int(arguments.get("size", 0))
            return types.CallToolResult(content=[types.TextContent(type="text", text="x" * size)])
        if params.name == "progress":
            steps = int(arguments.get("steps", 1))
            for step in range(1, steps + 1):
                await ctx.session.report_progress(step, steps, f"step {step}")
            return _text(f"done after {steps} steps")
        if params.name == "ask":
            schema: types.ElicitRequestedSchema = {
                "type": "object",
                "properties": {"colour": {"type": "string"}},
                "required": ["colour"],
            }
            answer = await ctx.session.elicit_form("Pick a colour", schema, related_request_id=ctx.request_id)
            return _text(f"{answer.action}: {json.dumps(answer.content, sort_keys=True)}")
        if params.name == "notify":
            await ctx.session.send_tool_list_changed()
            return _text("notified")
        if params.name == "hold":
            await released.wait()
            return _text("released")
        if params.name == "release":
            released.set()
            released = anyio.Event()
            return _text("ok")
        if params.name == "break_stream":
            await ctx.session.report_progress(1, 2, "before the break")
            if ctx.close_sse_stream is not None:
                await ctx.close_sse_stream()
            await anyio.sleep(0.3)
            await ctx.session.report_progress(2, 2, "after the break")
            return _text("answered after the break")
        compact = json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)
        return _text(f"{params.name} ran with arguments: {compact}")

    return Server("sigma-http-fixture", version="1.0.0", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def guarded(app: App, bearer: str | None, record: Path | None) -> App:
    """``app`` behind a bearer-token check and a request recorder (pure ASGI, lifespan passes through)."""
    counter = 0

    async def wrapper(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        size = 0

        async def counting_receive() -> Message:
            nonlocal size
            message = await receive()
            size += len(message.get("body", b""))
            return message

        status: list[int] = []

        async def watching_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        nonlocal counter
        counter += 1
        seq = counter
        write(
            {
                "seq": seq,
                "method": scope["method"],
                "headers": {
                    k: v
                    for k, v in headers.items()
                    if k.startswith("mcp-") or k in ("last-event-id", "user-agent", "traceparent", "tracestate")
                },
                "authorization": "authorization" in headers,
            }
        )
        try:
            if bearer is not None and headers.get("authorization") != f"Bearer {bearer}":
                body = b'{"error":"unauthorized"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                status.append(401)
                return
            await app(scope, counting_receive, watching_send)
        finally:
            write({"seq": seq, "body_bytes": size, "status": status[0] if status else None})

    def write(entry: dict[str, Any]) -> None:
        if record is not None:
            with record.open("a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")

    return wrapper


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, bind a free port, print it, serve until killed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json-response", action="store_true")
    parser.add_argument("--stateless", action="store_true")
    parser.add_argument("--event-store", action="store_true")
    parser.add_argument("--bearer")
    parser.add_argument("--record", type=Path)
    parser.add_argument("--max-body-bytes", type=int, default=64 * 1024 * 1024)
    args = parser.parse_args(argv)

    server = build_server()
    app = server.streamable_http_app(
        json_response=args.json_response,
        stateless_http=args.stateless,
        event_store=MemoryEventStore() if args.event_store else None,
        retry_interval=100 if args.event_store else None,
        max_request_body_size=args.max_body_bytes,
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sys.stdout.write(json.dumps({"port": sock.getsockname()[1]}) + "\n")
    sys.stdout.flush()
    config = uvicorn.Config(guarded(app, args.bearer, args.record), log_level="warning", lifespan="on")
    anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
