"""Shared state per caller (issue 27 item 2): budgets per principal in a real Redis, the principal in a real
PostgreSQL journal, and the upgrade of a journal made by schema version 1.

Each test uses keys (a prefix) or a database of its own on the session's servers.
"""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_guard.auth.principal import Principal
from mcp_guard.calls.call import Call
from mcp_guard.calls.pipeline import Pipeline
from mcp_guard.calls.policy import Budget
from mcp_guard.calls.principals import principal_key
from mcp_guard.commands.journal_db import run_journal_database
from mcp_guard.state.opening import StateError, opened_stores
from mcp_guard.state.pg_journal import PostgresJournal
from mcp_guard.state.pg_schema import CREATE, SCHEMA_VERSION, init_schema, read_database_records, schema_version
from mcp_guard.state.redis_budget import RedisBudget
from tests.calls.test_principals import ANN, BOB, catalog, pipeline
from tests.real_servers import LOADED, Redis

pytestmark = pytest.mark.anyio

RULES = {"agents": {"match": {"authenticated": True}, "callsPerMinute": 2}}


def member() -> str:
    return uuid.uuid4().hex


# --- Redis ----------------------------------------------------------------------------------------


async def test_each_caller_has_its_budget_in_redis_under_a_pseudonym(redis_server: Redis) -> None:
    """Through the pipeline on Redis: each caller gets its 2 calls of the tool; the tool's budget of 3 holds
    for them together, and a refused call takes no slot; no key holds a subject."""
    p = f"test-{uuid.uuid4().hex[:12]}"
    budget = RedisBudget(redis_server.url, prefix=p, timeout=LOADED)
    cat = catalog(RULES, servers={"tickets": {"callsPerMinute": 3}})
    pipe = pipeline(cat, budget=budget)
    route = cat.route("tickets__read")
    assert route is not None

    async def kind(who: Principal) -> str | None:
        rejection = await pipe.admit(Call(route, {}, principal=who))
        return None if rejection is None else rejection.kind

    from redis.asyncio import Redis as Client

    reader = Client.from_url(redis_server.url)
    try:
        assert [await kind(ANN) for _ in range(3)] == [None, None, "budget_exceeded"]
        assert [await kind(BOB) for _ in range(2)] == [None, "budget_exceeded"]  # the tool's 3 are spent
        keys = sorted(k.decode() for k in await reader.keys(f"{p}:*"))
        assert keys == sorted(
            [
                f"{p}:budget:{{tickets__read}}",
                f"{p}:budget:{{tickets__read}}:principal:{principal_key(ANN)}",
                f"{p}:budget:{{tickets__read}}:principal:{principal_key(BOB)}",
            ]
        )
        assert await reader.zcard(f"{p}:budget:{{tickets__read}}:principal:{principal_key(BOB)}") == 1
        assert not any("auth0" in k or "bob" in k for k in keys)
    finally:
        await reader.aclose()
        await budget.aclose()


async def test_take_all_takes_every_slot_or_none_under_concurrency(redis_server: Redis) -> None:
    """Oracle: racing clients take (tool, caller) pairs with limits 5 and 3: Redis answers as the in-process
    budget does, and the tool's set never holds a call its caller's set refused."""
    p = f"test-{uuid.uuid4().hex[:12]}"
    replicas = [RedisBudget(redis_server.url, prefix=p, timeout=LOADED) for _ in range(3)]
    callers = ["a", "b", "c"]
    granted: list[str] = []

    async def hammer(budget: RedisBudget, caller: str) -> None:
        for _ in range(6):
            if await budget.take_all([("t", 5), (f"t:principal:{caller}", 3)], member()) is None:
                granted.append(caller)

    try:
        async with anyio.create_task_group() as tg:
            for budget in replicas:
                for caller in callers:
                    tg.start_soon(hammer, budget, caller)
        found = await replicas[0].take_all([("t", 5), ("t:principal:a", 3)], member())
        assert found is not None and found[1] in (0, 1) and 0 < found[0] <= 60
        from redis.asyncio import Redis as Client

        reader = Client.from_url(redis_server.url)
        try:
            tool = await reader.zcard(f"{p}:budget:{{t}}")
            per = {c: await reader.zcard(f"{p}:budget:{{t}}:principal:{c}") for c in callers}
        finally:
            await reader.aclose()
    finally:
        for budget in replicas:
            await budget.aclose()
    assert len(granted) == 5 == tool == sum(per.values())
    assert all(per[c] == granted.count(c) <= 3 for c in callers)
    local = Budget()
    assert [local.take_all([("t", 1), ("p", 5)]) is None for _ in range(2)] == [True, False]


# --- PostgreSQL -------------------------------------------------------------------------------------


def _version_one(url: str) -> None:
    """A journal as ``journal init`` of schema version 1 made it (issue 26), with one call in it."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(CREATE)
        conn.execute("INSERT INTO mcp_guard_schema (version) VALUES (1)")
        insert = (
            "INSERT INTO mcp_guard_journal (event, call_id, time, server, tool, arguments_sha256, arguments_bytes, "
            "result, kind, replica) VALUES (%s, %s, now(), 'tickets', 'read', %s, %s, %s, %s, 'r1')"
        )
        conn.execute(insert, ("intent", "old", "0" * 64, 2, None, None))
        conn.execute(insert, ("outcome", "old", None, None, "ok", None))


async def test_a_version_one_journal_is_upgraded_by_journal_init_and_keeps_its_rows(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _version_one(pg_url)
    assert schema_version(pg_url) == 1
    path = tmp_path / "gateway.json"
    data = {"mcpServers": {"tickets": {"command": "x"}}, "guard": {"journal": {"postgresEnv": "J"}}}
    path.write_text(json.dumps(data))
    monkeypatch.setenv("J", pg_url)
    # serve refuses to start on it: its inserts name the new columns.
    from mcp_guard.config import load_config

    with pytest.raises(StateError, match=r"version 1, older than this guard's .*journal init"):
        async with opened_stores(load_config(path), journal_path=None):
            pass
    out = io.StringIO()
    assert run_journal_database("init", config_path=str(path), out=out) == 0
    assert f"upgraded the journal tables from schema version 1 to {SCHEMA_VERSION}" in out.getvalue()
    assert schema_version(pg_url) == SCHEMA_VERSION
    assert init_schema(pg_url) == SCHEMA_VERSION  # and again: nothing more to do
    records = read_database_records(pg_url)
    assert [(r["call_id"], "principal" in r) for r in records] == [("old", False), ("old", False)]
    async with opened_stores(load_config(path), journal_path=None, replica="r2") as stores:
        assert stores.journal is not None


async def test_the_principal_is_in_every_row_and_the_summary_from_the_database_is_per_principal(pg_url: str) -> None:
    init_schema(pg_url)
    cat = catalog({"support-agents": {"match": {"groups": ["support"]}, "deny": ["billing/refund"]}})
    journal = PostgresJournal(pg_url, replica="r1")
    await journal.open()
    pipe: Pipeline = pipeline(cat, journal=journal)
    calls: list[tuple[Principal | None, str]] = [
        (ANN, "tickets__read"),
        (ANN, "billing__refund"),
        (None, "tickets__read"),
    ]
    try:
        for who, exposed in calls:
            route = cat.route(exposed)
            assert route is not None
            call = Call(route, {}, principal=who)
            if await pipe.admit(call) is None:
                await pipe.finish(call, {"jsonrpc": "2.0", "id": 1, "result": {"content": []}})
    finally:
        await journal.aclose()
    records = read_database_records(pg_url)
    ann = {"subject": "auth0|ann", "issuer": "https://id.example", "client_id": "desk"}
    seen: list[tuple[str, str, Any]] = [(r["event"], r["tool"], r.get("principal")) for r in records]
    assert seen == [
        ("intent", "read", ann),
        ("outcome", "read", ann),
        ("outcome", "refund", ann),
        ("intent", "read", None),
        ("outcome", "read", None),
    ]
    out = io.StringIO()
    assert run_journal_database(pg_url, config_path=None, as_json=True, out=out) == 0
    principals = json.loads(out.getvalue())["principals"]
    assert [(p["subject"], p["calls"], p["rejections"]) for p in principals] == [
        (None, 1, {}),
        ("auth0|ann", 2, {"policy_denied": 1}),
    ]
    out = io.StringIO()
    assert run_journal_database(pg_url, config_path=None, out=out) == 0
    assert "auth0|ann" in out.getvalue() and "(no principal)" in out.getvalue()
