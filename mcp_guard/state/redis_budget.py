"""The calls-per-minute budget counted once for every replica, in Redis (``guard.state.redis``; issue 26 item 1).

Each exposed tool with a budget has one sorted set, ``PREFIX:budget:{EXPOSED}``, and each
caller with a budget of its own (``guard.principals``, issue 27) one per tool,
``PREFIX:budget:{EXPOSED}:principal:PSEUDONYM`` (the braces are literal: a Redis Cluster hash tag,
so both sets of a call are in one slot, :meth:`RedisBudget.key`; the pseudonym is a hash of the
token's issuer and subject, :func:`mcp_guard.calls.principals.principal_key`; a subject never
appears in a key, where ``MONITOR`` or a slow log would show it); each set's
members are the calls that took a slot (their ``call_id``) scored by the time they took it, in
microseconds of the Redis server's clock. One Lua script does the whole check-and-count
(:data:`TAKE_SCRIPT`): read the server's time (``TIME``), drop the members older than the
window, count the rest, and add the call to every set of the call (the tool's, its caller's)
when each has fewer than its limit, else to none. Redis runs a script
atomically (no other command runs meanwhile: https://redis.io/docs/latest/develop/programmability/eval-intro/),
so with N replicas and a budget of B at most B calls of a tool take a slot in any 60 s window of
the server's clock, under any interleaving; the replicas' own clocks play no part. The window is
the in-process :class:`mcp_guard.calls.policy.Budget`'s: a slot frees 60 s after the call that
took it, refused calls take none.

Redis 5 or later (scripts replicate their effects, so ``TIME`` inside one is allowed; Debian 12
ships 7.0). The key expires a second after the window, so an idle tool leaves nothing behind.

Fail closed: when Redis cannot be reached, or does not answer within the timeout, :meth:`RedisBudget.take`
raises :class:`~mcp_guard.calls.stores.StoreUnavailable` and the pipeline refuses the governed
call (``budget_unavailable``). A command that fails is retried once on a fresh connection
(after a Redis restart the pooled ones are stale); a retried script may have counted the first
attempt too, which can only refuse a call early, never forward one uncounted.

The client is ``redis`` (redis-py, asyncio API), imported when a :class:`RedisBudget` is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from ..calls.policy import WINDOW_SECONDS
from ..calls.stores import StoreUnavailable
from .urls import redacted

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["DEFAULT_PREFIX", "REDIS_SCHEMES", "TAKE_SCRIPT", "RedisBudget"]

DEFAULT_PREFIX: Final = "mcp-guard"
REDIS_SCHEMES: Final = ("redis", "rediss", "unix")

TAKE_SCRIPT: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[1])
local wait = -1
local full = 0
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[2 + i])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local n = redis.call('ZCARD', key)
  if n >= limit then
    local frees = redis.call('ZRANGE', key, n - limit, n - limit, 'WITHSCORES')
    local w = tonumber(frees[2]) + window - now
    if w > wait then
      wait = w
      full = i
    end
  end
end
if wait >= 0 then return {math.max(wait, 1), full} end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, ARGV[2])
  redis.call('PEXPIRE', key, math.floor(window / 1000) + 1000)
end
return -1
"""
"""KEYS: the sorted sets to take a slot of (a tool's, and its caller's: :meth:`RedisBudget.take_all`); ARGV: the
window (µs), the call's unique member, then each key's limit. Every key gets the call or none does. Returns -1
when the slots are taken, else ``{microseconds until the last full key frees a slot (> 0), that key's index
(from 1)}``."""


def lasting_cause(exc: BaseException) -> str | None:
    """Why Redis refuses the guard for as long as the configuration stays (None: a transient fault).

    Classes: authentication (a wrong or missing password or user: ``AUTH``'s ``WRONGPASS``,
    ``NOAUTH``), permission (ACL ``NOPERM``), the database index (``SELECT``: out of range), TLS
    (a handshake failure: an ``rediss://`` URL against a plain port or the reverse). The text names
    the class only, never the server's message (which may echo a user name).
    """
    import ssl

    from redis.exceptions import AuthenticationError, AuthorizationError, NoPermissionError, ResponseError

    text = str(exc)
    if isinstance(exc, AuthenticationError) or text.startswith(("WRONGPASS", "NOAUTH", "invalid username-password")):
        return "authentication failed (a wrong or missing password or user in the URL)"
    if isinstance(exc, (NoPermissionError, AuthorizationError)) or text.startswith("NOPERM"):
        return "permission denied (the Redis user lacks a command or key the guard needs: ACL NOPERM)"
    if isinstance(exc, ResponseError) and "DB index" in text:
        return "the database index in the URL does not exist on this server"
    if isinstance(exc, ssl.SSLError) or isinstance(exc.__cause__, ssl.SSLError):
        return "TLS failed (rediss:// against a plain port, or a certificate problem)"
    return None


class RedisBudget:
    """A :class:`~mcp_guard.calls.stores.SharedBudget` in Redis: one sliding 60 s window per exposed tool.

    Args:
        url: ``redis://[[user]:password@]host[:port][/db]``, ``rediss://`` (TLS) or ``unix://path``
            (redis-py's ``from_url``); never logged (see :func:`.urls.redacted`).
        prefix: the keys' prefix (replicas of one gateway share it; two gateways on one Redis
            keep apart with two prefixes).
        timeout: seconds to connect and to wait for an answer before the store counts as unavailable.
        window: the window in seconds (60; tests of the script use shorter ones).

    Raises:
        ImportError: the ``redis`` package is not installed (``pip install 'mcp-guard[redis]'``).
    """

    store = "Redis"

    def __init__(
        self, url: str, *, prefix: str = DEFAULT_PREFIX, timeout: float = 2.0, window: float = WINDOW_SECONDS
    ) -> None:
        from redis.asyncio import Redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        self.where = redacted(url)
        self.prefix = prefix
        self._window_us = round(window * 1_000_000)
        self._client: Redis = Redis.from_url(
            url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 1),
            health_check_interval=0,
        )
        self._take = self._client.register_script(TAKE_SCRIPT)

    def key(self, name: str) -> str:
        """The sorted set of a budget: ``{prefix}:budget:{{EXPOSED}}`` for an exposed tool's, and
        ``{prefix}:budget:{{EXPOSED}}:principal:PSEUDONYM`` for a caller's (``name`` ``EXPOSED:principal:...``;
        ``EXPOSED:anonymous`` for the calls without a principal, counted as one caller).

        The exposed name is a Redis Cluster hash tag (``{...}``), so a tool's set and its callers'
        sets are in one hash slot and one script may take a slot of both (exposed names hold no
        ``{``, ``}`` or ``:``: ``^[a-zA-Z0-9_-]{1,64}$``).
        """
        tool, sep, rest = name.partition(":")
        return f"{self.prefix}:budget:{{{tool}}}{sep}{rest}"

    async def take(self, key: str, limit: int, member: str) -> float | None:
        """Take a slot of the exposed tool ``key`` under ``limit`` calls per window (see the module docstring).

        Returns:
            ``None`` when the call may go, else the seconds until a slot frees.

        Raises:
            StoreUnavailable: Redis cannot be reached or did not answer (its address redacted, no URL).
        """
        found = await self.take_all([(key, limit)], member)
        return None if found is None else found[0]

    async def take_all(self, wanted: Sequence[tuple[str, int]], member: str) -> tuple[float, int] | None:
        """Take a slot of every ``(key, limit)`` of ``wanted`` or of none, in one script (atomic).

        The keys are exposed tool names, and ``NAME:principal:PSEUDONYM`` for a caller's budget of
        a tool (:func:`mcp_guard.calls.principals.principal_key`: never the subject itself).

        Returns:
            ``None`` when the call may go, else ``(seconds, index)``: the seconds until the last full key
            frees a slot, and that key's index in ``wanted``.

        Raises:
            StoreUnavailable: Redis cannot be reached or did not answer (its address redacted, no URL).
        """
        from redis.exceptions import RedisError

        keys = [self.key(key) for key, _ in wanted]
        args: list[Any] = [self._window_us, member, *(limit for _, limit in wanted)]
        try:
            answer: Any = await self._take(keys=keys, args=args)
        except (RedisError, OSError) as exc:
            cause = lasting_cause(exc)
            what = f"refuses the guard: {cause}" if cause else f"is unavailable ({type(exc).__name__})"
            raise StoreUnavailable(f"Redis at {self.where} {what}", cause) from None
        if not isinstance(answer, list):
            return None
        wait, full = int(answer[0]), int(answer[1])
        return max(wait / 1_000_000, 1e-3), full - 1

    async def ping(self) -> str | None:
        """Why Redis does not answer a ``PING`` now (for the start-up log), or None when it does.

        The answer is a cause class, never the URL or a credential: ``not reachable now`` (down,
        refused, timed out: it may come back), or a :func:`lasting_cause` (a retry cannot help).
        """
        from redis.exceptions import RedisError

        try:
            return None if await self._client.ping() else "not reachable now"
        except (RedisError, OSError) as exc:
            return lasting_cause(exc) or "not reachable now"

    async def aclose(self) -> None:
        """Close the connections (idempotent)."""
        await self._client.aclose()
