"""List a live MCP server's tools with the ``mcp`` SDK's client (``check``, ``check --config``, ``pin``).

The one place the guard lists a server as a client of its own (``serve`` and ``wrap`` list
through the relay instead). The server is started from a command (:mod:`.stdio_listing`, with
the user's whole environment plus any ``env`` given) or reached at a URL (streamable HTTP, with
the given headers).

Protocol eras: the client first speaks the handshake era (``initialize``). A server that
refuses the handshake with a JSON-RPC error (a server that speaks only the 2026-07-28 era
answers it with -32022, or -32601) is asked ``server/discover`` on the same connection and,
when it offers a 2026-07-28 version, listed in that era: every ``tools/list`` page carries the
``_meta`` envelope (protocol version, client info, client capabilities) and its headers.

Either way the client declares the sampling, elicitation and roots capabilities, because
servers list some tools only to clients that have them (``server-everything``), and a
listing (a lock file above all) must cover what any client may be shown. Should the server
ask for any of them while it is being listed, it gets a refusal (sampling), a decline
(elicitation) or an empty list (roots).

``tools/list`` results are read raw, page after page (``nextCursor``) until the last: the
SDK's typed ``list_tools()`` validates the whole result and would fail on one malformed
tool, which ``check`` must report tool by tool. So the requests go through the session's
:class:`~mcp.shared.jsonrpc_dispatcher.JSONRPCDispatcher` (built here and handed to
:class:`~mcp.ClientSession`), which returns results as plain JSON.

Errors: :class:`ListingError` for every way the listing can fail (the command cannot
start, the server exits or answers with an error, the URL cannot be reached or answers with
an HTTP error status, a malformed ``tools/list`` result, a cursor that repeats, the time
limit); its message never holds an environment or header value.

A stdio server is started, and its stdout read, as ``wrap`` and ``serve`` do
(:mod:`.stdio_listing`, over ``peer.triage``: one rule for what a server's stdout line is):
a line that is not JSON-RPC (a banner, debug output, bytes that are not UTF-8, JSON that is
no JSON-RPC message) is skipped and logged as the relay logs it, by size or by what is wrong,
never by its content: the first of each kind in full, then a count at each power of two; its
stderr lines reach ours escaped and prefixed (``upstream stderr: ``, ``upstream NAME stderr: ``
for a server of ``check --config``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final, Literal

import anyio

from .. import __version__
from ..errors import GuardError
from ..safe_text import escape

__all__ = ["MAX_PAGES", "Listing", "ListingError", "list_tools"]

MAX_PAGES: Final = 10_000
"""A server that hands out more pages than this is taken to loop (its cursors never end)."""

CAPABILITIES: Final = {"sampling": {}, "elicitation": {"form": {}, "url": {}}, "roots": {"listChanged": True}}
"""The client capabilities declared in the 2026-07-28 envelope (what the handshake declares too)."""


log = logging.getLogger("mcp_guard")

_LABEL: ContextVar[str | None] = ContextVar("mcp_guard_listing_label", default=None)
"""The server being listed in this task (and the SDK's reader tasks it starts), for the log."""


class ListingError(GuardError):
    """The tools of the server could not be listed; the message says why (never a secret).

    The message often quotes the server (its error text, its stderr's last line): it is escaped
    here (``safe_text.escape``), once, so no printer of it can be made to start a forged line or
    reach a terminal raw.
    """

    def __init__(self, message: str) -> None:
        super().__init__(escape(message))


@dataclass(frozen=True, slots=True)
class Listing:
    """What a live server listed.

    Attributes:
        tools: every tool object of every page, in order, as plain JSON values.
        server: ``{"name", "version"}`` from the ``initialize`` result (2026-07-28 era: from
            the ``server/discover`` result's ``serverInfo`` stamp; ``{}`` when it has none).
        protocol_version: the negotiated protocol version.
        pages: how many ``tools/list`` pages there were.
        era: ``handshake`` (``initialize``) or ``2026-07-28`` (``server/discover``).
    """

    tools: list[Any]
    server: dict[str, Any]
    protocol_version: str
    pages: int
    era: Literal["handshake", "2026-07-28"] = "handshake"


def _describe(exc: BaseException) -> str:
    """A short description of an exception (the first leaf of a group), without argument values."""
    exc = _leaf(exc)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


async def _sampling(context: Any, params: Any) -> Any:
    import mcp_types as types

    return types.ErrorData(code=types.INVALID_REQUEST, message="mcp-guard does not sample; it only lists tools")


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
    headers: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    timeout: float = 30.0,
    client_name: str = "mcp-guard",
    label: str | None = None,
) -> Listing:
    """Start (``command``) or reach (``url``) a server and list all its tools.

    Args:
        command: the server command and its arguments (stdio).
        url: the streamable HTTP endpoint (exactly one of ``command`` and ``url``).
        headers: HTTP headers for every request to ``url`` (e.g. ``Authorization``).
        env: the environment of a stdio server, over the guard's own (``peer.spawn.start_process``;
            default ``os.environ``: what the user's shell has).
        cwd: the working folder of a stdio server (default the guard's).
        timeout: seconds for the whole listing (start, handshake or discovery, every page).
        client_name: the ``name`` of the client info the server is shown.
        label: the server's name in log lines (``check --config``: its config key); ``None``
            when only one server is listed.

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

    if command is not None and cwd is not None and not os.path.isdir(cwd):
        raise ListingError(f"cannot start `{command[0]}`: {_missing_folder(cwd)}")
    statuses: list[int] = []
    labelled = _LABEL.set(label)
    try:
        with anyio.fail_after(timeout):
            return await _list(command, url, headers, env, cwd, client_name, statuses)
    except Exception as raised:
        exc = _leaf(raised)
        if isinstance(exc, ListingError):
            raise exc from None
        if isinstance(exc, TimeoutError):
            raise ListingError(f"the server did not list its tools within {timeout:g} s") from None
        if statuses:
            # The SDK turns an HTTP error status into a generic JSON-RPC error; say which status it was.
            raise ListingError(f"the server answered HTTP {statuses[0]} ({_describe(exc)})") from None
        if isinstance(exc, MCPError) and exc.error.code == CONNECTION_CLOSED:
            raise ListingError("the server closed the connection before it listed its tools") from None
        if isinstance(exc, MCPError):
            raise ListingError(
                f"the server answered with an error: {exc.error.message} (code {exc.error.code})"
            ) from None
        if url is not None and _is_connect_error(exc):
            from ..peer.http_upstream import connect_failure, shown_url

            raise ListingError(f"cannot reach the server at {shown_url(url)}: {connect_failure(exc)}") from None
        if command is not None and isinstance(exc, OSError) and not isinstance(exc, ConnectionError):
            reason = _start_failure(exc, cwd)
            if command[0].startswith("~") and reason == "command not found":
                reason += " (`~` is not expanded in `command`: write the full path)"
            raise ListingError(f"cannot start `{command[0]}`: {reason}") from None
        raise ListingError(f"the server could not be listed: {_describe(exc)}") from None
    finally:
        _LABEL.reset(labelled)


def _missing_folder(cwd: str) -> str:
    return f"its working folder (cwd) {cwd} does not exist or is not a folder"


def _start_failure(exc: OSError, cwd: str | None) -> str:
    """Why a command could not be started (its folder, or the command itself)."""
    if isinstance(exc, FileNotFoundError):
        if cwd is not None and exc.filename == cwd:
            return _missing_folder(cwd)
        return "command not found"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return exc.strerror or _describe(exc)


def _is_connect_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the HTTP client's "could not connect" (connection refused, no such host, ...)."""
    import httpx2

    return isinstance(exc, httpx2.ConnectError)


def _leaf(exc: BaseException) -> BaseException:
    """The first exception of a (nested) exception group; ``exc`` itself otherwise."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def _list(
    command: Sequence[str] | None,
    url: str | None,
    headers: Mapping[str, str] | None,
    env: Mapping[str, str] | None,
    cwd: str | None,
    client_name: str,
    statuses: list[int],
) -> Listing:
    import httpx2
    import mcp_types as types
    from mcp import ClientSession, MCPError
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.shared.inbound import MCP_METHOD_HEADER, MCP_PROTOCOL_VERSION_HEADER
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
    from mcp_types import CONNECTION_CLOSED

    async def note_status(response: httpx2.Response) -> None:
        if response.status_code >= 400 and response.request.method == "POST":
            statuses.append(response.status_code)

    async with AsyncExitStack() as stack:
        if command is None:
            assert url is not None
            client = await stack.enter_async_context(create_mcp_http_client(headers=dict(headers or {})))
            client.event_hooks["response"].append(note_status)
            read, write = await stack.enter_async_context(streamable_http_client(url, http_client=client))
        else:
            from .stdio_listing import stdio_streams  # (the server's stdout read by the relay's rule)

            environment = dict(os.environ if env is None else env)
            read, write = await stack.enter_async_context(stdio_streams(command, environment, cwd, _LABEL.get()))
        dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(read, write)
        info = types.Implementation(name=client_name, version=__version__)
        session = ClientSession(
            dispatcher=dispatcher,
            sampling_callback=_sampling,
            elicitation_callback=_elicitation,
            list_roots_callback=_roots,
            client_info=info,
        )
        await stack.enter_async_context(session)
        era: Literal["handshake", "2026-07-28"] = "handshake"
        meta: dict[str, Any] | None = None
        try:
            initialized = await session.initialize()
            version = initialized.protocol_version
            server = {"name": initialized.server_info.name, "version": initialized.server_info.version}
        except (MCPError, RuntimeError) as refused:
            if isinstance(refused, MCPError) and refused.error.code == CONNECTION_CLOSED:
                raise
            # No handshake: a server of the 2026-07-28 era alone answers server/discover instead.
            try:
                await session.discover()
            except Exception:
                raise refused from None
            statuses.clear()  # the refused handshake's status, if any, is no failure of the listing
            era = "2026-07-28"
            version = str(session.protocol_version)
            identity = session.server_info
            server = {"name": identity.name, "version": identity.version} if identity is not None else {}
            meta = {
                types.PROTOCOL_VERSION_META_KEY: version,
                types.CLIENT_INFO_META_KEY: info.model_dump(by_alias=True, mode="json", exclude_none=True),
                types.CLIENT_CAPABILITIES_META_KEY: CAPABILITIES,
            }
        request_headers = {MCP_PROTOCOL_VERSION_HEADER: version}
        if meta is not None:
            request_headers[MCP_METHOD_HEADER] = "tools/list"
        tools: list[Any] = []
        cursor: Any = None
        seen: set[str] = set()
        pages = 0
        while True:
            request: dict[str, Any] | None = None if cursor is None else {"cursor": cursor}
            if meta is not None:
                request = {**(request or {}), "_meta": meta}
            result = await dispatcher.send_raw_request("tools/list", request, {"headers": dict(request_headers)})
            pages += 1
            if type(result) is not dict or type(result.get("tools")) is not list:
                raise ListingError(f"page {pages} of tools/list has no `tools` array")
            tools.extend(result["tools"])
            cursor = result.get("nextCursor")
            if cursor is None:
                return Listing(tools, server, version, pages, era)
            if type(cursor) is not str:
                raise ListingError(f"page {pages} of tools/list has a `nextCursor` that is not a string")
            if cursor in seen:
                raise ListingError(f"the server's tools/list cursors do not end (page {pages} repeats a cursor)")
            if pages >= MAX_PAGES:
                raise ListingError(f"the server's tools/list has more than {MAX_PAGES} pages")
            seen.add(cursor)
