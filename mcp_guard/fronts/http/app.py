"""The HTTP front's ASGI application (:class:`HttpFront`): routing, request bodies, responses and SSE streams.

What it holds open (its sessions, the shared 2026-07-28 channel, the channels running) and their start and
end are its :class:`~.registry.Registry`'s (``HttpFront.registry``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc
import uvicorn
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    InboundLadderRejection,
    classify_inbound_request,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.types import Receive, Scope, Send

from ...auth.principal import Principal
from ...calls.observer import Origin, tracer
from ...calls.outputs import DEFAULT_OUTPUTS
from ...core import DEFAULT_PROFILE
from ...errors import GuardError
from ...log_counts import LogCounts
from ...peer.upstream import UpstreamStartError
from ...wire.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    NO_ID,
    PARSE_ERROR,
    loads_client,
    recover_id,
    valid_id,
)
from ...wire.messages import ALREADY_INITIALIZED, parse_error_text, unparsable_reason
from .channel import SessionFactory
from .config import DISCARD_LIMIT, ENDPOINT, HttpConfig
from .fast import PING, answer, respond, sse_event, ticker
from .fields import RequestHeaders, accepts, request_head, request_headers
from .messages import Exchange, envelope_version, error_bytes, message_kind
from .oauth import ResourceServer
from .ops import OPS_PATHS, ops_answer, send_answer
from .registry import Registry
from .security import HostOrigin, Security
from .shared import AnySession, SharedUpstream

if TYPE_CHECKING:
    from ...calls.metrics import Metrics
    from ...hosts.tables import HostProfile

__all__ = ["HttpFront"]

log = logging.getLogger("mcp_guard")

_UNPARSABLE_LOGGED: Final = "answered a request body that does not parse with -32700: it %s"
"""The log line (bounded: ``log_counts``) of a body answered 400/-32700, as stdio logs a line
(``wire.messages.UNPARSABLE_LOGGED``); ``%s`` is ``unparsable_reason``, never the body's text."""


def request_origin(headers: RequestHeaders, session_id: str | None) -> Origin | None:
    """What a traced call of this request is told of it (``calls.observer.Origin``: the session, the W3C
    ``traceparent`` and ``tracestate`` headers as sent), or None while no tracer is installed (nothing noted)."""
    if tracer() is None:
        return None
    return Origin(session_id, headers.get("traceparent"), headers.get("tracestate"))


_respond = respond  # (the name the handlers use)


async def _refuse(
    send: Send,
    status: int,
    text: str,
    headers: Iterable[tuple[bytes, bytes]] = (),
    request_id: Any = None,
    code: int = INVALID_REQUEST,
) -> None:
    """An HTTP error whose body is a JSON-RPC error response (``id`` null unless given)."""
    await _respond(send, status, error_bytes(request_id, code, text), headers)


class HttpFront:
    """The ASGI application: endpoint ``/mcp``, sessions, the shared 2026-07-28 channel.

    Args:
        command: the upstream command; one process per handshake-era session, one shared by
            2026-07-28 requests.
        config: the front's settings.
        profile: the schema profile, one of ``core.PROFILES`` (default ``core.DEFAULT_PROFILE``).
        hide_unsupported: leave unsupported tools out of ``tools/list``.
        outputs: ``enforce``, ``report`` or ``off`` (``calls.outputs``).
        request_timeout: as for ``stdio.wrap_stdio`` (None: no limit on forwarded requests).
        session_factory: builds what serves one client session instead of a :class:`Relay`
            over ``command`` (the gateway's sessions); ``command`` is then unused.
        metrics: the guard's metrics (default: new ones), served at ``/metrics`` (see :mod:`.ops`).
        host: the model host every ``tools/list`` is shown to (``--present-for``: ``calls.presenting``), or
            None.

    Call it as an ASGI 3 application (``http`` and ``lifespan`` scopes). Channels run in the
    task group the lifespan opens; ``registry.shutdown`` (:class:`~.registry.Registry`, which holds the
    sessions and channels) ends them all (their upstreams stop).
    """

    def __init__(
        self,
        command: Sequence[str],
        config: HttpConfig,
        *,
        profile: str = DEFAULT_PROFILE,
        hide_unsupported: bool = False,
        outputs: str = DEFAULT_OUTPUTS,
        request_timeout: float | None = None,
        session_factory: SessionFactory | None = None,
        metrics: Metrics | None = None,
        host: HostProfile | None = None,
    ) -> None:
        if metrics is None:
            from ...calls.metrics import Metrics

            metrics = Metrics()
        self.metrics = metrics
        self.command = list(command)
        self.config = config
        self.counted = LogCounts()  # per-request log lines a client can trigger at will, bounded (log_counts)
        self.profile = profile
        self.hide_unsupported = hide_unsupported
        self.outputs = outputs
        self.host = host
        self.request_timeout = request_timeout
        self.session_factory = session_factory
        self.security = Security(config)
        self.oauth: ResourceServer | None = None  # the OAuth 2.1 resource server (.oauth), when configured
        if config.oauth is not None:
            secret = config.oauth_client_secret
            self.oauth = ResourceServer(config.oauth, secret.get_secret_value() if secret is not None else None)
        self.server: uvicorn.Server | None = None
        self.address = ""
        self.registry = Registry(self)
        self.shared = SharedUpstream(self) if config.shared_upstream and session_factory is None else None

    # --- lifecycle --------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """ASGI 3 entry point."""
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        async with anyio.create_task_group() as tg:
            self.registry.tg = tg
            tg.start_soon(self._watch_server)
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
            await self.registry.shutdown()
            tg.cancel_scope.cancel()
        if self.oauth is not None:
            await self.oauth.verifier.aclose()
        await send({"type": "lifespan.shutdown.complete"})

    async def _watch_server(self) -> None:
        """Log readiness; on a shutdown signal end the sessions first, so open streams close."""
        server = self.server
        if server is None:
            return
        while not server.started and not server.should_exit:
            await anyio.sleep(0.05)
        if server.started:
            log.info("serving MCP streamable HTTP at %s", self.address)
        while not server.should_exit:
            await anyio.sleep(0.1)
        await self.registry.shutdown()

    # --- HTTP -------------------------------------------------------------------------------------

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        head = request_head(scope)
        path = scope["path"] if head.path is None else head.path  # an absolute-form target's own path
        if self.oauth is not None and path in self.oauth.paths:  # RFC 9728 metadata: Host/Origin checks, no token
            refusal = self.security.refusal(head, None)
            if refusal is not None:
                await _refuse(send, refusal.status, refusal.text, refusal.headers, code=refusal.code)
            else:
                await self.oauth.serve_metadata(send, scope["method"])
            return
        if path in OPS_PATHS:
            await self._ops(scope, send, head)
            return
        if path != ENDPOINT:
            await _respond(send, 404, b"Not Found", content_type=b"text/plain; charset=utf-8")
            return
        headers = request_headers(scope)
        refusal = self.security.refusal(head, headers.get("authorization"))
        if refusal is not None:
            # The reason names the check (Host, Origin, token), never a header's value (trial3 T6).
            kind, _, why = refusal.text.split(" (")[0].partition(": ")
            log.warning("refused an HTTP request: %s (%s)", kind.lower(), why)
            await _refuse(send, refusal.status, refusal.text, refusal.headers, code=refusal.code)
            return
        principal: Principal | None = None
        if self.oauth is not None:  # every request verified before any session work
            verdict = await self.oauth.check(headers.get("authorization"))
            if not isinstance(verdict, Principal):
                await self.oauth.refuse(send, verdict)
                return
            principal = verdict
        registry = self.registry
        if registry.closing or registry.tg is None:
            await _refuse(send, 503, "Service Unavailable: the guard is shutting down", code=INTERNAL_ERROR)
            return
        method = scope["method"]
        if method == "POST":
            await self._post(scope, receive, send, headers, principal)
        elif method == "GET":
            await self._get(receive, send, headers, principal)
        elif method == "DELETE":
            await self._delete(send, headers, principal)
        else:
            await _refuse(send, 405, "Method Not Allowed", [(b"allow", b"GET, POST, DELETE")])

    async def _ops(self, scope: Scope, send: Send, head: HostOrigin) -> None:
        """``/health``, ``/ready``, ``/metrics``: the front's Host, Origin and token checks first."""
        authorization = request_headers(scope).get("authorization")
        refusal = self.security.refusal(head, authorization)
        verdict = await self.oauth.check(authorization) if refusal is None and self.oauth is not None else None
        if refusal is not None:
            await _refuse(send, refusal.status, refusal.text, refusal.headers, code=refusal.code)
        elif self.oauth is not None and not isinstance(verdict, Principal):
            assert verdict is not None
            await self.oauth.refuse(send, verdict)
        elif scope["method"] not in ("GET", "HEAD"):
            await _refuse(send, 405, "Method Not Allowed", [(b"allow", b"GET, HEAD")])  # (HEAD is served too)
        else:
            await send_answer(send, *ops_answer(head.path or scope["path"], self.metrics, self.registry.unready))

    async def _read_body(self, receive: Receive, headers: RequestHeaders) -> bytes | None:
        """The request body, or None when it exceeds the cap.

        The rest of an oversize body is read and thrown away (up to :data:`DISCARD_LIMIT`
        bytes, never kept), so that a client still sending it gets to read the 413.

        Raises:
            _Disconnected: the client went away.
            _BodyTimeout: the body did not arrive in full within ``config.body_timeout`` seconds.
        """
        cap = self.config.max_message_bytes
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap + DISCARD_LIMIT:
            return None
        body = bytearray()
        discarded = 0
        # The deadline is the loop's ticker's (no loop timer per request): when it passes, the task is
        # cancelled in its receive(), and that cancellation (ours alone: uncancel() leaves none) is the 408.
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        expired = False

        def expire() -> None:
            nonlocal expired
            expired = True
            task.cancel()

        ticks = ticker(loop)
        ticks.add(task, loop.time() + self.config.body_timeout, expire)
        try:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise _Disconnected
                chunk = message.get("body", b"")
                if discarded or len(body) + len(chunk) > cap:
                    discarded += len(chunk)
                    body.clear()
                    if discarded > DISCARD_LIMIT:
                        return None
                else:
                    body += chunk
                if not message.get("more_body", False):
                    return None if discarded else bytes(body)
        except asyncio.CancelledError:
            if expired and task.uncancel() == 0:
                raise _BodyTimeout from None
            raise
        finally:
            ticks.discard(task)

    async def _post(
        self, scope: Scope, receive: Receive, send: Send, headers: RequestHeaders, principal: Principal | None
    ) -> None:
        has_json, has_sse = accepts(headers)
        if not (has_json and has_sse):
            text = "Not Acceptable: the client must accept both application/json and text/event-stream"
            await _refuse(send, 406, text)
            return
        if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            await _refuse(send, 415, "Unsupported Media Type: Content-Type must be application/json")
            return
        try:
            body = await self._read_body(receive, headers)
        except _Disconnected:
            return
        except _BodyTimeout:
            limit = self.config.body_timeout
            log.warning("refused a request whose body did not arrive within %g s (--http-body-timeout)", limit)
            text = f"Request Timeout: the request body did not arrive within {limit:g} s (--http-body-timeout)"
            await _refuse(send, 408, text, [(b"connection", b"close")])
            return
        if body is None:
            cap = self.config.max_message_bytes
            log.warning("refused a request body larger than the message limit of %d bytes", cap)
            text = f"Payload Too Large: the guard accepts messages of up to {cap} bytes (--max-message-bytes)"
            await _refuse(send, 413, text, [(b"connection", b"close")])
            return
        try:
            message = loads_client(body)
        except (ValueError, RecursionError) as exc:
            request_id = recover_id(body)
            text = parse_error_text(exc, "body")
            self.counted.log(logging.WARNING, _UNPARSABLE_LOGGED, unparsable_reason(exc))
            await _refuse(send, 400, text, request_id=None if request_id is NO_ID else request_id, code=PARSE_ERROR)
            return
        if type(message) is list:
            await _refuse(send, 400, "Invalid Request: JSON-RPC batches are not supported over streamable HTTP")
            return
        kind = message_kind(message) if type(message) is dict else None
        if kind is None:
            await _refuse(send, 400, "Invalid Request: the body is not a JSON-RPC message")
            return
        if kind == "request" and not valid_id(message["id"]):
            await _refuse(send, 400, "Invalid Request: a request id must be a string or an integer")
            return
        version = headers.get("mcp-protocol-version")
        session_id = headers.get("mcp-session-id")
        if version in MODERN_PROTOCOL_VERSIONS:
            await self._post_modern(scope, receive, send, headers, message, kind, body, principal)
        elif session_id is None:
            if kind == "request" and message["method"] == "initialize":
                await self._initialize(receive, send, message, body, principal)
            elif kind != "response" and envelope_version(message) is not NO_ID:
                await self._post_modern(scope, receive, send, headers, message, kind, body, principal)
            else:
                await _refuse(send, 400, "Bad Request: Missing session ID (Mcp-Session-Id)")
        else:
            session = self.registry.sessions.get(session_id)
            if session is None or session.closed or not self.registry.owned(session, principal):
                await _refuse(send, 404, "Not Found: unknown or ended session")
            elif not session.version_ok(version):
                await _refuse(send, 400, "Bad Request: unsupported MCP-Protocol-Version header", session.header)
            elif kind == "request" and message["method"] == "initialize":
                # A session is initialized once: a second initialize is refused, never forwarded (red team 37 F8:
                # it reached the server, and its params, not the first's, were replayed to a restarted one).
                self.counted.log(logging.WARNING, "refused a second initialize: the session has one already")
                await _refuse(send, 400, ALREADY_INITIALIZED, session.header, request_id=message["id"])
            else:
                await self._post_session(receive, send, session, message, kind, body, principal, headers)

    async def _initialize(
        self, receive: Receive, send: Send, message: dict[str, Any], body: bytes, principal: Principal | None
    ) -> None:
        """Open a session for ``initialize``: nothing is started for a refused one.

        The ``--max-sessions`` check and the slot ``Registry.open_session`` takes are one step, before
        the first ``await``, so concurrent ``initialize`` requests never open more sessions than
        the cap; the slot is given back when the upstream cannot start.
        """
        if type(message.get("params")) is not dict:
            text = "Invalid params: initialize needs params (an object)"
            await _refuse(send, 400, text, request_id=message["id"], code=INVALID_PARAMS)
            return
        registry = self.registry
        if len(registry.sessions) + registry.opening >= self.config.max_sessions:
            log.warning(
                "refused a new session: %d sessions are open or opening (--max-sessions)",
                len(registry.sessions) + registry.opening,
            )
            text = "Service Unavailable: too many open sessions"
            await _refuse(send, 503, text, request_id=message["id"], code=INTERNAL_ERROR)
            return
        try:
            session = await registry.open_session(principal)
        except UpstreamStartError as exc:
            log.error("%s", exc)
            text = f"mcp-guard could not start the upstream server: {exc}"
            await _refuse(send, 500, text, request_id=message["id"], code=INTERNAL_ERROR)
            return
        log.info("%s started", session.label)
        await self._post_session(receive, send, session, message, "request", body, principal)

    async def _post_session(
        self,
        receive: Receive,
        send: Send,
        session: AnySession,
        message: dict[str, Any],
        kind: str,
        body: bytes,
        principal: Principal | None,
        headers: RequestHeaders | None = None,
    ) -> None:
        if kind != "request":
            if message.get("method") == "notifications/cancelled":
                await session.cancelled(message)
            if not await session.forward(message, body):
                await _refuse(send, 404, "Not Found: unknown or ended session")
                return
            await _respond(send, 202, headers=session.header)
            return
        exchange = session.register(message)
        if exchange is None:
            text = (
                "Conflict: this id is in use by a request in flight, or was used by an abandoned one, in this session"
            )
            await _refuse(send, 409, text, session.header, request_id=message["id"])
            return
        exchange.principal = principal  # the session asks for it by the request's id (Channel.principal_of)
        exchange.origin = request_origin(headers or {}, session.session_id)  # (Channel.origin_of)
        session.enter()
        try:
            session.flush_backlog(exchange)
            if not await session.forward(message, body):
                session.abandon(exchange)
                await _refuse(send, 404, "Not Found: unknown or ended session")
                return
            answered = await self._answer(receive, send, exchange, session.header)
            if not answered:
                session.abandon(exchange)
        finally:
            exchange.receiver.close()
            session.leave()

    async def _post_modern(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: RequestHeaders,
        message: dict[str, Any],
        kind: str,
        body: bytes,
        principal: Principal | None,
    ) -> None:
        if kind == "response":
            await _refuse(send, 400, "Invalid Request: a 2026-07-28 client posts no JSON-RPC responses")
            return
        if kind == "notification":
            # This era defines no client notifications over HTTP; a posted cancellation names a client-chosen
            # id that may be another client's, so it is dropped. Others pass on (era-blind).
            channel = self.registry.modern
            if message.get("method") != "notifications/cancelled" and channel is not None:
                await channel.submit(body)
            await _respond(send, 202)
            return
        rejection = _header_rejection(message, headers)
        if rejection is not None:
            status = ERROR_CODE_HTTP_STATUS.get(rejection.code, 400)
            await _refuse(send, status, rejection.message, request_id=message["id"], code=rejection.code)
            return
        try:
            channel = await self.registry.modern_channel()
        except UpstreamStartError as exc:
            log.error("%s", exc)
            text = f"mcp-guard could not start the upstream server: {exc}"
            await _refuse(send, 500, text, request_id=message["id"], code=INTERNAL_ERROR)
            return
        exchange, key, data = channel.register(message, body)
        exchange.principal = principal  # the relay sees the fresh id `key`; it asks by it (Channel.principal_of)
        exchange.origin = request_origin(headers, None)  # (no session in this era)
        try:
            if not await channel.submit(data):
                channel.pending.pop(key, None)
                text = "Service Unavailable: the upstream went away; send the request again"
                await _refuse(send, 503, text, request_id=message["id"], code=INTERNAL_ERROR)
                return
            if not await self._answer(receive, send, exchange, []):
                with anyio.CancelScope(shield=True):
                    await channel.abandon(exchange, key)
        finally:
            exchange.receiver.close()
            channel.leave()

    async def _answer(
        self, receive: Receive, send: Send, exchange: Exchange, headers: list[tuple[bytes, bytes]]
    ) -> bool:
        """Answer a POSTed request from its stream; True once the response went out.

        JSON when the response comes first within the keep-alive window, else an SSE stream.
        Returns False when the client disconnected first (the caller abandons the request).
        """
        return await answer(receive, send, exchange, headers, self.config.keepalive, _ended)

    async def _get(self, receive: Receive, send: Send, headers: RequestHeaders, principal: Principal | None) -> None:
        if headers.get("mcp-protocol-version") in MODERN_PROTOCOL_VERSIONS:
            await _refuse(send, 405, "Method Not Allowed: the 2026-07-28 era has no GET stream", [(b"allow", b"POST")])
            return
        if not accepts(headers)[1]:
            await _refuse(send, 406, "Not Acceptable: the client must accept text/event-stream")
            return
        session = self.registry.session_of(headers, principal)
        if isinstance(session, str):
            await _refuse(send, 400 if session == "missing" else 404, _SESSION_TEXT[session])
            return
        if not session.version_ok(headers.get("mcp-protocol-version")):
            await _refuse(send, 400, "Bad Request: unsupported MCP-Protocol-Version header", session.header)
            return
        if session.get_stream is not None:
            await _refuse(send, 409, "Conflict: only one GET stream per session", session.header)
            return
        stream = Exchange(None)
        session.get_stream = stream
        session.enter()
        try:
            sse = [
                (b"content-type", b"text/event-stream"),
                (b"cache-control", b"no-cache, no-transform"),
                (b"x-accel-buffering", b"no"),
                *session.header,
            ]
            await send({"type": "http.response.start", "status": 200, "headers": sse})
            async with anyio.create_task_group() as tg:

                async def watch_disconnect() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    tg.cancel_scope.cancel()

                tg.start_soon(watch_disconnect)
                while session.backlog:  # older than anything routed to this stream
                    data = session.backlog.popleft()
                    await send({"type": "http.response.body", "body": sse_event(data), "more_body": True})
                while True:
                    with anyio.move_on_after(self.config.keepalive) as waiting:
                        item = await stream.next()
                    if waiting.cancelled_caught:
                        await send({"type": "http.response.body", "body": PING, "more_body": True})
                    elif item is None:
                        break
                    else:
                        await send({"type": "http.response.body", "body": sse_event(item.data), "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                tg.cancel_scope.cancel()
        finally:
            stream.receiver.close()
            if session.get_stream is stream:
                session.get_stream = None
            session.leave()

    async def _delete(self, send: Send, headers: RequestHeaders, principal: Principal | None) -> None:
        if headers.get("mcp-protocol-version") in MODERN_PROTOCOL_VERSIONS:
            await _refuse(send, 405, "Method Not Allowed: the 2026-07-28 era has no sessions", [(b"allow", b"POST")])
            return
        session = self.registry.session_of(headers, principal)
        if isinstance(session, str):
            await _refuse(send, 400 if session == "missing" else 404, _SESSION_TEXT[session])
            return
        # The spec leaves open what becomes of requests in flight (the SDK's server ends their streams): they are
        # cancelled the MCP way, so their outcome is the client's choice, not a race against the upstream's stop.
        await session.cancel_in_flight(_DELETED)
        self.registry.end_session(session)
        await _respond(send, 200, headers=session.header)


_DELETED: Final = "the client ended the session (HTTP DELETE)"
"""The ``reason`` of the ``notifications/cancelled`` a ``DELETE`` sends upstream for each request in flight."""

_SESSION_TEXT: Final = {
    "missing": "Bad Request: Missing session ID (Mcp-Session-Id)",
    "unknown": "Not Found: unknown or ended session",
}


class _Disconnected(GuardError):
    """The client went away while its request body was read."""


class _BodyTimeout(GuardError):
    """The request body did not arrive in full within the front's ``body_timeout``."""


def _ended(exchange: Exchange) -> bytes:
    text = "mcp-guard: the session ended (or its upstream went away) before the request was answered"
    return error_bytes(exchange.client_id, INTERNAL_ERROR, text)


def _header_rejection(message: dict[str, Any], headers: RequestHeaders) -> InboundLadderRejection | None:
    """The spec's header checks for a 2026-07-28 request (the SDK's ladder, any protocol version).

    Which versions are supported is the upstream's call (it answers -32022); the front only
    checks that the routing headers agree with the body (that each appears once was checked
    before the body was read, with the same -32020: ``security.SINGLETON_FIELDS``). ``headers``:
    the request's one reading (:func:`.fields.request_headers`, as the handshake era's path reads them).
    """
    version = envelope_version(message)
    supported = (version,) if type(version) is str else ()
    verdict = classify_inbound_request(message, headers=headers, supported_modern_versions=supported)
    return verdict if isinstance(verdict, InboundLadderRejection) else None


# --- serving -------------------------------------------------------------------------------------------
