"""List every configured upstream's tools with the ``mcp`` SDK client (for ``pin`` and ``check``).

Each upstream is started (stdio) or reached (streamable HTTP), initialized in the handshake
era, and asked for every page of ``tools/list``. The tools are kept as the JSON the upstream
sent, tool by tool: the requests go through the SDK's JSON-RPC dispatcher, whose raw results
are not validated (``ClientSession.list_tools`` would drop unknown fields and fail the whole
list over one malformed tool).

The guard's client side declares sampling, elicitation and roots (answering any such
request with an error): servers list some tools only to clients that declare them
(``server-everything``), and a lock must cover what any client may be shown.

The upstreams are listed concurrently; one that cannot be started, fails, or does not answer
within the timeout is reported with the reason, and the others are unaffected.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import anyio
import httpx2
import mcp_types as types
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

from .config import GatewayConfig, HttpServer, StdioServer

__all__ = ["DEFAULT_TIMEOUT", "MAX_PAGES", "UpstreamListing", "list_server", "list_servers"]

log = logging.getLogger("mcp_guard")

DEFAULT_TIMEOUT: Final = 30.0
"""Seconds one upstream gets to start, initialize and list all its tools."""

MAX_PAGES: Final = 10_000
"""A listing that pages more often than this is abandoned (a cursor loop)."""

_PROTOCOL_HEADER: Final = "mcp-protocol-version"


@dataclass
class UpstreamListing:
    """What listing one upstream found.

    Attributes:
        server: the server's name in the config.
        transport: ``stdio`` or ``http``.
        status: ``ok``, ``failed`` (``error`` says why) or ``disabled`` (not contacted).
        error: the reason of a failure (never an environment or header value).
        tools: every tool as the upstream listed it (wire JSON), all pages in order.
        server_info: the upstream's ``serverInfo`` (``name``, ``version``), when it answered.
        protocol_version: the protocol version the handshake agreed on.
    """

    server: str
    transport: Literal["stdio", "http"]
    status: Literal["ok", "failed", "disabled"]
    error: str | None = None
    tools: list[Any] = field(default_factory=list)
    server_info: dict[str, Any] | None = None
    protocol_version: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the upstream answered with a complete listing."""
        return self.status == "ok"

    def to_json(self) -> dict[str, Any]:
        """The listing as JSON (tools by name only)."""
        return {
            "server": self.server,
            "transport": self.transport,
            "status": self.status,
            "error": self.error,
            "server_info": self.server_info,
            "protocol_version": self.protocol_version,
            "tools": [t.get("name") if type(t) is dict else None for t in self.tools],
        }


async def _refuse_sampling(context: Any, params: Any) -> types.ErrorData:
    return types.ErrorData(code=types.INVALID_REQUEST, message="mcp-guard is only listing tools")


async def _refuse_elicitation(context: Any, params: Any) -> types.ErrorData:
    return types.ErrorData(code=types.INVALID_REQUEST, message="mcp-guard is only listing tools")


async def _no_roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[])


async def _list_over(read: Any, write: Any, listing: UpstreamListing, timeout: float) -> None:
    dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(read, write)
    session = ClientSession(
        dispatcher=dispatcher,
        sampling_callback=_refuse_sampling,
        elicitation_callback=_refuse_elicitation,
        list_roots_callback=_no_roots,
        client_info=types.Implementation(name="mcp-guard", version=_version()),
    )
    async with session:
        result = await session.initialize()
        listing.protocol_version = result.protocol_version
        listing.server_info = result.server_info.model_dump(mode="json", exclude_none=True)
        headers = {_PROTOCOL_HEADER: result.protocol_version}
        cursor: Any = None
        seen: set[str] = set()
        for _page in range(MAX_PAGES):
            params = {"cursor": cursor} if cursor is not None else None
            raw = await dispatcher.send_raw_request("tools/list", params, {"timeout": timeout, "headers": headers})
            page = raw.get("tools")
            if type(page) is not list:
                raise _Failed("its tools/list result has no `tools` list")
            listing.tools.extend(page)
            cursor = raw.get("nextCursor")
            if cursor is None:
                return
            marker = json.dumps(cursor, sort_keys=True)
            if marker in seen:
                raise _Failed("its tools/list cursors loop")
            seen.add(marker)
        raise _Failed(f"its tools/list has more than {MAX_PAGES} pages")


class _Failed(Exception):
    """A listing failure with a reason fit for the operator."""


def _version() -> str:
    from .. import __version__

    return __version__


def _reason(exc: BaseException) -> str:
    """A short reason for a failed listing (leaf of an exception group; no values)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, _Failed):
        return str(exc)
    if isinstance(exc, TimeoutError):
        return "no complete answer in time"
    if isinstance(exc, FileNotFoundError):
        return "cannot start: command not found"
    if isinstance(exc, PermissionError):
        return "cannot start: permission denied"
    if isinstance(exc, httpx2.HTTPStatusError):
        return f"HTTP {exc.response.status_code} from the server"
    if isinstance(exc, httpx2.ConnectError):
        from ..relay.http_upstream import connect_failure

        return f"cannot connect: {connect_failure(exc)}"
    if isinstance(exc, httpx2.HTTPError):
        return f"HTTP failure ({type(exc).__name__})"
    if isinstance(exc, MCPError) and "closed" in str(exc).lower():
        return "the upstream closed the connection (it exited, or is not an MCP server)"
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


async def list_server(
    server: StdioServer | HttpServer, *, timeout: float = DEFAULT_TIMEOUT, environ: Mapping[str, str] | None = None
) -> UpstreamListing:
    """List every tool of one upstream; never raises for the upstream's faults.

    Args:
        server: the server's config entry (``env``/``headers`` already expanded).
        timeout: seconds for start, initialize and all pages together.
        environ: the environment a stdio upstream starts with, plus its ``env``
            (default ``os.environ``: the upstream gets what the user's shell has).

    Returns:
        The listing, ``status`` ``ok`` or ``failed`` (``disabled`` for a disabled entry).
    """
    listing = UpstreamListing(server.name, server.transport, "ok")
    statuses: list[int] = []
    if server.disabled:
        listing.status = "disabled"
        return listing
    try:
        with anyio.fail_after(timeout):
            if isinstance(server, StdioServer):
                if server.cwd is not None and not os.path.isdir(server.cwd):
                    folder = f"its working folder (cwd) {server.cwd}"
                    raise _Failed(f"cannot start: {folder} does not exist or is not a folder")
                env = dict(os.environ if environ is None else environ) | server.env
                params = StdioServerParameters(command=server.command, args=server.args, env=env, cwd=server.cwd)
                async with stdio_client(params, errlog=sys.stderr) as (read, write):
                    await _list_over(read, write, listing, timeout)
            else:

                async def note_status(response: httpx2.Response) -> None:
                    if response.status_code >= 400:
                        statuses.append(response.status_code)

                client = httpx2.AsyncClient(
                    headers=server.headers, timeout=httpx2.Timeout(timeout), event_hooks={"response": [note_status]}
                )
                async with client, streamable_http_client(server.url, http_client=client) as (read, write):
                    await _list_over(read, write, listing, timeout)
    except Exception as exc:
        listing.status = "failed"
        listing.error = _reason(exc)
        if statuses:
            # The SDK turns an HTTP error status into a generic JSON-RPC error; say which status it was.
            listing.error = f"HTTP {statuses[0]} from the server ({listing.error})"
        listing.tools = []
        if isinstance(server, StdioServer) and listing.error.startswith("cannot start: "):
            listing.error = f"cannot start `{server.command}`: " + listing.error.removeprefix("cannot start: ")
            if server.command.startswith("~") and "not found" in listing.error:
                listing.error += " (`~` is not expanded in `command`: write the full path)"
        log.warning("upstream %s: could not list its tools: %s", server.name, listing.error)
    return listing


async def list_servers(config: GatewayConfig, *, timeout: float = DEFAULT_TIMEOUT) -> list[UpstreamListing]:
    """List every server of ``config`` concurrently (disabled ones reported, not contacted), in config order."""
    results: dict[str, UpstreamListing] = {}

    async def one(server: StdioServer | HttpServer) -> None:
        results[server.name] = await list_server(server, timeout=timeout)

    async with anyio.create_task_group() as tg:
        for server in config.servers:
            tg.start_soon(one, server)
    return [results[s.name] for s in config.servers]
