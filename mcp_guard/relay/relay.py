"""The relay: moves JSON-RPC messages between the client (downstream) and the upstream server.

Every line is parsed, and every message is passed on as the JSON value the guard parsed,
re-serialized (compact, ASCII-only): the peer reads exactly what the guard read. A line
that two parsers would read differently (a lone CR, which universal-newline readers such
as the SDK's stdio server take as a line break; duplicate keys, where parsers keep
different ones; an escaped method name) therefore cannot carry a ``tools/call`` past the
guard. Fields the guard does not know, and both protocol eras, survive unchanged in value.

Only what the guard must see is touched:

- client → upstream: a ``tools/call`` request is judged first and forwarded only when
  valid (a ``tools/call`` without an id is dropped: a notification cannot be judged and
  answered); a ``tools/list`` request is noted so its response can be annotated; a
  ``notifications/cancelled`` for a call the guard still holds drops that call.
- upstream → client: responses to the guard's own requests are taken out of the stream;
  ``tools/list`` results are annotated; ``notifications/tools/list_changed`` empties the
  schema cache and is forwarded. Output that is not a JSON-RPC message (not JSON, or JSON
  without ``"jsonrpc"``) is logged and skipped: stdout carries protocol messages only.

The guard issues requests of its own (a ``tools/list`` when a call names a tool it has
not seen listed) with string ids carrying a random nonce, kept apart from the client's ids.

Not done here (yet): respawning a dead upstream, answering the client's pending requests
when the upstream dies (the guard exits instead, like the server would), an HTTP front.
The upstream may be a process (``upstream``) or a streamable HTTP endpoint (``http_upstream``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import anyio.abc

from ..core import Issue
from .framing import LineStream, MessageStream
from .guard import CAPABILITIES_KEY, META_PREFIX, PROTOCOL_VERSION_KEY, ToolTable
from .jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    NO_ID,
    PARSE_ERROR,
    Uncarriable,
    dumps,
    error_response,
    loads_client,
    recover_id,
    valid_id,
)

__all__ = ["ListingFailed", "Relay"]

log = logging.getLogger("mcp_guard")

MAX_ENVELOPES: Final = 16
"""How many 2026-07-28 envelopes (protocol version, client capabilities) keep a tool table of their own."""

MAX_LIST_PAGES: Final = 10_000
"""A guard-initiated listing that pages more often than this is abandoned (a cursor loop)."""


def _key(request_id: Any) -> tuple[bool, Any]:
    """A map key for a JSON-RPC id: ``"1"`` and ``1`` differ, ``1`` and ``1.0`` do not."""
    return (type(request_id) is str, request_id if type(request_id) is not list else repr(request_id))


class ListingFailed(Exception):
    """The guard could not list the upstream's tools itself (error, timeout, upstream gone)."""


@dataclass
class _Pending:
    event: anyio.Event = field(default_factory=anyio.Event)
    response: dict[str, Any] | None = None


class Relay:
    """One client connection relayed to one upstream connection.

    Args:
        client: the downstream line stream (the MCP client's side).
        upstream: the upstream message stream (the real server's side: a process's stdio,
            or a streamable HTTP endpoint).
        table: the tool table (profile, hiding, cache).
        request_timeout: seconds the guard waits for the upstream to answer one of its own
            requests.
        drain_timeout: seconds the upstream gets, after the client hung up, to answer what it
            holds and exit.
    """

    def __init__(
        self,
        client: LineStream,
        upstream: MessageStream,
        table: ToolTable,
        *,
        request_timeout: float = 30.0,
        drain_timeout: float = 2.0,
    ) -> None:
        self.client = client
        self.upstream = upstream
        self.table = table
        self.request_timeout = request_timeout
        self.upstream_closed = False
        self.client_closed = False
        self.drain_timeout = drain_timeout
        self._nonce = secrets.token_hex(8)
        self._counter = 0
        self._own: dict[tuple[bool, Any], _Pending] = {}
        self._lists: dict[tuple[bool, Any], tuple[ToolTable, int, bool]] = {}
        self._held: dict[tuple[bool, Any], bool] = {}
        self._inflight: dict[tuple[bool, Any], Any] = {}
        self._refreshing: dict[int, anyio.Event] = {}
        self._tables: dict[str, ToolTable] = {"": table}
        self._last_envelope: tuple[Any, ToolTable] = (None, table)
        self._tg: anyio.abc.TaskGroup | None = None

    async def run(self) -> None:
        """Relay until the client closes its side or the upstream closes its side."""
        async with anyio.create_task_group() as tg:
            self._tg = tg

            upstream_done = anyio.Event()

            async def upstream_side() -> None:
                await self._from_upstream()
                upstream_done.set()
                tg.cancel_scope.cancel()

            tg.start_soon(upstream_side)
            await self._from_client()
            # The client hung up: calls the guard still holds (waiting for its own listing) are
            # decided first; then, like a server, the upstream gets EOF on its stdin and a moment to
            # answer what it holds. Its remaining answers still reach the client while it can read.
            self.client_closed = True
            with anyio.move_on_after(self.drain_timeout):
                while self._held and not upstream_done.is_set():
                    await anyio.sleep(0.01)
            await self.upstream.close_send()
            with anyio.move_on_after(self.drain_timeout):
                await upstream_done.wait()
            tg.cancel_scope.cancel()

    # --- client → upstream ------------------------------------------------------------------

    async def _from_client(self) -> None:
        while True:
            try:
                line = await self.client.receive()
            except anyio.EndOfStream:
                log.debug("client closed its side")
                return
            try:
                message = loads_client(line)
            except (ValueError, RecursionError):
                request_id = recover_id(line)
                text = (
                    "Parse error: the line is not valid JSON, nests deeper than the guard parses, or holds an "
                    "integer of more than 4,300 digits"
                )
                await self._reply(error_response(None if request_id is NO_ID else request_id, PARSE_ERROR, text))
                continue
            if type(message) is dict:
                if self._needs_listing(message):
                    # Decided once the guard has listed the tools; other messages keep flowing meanwhile.
                    assert self._tg is not None
                    self._held[_key(message["id"])] = False
                    self._tg.start_soon(self._route_held, message)
                else:
                    await self._act(*await self._route(message))
            elif type(message) is list and message:
                await self._client_batch(message)
            else:
                await self._reply(error_response(None, INVALID_REQUEST, "Invalid Request"))

    def _needs_listing(self, message: dict[str, Any]) -> bool:
        """A tools/call naming a tool the guard has not seen listed (and the table is not complete)."""
        if message.get("method") != "tools/call" or "id" not in message:
            return False
        params = message.get("params")
        table = self.table_for(params)
        if table.complete:
            return False
        name = params.get("name") if type(params) is dict else None
        return type(name) is str and table.get(name) is None and valid_id(message["id"])

    async def _route_held(self, message: dict[str, Any]) -> None:
        forward, reply = await self._route(message)
        if self._held.pop(_key(message["id"]), False):
            return  # the client cancelled it while the guard was listing: neither sent nor answered
        await self._act(forward, reply)

    async def _client_batch(self, batch: list[Any]) -> None:
        """A JSON-RPC batch (protocol 2025-03-26): each element routed; forwards and replies grouped."""
        forwards: list[Any] = []
        replies: list[Any] = []
        for element in batch:
            if type(element) is not dict:
                replies.append(error_response(None, INVALID_REQUEST, "Invalid Request"))
                continue
            forward, reply = await self._route(element)
            if forward is not None:
                forwards.append(forward)
            if reply is not None:
                replies.append(reply)
        await self._act(forwards or None, replies or None)

    async def _route(self, message: dict[str, Any]) -> tuple[Any, Any]:
        """What to do with one client message: ``(to forward or None, reply or None)``.

        A ``tools/call`` is judged here (after the guard's own listing when it needs one).
        """
        method = message.get("method")
        if method == "tools/call":
            if "id" not in message:
                log.warning("dropped a tools/call without an id: a notification cannot be judged and answered")
                return None, None
            return await self._route_call(message)
        if "id" in message and method == "tools/list":
            self._note_list(message)
        elif method == "notifications/cancelled" and self._cancel_held(message):
            return None, None
        return message, None

    async def _route_call(self, message: dict[str, Any]) -> tuple[Any, Any]:
        request_id = message["id"]
        if not valid_id(request_id) or message.get("jsonrpc") != "2.0":
            text = "Invalid Request: a tools/call needs jsonrpc 2.0 and a string or integer id"
            return None, error_response(request_id if valid_id(request_id) else None, INVALID_REQUEST, text)
        params = message.get("params")
        table = self.table_for(params)
        if self._needs_listing(message):
            try:
                await self.refresh(_era_meta(params), table)
            except ListingFailed as exc:
                text = f"mcp-guard could not list the upstream's tools: {exc}"
                return None, error_response(request_id, INTERNAL_ERROR, text)
        verdict = table.judge(params)
        if verdict.forward:
            return message, None
        name = params.get("name") if type(params) is dict else None
        if verdict.error is not None:
            code, text = verdict.error
            log.warning("rejected tools/call %s: JSON-RPC error %d (%s)", _shown(name), code, text.split(":")[0])
            return None, error_response(request_id, code, text)
        assert verdict.report is not None
        log.warning(
            "rejected tools/call %s (%s): %s",
            _shown(name),
            verdict.kind,
            "; ".join(_logged(i) for i in verdict.report.issues[:20]),
        )
        return None, {"jsonrpc": "2.0", "id": request_id, "result": verdict.result}

    def _note_list(self, message: dict[str, Any]) -> None:
        params = message.get("params")
        first_page = not (type(params) is dict and params.get("cursor") is not None)
        table = self.table_for(params)
        self._lists[_key(message["id"])] = (table, table.generation, first_page)

    def _cancel_held(self, message: dict[str, Any]) -> bool:
        """A cancellation of a call the guard still holds: drop the call, keep the notice."""
        params = message.get("params")
        if type(params) is not dict or "requestId" not in params:
            return False
        key = _key(params["requestId"])
        # A cancelled tools/list stays noted: a late answer must still be annotated (and cleaned).
        self._inflight.pop(key, None)
        if key in self._held:
            self._held[key] = True
            return True
        return False

    async def _act(self, forward: Any, reply: Any) -> None:
        if forward is not None:
            await self._forward(forward)
        if reply is not None:
            await self.client.send(dumps(reply))

    # --- upstream → client ------------------------------------------------------------------

    async def _from_upstream(self) -> None:
        try:
            while True:
                try:
                    line = await self.upstream.receive()
                except anyio.EndOfStream:
                    if self.client_closed:
                        log.debug("the upstream closed its output after the client hung up")
                    else:
                        log.warning("the upstream closed its output (it exited or crashed)")
                    self.upstream_closed = True
                    return
                try:
                    message = json.loads(line)
                except (ValueError, RecursionError):
                    await self._unparsable_from_upstream(line)
                    continue
                if type(message) is dict:
                    out = self._upstream_message(message)
                elif type(message) is list:
                    out = self._upstream_batch(message)
                else:
                    out = None
                if out is None:
                    self._skipped(message)
                    continue
                try:
                    data = dumps(out)
                except Uncarriable:
                    await self._uncarriable_from_upstream(out)
                    continue
                await self.client.send(data)
        finally:
            for pending in self._own.values():
                pending.event.set()
            # Every request the upstream took and did not answer gets an answer now: nothing hangs.
            inflight, self._inflight = list(self._inflight.values()), {}
            if inflight and not self.client_closed:
                log.warning("answering %d request(s) the upstream left unanswered", len(inflight))
            for request_id in inflight:
                with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                    text = "mcp-guard: the upstream server exited before answering"
                    await self._reply(error_response(request_id, INTERNAL_ERROR, text))

    async def _unparsable_from_upstream(self, line: bytes) -> None:
        """A line the guard cannot parse: skipped; a request waiting for it is answered with an error."""
        request_id = recover_id(line)
        key = _key(request_id) if request_id is not NO_ID and request_id is not None else None
        if key is not None and key in self._own:
            self._own.pop(key).event.set()  # the guard's own request fails
        elif key is not None and self._inflight.pop(key, None) is not None:
            self._lists.pop(key, None)
            log.warning(
                "the upstream's answer to a request could not be parsed (%d bytes); answering an error", len(line)
            )
            text = "mcp-guard: the upstream's answer could not be parsed (invalid JSON, or nested too deeply)"
            await self._reply(error_response(request_id, INTERNAL_ERROR, text))
            return
        log.warning("skipped a line of %d bytes from the upstream that is not JSON (or nests too deeply)", len(line))

    async def _uncarriable_from_upstream(self, out: Any) -> None:
        """Upstream output holding NaN or Infinity (not JSON): withheld; a request waiting for it gets an error."""
        for m in out if type(out) is list else [out]:
            if type(m) is dict and "method" not in m and "id" in m and valid_id(m["id"]):
                text = "mcp-guard: the upstream's answer holds a number JSON cannot carry (NaN or Infinity); withheld"
                await self._reply(error_response(m["id"], INTERNAL_ERROR, text))
        log.warning("withheld upstream output holding a number JSON cannot carry (NaN or Infinity)")

    @staticmethod
    def _skipped(message: Any) -> None:
        if type(message) is not dict or message.get("jsonrpc") != "2.0":
            log.warning("skipped output from the upstream that is JSON but not a JSON-RPC message")

    def _upstream_message(self, message: dict[str, Any]) -> Any:
        """What to send the client for one upstream message: None (nothing), the message, or a new object.

        The ``mcp-guard/`` ``_meta`` keys are the guard's alone: an upstream's are removed from
        every result and every request's or notification's params (a tool result cannot pose as
        the guard's rejection).
        """
        if message.get("jsonrpc") != "2.0":
            return None
        message = without_guard_keys(message)
        if "method" not in message:
            if "id" not in message:
                return message
            key = _key(message["id"])
            self._inflight.pop(key, None)
            pending = self._own.pop(key, None)
            if pending is not None:
                pending.response = message
                pending.event.set()
                return None
            listing = self._lists.pop(key, None)
            if listing is not None and "result" in message:
                table, generation, first_page = listing
                out = dict(message)
                out["result"] = table.annotate(
                    message["result"], cache=generation == table.generation, first_page=first_page
                )
                return out
        elif message["method"] == "notifications/tools/list_changed":
            log.info("upstream tools changed; schemas will be listed again before the next judgement")
            for table in self._tables.values():
                table.invalidate()
        return message

    def _upstream_batch(self, batch: list[Any]) -> Any:
        out = [self._upstream_message(m) for m in batch if type(m) is dict]
        kept = [m for m in out if m is not None]
        if len(kept) != len(batch):
            log.warning("skipped elements of an upstream batch that are not JSON-RPC messages")
        return kept or None

    # --- sending ---------------------------------------------------------------------------

    async def _send_upstream(self, data: bytes) -> bool:
        """Write one line to the upstream; False when it can no longer be written (it exited)."""
        try:
            await self.upstream.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            return False
        return True

    async def _forward(self, message: Any) -> None:
        """Forward a message (or batch) as the guard parsed it; requests it cannot deliver are answered."""
        elements = message if type(message) is list else [message]
        try:
            data = dumps(message)
        except Uncarriable:
            log.warning("refused to forward a message holding a number JSON cannot carry exactly")
            text = (
                "Invalid params: the request holds a number JSON cannot carry exactly (NaN, Infinity, beyond "
                "the double range, or more digits than a double holds); it was not forwarded"
            )
            await self._answer_requests(elements, INVALID_PARAMS, text)
            return
        if not await self._send_upstream(data):
            log.warning("could not forward to the upstream: it is not running")
            await self._answer_requests(elements, INTERNAL_ERROR, "mcp-guard: the upstream server is not running")
            return
        for m in elements:
            if type(m) is dict and "id" in m and "method" in m and valid_id(m["id"]):
                self._inflight[_key(m["id"])] = m["id"]

    async def _answer_requests(self, messages: list[Any], code: int, text: str) -> None:
        for m in messages:
            if type(m) is dict and "id" in m and "method" in m:
                await self._reply(error_response(m["id"] if valid_id(m["id"]) else None, code, text))

    # --- the guard's own requests -----------------------------------------------------------

    async def _reply(self, message: dict[str, Any]) -> None:
        await self.client.send(dumps(message))

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request of the guard's own upstream; return its ``result``.

        Raises:
            ListingFailed: an error response, no answer within ``request_timeout``, or
                the upstream gone.
        """
        if self.upstream_closed:
            raise ListingFailed("the upstream is not running")
        self._counter += 1
        request_id = f"mcp-guard-{self._nonce}-{self._counter}"
        key = _key(request_id)
        pending = _Pending()
        self._own[key] = pending
        try:
            message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            if not await self._send_upstream(dumps(message)):
                raise ListingFailed("the upstream is not running")
            with anyio.move_on_after(self.request_timeout):
                await pending.event.wait()
        finally:
            self._own.pop(key, None)
        response = pending.response
        if response is None:
            raise ListingFailed(
                "the upstream is not running" if self.upstream_closed else f"no answer to {method} in time"
            )
        if "error" in response:
            error = response["error"]
            code = error.get("code") if type(error) is dict else None
            raise ListingFailed(f"the upstream answered {method} with error {code}")
        result = response.get("result")
        if type(result) is not dict:
            raise ListingFailed(f"the upstream's {method} result is not an object")
        return result

    def table_for(self, params: Any) -> ToolTable:
        """The tool table for a request's protocol-era envelope.

        Handshake-era requests share :attr:`table`. In the 2026-07-28 era each request
        declares its own protocol version and client capabilities, and a server may list
        different tools (or schemas) for different capabilities; each envelope gets its
        own table, so a call is judged against the list its own envelope sees. At most
        :data:`MAX_ENVELOPES` such tables are kept (least recently used goes first).
        """
        meta = params.get("_meta") if type(params) is dict else None
        if type(meta) is not dict or PROTOCOL_VERSION_KEY not in meta:
            return self.table
        if meta is self._last_envelope[0]:  # the same message asks again (routing looks up more than once)
            return self._last_envelope[1]
        key = json.dumps([meta.get(PROTOCOL_VERSION_KEY), meta.get(CAPABILITIES_KEY)], sort_keys=True, default=repr)
        table = self._tables.pop(key, None)
        if table is None:
            table = ToolTable(self.table.profile, hide_unsupported=self.table.hide_unsupported)
            if len(self._tables) > MAX_ENVELOPES:
                oldest = next(k for k in self._tables if k != "")
                del self._tables[oldest]
        self._tables[key] = table
        self._last_envelope = (meta, table)  # holds the dict, so its identity cannot be reused meanwhile
        return table

    async def refresh(self, meta: dict[str, Any] | None = None, table: ToolTable | None = None) -> None:
        """List every page of the upstream's tools and replace ``table`` (one listing per table at a time).

        Args:
            meta: ``_meta`` to put on each ``tools/list`` request: the protocol-era
                envelope of the client call that needed the listing (2026-07-28 era
                requests carry their protocol version and client capabilities there).
            table: the table to fill, default :attr:`table`.

        Raises:
            ListingFailed: the listing could not be completed.
        """
        table = table if table is not None else self.table
        running = self._refreshing.get(id(table))
        if running is not None:
            await running.wait()
            if not table.complete:
                raise ListingFailed("the listing the guard was waiting for did not complete")
            return
        self._refreshing[id(table)] = anyio.Event()
        try:
            for _attempt in range(3):
                generation = table.generation
                tools = await self._list_all(meta)
                if generation == table.generation:
                    table.replace(tools)
                    return
                # list_changed arrived meanwhile: this listing may already be stale; list again.
            raise ListingFailed("the upstream's tools kept changing while the guard listed them")
        finally:
            self._refreshing.pop(id(table)).set()

    async def _list_all(self, meta: dict[str, Any] | None) -> list[Any]:
        tools: list[Any] = []
        cursor: Any = None
        seen: set[str] = set()
        for _page in range(MAX_LIST_PAGES):
            params: dict[str, Any] = {}
            if cursor is not None:
                params["cursor"] = cursor
            if meta:
                params["_meta"] = meta
            result = await self.request("tools/list", params)
            page = result.get("tools")
            if type(page) is not list:
                raise ListingFailed("the upstream's tools/list result has no `tools` list")
            tools.extend(page)
            cursor = result.get("nextCursor")
            if cursor is None:
                return tools
            marker = json.dumps(cursor)
            if marker in seen:
                raise ListingFailed("the upstream's tools/list cursors loop")
            seen.add(marker)
        raise ListingFailed(f"the upstream's tools/list has more than {MAX_LIST_PAGES} pages")


def without_guard_keys(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with ``mcp-guard/`` keys removed from ``result._meta`` and ``params._meta`` (copied only if any)."""
    for member in ("result", "params"):
        body = message.get(member)
        if type(body) is dict and type(body.get("_meta")) is dict:
            meta = body["_meta"]
            if any(type(k) is str and k.startswith(META_PREFIX) for k in meta):
                cleaned = {k: v for k, v in meta.items() if not (type(k) is str and k.startswith(META_PREFIX))}
                message = {**message, member: {**body, "_meta": cleaned}}
    return message


def _era_meta(params: Any) -> dict[str, Any] | None:
    """The protocol-era envelope of a request (2026-07-28: ``io.modelcontextprotocol/*`` keys)."""
    if type(params) is not dict or type(params.get("_meta")) is not dict:
        return None
    meta = {k: v for k, v in params["_meta"].items() if type(k) is str and k.startswith("io.modelcontextprotocol/")}
    return meta or None


_SCHEMA_DERIVED = frozenset({"type", "minimum", "enum", "required", "oneOf"})


def _logged(issue: Issue) -> str:
    """An issue for the log: keyword and pointers, never values, never a key the client chose.

    The instance pointer of an ``additionalProperties`` or ``json`` finding may hold an
    undeclared key (client data); those are logged by their schema pointer only.
    """
    if issue.instance_path is not None and issue.keyword in _SCHEMA_DERIVED:
        return f"{issue.keyword} at {issue.instance_path or '(root)'}"
    return f"{issue.keyword} at schema {issue.schema_path or '(root)'}"


def _shown(name: Any) -> str:
    """A tool name for the log: at most 64 characters (control characters are escaped by the log formatter)."""
    if type(name) is not str:
        return "(no tool name)"
    return f"`{name[:64]}`" + ("…" if len(name) > 64 else "")
