"""How the front reads a request's header fields: once, by RFC 9110's rules for repeated fields.

- :func:`request_head`: ``Host``, ``Origin`` and the target (:func:`.security.read_host_origin`,
  which also refuses a repeated field that is not a list: ``security.SINGLETON_FIELDS``);
- :func:`request_headers`: every field by lowercase name, list fields' lines joined;
- :func:`accepts`: what the ``Accept`` field accepts.
"""

from __future__ import annotations

from typing import Final

from starlette.types import Scope

from .security import REQUEST_TARGET_KEY, HostOrigin, read_host_origin

__all__ = ["RequestHeaders", "accepts", "request_head", "request_headers"]


RequestHeaders = dict[str, str]
"""A request's headers by lowercase name (:func:`request_headers`)."""

_LIST_FIELDS: Final = frozenset({"accept", "tracestate"})
"""Fields defined as lists (``#element``): their lines are one value, joined with ``", "`` (RFC 9110 section 5.3)."""


def request_headers(scope: Scope) -> RequestHeaders:
    """The headers of ``scope`` (ASGI: lowercase names, latin-1 bytes), read in one pass.

    A list field's lines (``Accept``, ``tracestate``) are joined in order into one value (RFC 9110
    section 5.3: ``Accept: application/json`` and ``Accept: text/event-stream`` accept both). A
    repeated ``traceparent`` is read as an invalid one (W3C Trace Context: one value, not a list; its
    test suite expects two to be ignored), so the call starts a trace. Other repeated fields keep
    their first value: those the front reads are refused 400 before this reading is used
    (``security.SINGLETON_FIELDS``); others are not read.
    """
    headers: RequestHeaders = {}
    for raw_name, raw_value in scope["headers"]:
        name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
        first = headers.get(name)
        if first is None:
            headers[name] = value
        elif name in _LIST_FIELDS:
            headers[name] = f"{first}, {value}"
        elif name == "traceparent":
            headers[name] = ""  # (an invalid traceparent: ignored, a new trace)
    return headers


def request_head(scope: Scope) -> HostOrigin:
    """The request's ``Host``, ``Origin`` and target, read once (:func:`.security.read_host_origin`): every
    path (the handshake era's, the 2026-07-28 era's, ``/health``...) is judged on this one reading."""
    target = scope.get("extensions", {}).get(REQUEST_TARGET_KEY) or scope["raw_path"]
    return read_host_origin(scope["headers"], target, http11=scope.get("http_version") != "1.0")


def accepts(headers: RequestHeaders) -> tuple[bool, bool]:
    """``(application/json, text/event-stream)`` acceptance of the ``Accept`` header, wildcards included."""
    types = {part.split(";")[0].strip().lower() for part in headers.get("accept", "").split(",")}
    wildcard = "*/*" in types
    return (
        wildcard or "application/json" in types or "application/*" in types,
        wildcard or "text/event-stream" in types or "text/*" in types,
    )
