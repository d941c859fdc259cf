"""The HTTP headers of the guard's requests to a streamable HTTP upstream, for both protocol eras.

- The user's own headers (``--header``, ``--header-env``): :func:`parse_headers`, one syntax
  for every command that takes them, and the names the transport keeps for itself.
- The MCP headers of a POST (:func:`post_headers`): ``Mcp-Session-Id`` and
  ``MCP-Protocol-Version`` in the handshake era; in the 2026-07-28 era the request's own
  ``MCP-Protocol-Version`` and the ``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*`` headers
  mirrored from its body, with the SDK's helpers (``mcp.shared.inbound``).
- The headers of a ``GET`` event stream (:func:`stream_headers`), and the ``x-mcp-header``
  maps learned from ``tools/list`` pages (:func:`learn_header_maps`).
- While tracing (``--otel``; :func:`propagate_trace_context`), a request's W3C trace context: the
  ``traceparent`` and ``tracestate`` members of its ``params._meta`` (which the call's trace wrote there,
  ``calls.pipeline.Pipeline.forwarded_params``) go out as the HTTP headers of the same names too, so a server
  traced by its HTTP instrumentation alone also sees the guard's round trip as its parent.

A value the guard sends in a header is printable ASCII without white space at its ends
(RFC 9110, section 5.5); one that is not is left out, never sent. Header values are never
logged. The transport itself is :mod:`mcp_guard.peer.http_upstream`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from mcp.shared.inbound import (
    NAME_BEARING_METHODS,
    encode_header_value,
    find_invalid_x_mcp_header,
    mcp_param_headers,
    x_mcp_header_map,
)

from ..wire.meta import PROTOCOL_VERSION_KEY

__all__ = [
    "ACCEPT_BOTH",
    "SESSION_HEADER",
    "VERSION_HEADER",
    "HeaderMaps",
    "learn_header_maps",
    "parse_headers",
    "post_headers",
    "propagate_trace_context",
    "safe_value",
    "stream_headers",
]

log = logging.getLogger("mcp_guard")

SESSION_HEADER: Final = "Mcp-Session-Id"
VERSION_HEADER: Final = "MCP-Protocol-Version"
ACCEPT_BOTH: Final = "application/json, text/event-stream"

HeaderMaps = dict[str, dict[tuple[str, ...], str]]
"""Tool name → its ``x-mcp-header`` map (argument path → header name), as ``mcp.shared.inbound`` builds it."""

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
"""An HTTP field name (RFC 9110, section 5.6.2)."""

_FIELD_VALUE = re.compile(r"[\x20-\x7e\t]*")
"""An HTTP field value the guard sends: visible ASCII, space and tab (RFC 9110, section 5.5)."""

_RESERVED = frozenset(
    {
        "accept",
        "content-type",
        "content-length",
        "transfer-encoding",
        "connection",
        "last-event-id",
        "mcp-session-id",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
    }
)
"""Headers the transport sets itself; ``Mcp-Param-*`` too."""

TRACE_CONTEXT_KEYS: Final = ("traceparent", "tracestate")
"""W3C Trace Context (level 1): the ``params._meta`` members mirrored as headers while tracing (SEP-414: the same
names, the same value formats, in ``_meta`` and in HTTP)."""

_propagating: list[bool] = [False]


def propagate_trace_context(on: bool) -> None:
    """Mirror each request's ``params._meta`` trace context as HTTP headers from now on (``on``), or stop.

    Turned on with tracing (``mcp_guard.telemetry.setup.start_tracing``), off when it stops: without tracing
    the requests' headers stay as they were (the guard adds nothing of tracing to a request)."""
    _propagating[0] = on


def safe_value(value: Any) -> bool:
    """Whether ``value`` may go out as a header value: a string of printable ASCII, no white space at its ends."""
    return type(value) is str and _FIELD_VALUE.fullmatch(value) is not None and value == value.strip()


def parse_headers(values: Iterable[str], from_env: Iterable[str], environ: Mapping[str, str]) -> dict[str, str]:
    """The extra headers for every request to the upstream, from ``--header`` and ``--header-env``.

    One syntax for every command that takes these flags (``wrap``, ``check``): ``NAME=VALUE``,
    or ``NAME: VALUE`` as HTTP writes it. The name ends at the first ``=`` or ``:``, neither of
    which can occur in a header name (RFC 9110, section 5.6.2), so either form is unambiguous
    and the value may hold both (``Authorization: Bearer a=b``). White space around the name
    and the value is dropped.

    Args:
        values: ``NAME=VALUE`` (or ``NAME: VALUE``) strings (``--header``).
        from_env: ``NAME=ENVVAR`` (or ``NAME: ENVVAR``) strings (``--header-env``): the
            header's value is the whole value of the environment variable ``ENVVAR``, so a
            secret such as ``Bearer …`` need not appear on a command line.
        environ: the environment to read (``os.environ``).

    Returns:
        Header name to value, names as given.

    Raises:
        ValueError: a string without ``=`` or ``:``, a name that is not an HTTP token, a
            name the transport sets itself (``Accept``, ``Content-Type``, ``Mcp-*``, …), a
            name given twice, a value with control or non-ASCII characters, or an unset
            variable. Messages name a valid header and the variable, never a value (nor a
            malformed name, which may be a misplaced value).
    """
    headers: dict[str, str] = {}
    seen: set[str] = set()

    def add(name: str, value: str, flag: str) -> None:
        if not _TOKEN.fullmatch(name):
            raise ValueError(
                f"{flag}: the text before the first '=' or ':' is not a valid HTTP header name "
                "(letters, digits and !#$%&'*+-.^_`|~ only)"
            )
        lower = name.lower()
        if lower in _RESERVED or lower.startswith("mcp-param-"):
            raise ValueError(f"{flag}: the header {name} is set by mcp-guard itself")
        if lower in seen:
            raise ValueError(f"{flag}: the header {name} is given more than once")
        if not _FIELD_VALUE.fullmatch(value) or value != value.strip():
            raise ValueError(
                f"{flag}: the value of {name} must be printable ASCII without leading or trailing white space"
            )
        seen.add(lower)
        headers[name] = value

    for pair in values:
        split = _split_header(pair)
        if split is None:
            raise ValueError("--header takes NAME=VALUE or 'NAME: VALUE' (no '=' or ':' found)")
        add(split[0], split[1], "--header")
    for pair in from_env:
        split = _split_header(pair)
        if split is None or not split[1]:
            raise ValueError(
                "--header-env takes NAME=ENVVAR: a header name and the environment variable holding its value"
            )
        name, variable = split
        if variable not in environ:
            raise ValueError(f"--header-env: the environment variable {variable} (for the header {name}) is not set")
        add(name, environ[variable].strip(), "--header-env")
    return headers


def _split_header(pair: str) -> tuple[str, str] | None:
    """``(name, rest)`` of ``NAME=REST`` or ``NAME: REST`` (split at the first ``=`` or ``:``), stripped."""
    cuts = [i for i in (pair.find("="), pair.find(":")) if i >= 0]
    if not cuts:
        return None
    cut = min(cuts)
    return pair[:cut].strip(), pair[cut + 1 :].strip()


def post_headers(
    message: Any,
    *,
    session_id: str | None,
    protocol_version: str | None,
    modern_version: str | None,
    header_maps: HeaderMaps,
) -> tuple[dict[str, str], bool, str | None]:
    """The MCP headers of a POST carrying ``message`` (a parsed JSON-RPC message, batch, or None).

    The user's headers are the HTTP client's defaults and go on every request; these come on top.

    Args:
        message: what the POST carries, parsed.
        session_id: the handshake-era session, if any.
        protocol_version: the handshake-era version from the ``initialize`` result, if known.
        modern_version: the last 2026-07-28 era version seen on a request, if any (for notifications).
        header_maps: the ``x-mcp-header`` maps learned so far (:func:`learn_header_maps`).

    Returns:
        ``(headers, modern, envelope_version)``: the headers; whether ``message`` is a 2026-07-28
        era request (it carries ``io.modelcontextprotocol/protocolVersion`` and an id); and the
        version that envelope named (None when there is none, or it is not a string).
    """
    headers = {"Accept": ACCEPT_BOTH, "Content-Type": "application/json"}
    version: str | None = protocol_version
    session = True
    modern = False
    envelope_version: str | None = None
    if type(message) is dict:
        method = message.get("method")
        params = message.get("params")
        meta = params.get("_meta") if type(params) is dict else None
        if method == "initialize":
            version, session = None, False
        elif type(meta) is dict and PROTOCOL_VERSION_KEY in meta:
            # 2026-07-28: the request carries its own version; the transport mirrors the body.
            assert type(params) is dict
            envelope = meta[PROTOCOL_VERSION_KEY]
            version, session, modern = envelope if type(envelope) is str else None, False, "id" in message
            envelope_version = version
            if type(method) is str and safe_value(method):
                headers["Mcp-Method"] = method
            name_key = NAME_BEARING_METHODS.get(method) if type(method) is str else None
            name = params.get(name_key) if name_key is not None else None
            if type(name) is str:
                headers["Mcp-Name"] = encode_header_value(name)
            arguments = params.get("arguments")
            if method == "tools/call" and type(name) is str and type(arguments) is dict:
                header_map = header_maps.get(name)
                if header_map:
                    headers.update(mcp_param_headers(header_map, arguments))
        elif version is None and "id" not in message and modern_version is not None:
            version = modern_version  # a notification in the 2026-07-28 era
        if _propagating[0] and type(meta) is dict and "id" in message:
            for key in TRACE_CONTEXT_KEYS:
                value = meta.get(key)
                if type(value) is str and safe_value(value):  # (printable ASCII, as the propagator writes it)
                    headers[key] = value
    if session and session_id is not None:
        headers[SESSION_HEADER] = session_id
    if version is not None and safe_value(version):
        headers[VERSION_HEADER] = version
    return headers, modern, envelope_version


def stream_headers(session_id: str | None, protocol_version: str | None, last_event_id: str | None) -> dict[str, str]:
    """The headers of a ``GET`` event stream (the standalone one, or a request's resumed with ``Last-Event-ID``)."""
    headers = {"Accept": "text/event-stream"}
    if session_id is not None:
        headers[SESSION_HEADER] = session_id
    if protocol_version is not None and safe_value(protocol_version):
        headers[VERSION_HEADER] = protocol_version
    if last_event_id is not None and safe_value(last_event_id):
        headers["Last-Event-ID"] = last_event_id
    return headers


def learn_header_maps(result: dict[str, Any], header_maps: HeaderMaps) -> None:
    """Update ``header_maps`` from a 2026-07-28 ``tools/list`` result page (for ``Mcp-Param-*`` headers).

    A tool whose ``x-mcp-header`` annotation the SDK finds invalid maps nothing (logged, by name).
    """
    tools = result.get("tools")
    if type(tools) is not list:
        return
    for tool in tools:
        if type(tool) is not dict or type(tool.get("name")) is not str:
            continue
        name, schema = tool["name"], tool.get("inputSchema")
        reason = find_invalid_x_mcp_header(schema)
        if reason is not None:
            log.warning("the upstream's tool `%s` has an invalid x-mcp-header annotation: %s", name[:64], reason)
        header_map = x_mcp_header_map(schema) if reason is None else {}
        if header_map:
            header_maps[name] = header_map
        else:
            header_maps.pop(name, None)
