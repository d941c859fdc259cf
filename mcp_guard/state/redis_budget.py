"""The calls-per-minute budget counted once for every replica, in Redis (``guard.state.redis``; issue 26 item 1).

Each exposed tool with a budget has one sorted set, ``{prefix}:budget:{exposed name}``, whose
members are the calls that took a slot (their ``call_id``) scored by the time they took it, in
microseconds of the Redis server's clock. One Lua script does the whole check-and-count
(:data:`TAKE_SCRIPT`): read the server's time (``TIME``), drop the members older than the
window, count the rest, and add the call when fewer than the limit remain. Redis runs a script
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
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
if n >= limit then
  local frees = redis.call('ZRANGE', KEYS[1], n - limit, n - limit, 'WITHSCORES')
  return tonumber(frees[2]) + window - now
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], math.floor(window / 1000) + 1000)
return -1
"""
"""KEYS[1]: the tool's sorted set; ARGV: the window (µs), the limit, the call's unique member.
Returns -1 when the slot is taken, else the microseconds until a slot frees (> 0)."""


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

    def key(self, exposed: str) -> str:
        """The sorted set of the exposed tool ``exposed``: ``{prefix}:budget:{exposed}``."""
        return f"{self.prefix}:budget:{exposed}"

    async def take(self, key: str, limit: int, member: str) -> float | None:
        """Take a slot of the exposed tool ``key`` under ``limit`` calls per window (see the module docstring).

        Returns:
            ``None`` when the call may go, else the seconds until a slot frees.

        Raises:
            StoreUnavailable: Redis cannot be reached or did not answer (its address redacted, no URL).
        """
        from redis.exceptions import RedisError

        try:
            answer: Any = await self._take(keys=[self.key(key)], args=[self._window_us, limit, member])
        except (RedisError, OSError) as exc:
            raise StoreUnavailable(f"Redis at {self.where} is unavailable ({type(exc).__name__})") from None
        wait = int(answer)
        return None if wait < 0 else max(wait / 1_000_000, 1e-3)

    async def ping(self) -> bool:
        """Whether Redis answers a ``PING`` now (for the start-up log)."""
        from redis.exceptions import RedisError

        try:
            return bool(await self._client.ping())
        except (RedisError, OSError):
            return False

    async def aclose(self) -> None:
        """Close the connections (idempotent)."""
        await self._client.aclose()
