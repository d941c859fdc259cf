"""List a live MCP server's tools for ``mcp-guard check``, with the ``mcp`` SDK's client.

The server is started from a command (``stdio_client``, with the user's whole environment:
the SDK alone would pass only ``HOME``, ``PATH`` and a few more) or reached at a URL
(streamable HTTP). The client speaks the handshake era (``initialize``) and declares the
sampling, elicitation and roots capabilities, because servers list some tools only to
clients that have them. Should the server ask for any of them while it is being listed, it
gets a refusal (sampling), a decline (elicitation) or an empty list (roots).

``tools/list`` results are read raw, page after page (``nextCursor``) until the last: the
SDK's typed ``list_tools()`` validates the whole result and would fail on one malformed
tool, which is exactly what ``check`` must report tool by tool. So the requests go through
the session's :class:`~mcp.shared.jsonrpc_dispatcher.JSONRPCDispatcher` (built here and
handed to :class:`~mcp.ClientSession`), which returns results as plain JSON.

Errors: :class:`ListingError` for every way the listing can fail (the command cannot
start, the server exits or answers with an error, the URL cannot be reached, a malformed
``tools/list`` result, a cursor that repeats, the time limit).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, TextIO

import anyio

from .. import __version__

__all__ = ["MAX_PAGES", "Listing", "ListingError", "list_tools"]

MAX_PAGES = 10_000
"""A server that hands out more pages than this is taken to loop (its cursors never end)."""


class ListingError(Exception):
    """The tools of the server could not be listed; the message says why (never a secret)."""


@dataclass(frozen=True, slots=True)
class Listing:
    """What a live server listed.

    Attributes:
        tools: every tool object of every page, in order, as plain JSON values.
        server: ``{"name", "version"}`` from the ``initialize`` result.
        protocol_version: the negotiated protocol version.
        pages: how many ``tools/list`` pages there were.
    """

    tools: list[Any]
    server: dict[str, Any]
    protocol_version: str
    pages: int


def _describe(exc: BaseException) -> str:
    """A short description of an exception (the first leaf of a group), without argument values."""
    exc = _leaf(exc)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def _errlog() -> TextIO:
    """Where the server's stderr goes: ours, when it is a real file (else nowhere)."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return open(os.devnull, "w")
    return sys.stderr


async def _sampling(context: Any, params: Any) -> Any:
    import mcp_types as types

    return types.ErrorData(code=types.INVALID_REQUEST, message="mcp-guard check does not sample; it only lists tools")


async def _elicitation(context: Any, params: Any) -> Any:
    import mcp_types as types

    return types.ElicitResult(action="decline")


async def _roots(context: Any) -> Any:
    import mcp_types as types

    return types.ListRootsResult(roots=[])


async def list_tools(
    *,
    command: Sequence[str] | None = None,
    url: str | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 30.0,
) -> Listing:
    """Start (``command``) or reach (``url``) a server and list all its tools.

    Args:
        command: the server command and its arguments (stdio); the server inherits the
            whole environment.
        url: the streamable HTTP endpoint (exactly one of ``command`` and ``url``).
        headers: HTTP headers for every request to ``url`` (e.g. ``Authorization``).
        timeout: seconds for the whole listing (start, ``initialize`` and every page).

    Returns:
        The :class:`Listing`.

    Raises:
        ListingError: the tools could not be listed (module docstring).
        ValueError: neither or both of ``command`` and ``url``.
    """
    if (command is None) == (url is None):
        raise ValueError("give exactly one of command and url")
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED

    try:
        with anyio.fail_after(timeout):
            return await _list(command, url, headers)
    except Exception as raised:
        exc = _leaf(raised)
        if isinstance(exc, ListingError):
            raise exc from None
        if isinstance(exc, TimeoutError):
            raise ListingError(f"the server did not list its tools within {timeout:g} s") from None
        if isinstance(exc, MCPError) and exc.error.code == CONNECTION_CLOSED:
            raise ListingError("the server closed the connection before it listed its tools") from None
        if isinstance(exc, MCPError):
            raise ListingError(
                f"the server answered with an error: {exc.error.message} (code {exc.error.code})"
            ) from None
        if url is not None and _is_connect_error(exc):
            from ..relay.http_upstream import connect_failure, shown_url

            raise ListingError(f"cannot reach the server at {shown_url(url)}: {connect_failure(exc)}") from None
        if command is not None and isinstance(exc, OSError) and not isinstance(exc, ConnectionError):
            raise ListingError(f"cannot start `{command[0]}`: {exc.strerror or _describe(exc)}") from None
        raise ListingError(f"the server could not be listed: {_describe(exc)}") from None


def _is_connect_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the HTTP client's "could not connect" (connection refused, no such host, ...)."""
    import httpx2

    return isinstance(exc, httpx2.ConnectError)


def _leaf(exc: BaseException) -> BaseException:
    """The first exception of a (nested) exception group; ``exc`` itself otherwise."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def _list(command: Sequence[str] | None, url: str | None, headers: dict[str, str] | None) -> Listing:
    import mcp_types as types
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

    async with AsyncExitStack() as stack:
        if command is not None:
            params = StdioServerParameters(command=command[0], args=list(command[1:]), env=dict(os.environ))
            read, write = await stack.enter_async_context(stdio_client(params, errlog=_errlog()))
        else:
            assert url is not None
            client = await stack.enter_async_context(create_mcp_http_client(headers=headers))
            read, write = await stack.enter_async_context(streamable_http_client(url, http_client=client))
        dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(read, write)
        session = ClientSession(
            dispatcher=dispatcher,
            sampling_callback=_sampling,
            elicitation_callback=_elicitation,
            list_roots_callback=_roots,
            client_info=types.Implementation(name="mcp-guard-check", version=__version__),
        )
        await stack.enter_async_context(session)
        initialized = await session.initialize()
        version = initialized.protocol_version
        server = {"name": initialized.server_info.name, "version": initialized.server_info.version}
        tools: list[Any] = []
        cursor: Any = None
        seen: set[str] = set()
        pages = 0
        while True:
            request: dict[str, Any] | None = None if cursor is None else {"cursor": cursor}
            result = await dispatcher.send_raw_request(
                "tools/list", request, {"headers": {MCP_PROTOCOL_VERSION_HEADER: version}}
            )
            pages += 1
            if type(result) is not dict or type(result.get("tools")) is not list:
                raise ListingError(f"page {pages} of tools/list has no `tools` array")
            tools.extend(result["tools"])
            cursor = result.get("nextCursor")
            if cursor is None:
                return Listing(tools, server, version, pages)
            if type(cursor) is not str:
                raise ListingError(f"page {pages} of tools/list has a `nextCursor` that is not a string")
            if cursor in seen:
                raise ListingError(f"the server's tools/list cursors do not end (page {pages} repeats a cursor)")
            if pages >= MAX_PAGES:
                raise ListingError(f"the server's tools/list has more than {MAX_PAGES} pages")
            seen.add(cursor)
