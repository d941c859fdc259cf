"""What the HTTP front holds open (:class:`Registry`): its sessions, the shared 2026-07-28 channel, its channels.

The lifecycle half of the front: :class:`.app.HttpFront` holds a registry, and answers the HTTP requests
itself (routing, bodies, responses). The registry keeps

- the handshake-era sessions by ``Mcp-Session-Id`` (:attr:`Registry.sessions`), each with the principal
  that opened it (OAuth: a request of another principal for it is answered 404, :meth:`Registry.owned`),
  and the sessions whose upstream is starting (:attr:`Registry.opening`: they count against
  ``--max-sessions``);
- the one shared channel of 2026-07-28 requests (:attr:`Registry.modern`), started when a request needs it
  and none runs (:meth:`Registry.modern_channel`);
- every channel running, each in the task group the ASGI lifespan opens (:attr:`Registry.tg`;
  :meth:`Registry.start`), until :meth:`Registry.shutdown` ends them all (their upstreams stop);
- what keeps the front from taking new clients (``/ready``: :meth:`Registry.unready`).

Sessions and channels end themselves through it (``end_session``, ``forget_session``, ``forget_modern``).
"""

from __future__ import annotations

import logging
import secrets
from typing import TYPE_CHECKING

import anyio
import anyio.abc

from ...streams.ends import stop_signal
from .config import STOP_GRACE_SECONDS
from .handshake import Session
from .modern import ModernChannel
from .oauth import Owner, owner_of

if TYPE_CHECKING:
    from ...auth.principal import Principal
    from .app import HttpFront
    from .channel import Channel
    from .fields import RequestHeaders
    from .shared import AnySession

__all__ = ["Registry"]

log = logging.getLogger("mcp_guard")


class Registry:
    """The sessions and channels the HTTP front ``front`` holds open, and their start and end.

    Attributes:
        sessions: session id -> the handshake-era session (open; an ended one is dropped).
        opening: how many sessions are opening (their upstream starting); with :attr:`sessions`, what
            ``--max-sessions`` caps.
        modern: the shared 2026-07-28 channel, or None while none was started (or it went away).
        tg: the task group the channels run in (the ASGI lifespan's), None before the startup.
        closing: the front is shutting down (new requests are answered 503).
    """

    def __init__(self, front: HttpFront) -> None:
        self.front = front
        self.sessions: dict[str, AnySession] = {}
        self._owners: dict[str, Owner | None] = {}  # session id -> the principal that opened it (OAuth)
        self.opening = 0
        self.modern: ModernChannel | None = None
        self._modern_lock = anyio.Lock()
        self._channels: set[Channel] = set()
        self.tg: anyio.abc.TaskGroup | None = None
        self.closing = False

    async def shutdown(self) -> None:
        """End every session and the shared channel; wait (bounded) until their upstreams stopped."""
        if not self.closing:
            self.closing = True
            if self.sessions:
                log.info("stopping %d session(s)", len(self.sessions))
        now = stop_signal() is not None  # a stop signal: every upstream stops at once, as stdio's does
        for channel in list(self._channels):
            channel.stop(now=now)
        with anyio.move_on_after(STOP_GRACE_SECONDS + 5):
            for channel in list(self._channels):
                await channel.done.wait()

    def end_session(self, session: AnySession) -> None:
        """End a session now: its id answers 404 from here on; its upstream stops."""
        self.forget_session(session)
        session.stop()

    def forget_session(self, session: AnySession) -> None:
        """Drop a session from the registry (it ended)."""
        if self.sessions.get(session.session_id) is session:
            del self.sessions[session.session_id]
            self._owners.pop(session.session_id, None)
            self.front.metrics.session_closed()
            log.info("%s ended", session.label)

    def forget_modern(self, channel: ModernChannel) -> None:
        """Drop the shared channel (its upstream went away); the next 2026-07-28 request starts another."""
        if self.modern is channel:
            self.modern = None

    async def start(self, channel: Channel) -> None:
        """Run ``channel`` in the front's task group once its upstream is up.

        Raises:
            UpstreamStartError: the upstream command cannot be started.
        """
        assert self.tg is not None
        self._channels.add(channel)

        async def run(*, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
            try:
                await channel.run(task_status=task_status)
            finally:
                self._channels.discard(channel)

        await self.tg.start(run)

    def unready(self) -> list[str]:
        """What keeps the front from taking new clients (``/ready``): the upstreams of the shared 2026-07-28
        channel that are not connected and initialized; while it shuts down, ``guard`` stands for the whole.

        A handshake-era session's own upstreams are not counted: they start (and restart) with that
        session and concern its client alone. Counted, every session starting would fail the load
        balancer's health check and take the replica out of rotation for every client (issue 26,
        docs/scale-out.md). With no 2026-07-28 request served yet the front is ready.
        """
        if self.closing or self.tg is None:
            return ["guard"]
        modern = self.modern
        if modern is None or modern.closed:
            return []
        return modern.unready()

    async def open_session(self, principal: Principal | None) -> AnySession:
        """Open a handshake-era session for ``principal``'s ``initialize`` (its own upstream, or a view of the
        shared one with ``--shared-upstream``) and register it.

        Its slot (:attr:`opening`) is taken before the first ``await``, so a caller that checked
        ``--max-sessions`` just before never opens more sessions than the cap; it is given back when the
        session is registered, or when the upstream cannot start.

        Raises:
            UpstreamStartError: the upstream command cannot be started.
        """
        self.opening += 1
        try:
            session: AnySession
            if self.front.shared is not None:
                session = await self.front.shared.open_session(self.start)
            else:
                session = Session(self.front, secrets.token_hex(16))
                await self.start(session)
            self.sessions[session.session_id] = session
            self._owners[session.session_id] = owner_of(principal)
            self.front.metrics.session_opened()
        finally:
            self.opening -= 1
        return session

    def owned(self, session: AnySession, principal: Principal | None) -> bool:
        """Whether a request with ``principal`` may use ``session``: the principal that opened it (OAuth)."""
        if self._owners.get(session.session_id) == owner_of(principal):
            return True
        self.front.counted.log(
            logging.WARNING, "refused a request for a session another principal opened (answered 404)"
        )
        return False

    def session_of(self, headers: RequestHeaders, principal: Principal | None) -> AnySession | str:
        """The open session a request's ``Mcp-Session-Id`` names, if ``principal`` may use it; else ``"missing"``
        (no such header) or ``"unknown"`` (no such open session, or another principal's)."""
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            return "missing"
        session = self.sessions.get(session_id)
        if session is None or session.closed or not self.owned(session, principal):
            return "unknown"
        return session

    async def modern_channel(self) -> ModernChannel:
        """The shared channel, started when there is none (or it ended); counted active for the caller.

        The caller calls ``leave()`` once its request is done.

        Raises:
            UpstreamStartError: the upstream command cannot be started.
        """
        async with self._modern_lock:
            if self.modern is None or self.modern.closed:
                channel = ModernChannel(self.front)
                await self.start(channel)
                self.modern = channel
                log.info("2026-07-28 requests: shared upstream started")
            self.modern.enter()
            return self.modern
