"""What of an upstream server's output is a JSON-RPC message: the one rule, for ``wrap``, ``serve`` and ``check``.

A server writes newline-delimited JSON-RPC to its stdout (or streams it over HTTP). Each line is parsed
(``wire.jsonrpc.loads_upstream``, numbers keeping their value); :meth:`Triage.triage` then says what of the
parsed value is a JSON-RPC message (``wire.jsonrpc.message_fault``, red team 37 F4) and what is skipped,
logged once per kind and then counted (:class:`SkipLog`): a line that is not JSON (or nests too deeply, or
is too long, :meth:`Triage.skip_unreadable`), JSON that is no JSON-RPC message, a batch's elements that are
none. A response naming a request by its id that is no JSON-RPC response becomes a -32603 answering that
request in its place. Answers to the guard's own requests (``peer.requests``) are taken out.

``peer.connection.UpstreamPeer`` (the relay's and the gateway's upstreams) reads through one
:class:`Triage`, and so does ``check``'s and ``pin``'s listing of a stdio server
(``reports.listing``): a line one of them skips, the other skips the same way.
"""

from __future__ import annotations

import logging
from typing import Any

from ..wire.jsonrpc import ANSWER_FAULTS, INTERNAL_ERROR, error_response, id_key, message_fault
from ..wire.messages import not_a_response_text, unreadable_reason
from ..wire.meta import may_hold_guard_keys, without_guard_keys
from .requests import OwnRequests

__all__ = ["SkipLog", "Triage", "unreadable_text"]

log = logging.getLogger("mcp_guard")


def unreadable_text(too_long: int | None, line: bytes = b"") -> tuple[str, str]:
    """What an unreadable upstream answer is: ``(what, text)``, the clause for the log and the -32603 text.

    ``too_long``: the line was longer than this many bytes (``--max-message-bytes``); None: it
    could not be parsed, and ``line`` says why (``wire.messages.unreadable_reason``: not UTF-8 at
    byte N, nested too deeply, not JSON, an integer past the digit limit; never its text).
    """
    if too_long is not None:
        what = f"is longer than {too_long} bytes (--max-message-bytes)"
        return what, f"mcp-guard: the upstream's answer {what}; it was dropped, not buffered"
    what = unreadable_reason(line)
    return what, f"mcp-guard: the upstream's answer {what}; it was dropped"


class SkipLog:
    """Says each kind of skipped upstream output once, then counts it (docs/gateway.md: "each fact once").

    The first skip of a kind is logged in full; later ones only as a count, when the count
    reaches a power of two (2, 4, 8, ... 1,024 ...): a server that prints 450,000 banner or
    debug lines on stdout costs about 20 log lines, not 450,000. Counts run over the peer's
    life (restarts included). One instance per ``peer.connection.UpstreamPeer`` (``wrap``, ``serve``), or per
    server listed by ``check`` and ``pin``.

    Args:
        label: the log lines' prefix (the peer's).
    """

    def __init__(self, label: str = "") -> None:
        self.label = label
        self.counts: dict[str, int] = {}

    def skipped(self, kind: str, first: str, *args: object) -> None:
        """One skip of ``kind`` (a plural phrase: ``"lines that are not JSON"``); ``first % args``
        is the full message, logged for the first one only."""
        n = self.counts[kind] = self.counts.get(kind, 0) + 1
        if n == 1:
            log.warning("%s" + first, self.label, *args)
        elif n & (n - 1) == 0:
            log.warning(
                "%sskipped %s %s from the upstream so far (counted again at %s)",
                self.label,
                f"{n:,}",
                kind,
                f"{2 * n:,}",
            )


class Triage:
    """The rule of what an upstream's output is (the module docstring), with the state it reads.

    Args:
        skips: where skipped output is said (once per kind, then counted).
        own: the guard's own requests in flight (their answers are taken out of the output).

    Attributes:
        answered: the current connection has answered a request with a result (reset by the reader at
            each connection: ``UpstreamPeer``'s start failure rule).
        clean: ids of the messages of the big line being passed on, cleaned in a worker thread already.
    """

    def __init__(self, skips: SkipLog, own: OwnRequests) -> None:
        self.skips = skips
        self.own = own
        self.answered = False
        self.clean: set[int] = set()

    def triage(self, message: Any, line: bytes | str | None = None) -> Any:
        """What of one parsed upstream message (or batch) is the owner's: the message with the
        ``mcp-guard/`` ``_meta`` keys removed, the batch's such elements, or None (nothing: an answer
        to the guard's own request, taken; or output that is no JSON-RPC message, logged and skipped).

        A JSON-RPC message is an object with ``"jsonrpc": "2.0"`` that ``wire.jsonrpc.message_fault`` finds
        no fault in (red team 37 F4: ``{"jsonrpc": "2.0"}``, a number for a method, a result without an id
        reached the client). A response that names a request by its id but is no JSON-RPC response
        (neither or both of ``result`` and ``error``, an error that is not an object with an integer
        ``code`` and a string ``message``) becomes a -32603 answering that request in its place (skipped, the
        request would wait forever); an error response with a null id is a JSON-RPC message, the owner's.

        Synchronous: the stdio hot path calls it in the pipe's reader callback, with the ``line`` the message was
        parsed from: a line that cannot hold such a key (``wire.meta.may_hold_guard_keys``) is not walked. A
        message of the big line being passed on was cleaned in the worker thread (its id in :attr:`clean`), and is
        not walked again.
        """
        if type(message) is dict:
            if message.get("jsonrpc") != "2.0":
                self._not_jsonrpc('its "jsonrpc" is not "2.0"')
                return None
            fault = message_fault(message)
            if fault is not None:
                if fault not in ANSWER_FAULTS:
                    self._not_jsonrpc(fault)
                    return None
                message = self._wrong_answer(message["id"], fault)
            if not (self.clean and id(message) in self.clean) and (line is None or may_hold_guard_keys(line)):
                message = without_guard_keys(message)
            if not self.answered and "result" in message and "method" not in message:
                self.answered = True  # (an error answer, a notification or a request proves no start)
            if "method" not in message and "id" in message and self.own.answer(id_key(message["id"]), message):
                return None
            return message
        if type(message) is list and message:
            kept = [m for m in (self.triage(m) if type(m) is dict else None for m in message) if m is not None]
            if any(type(m) is not dict for m in message):
                self.skips.skipped(
                    "batch elements that are not JSON-RPC messages",
                    "skipped elements of an upstream batch that are not JSON-RPC messages",
                )
            return kept or None
        self._not_jsonrpc("it is not an object" if type(message) is not list else "it is an empty batch")
        return None

    def _not_jsonrpc(self, fault: str) -> None:
        self.skips.skipped(
            "outputs that are JSON but not JSON-RPC messages",
            "skipped output from the upstream that is JSON but not a JSON-RPC message (%s)",
            fault,
        )

    def _wrong_answer(self, request_id: Any, fault: str) -> dict[str, Any]:
        """The -32603 answer to ``request_id`` in place of the upstream's answer to it that is no JSON-RPC
        response (``fault``: ``wire.jsonrpc.ANSWER_FAULTS``); the answer is skipped (logged, counted)."""
        self.skips.skipped(
            "answers that are not JSON-RPC responses",
            "skipped an answer from the upstream that is not a JSON-RPC response (%s); the request it names "
            "is answered with an error",
            fault,
        )
        return error_response(request_id, INTERNAL_ERROR, not_a_response_text(fault))

    def skip_unreadable(self, size: int, too_long: int | None = None) -> None:
        """Skip a line of ``size`` bytes that could not be parsed (not JSON, or nested too deeply), or, with
        ``too_long``, the start of a line longer than that many bytes (its rest dropped as it comes)."""
        if too_long is not None:
            self.skips.skipped(
                f"lines longer than {too_long} bytes", "skipped a line from the upstream longer than %d bytes", too_long
            )
        else:
            self.skips.skipped(
                "lines that are not JSON (or nest too deeply)",
                "skipped a line of %d bytes from the upstream that is not JSON (or nests too deeply)",
                size,
            )
