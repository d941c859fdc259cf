"""The journal's tables in PostgreSQL: the migration steps the guard owns, and the reader.

``mcp-guard journal init`` (:func:`init_schema`) runs the steps the database lacks, in one
transaction under an advisory lock (two replicas running it at once do it once)::

    mcp_guard_journal  one row per record, the JSONL record's fields (calls.journal) plus the
                       replica that wrote it and the database's commit time
    mcp_guard_schema   the schema's versions, one row per step run (the highest is in force)

Steps (:data:`STEPS`): 1 creates both tables (issue 26); 2 adds ``principal_subject``,
``principal_issuer`` and ``principal_client_id`` (issue 27: who sent the call; null without a
principal, and in the rows written before the step). A database at version 1 is upgraded in
place (an ``ALTER TABLE ... ADD COLUMN`` of nullable columns: no rewrite of the rows); a replica
of this guard refuses to start on a database older than :data:`SCHEMA_VERSION`, as its inserts
name the new columns.

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
from .pg_faults import lasting_cause, passing_cause
from .urls import redacted

__all__ = [
    "ADD_PRINCIPAL",
    "CREATE",
    "JOURNAL_TABLE",
    "POSTGRES_SCHEMES",
    "SCHEMA_TABLE",
    "SCHEMA_VERSION",
    "STEPS",
    "JournalDatabaseError",
    "init_schema",
    "read_database_records",
    "schema_version",
]

JOURNAL_TABLE: Final = "mcp_guard_journal"
SCHEMA_TABLE: Final = "mcp_guard_schema"
SCHEMA_VERSION: Final = 2
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
"""Step 1 (issue 26): the journal's table and the version table."""

ADD_PRINCIPAL: Final = f"""
ALTER TABLE {JOURNAL_TABLE}
    ADD COLUMN IF NOT EXISTS principal_subject text,
    ADD COLUMN IF NOT EXISTS principal_issuer text,
    ADD COLUMN IF NOT EXISTS principal_client_id text;
"""
"""Step 2 (issue 27): who sent each call."""

STEPS: Final = {1: CREATE, 2: ADD_PRINCIPAL}
"""The migration steps by the version they bring the schema to, in order."""


class JournalDatabaseError(GuardError):
    """The journal's database cannot be used: unreachable, or its tables are missing or newer than this guard.

    The message names the database by its redacted URL (no credentials). ``cause``: for a connection
    that failed, the lasting cause (``pg_faults.lasting_cause``: a retry cannot help), None when the
    fault may pass (the server down or slow) or is not a connection's.
    """

    def __init__(self, message: str, cause: str | None = None) -> None:
        super().__init__(message)
        self.cause = cause


def _connect(url: str, timeout: float) -> Any:
    """A connection (autocommit). Raises JournalDatabaseError naming the fault's class (``pg_faults``), never
    libpq's message (it quotes the role and database)."""
    import psycopg

    try:
        return psycopg.connect(url, connect_timeout=max(1, round(timeout)), autocommit=True)
    except psycopg.Error as exc:
        cause = lasting_cause(exc)
        raise JournalDatabaseError(f"cannot connect to {redacted(url)}: {cause or passing_cause(exc)}", cause) from None


def _first_line(exc: BaseException) -> str:
    """The driver's message, first line (libpq's messages name host, port and user, never a password)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def init_schema(url: str, *, timeout: float = 10.0) -> int | None:
    """Create the journal's tables, or bring them to :data:`SCHEMA_VERSION` (idempotent).

    Returns:
        The schema's version before (``None``: there were no tables); it is
        :data:`SCHEMA_VERSION` after.

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
                for version, step in STEPS.items():
                    if before is None or version > before:
                        conn.execute(step)
                        conn.execute(f"INSERT INTO {SCHEMA_TABLE} (version) VALUES (%s)", (version,))
                return before
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
            raise JournalDatabaseError(f"{redacted(url)}: {_first_line(exc)}", lasting_cause(exc)) from None


def read_database_records(url: str, *, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Every journal row, oldest first, as the JSONL records of :mod:`mcp_guard.calls.journal` plus ``replica``.

    A version-1 database (before ``principal_*``) is read too: its records have no ``principal``.

    Raises:
        JournalDatabaseError: the database cannot be reached, or ``journal init`` never ran there.
    """
    import psycopg

    from ..calls.journal import rfc3339

    with _connect(url, timeout) as conn:
        try:
            version = _version(conn)
            if version is None:
                raise JournalDatabaseError(f"{redacted(url)}: no journal there (run mcp-guard journal init)")
            who = (
                "principal_subject, principal_issuer, principal_client_id"
                if version >= 2
                else "NULL::text, NULL::text, NULL::text"
            )
            rows = conn.execute(
                f"SELECT event, call_id, time, server, tool, arguments_sha256, arguments_bytes, result, kind, replica, "
                f"{who} FROM {JOURNAL_TABLE} ORDER BY id"
            ).fetchall()
        except psycopg.Error as exc:
            raise JournalDatabaseError(f"{redacted(url)}: {_first_line(exc)}") from None
    records = []
    for event, call_id, time, server, tool, digest, size, result, kind, replica, subject, issuer, client in rows:
        record: dict[str, Any] = {"event": event, "call_id": call_id, "time": rfc3339(time), "server": server}
        record["tool"] = tool
        if event == "intent":
            record["arguments_sha256"] = digest
            record["arguments_bytes"] = size
        else:
            record["result"] = result
            if kind is not None:
                record["kind"] = kind
        if subject is not None and issuer is not None:
            record["principal"] = {"subject": subject, "issuer": issuer, "client_id": client}
        record["replica"] = replica
        records.append(record)
    return records
