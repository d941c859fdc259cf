"""The journal's tables in PostgreSQL: the one migration step the guard owns, and the reader.

``mcp-guard journal init`` (:func:`init_schema`) creates, in one transaction under an advisory
lock (two replicas running it at once do it once)::

    mcp_guard_journal  one row per record, the JSONL record's fields (calls.journal) plus the
                       replica that wrote it and the database's commit time
    mcp_guard_schema   the schema's version (1)

``UNIQUE (call_id, event)`` makes a duplicated intent impossible: an intent written again (a
retried insert whose first commit was acknowledged too late) is the same row. The columns are
the JSONL fields: ``event``, ``call_id``, ``time`` (the replica's clock, as in the file),
``server``, ``tool``, ``arguments_sha256`` and ``arguments_bytes`` (intents), ``result`` and
``kind`` (outcomes); argument values are never stored, as in the file.

:func:`read_database_records` reads the rows back as JSONL-shaped records for
:func:`mcp_guard.calls.journal.summarize`, so ``mcp-guard journal`` summarizes a database as it
does a file. The driver is ``psycopg`` 3, imported when these functions run.
"""

from __future__ import annotations

from typing import Any, Final

from ..errors import GuardError
from .urls import redacted

__all__ = [
    "CREATE",
    "JOURNAL_TABLE",
    "POSTGRES_SCHEMES",
    "SCHEMA_TABLE",
    "SCHEMA_VERSION",
    "JournalDatabaseError",
    "init_schema",
    "read_database_records",
    "schema_version",
]

JOURNAL_TABLE: Final = "mcp_guard_journal"
SCHEMA_TABLE: Final = "mcp_guard_schema"
SCHEMA_VERSION: Final = 1
POSTGRES_SCHEMES: Final = ("postgresql", "postgres")
_LOCK_KEY: Final = 0x6D63_7067  # "mcpg": the advisory lock of the migration

CREATE: Final = f"""
CREATE TABLE IF NOT EXISTS {JOURNAL_TABLE} (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event text NOT NULL CHECK (event IN ('intent', 'outcome')),
    call_id text NOT NULL,
    time timestamptz NOT NULL,
    server text NOT NULL,
    tool text NOT NULL,
    arguments_sha256 text,
    arguments_bytes bigint,
    result text,
    kind text,
    replica text NOT NULL,
    committed_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (call_id, event)
);
CREATE TABLE IF NOT EXISTS {SCHEMA_TABLE} (version integer NOT NULL);
"""


class JournalDatabaseError(GuardError):
    """The journal's database cannot be used: unreachable, or its tables are missing or newer than this guard.

    The message names the database by its redacted URL (no credentials).
    """


def _connect(url: str, timeout: float) -> Any:
    import psycopg

    try:
        return psycopg.connect(url, connect_timeout=max(1, round(timeout)), autocommit=True)
    except psycopg.Error as exc:
        raise JournalDatabaseError(f"cannot connect to {redacted(url)}: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    """The driver's message, first line (libpq's messages name host, port and user, never a password)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def init_schema(url: str, *, timeout: float = 10.0) -> bool:
    """Create the journal's tables if they are not there (idempotent).

    Returns:
        True when the tables were created now, False when they were there already.

    Raises:
        JournalDatabaseError: the database cannot be reached, the user may not create tables, or
            the schema there is a newer version than this guard's.
    """
    import psycopg

    with _connect(url, timeout) as conn:
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
                before = _version(conn)
                if before is not None and before > SCHEMA_VERSION:
                    raise JournalDatabaseError(
                        f"{redacted(url)}: the journal's schema is version {before}, newer than this guard's "
                        f"({SCHEMA_VERSION}); upgrade mcp-guard"
                    )
                conn.execute(CREATE)
                if before is None:
                    conn.execute(f"INSERT INTO {SCHEMA_TABLE} (version) VALUES (%s)", (SCHEMA_VERSION,))
                return before is None
        except psycopg.Error as exc:
            raise JournalDatabaseError(
                f"{redacted(url)}: cannot create the journal's tables: {_first_line(exc)}"
            ) from None


def _version(conn: Any) -> int | None:
    found = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (SCHEMA_TABLE,)).fetchone()
    if not found or not found[0]:
        return None
    row = conn.execute(f"SELECT max(version) FROM {SCHEMA_TABLE}").fetchone()
    return None if row is None or row[0] is None else int(row[0])


def schema_version(url: str, *, timeout: float = 5.0) -> int | None:
    """The journal schema's version in the database, ``None`` when ``journal init`` never ran there.

    Raises:
        JournalDatabaseError: the database cannot be reached.
    """
    import psycopg

    with _connect(url, timeout) as conn:
        try:
            return _version(conn)
        except psycopg.Error as exc:
            raise JournalDatabaseError(f"{redacted(url)}: {_first_line(exc)}") from None


def read_database_records(url: str, *, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Every journal row, oldest first, as the JSONL records of :mod:`mcp_guard.calls.journal` plus ``replica``.

    Raises:
        JournalDatabaseError: the database cannot be reached, or ``journal init`` never ran there.
    """
    import psycopg

    from ..calls.journal import rfc3339

    with _connect(url, timeout) as conn:
        try:
            if _version(conn) is None:
                raise JournalDatabaseError(f"{redacted(url)}: no journal there (run mcp-guard journal init)")
            rows = conn.execute(
                f"SELECT event, call_id, time, server, tool, arguments_sha256, arguments_bytes, result, kind, replica "
                f"FROM {JOURNAL_TABLE} ORDER BY id"
            ).fetchall()
        except psycopg.Error as exc:
            raise JournalDatabaseError(f"{redacted(url)}: {_first_line(exc)}") from None
    records = []
    for event, call_id, time, server, tool, digest, size, result, kind, replica in rows:
        record: dict[str, Any] = {"event": event, "call_id": call_id, "time": rfc3339(time), "server": server}
        record["tool"] = tool
        if event == "intent":
            record["arguments_sha256"] = digest
            record["arguments_bytes"] = size
        else:
            record["result"] = result
            if kind is not None:
                record["kind"] = kind
        record["replica"] = replica
        records.append(record)
    return records
