"""The journal in a real PostgreSQL (issue 26 item 2): intents committed before forwarding, fail closed, summarized.

Each test has a database of its own (``pg_url``) on the session's cluster.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_guard.calls.call import Call
from mcp_guard.calls.pipeline import Pipeline
from mcp_guard.commands.journal_db import run_journal_database
from mcp_guard.state.opening import StateError, opened_stores
from mcp_guard.state.pg_journal import PostgresJournal
from mcp_guard.state.pg_schema import SCHEMA_VERSION, init_schema, read_database_records, schema_version
from tests.calls.test_pipeline import catalog, config
from tests.real_servers import Postgres, free_port

pytestmark = pytest.mark.anyio
psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed (pip install -e '.[test]')")


def rows(url: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT event, call_id, result, kind, replica FROM mcp_guard_journal ORDER BY id"
        ).fetchall()


async def test_init_is_idempotent(pg_url: str) -> None:
    assert schema_version(pg_url) is None
    assert init_schema(pg_url) is None  # (no tables before)
    assert init_schema(pg_url) == SCHEMA_VERSION  # a second replica running it changes nothing
    assert schema_version(pg_url) == SCHEMA_VERSION


async def test_intent_is_committed_before_the_call_is_forwarded_and_the_outcome_after(pg_url: str) -> None:
    init_schema(pg_url)
    cat = catalog({"servers": {"fs": {"tools": {"read": {"callsPerMinute": 1}}}}})
    read = cat.route("fs__read")
    assert read is not None
    journal = PostgresJournal(pg_url, replica="r1")
    await journal.open()
    pipe = Pipeline(journal=journal)
    try:
        call = Call(read, {"path": "a"})
        assert await pipe.admit(call) is None
        # Seen from another connection before the call goes on: the intent is committed.
        assert rows(pg_url) == [("intent", call.call_id, None, None, "r1")]
        await pipe.finish(call, {"jsonrpc": "2.0", "id": 1, "result": {"content": []}})
        refused = Call(read, {"path": "a"})
        rejection = await pipe.admit(refused)
        assert rejection is not None and rejection.kind == "budget_exceeded"
        await journal.intent(call.call_id, "fs", "read", "0" * 64, 2)  # written again (a retry): one row still
    finally:
        await journal.aclose()
    assert rows(pg_url) == [
        ("intent", call.call_id, None, None, "r1"),
        ("outcome", call.call_id, "ok", None, "r1"),
        ("outcome", refused.call_id, "rejected", "budget_exceeded", "r1"),
    ]
    records = read_database_records(pg_url)
    assert records[0]["arguments_bytes"] == len('{"path":"a"}') and len(records[0]["arguments_sha256"]) == 64
    assert set(records[1]) == {"event", "call_id", "time", "server", "tool", "result", "replica"}


async def test_a_database_that_cannot_take_the_intent_refuses_the_call_then_service_resumes(
    postgres_server: Postgres, pg_url: str
) -> None:
    """Fail closed: the database stopped, a call is refused with -32603 and leaves no intent; once it is back
    the pooled connections that broke are replaced and calls are journaled again."""
    init_schema(pg_url)
    cat = catalog()
    read = cat.route("fs__read")
    assert read is not None
    journal = PostgresJournal(pg_url, replica="r1", timeout=1.0)
    await journal.open()
    pipe = Pipeline(journal=journal)
    try:
        first = Call(read, {"path": "a"})
        assert await pipe.admit(first) is None
        postgres_server.stop()
        try:
            refused = Call(read, {"path": "b"})
            rejection = await pipe.admit(refused)
            assert rejection is not None and rejection.kind == "internal_error"
            assert rejection.error is not None and rejection.error[0] == -32603
        finally:
            postgres_server.start()
        with anyio.fail_after(30):  # (a hang guard: the pool reconnects, the down hold passes)
            while await pipe.admit(again := Call(read, {"path": "c"})) is not None:
                await anyio.sleep(0.1)
    finally:
        await journal.aclose()
    intents = [r[1] for r in rows(pg_url) if r[0] == "intent"]
    assert intents == [first.call_id, again.call_id]


async def test_serve_refuses_to_start_on_a_database_without_the_tables(pg_url: str) -> None:
    c = config({"journal": {"postgres": pg_url}})
    with pytest.raises(StateError, match="journal init"):
        async with opened_stores(c, journal_path=None):
            pass
    # A database that is down at start is not an error: calls are refused until it answers.
    down = config({"journal": {"postgres": f"postgresql://postgres:pw@127.0.0.1:{free_port()}/x"}})
    async with opened_stores(down, journal_path=None) as stores:
        assert stores.journal is not None and stores.journal_label.startswith("postgresql://127.0.0.1:")


def test_journal_init_and_summary_commands(pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``mcp-guard journal init --config`` with the URI from an environment variable, then the summary from the
    database: the same table and JSON as from a file, plus the unfinished calls by replica."""
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps({"mcpServers": {"fs": {"command": "x"}}, "guard": {"journal": {"postgresEnv": "J"}}}))
    monkeypatch.setenv("J", pg_url)
    out = io.StringIO()
    assert run_journal_database("init", config_path=str(path), out=out) == 0
    assert "created the journal tables" in out.getvalue() and "postgres@" not in out.getvalue()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        insert = (
            "INSERT INTO mcp_guard_journal (event, call_id, time, server, tool, arguments_sha256, arguments_bytes, "
            "result, kind, replica) VALUES (%s, %s, now(), 'fs', 'read', %s, %s, %s, %s, %s)"
        )
        conn.execute(insert, ("intent", "c1", "0" * 64, 2, None, None, "r1"))
        conn.execute(insert, ("outcome", "c1", None, None, "ok", None, "r1"))
        conn.execute(insert, ("intent", "c2", "0" * 64, 2, None, None, "r2"))
    out = io.StringIO()
    assert run_journal_database(None, config_path=str(path), out=out) == 0
    text = out.getvalue()
    assert "c2  fs/read" in text and "unfinished calls by replica: r2 1" in text
    out = io.StringIO()
    assert run_journal_database(pg_url, config_path=None, as_json=True, out=out) == 0
    summary = json.loads(out.getvalue())
    assert summary["tools"][0]["calls"] == 2 and summary["tools"][0]["unfinished"] == ["c2"]
