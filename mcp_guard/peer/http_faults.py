"""How a failed exchange with a streamable HTTP upstream is told: URLs, statuses, connections, error bodies.

Every text here is the message of a JSON-RPC error the guard sends for a request the
upstream did not answer (``-32603``, prefixed ``mcp-guard:``), or a log line. None holds a
header value, a URL's user info or query, or anything of the server's body but the JSON-RPC
error it sent for the request (:func:`error_body_answer`). The transport is
:mod:`mcp_guard.peer.http_upstream`.
"""

from __future__ import annotations

import http
import logging
import os
import socket
import ssl
from typing import Any, Final

import httpx2

from ..wire.jsonrpc import loads_upstream

__all__ = [
    "BROKE",
    "ERROR_BODY_BYTES",
    "SESSION_ENDED",
    "FaultLog",
    "check_url",
    "connect_failure",
    "describe",
    "error_body_answer",
    "shown_url",
    "status_failure",
    "status_meaning",
    "status_text",
    "tls_failure",
    "too_large",
]

BROKE: Final = "mcp-guard: the connection to the upstream broke before it answered"
SESSION_ENDED: Final = "mcp-guard: the upstream ended the session (HTTP 404); reconnect to start a new one"

ERROR_BODY_BYTES: Final = 1 << 20
"""The most of an HTTP error's body that is read, in bytes, to find the server's JSON-RPC error in it."""


def shown_url(url: str | httpx2.URL) -> str:
    """The URL for logs and messages: scheme, host, port and path.

    No user info, query or fragment: they may hold secrets.
    """
    try:
        parsed = httpx2.URL(url)
    except (httpx2.InvalidURL, TypeError, ValueError):
        return "(an invalid URL)"
    port = f":{parsed.port}" if parsed.port is not None else ""
    host = f"[{parsed.host}]" if ":" in parsed.host else parsed.host
    return f"{parsed.scheme}://{host}{port}{parsed.path}"


def check_url(url: str) -> httpx2.URL:
    """Parse an upstream URL.

    Raises:
        ValueError: not an absolute ``http://`` or ``https://`` URL with a host.
    """
    try:
        parsed = httpx2.URL(url)
    except (httpx2.InvalidURL, TypeError, ValueError):
        raise ValueError("the upstream URL is not a valid URL") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError("the upstream URL must be an http:// or https:// URL with a host")
    return parsed


def connect_failure(exc: BaseException) -> str:
    """Why a connection could not be made, in words (``connection refused``, ``the host name could not be resolved``).

    httpx reports a refused connection as "All connection attempts failed"; the operating
    system's reason is further down the exception chain (``__cause__``, the exception's
    arguments, exception groups: one error per address tried). Distinct reasons are joined
    with ``; ``. Falls back to the exception's own text (at most 200 characters).
    """
    reasons: list[str] = []
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, socket.gaierror):
            text = f"the host name could not be resolved ({current.strerror or current})"
        elif isinstance(current, ssl.SSLError):
            text = tls_failure(current)  # (an OSError whose errno is OpenSSL's, not the system's)
        elif isinstance(current, OSError) and type(current.errno) is int:
            text = os.strerror(current.errno)
            text = text[:1].lower() + text[1:]
        else:
            text = ""
        if text and text not in reasons:
            reasons.append(text)
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        todo.extend(a for a in current.args if isinstance(a, BaseException))
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                todo.append(linked)
    if reasons:
        return "; ".join(reasons)[:200]
    return (str(exc).strip() or type(exc).__name__)[:200]


def tls_failure(exc: ssl.SSLError) -> str:
    """Why a TLS handshake failed, in words: ``the server's TLS certificate was not accepted (self-signed
    certificate)``, ``the TLS handshake failed (wrong version number)``. OpenSSL's reason and the
    verifier's message only (no certificate contents); ``ssl.SSLError.errno`` is OpenSSL's code, which
    ``os.strerror`` would misread (``1``: "operation not permitted")."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        why = str(exc.verify_message or exc.reason or "verification failed")[:120]
        return f"the server's TLS certificate was not accepted ({why})"
    reason = exc.reason.lower().replace("_", " ") if type(exc.reason) is str else type(exc).__name__
    return f"the TLS handshake failed ({reason[:120]})"


def status_text(status: int) -> str:
    """``401 Unauthorized``: the phrase is the standard one, never the server's text."""
    try:
        return f"{status} {http.HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


def status_failure(status: int) -> str:
    """The error text for a request the upstream refused with HTTP ``status`` (and no JSON-RPC error of its own)."""
    text = f"mcp-guard: the upstream answered HTTP {status_text(status)}"
    if status in (401, 403):
        text += " (check the headers given with --header or --header-env)"
    elif 300 <= status < 400:
        text += " (a redirect mcp-guard does not follow: only 307 and 308 within the same origin are followed)"
    elif status == 413:
        text += " (the request is larger than the upstream accepts)"
    return text


def status_meaning(status: int, rpc_error: bool = False) -> str | None:
    """What HTTP ``status`` from an MCP endpoint means to the operator, and what to do, or None when
    there is nothing to add. ``rpc_error``: the body was a JSON-RPC error, passed on to the client;
    then only what the error cannot tell is said (the 2026-07-28 era answers ``400``/``404`` with
    such bodies in its ordinary course: an unknown tool is no wrong URL)."""
    if status == 401:
        return (
            "the server wants credentials it did not get, or did not accept: give them with --header "
            'or --header-env (docs/wrap.md, "A remote server")'
        )
    if status == 403:
        return "the server refused access with the credentials given: check --header or --header-env"
    if status == 429:
        return "the server is limiting requests (too many, too fast)"
    if status == 413:
        return "a request was larger than the server takes"
    if status in (502, 504):
        return "a gateway or proxy in front of the server got no answer from it"
    if status == 503:
        return "the server is unavailable (down, starting or overloaded)"
    if 500 <= status < 600:
        return "the server failed on its side (its own log may say why)"
    if rpc_error:
        return None
    if status == 404:
        return "there is nothing at this URL: check its path (an MCP endpoint is often /mcp)"
    if status == 405:
        return (
            "this URL does not take MCP's requests: is it the server's MCP endpoint? (the HTTP+SSE "
            "transport of 2024-11-05 is not spoken)"
        )
    if status in (406, 415):
        return "the server does not take what the guard sends (JSON, answered as JSON or an event stream)"
    if 300 <= status < 400:
        return "a redirect, not followed (only 307 and 308 within the same origin are): give the URL it points to"
    if 400 <= status < 500:
        return "the server refused the request"
    return None


class FaultLog:
    """Says each kind of failure of one upstream once, then counts it (docs/wrap.md: a failure kind is
    logged once, not per request).

    The first failure of a kind is logged in full; later ones only as a count, when the count reaches
    a power of two (2, 4, 8, ...): an upstream that answers every request with ``401`` for an hour
    costs a dozen lines, and a failure that goes on is still seen to go on. One instance per
    connector (``http_upstream.http_connector``): its connections, each a new session, share it.
    """

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def note(self, logger: logging.Logger | logging.LoggerAdapter[logging.Logger], kind: str, first: str) -> bool:
        """One failure of ``kind`` (a short phrase, also the count's label: ``"HTTP 401 Unauthorized"``);
        ``first`` is logged (a warning) for the first one. Returns whether this was the first."""
        n = self.counts[kind] = self.counts.get(kind, 0) + 1
        if n == 1:
            logger.warning("%s", first)
        elif n & (n - 1) == 0:
            logger.warning("the upstream's failures so far: %s, %s times (counted again at %s)", kind, n, 2 * n)
        return n == 1


def too_large(max_message_bytes: int) -> str:
    """The error text for an answer over the cap on one message (``--max-message-bytes``, in bytes)."""
    return (
        f"mcp-guard: the upstream's answer is larger than {max_message_bytes} bytes, the limit on one "
        "message (--max-message-bytes)"
    )


def describe(exc: httpx2.HTTPError, shown: str, max_message_bytes: int) -> str:
    """The error text for an exchange that failed with ``exc`` (no header values, no URL query).

    Args:
        exc: what httpx raised.
        shown: the endpoint as :func:`shown_url` gives it.
        max_message_bytes: the cap on one incoming message, for the text of an event over it.
    """
    if isinstance(exc, httpx2.SSEError):
        if "limit" in str(exc):
            return too_large(max_message_bytes)
        return "mcp-guard: the upstream's event stream was malformed"
    if isinstance(exc, httpx2.ConnectTimeout):
        return f"mcp-guard: cannot reach the upstream at {shown}: the connection timed out"
    if isinstance(exc, httpx2.ConnectError):
        return f"mcp-guard: cannot reach the upstream at {shown}: {connect_failure(exc)}"
    if isinstance(exc, httpx2.TimeoutException):
        return f"mcp-guard: the connection to the upstream at {shown} timed out ({type(exc).__name__})"
    if isinstance(exc, httpx2.NetworkError | httpx2.RemoteProtocolError):
        return BROKE
    return f"mcp-guard: the connection to the upstream at {shown} failed ({type(exc).__name__})"


def error_body_answer(body: bytes, pending: dict[tuple[bool, Any], Any]) -> dict[str, Any] | None:
    """The server's JSON-RPC error in an HTTP error's ``application/json`` body, as the answer to pass on.

    The body is read with the guard's upstream decoder (:func:`~mcp_guard.wire.jsonrpc.loads_upstream`),
    as every other byte from the upstream is: UTF-8 only, and a number literal keeps its text,
    so the client reads the error's ``data`` as the server wrote it (plain ``json.loads`` made
    ``1e400`` an infinity, which cannot be written back, and ``0.1000000000000000000001``
    ``0.1``). An error with ``id: null`` (the server refused the body before it read the id)
    answers the request when the POST carried exactly one.

    Args:
        body: the body, at most :data:`ERROR_BODY_BYTES`.
        pending: the POST's requests not answered yet (key → id as sent).

    Returns:
        The JSON-RPC error response (a new dict when its id was filled in), or None when the body is
        not one (not JSON, nested too deeply, not an error response).
    """
    try:
        error = loads_upstream(body)
    except (ValueError, RecursionError):
        return None
    if type(error) is not dict or type(error.get("error")) is not dict or "method" in error:
        return None
    if error.get("id") is None and len(pending) == 1:
        return {**error, "id": next(iter(pending.values()))}
    return error
