"""The journal in PostgreSQL (``guard.journal: {"postgres": URI}``; issue 26 item 2).

Every replica writes to the same table (:mod:`.pg_schema`); its rows are the JSONL journal's
records (:mod:`mcp_guard.calls.journal`) plus the replica's id. An intent is one ``INSERT`` in
autocommit on a connection whose ``synchronous_commit`` is ``on`` (the commit returns once the
WAL is flushed: https://www.postgresql.org/docs/15/wal-async-commit.html), awaited before the
call is forwarded; the outcome is inserted the same way after. So after a replica's crash (or
``kill -9``) every call it forwarded has a committed intent, and its open calls are the intents
without an outcome.

Fail closed: when no connection can be had within the timeout, or the insert fails,
:meth:`PostgresJournal.intent` raises :class:`~mcp_guard.calls.stores.StoreUnavailable` and the
pipeline refuses the call (-32603), never forwarding it unjournaled. An insert that fails on a
pooled connection that broke (the database restarted) is retried on another connection, at
most once per pooled connection: the insert is idempotent (``ON CONFLICT (call_id, event) DO
NOTHING``), so a retry never duplicates a record. After a wait for a connection timed out, the
next records fail at once for :data:`DOWN_HOLD_SECONDS` (the database is known to be down: the
client is answered without waiting again); then a record waits for a connection as usual.

Faults are told apart as the Redis store's are (:mod:`.pg_faults`, fault 37 B): a lasting one (a
wrong password, a missing database, no permission on the table) is the ``StoreUnavailable``'s
``cause`` and its message says PostgreSQL *refuses the guard*; a passing one (connection refused,
no answer within the timeout, a broken connection) says it *is unavailable*. The pool keeps its
connection errors to itself, so after a wait for a connection timed out one connection is tried
at once to tell which (bounded by the timeout).

The driver is ``psycopg`` 3 with ``psycopg_pool``'s ``AsyncConnectionPool`` (asyncio), imported
when a :class:`PostgresJournal` is opened.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Final

import anyio

from ..calls.journal import RESULTS, Result
from ..calls.stores import StoreUnavailable
from .pg_faults import TIMED_OUT, lasting_cause, passing_cause
from .pg_schema import JOURNAL_TABLE
from .urls import redacted

if TYPE_CHECKING:
    from datetime import datetime

    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

    from ..auth.principal import Principal

__all__ = ["DOWN_HOLD_SECONDS", "INSERT", "PostgresJournal"]

log = logging.getLogger("mcp_guard")

INSERT: Final = (
    f"INSERT INTO {JOURNAL_TABLE} "
    "(event, call_id, time, server, tool, arguments_sha256, arguments_bytes, result, kind, replica, "
    "principal_subject, principal_issuer, principal_client_id) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (call_id, event) DO NOTHING"
)
"""The columns of schema version 2 (``principal_*``: issue 27); a version-1 database is upgraded by
``mcp-guard journal init`` before a replica of this guard starts on it."""


def _who(principal: Principal | None) -> tuple[str | None, str | None, str | None]:
    if principal is None:
        return None, None, None
    return principal.subject, principal.issuer, principal.client_id


DOWN_HOLD_SECONDS: Final = 1.0
"""After a connection wait timed out, records fail at once for this long (the database is down)."""


def _now() -> datetime:
    from datetime import UTC, datetime

    return datetime.now(UTC)


async def _configure(conn: AsyncConnection[Any]) -> None:
    """Each new connection commits synchronously, whatever the server's default (autocommit is set by the pool)."""
    await conn.execute("SET synchronous_commit TO on")


class PostgresJournal:
    """A :class:`~mcp_guard.calls.stores.JournalSink` in PostgreSQL, shared by every replica.

    Args:
        url: a libpq connection URI; never logged (see :func:`.urls.redacted`).
        replica: this replica's id, written with each row (``serve --replica-id``).
        pool_size: connections kept at most (one is opened at start).
        timeout: seconds a record waits for a connection before the call is refused.

    Use ``await journal.open()`` in the event loop that will write, ``await journal.aclose()`` after.
    """

    def __init__(
        self, url: str, *, replica: str, pool_size: int = 8, timeout: float = 2.0, key: bytes | None = None
    ) -> None:
        from ..calls.journal_key import load_key

        self.where = redacted(url)
        self.key: bytes = key if key is not None else load_key(None)[0]
        """The argument digest key (``MCP_GUARD_JOURNAL_KEY``, or random for this process)."""
        self.replica = replica
        self._url = url
        self._pool_size = pool_size
        self._timeout = timeout
        self._pool: AsyncConnectionPool[Any] | None = None
        self._down_until = 0.0  # time.monotonic() until which the database counts as down
        self._down: tuple[str, str | None] = (TIMED_OUT, None)  # why, then (passing cause, lasting cause)

    async def open(self) -> None:
        """Start the pool (connections are made in the background; a database down now is not an error:
        calls are refused until it answers).

        Raises:
            ImportError: ``psycopg``/``psycopg_pool`` are not installed (``pip install 'mcp-guard[postgres]'``).
        """
        from psycopg_pool import AsyncConnectionPool

        self._pool = AsyncConnectionPool(
            self._url,
            min_size=1,
            max_size=self._pool_size,
            timeout=self._timeout,
            open=False,
            kwargs={"autocommit": True, "connect_timeout": max(1, round(self._timeout))},
            configure=_configure,
            reconnect_timeout=24 * 3600.0,
            name="mcp-guard-journal",
        )
        await self._pool.open(wait=False)

    async def _insert(self, row: tuple[Any, ...]) -> None:
        """Insert ``row`` (see the module docstring). Raises StoreUnavailable, its ``cause`` set when
        PostgreSQL refuses the guard as configured (``pg_faults``: a retry cannot help)."""
        import psycopg
        from psycopg_pool import PoolTimeout

        pool = self._pool
        if pool is None:
            raise StoreUnavailable("the journal's database pool is not open")
        if time.monotonic() < self._down_until:
            raise self._unavailable(*self._down)
        for attempt in range(self._pool_size + 1):
            try:
                async with pool.connection() as conn:
                    await conn.execute(INSERT, row)
                return
            except PoolTimeout:
                self._down_until = time.monotonic() + DOWN_HOLD_SECONDS
                self._down = await self._why_no_connection()
                raise self._unavailable(*self._down) from None
            except psycopg.OperationalError as exc:  # a broken connection (discarded by the pool): try another
                last = exc
                log.debug("journal insert failed on attempt %d: %s", attempt + 1, type(exc).__name__)
            except psycopg.Error as exc:
                raise self._unavailable(passing_cause(exc), lasting_cause(exc)) from None
        raise self._unavailable(passing_cause(last), lasting_cause(last))

    def _unavailable(self, passing: str, lasting: str | None) -> StoreUnavailable:
        """The error for a record that could not be committed: ``lasting`` (a ``pg_faults`` constant) when
        PostgreSQL refuses the guard, else ``passing``; the address redacted (no URL, no credentials)."""
        if lasting is not None:
            return StoreUnavailable(f"PostgreSQL at {self.where} refuses the guard: {lasting}", lasting)
        return StoreUnavailable(f"PostgreSQL at {self.where} is unavailable: {passing}")

    async def _why_no_connection(self) -> tuple[str, str | None]:
        """After the pool had no connection within the timeout: ``(passing cause, lasting cause or None)`` of
        one connection tried now (the pool's own attempts keep their errors to themselves), bounded by the
        timeout. Every pooled connection busy, the try succeeds: the pool was exhausted."""
        import psycopg

        with anyio.move_on_after(self._timeout):
            try:
                conn = await psycopg.AsyncConnection.connect(self._url, connect_timeout=max(1, round(self._timeout)))
            except psycopg.Error as exc:
                return passing_cause(exc), lasting_cause(exc)
            await conn.close()
            return f"every one of the {self._pool_size} pooled connections busy for {self._timeout:g} s", None
        return TIMED_OUT, None

    async def intent(
        self,
        call_id: str,
        server: str,
        tool: str,
        arguments_sha256: str,
        arguments_bytes: int,
        principal: Principal | None = None,
    ) -> None:
        """Commit the intent row (synchronously) before the call is forwarded (``principal``: who sent it, or None).

        Raises:
            StoreUnavailable: it could not be committed (the call must not be forwarded).
        """
        row = ("intent", call_id, _now(), server, tool, arguments_sha256, arguments_bytes, None, None, self.replica)
        await self._insert((*row, *_who(principal)))

    async def outcome(
        self,
        call_id: str,
        server: str,
        tool: str,
        result: Result,
        kind: str | None = None,
        principal: Principal | None = None,
    ) -> None:
        """Commit the outcome row (``kind`` only, and always, for ``rejected``; ``principal`` as for :meth:`intent`).

        Raises:
            ValueError: an unknown ``result``, or ``kind`` given for another result or missing for ``rejected``.
            StoreUnavailable: it could not be committed.
        """
        if result not in RESULTS:
            raise ValueError(f"unknown journal result {result!r}")
        if (result == "rejected") != (kind is not None):
            raise ValueError("a rejected outcome has a kind, other outcomes none")
        row = ("outcome", call_id, _now(), server, tool, None, None, result, kind, self.replica)
        await self._insert((*row, *_who(principal)))

    async def aclose(self) -> None:
        """Close the pool (idempotent)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()
