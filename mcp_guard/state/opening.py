"""The stores a gateway process uses, opened from its config: budget and journal, in process or shared.

:func:`opened_stores` is what ``serve`` (stdio and HTTP) enters before it serves:

- the budget: :class:`~mcp_guard.calls.policy.Budget` in process, or with ``guard.state`` a
  :class:`~.redis_budget.RedisBudget` (one for the process: every session of an HTTP gateway,
  and every replica of it, counts in the same window);
- the journal: the JSONL file (``--journal`` or ``guard.journal`` as a path), or with
  ``guard.journal: {"postgres": ...}`` a :class:`~.pg_journal.PostgresJournal`, whose tables must
  exist (``mcp-guard journal init``); a database that cannot be reached at start is not an
  error (calls are refused until it answers), one without the tables is.

Only the drivers a config names are imported.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio.to_thread

from ..calls.journal import Journal
from ..calls.policy import Budget
from ..config import JournalDatabase
from ..errors import GuardError
from .urls import resolve_url

if TYPE_CHECKING:
    from pathlib import Path

    from ..calls.stores import JournalSink, SharedBudget
    from ..config import GatewayConfig
    from .pg_journal import PostgresJournal
    from .redis_budget import RedisBudget

__all__ = ["StateError", "Stores", "default_replica_id", "opened_stores"]

log = logging.getLogger("mcp_guard")


class StateError(GuardError):
    """A store of the config cannot be used at start (the process exits 1); the message holds no credentials."""


@dataclass(frozen=True)
class Stores:
    """What the gateway's pipelines count and journal with.

    Attributes:
        budget: shared by every session of the process.
        journal: the open journal, or ``None``.
        journal_label: where the journal is, for the start-up log (a path, or a redacted URL).
    """

    budget: Budget | SharedBudget
    journal: Journal | JournalSink | None
    journal_label: str = ""


def default_replica_id() -> str:
    """``HOST-PID``: this process's id in the journal rows when ``serve --replica-id`` is not given."""
    import socket

    return f"{socket.gethostname()}-{os.getpid()}"


@asynccontextmanager
async def opened_stores(
    config: GatewayConfig,
    *,
    journal_path: Path | None,
    replica: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> AsyncIterator[Stores]:
    """Open the budget and the journal of ``config`` (``journal_path`` overrides ``guard.journal``); close them after.

    Args:
        config: the gateway config.
        journal_path: the JSONL journal (``--journal``, or ``guard.journal`` as a path), or ``None``.
        replica: this replica's id for the database journal (default :func:`default_replica_id`).
        environ: the environment for the URL variables (default ``os.environ``).

    Raises:
        StateError: the journal file cannot be opened, a URL variable is not set, a driver is not
            installed, or the journal's database has no tables (``mcp-guard journal init``).
    """
    from .urls import UrlError

    environ = os.environ if environ is None else environ
    guard = config.guard
    budget: Budget | SharedBudget = Budget()
    journal: Journal | JournalSink | None = None
    label = ""
    redis: RedisBudget | None = None
    pg: PostgresJournal | None = None
    try:
        if guard.state is not None:
            from .redis_budget import REDIS_SCHEMES, RedisBudget

            s = guard.state
            url = resolve_url(s.redis, s.redis_env, environ, where="guard.state", schemes=REDIS_SCHEMES)
            try:
                redis = RedisBudget(url, prefix=s.key_prefix, timeout=s.timeout_seconds)
            except ImportError:
                raise StateError("guard.state needs the redis extra: pip install 'mcp-guard[redis]'") from None
            budget = redis
            problem = await redis.ping()
            log.info("budgets: counted in Redis at %s%s", redis.where, f" ({problem})" if problem else "")
            if problem == "not reachable now":
                log.warning("Redis at %s does not answer: calls with a budget are refused until it does", redis.where)
            elif problem:
                log.error(
                    "Redis at %s refuses the guard: %s; calls with a budget are refused until guard.state is fixed",
                    redis.where,
                    problem,
                )
        if journal_path is not None:
            from ..calls.journal_key import load_key

            try:
                journal = Journal(journal_path, key=load_key(journal_path, environ)[0])
            except OSError as exc:
                raise StateError(f"cannot open the journal {journal_path}: {exc.strerror or exc}") from None
            except ValueError as exc:
                raise StateError(f"cannot open the journal {journal_path}: {exc}") from None
            label = str(journal_path)
        elif isinstance(guard.journal, JournalDatabase):
            pg = await _open_database(guard.journal, environ, replica or default_replica_id())
            journal = pg
            label = pg.where
        yield Stores(budget, journal, label)
    except UrlError as exc:
        raise StateError(str(exc)) from None
    finally:
        if isinstance(journal, Journal):
            journal.close()
        with anyio.CancelScope(shield=True):
            if pg is not None:
                await pg.aclose()
            if redis is not None:
                await redis.aclose()


async def _open_database(settings: JournalDatabase, environ: Mapping[str, str], replica: str) -> PostgresJournal:
    from .pg_schema import POSTGRES_SCHEMES, SCHEMA_VERSION, JournalDatabaseError, schema_version

    url = resolve_url(
        settings.postgres, settings.postgres_env, environ, where="guard.journal", schemes=POSTGRES_SCHEMES
    )
    try:
        from ..calls.journal_key import KEY_ENV, load_key
        from .pg_journal import PostgresJournal

        key, source = load_key(None, environ)
        if source == "process":
            log.warning(
                "journal: %s is not set: argument digests are keyed per process and cannot be compared across "
                "replicas or restarts (set it to the same secret on every replica)",
                KEY_ENV,
            )
        pg = PostgresJournal(
            url, replica=replica, pool_size=settings.pool_size, timeout=settings.timeout_seconds, key=key
        )
        version = await anyio.to_thread.run_sync(lambda: schema_version(url, timeout=settings.timeout_seconds))
    except ImportError:
        raise StateError(
            "a journal in PostgreSQL needs the postgres extra: pip install 'mcp-guard[postgres]'"
        ) from None
    except JournalDatabaseError as exc:
        if exc.cause is not None:  # (as Redis that refuses the guard, above: a retry cannot help)
            log.error("journal: %s; calls are refused until guard.journal is fixed", exc)
        else:
            log.warning("journal: %s; calls are refused until the database answers", exc)
    else:
        if version is None:
            raise StateError(
                f"{pg.where}: the journal's tables are not there: run mcp-guard journal init --config FILE"
            )
        if version > SCHEMA_VERSION:
            raise StateError(f"{pg.where}: the journal's schema is version {version}, newer than this guard's")
        if version < SCHEMA_VERSION:
            raise StateError(
                f"{pg.where}: the journal's schema is version {version}, older than this guard's ({SCHEMA_VERSION}): "
                "run mcp-guard journal init --config FILE to upgrade it"
            )
    await pg.open()
    log.info("journal: PostgreSQL at %s (replica %s)", pg.where, replica)
    return pg
