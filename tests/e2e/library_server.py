"""A stdio MCP server with tools, prompts, resources, resource templates, completion and listen streams.

Built on the ``mcp`` SDK's low-level :class:`mcp.server.Server`, so it speaks both protocol eras
as a real 2.x server does (the client's first request decides): the handshake era, and the
2026-07-28 era with ``server/discover``, per-request envelopes, ``subscriptions/listen``
(the SDK's :class:`~mcp.server.subscriptions.ListenHandler`) and results carrying
``resultType``, ``ttlMs`` and ``cacheScope``. Gateway tests run it twice under two names.

Usage: ``python library_server.py [--name NAME] [--modern-only] [--listen-rendezvous DIR]``

- ``--name NAME`` (default ``lib``) goes into everything it serves, so two instances differ:
  resource ``NAME://doc/readme``, template ``NAME://item/{id}``, texts naming ``NAME``.
  Both instances list the prompt ``greet``, the tool ``echo`` and the resource
  ``shared://common`` (a URI two servers list: a gateway must withhold it).
- ``--modern-only``: an ``initialize`` request is answered with error -32022 (unsupported
  protocol version, ``data.supported = ["2026-07-28"]``), as a server that speaks only the
  2026-07-28 era answers it; everything else is served as usual.

Tools: ``echo`` (``{"text": string}``, required; answers ``NAME: TEXT``), ``touch``
(``{"uri": string}``: publishes ``notifications/resources/updated`` for that URI on listen
streams), ``add_prompt`` (adds the prompt ``extra`` and publishes ``prompts/list_changed``),
``retype`` (from then on ``echo`` takes ``{"text": integer}``; publishes
``tools/list_changed``). In the handshake era the list changes are also sent on the
connection. Prompts: ``greet`` (argument ``who``, required). Completion: ``ref/prompt``
``greet``'s ``who`` from ``alice``, ``albert``, ``bob``; ``ref/resource`` ``NAME://item/{id}``'s
``id`` from ``1``, ``2``, ``42``. Nothing but protocol messages goes to stdout.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Final

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourceUpdated,
    ToolsListChanged,
)
from mcp.shared.message import SessionMessage
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

WHO = ["alice", "albert", "bob"]
IDS = ["1", "2", "42"]


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


class Library:
    """The state of one server: its name, whether ``echo`` was retyped, the extra prompt."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.retyped = False
        self.extra_prompt = False
        self.bus = InMemorySubscriptionBus()

    def tools(self) -> list[types.Tool]:
        text_type = "integer" if self.retyped else "string"
        return [
            types.Tool(
                name="echo",
                description=f"Echo a text ({self.name}).",
                input_schema={
                    "type": "object",
                    "properties": {"text": {"type": text_type}},
                    "required": ["text"],
                    "additionalProperties": False,
                },
            ),
            types.Tool(
                name="touch",
                description="Announce that a resource changed.",
                input_schema={"type": "object", "properties": {"uri": {"type": "string"}}, "required": ["uri"]},
            ),
            types.Tool(name="add_prompt", description="Add the prompt `extra`.", input_schema={"type": "object"}),
            types.Tool(name="retype", description="Make echo take an integer.", input_schema={"type": "object"}),
        ]

    def prompts(self) -> list[types.Prompt]:
        prompts = [
            types.Prompt(
                name="greet",
                description=f"A greeting from {self.name}.",
                arguments=[types.PromptArgument(name="who", required=True)],
            )
        ]
        if self.extra_prompt:
            prompts.append(types.Prompt(name="extra", description=f"Added at run time to {self.name}."))
        return prompts

    def resources(self) -> list[types.Resource]:
        return [
            types.Resource(uri=f"{self.name}://doc/readme", name="readme", mime_type="text/plain"),
            types.Resource(uri="shared://common", name="common", mime_type="text/plain"),
        ]

    def read(self, uri: str) -> str:
        if uri == f"{self.name}://doc/readme":
            return f"readme of {self.name}"
        if uri == "shared://common":
            return f"common, as {self.name} has it"
        prefix = f"{self.name}://item/"
        if uri.startswith(prefix) and uri[len(prefix) :] in IDS:
            return f"item {uri[len(prefix) :]} of {self.name}"
        raise MCPError(types.INVALID_PARAMS, f"Unknown resource: {uri}")


RENDEZVOUS_SECONDS: Final = 10.0
"""How long ``--listen-rendezvous`` waits for the other instance's mark."""


def rendezvous(listen: ListenHandler, folder: Path, name: str) -> Any:
    """``listen``, acknowledging resource subscriptions only once another instance's mark is in ``folder``."""

    async def listen_at_rendezvous(ctx: ServerRequestContext[Any], params: Any) -> Any:
        if params.notifications.resource_subscriptions:
            (folder / name).touch()
            deadline = time.monotonic() + RENDEZVOUS_SECONDS
            while len(list(folder.iterdir())) < 2 and time.monotonic() < deadline:
                await anyio.sleep(0.02)
            if len(list(folder.iterdir())) < 2:
                none = params.notifications.model_copy(update={"resource_subscriptions": None})
                params = params.model_copy(update={"notifications": none})
        return await listen(ctx, params)

    return listen_at_rendezvous


def build_server(name: str, listen_rendezvous: Path | None = None) -> Server[Any]:
    """The low-level server of one library named ``name`` (``--listen-rendezvous``: see the module)."""
    lib = Library(name)
    listen: Any = ListenHandler(lib.bus)
    if listen_rendezvous is not None:
        listen = rendezvous(listen, listen_rendezvous, name)

    def legacy(ctx: ServerRequestContext[Any]) -> bool:
        return ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=lib.tools())

    async def on_call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        if params.name == "echo":
            return _text(f"{lib.name}: {arguments.get('text')}")
        if params.name == "touch":
            uri = str(arguments.get("uri"))
            await lib.bus.publish(ResourceUpdated(uri))
            if legacy(ctx):
                await ctx.session.send_resource_updated(uri)
            return _text(f"touched {uri}")
        if params.name == "add_prompt":
            lib.extra_prompt = True
            await lib.bus.publish(PromptsListChanged())
            if legacy(ctx):
                await ctx.session.send_prompt_list_changed()
            return _text("added")
        if params.name == "retype":
            lib.retyped = True
            await lib.bus.publish(ToolsListChanged())
            if legacy(ctx):
                await ctx.session.send_tool_list_changed()
            return _text("retyped")
        raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")

    async def on_list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=lib.prompts())

    async def on_get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name == "greet":
            who = (params.arguments or {}).get("who", "nobody")
            text = f"Hello {who}, from {lib.name}."
        elif params.name == "extra" and lib.extra_prompt:
            text = f"The extra prompt of {lib.name}."
        else:
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name}")
        message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        return types.GetPromptResult(messages=[message])

    async def on_list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=lib.resources())

    async def on_list_resource_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(uri_template=f"{lib.name}://item/{{id}}", name="item")
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def on_read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        contents = types.TextResourceContents(uri=uri, text=lib.read(uri), mime_type="text/plain")
        return types.ReadResourceResult(contents=[contents])

    async def on_completion(
        ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        ref = params.ref
        if isinstance(ref, types.PromptReference) and ref.name == "greet" and params.argument.name == "who":
            values = [w for w in WHO if w.startswith(params.argument.value)]
        elif isinstance(ref, types.ResourceTemplateReference) and params.argument.name == "id":
            values = [i for i in IDS if i.startswith(params.argument.value)]
        else:
            values = []
        return types.CompleteResult(completion=types.Completion(values=values, total=len(values)))

    async def on_subscribe(ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams) -> types.EmptyResult:
        return types.EmptyResult()

    return Server(
        f"library-{name}",
        version="1.0.0",
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_prompts=on_list_prompts,
        on_get_prompt=on_get_prompt,
        on_list_resources=on_list_resources,
        on_list_resource_templates=on_list_resource_templates,
        on_read_resource=on_read_resource,
        on_completion=on_completion,
        on_subscribe_resource=on_subscribe,
        on_unsubscribe_resource=on_subscribe,
        on_subscriptions_listen=listen,
    )


async def serve(name: str, modern_only: bool, listen_rendezvous: Path | None = None) -> None:
    """Serve over stdin/stdout until stdin closes."""
    server = build_server(name, listen_rendezvous)
    async with stdio_server() as (read_stream, write_stream):
        if not modern_only:
            await server.run(read_stream, write_stream, server.create_initialization_options())
            return
        inner_send, inner_receive = anyio.create_memory_object_stream[SessionMessage | Exception](16)

        async def refuse_initialize() -> None:
            async with inner_send:
                async for item in read_stream:
                    message = item.message if isinstance(item, SessionMessage) else None
                    if isinstance(message, types.JSONRPCRequest) and message.method == "initialize":
                        error = types.ErrorData(
                            code=types.UNSUPPORTED_PROTOCOL_VERSION,
                            message="this server speaks only the 2026-07-28 protocol era; use server/discover",
                            data={"supported": ["2026-07-28"]},
                        )
                        await write_stream.send(
                            SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error))
                        )
                        continue
                    await inner_send.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(refuse_initialize)
            await server.run(inner_receive, write_stream, server.create_initialization_options())
            tg.cancel_scope.cancel()


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and serve."""
    parser = argparse.ArgumentParser(description="Library fixture MCP server (stdio).")
    parser.add_argument("--name", default="lib", help="the name in its resources and texts (default lib)")
    parser.add_argument("--modern-only", action="store_true", help="refuse initialize (-32022)")
    parser.add_argument("--listen-rendezvous", type=Path, metavar="DIR", help="see the module docstring")
    args = parser.parse_args(argv)
    anyio.run(serve, args.name, args.modern_only, args.listen_rendezvous)


if __name__ == "__main__":
    main()
