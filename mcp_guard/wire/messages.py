"""Texts of the guard's own JSON-RPC errors that ``wrap`` and ``serve`` both send; no I/O.

Texts never quote a message or an argument value (they may hold secrets): they name the rule
broken, the limit, or what happened.
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..core.budget import integer_digit_limit, is_integer_too_long
from .jsonrpc import INVALID_REQUEST, error_response, loads_upstream, valid_id

__all__ = [
    "ALREADY_INITIALIZED",
    "BATCH_VERSION",
    "DUPLICATE_ID",
    "GONE",
    "TRANSPORT_PREFIX",
    "UNANSWERED_DROPPED",
    "UNPARSABLE_LOGGED",
    "error_reason",
    "not_a_response_text",
    "parse_error_text",
    "refused_batch",
    "stopped_text",
    "too_long_text",
    "unparsable_reason",
    "unreadable_answer_text",
    "unreadable_reason",
]

GONE: Final = (
    "mcp-guard: the upstream server went away before answering (it exited, crashed or closed its connection); "
    "the request was not re-sent"
)
"""The JSON-RPC error message (code -32603) for a request the upstream will never answer."""


def not_a_response_text(fault: str) -> str:
    """The -32603 text answering a request in place of the upstream's answer to it that is no JSON-RPC response
    (``fault``: one of ``wire.jsonrpc.ANSWER_FAULTS``, never a value; red team 37 F4)."""
    return f"mcp-guard: the upstream's answer is not a JSON-RPC response ({fault}); it was dropped"


def stopped_text(signal_name: str, server: str | None = None, *, forwarded: bool = True) -> str:
    """The -32603 text for a request still unanswered when the guard itself was stopped by ``signal_name``
    (``"SIGTERM"``: ``streams.ends.stop_signal``) and stopped the upstream with it (``server``: its name in
    ``serve``'s config; None in ``wrap``). Neither the server nor the client ended it (red team 37 F1).
    ``forwarded`` False: the guard still held the request (for a listing, a start), and never sent it."""
    if not forwarded:
        return f"mcp-guard: the guard was stopped ({signal_name}) while it held the request; no server got it"
    which = "" if server is None else f" `{server}`"
    return (
        f"mcp-guard: the guard was stopped ({signal_name}) before the upstream server{which} answered; "
        "the server was stopped with it, and whether it carried the request out is unknown"
    )


DUPLICATE_ID: Final = (
    "Invalid Request: a request with this id is still in flight (JSON-RPC ids must be unique among a "
    "client's open requests); it was not forwarded"
)
"""The JSON-RPC error message (code -32600) for a request reusing the id of one not answered yet."""

ALREADY_INITIALIZED: Final = (
    "Invalid Request: this session has sent initialize already (MCP: initialize is the first request of a "
    "session, sent once); it was not forwarded, and the session keeps its handshake"
)
"""The JSON-RPC error message (code -32600) for a second ``initialize`` in one session (red team 37 F8: it was
forwarded, and a restarted server was given its params instead of the first's)."""

BATCH_VERSION: Final = "2025-03-26"
"""The one MCP protocol version with JSON-RPC batches (added there, removed in 2025-06-18)."""

NO_BATCHES: Final = (
    "Invalid Request: JSON-RPC batches are only in MCP protocol 2025-03-26, and this session did not "
    "initialize with it; send one message object per line. Nothing of the batch was sent"
)


def refused_batch(batch: list[Any]) -> Any:
    """The answer to a batch a session does not take (:data:`BATCH_VERSION`): a batch of -32600 errors, one
    per request of ``batch`` under its id, or one error with a null id when it holds no request with a
    valid id (JSON-RPC 2.0 section 6: the client still learns why)."""
    answers = [
        error_response(m["id"], INVALID_REQUEST, NO_BATCHES)
        for m in batch
        if type(m) is dict and "method" in m and "id" in m and valid_id(m["id"])
    ]
    return answers or error_response(None, INVALID_REQUEST, NO_BATCHES)


UNANSWERED_DROPPED: Final = (
    "dropped an answer from the upstream to an id the guard has no request open for (never sent to it, "
    "refused by the guard, or answered already)"
)
"""The log line for an upstream response that answers no request in flight (it never reaches the client)."""

TRANSPORT_PREFIX: Final = "mcp-guard: "
"""Error messages starting so were written by the guard's own transport (the HTTP upstream could not
deliver the request: connection refused, HTTP 401, ...), not by the upstream server."""


def too_long_text(limit: int) -> str:
    """The -32600 message for a client message over ``limit`` bytes (``--max-message-bytes``)."""
    return (
        f"Invalid Request: the message is longer than the guard's limit of {limit} bytes "
        "(--max-message-bytes); it was not forwarded"
    )


UNPARSABLE_LOGGED: Final = "answered a client line that does not parse with -32700: it %s"
"""The log line (bounded: ``log_counts``) of a client line answered -32700; ``%s`` is :func:`unparsable_reason`,
never the line's text."""


def parse_error_text(exc: BaseException, what: str) -> str:
    """The message of the JSON-RPC -32700 answer to a client message that did not parse: which rule it broke.

    Args:
        exc: what the parser raised (``ValueError``, ``RecursionError``).
        what: how the message came (``line`` on stdio, ``body`` over HTTP).

    The message is never quoted (it may hold secrets): the text names the rule, and for
    invalid JSON the parser's own description and the character offset.
    """
    return f"Parse error: the {what} {unparsable_reason(exc)}; nothing was forwarded"


def unparsable_reason(exc: BaseException) -> str:
    """Why a text did not parse, as the end of a sentence about it (``the line …``), from what the parser raised.

    ``is not UTF-8 (at byte N)``, ``nests deeper than the guard parses``, ``holds an integer literal
    of more than 4,300 digits, …``, ``is not valid JSON (MSG at character N)``. Never quotes the text.
    """
    if isinstance(exc, RecursionError):
        return "nests deeper than the guard parses"
    if isinstance(exc, UnicodeDecodeError):
        return f"is not UTF-8 (at byte {exc.start})"
    if is_integer_too_long(exc):
        return (
            f"holds an integer literal of more than {integer_digit_limit():,} digits, the most the guard parses "
            "(a limit against denial of service)"
        )
    if isinstance(exc, json.JSONDecodeError):
        detail = exc.msg.removesuffix(" at")  # json's "Invalid control character at": one "at" in the text
        return f"is not valid JSON ({detail} at character {exc.pos})"
    return "is not valid JSON"


def unreadable_reason(line: bytes) -> str:
    """Why an upstream line the guard could not parse is unreadable (see :func:`unparsable_reason`).

    For the callers that kept the line, not the exception: the line is parsed again (on this
    error path only) with the upstream's decoder, ``jsonrpc.loads_upstream``. A line that
    parses after all (it cannot: the caller saw it fail) is ``could not be parsed``.
    """
    try:
        loads_upstream(line)
    except (ValueError, RecursionError) as exc:
        return unparsable_reason(exc)
    return "could not be parsed"


def unreadable_answer_text(line: bytes) -> str:
    """The -32603 message for a request whose answer from the upstream is ``line``, which does not parse.

    ``mcp-guard: the upstream's answer is not UTF-8 (at byte 12); it was dropped``: the reason
    (:func:`unreadable_reason`), never the line. For ``wrap`` and ``serve`` alike.
    """
    return f"{TRANSPORT_PREFIX}the upstream's answer {unreadable_reason(line)}; it was dropped"


def error_reason(method: str, error: Any) -> str:
    """Why a request of the guard's own failed, from the error response it got (for ``RequestFailed``).

    An error the transport wrote (:data:`TRANSPORT_PREFIX`) says what happened (nothing
    answered); an error of the server's is named with its code and message (at most 200
    characters: it is the server's text about the guard's own request, which holds no client
    arguments).
    """
    code = error.get("code") if type(error) is dict else None
    message = error.get("message") if type(error) is dict else None
    if type(message) is str and message.startswith(TRANSPORT_PREFIX):
        return message.removeprefix(TRANSPORT_PREFIX)
    text = f"the upstream answered {method} with error {code if type(code) is int else '(no code)'}"
    if type(message) is str and message.strip():
        shown = message.strip()
        text += f" ({shown[:200]}{'…' if len(shown) > 200 else ''})"
    return text
