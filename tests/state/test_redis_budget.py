"""Budgets counted in a real Redis (issue 26 item 1): exact under concurrency, windowed, fail closed, resumed.

Each test uses keys of its own (a prefix per test) on the session's ``redis-server``.
"""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import pytest

from mcp_guard.calls.call import Call
from mcp_guard.calls.pipeline import Pipeline
from mcp_guard.calls.policy import Budget
from mcp_guard.calls.stores import StoreUnavailable
from mcp_guard.state.redis_budget import RedisBudget
from tests.calls.test_pipeline import catalog
from tests.real_servers import LOADED, Redis, free_port

pytestmark = pytest.mark.anyio


def prefix() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


def member() -> str:
    return uuid.uuid4().hex


async def test_concurrent_takes_from_three_replicas_forward_exactly_the_budget(redis_server: Redis) -> None:
    """Three clients (three replicas) race 90 takes on one tool with a budget of 17: exactly 17 get a slot,
    and every refusal says when a slot frees (within the window)."""
    p = prefix()
    replicas = [RedisBudget(redis_server.url, prefix=p, timeout=LOADED) for _ in range(3)]
    answers: list[float | None] = []

    async def hammer(budget: RedisBudget) -> None:
        for _ in range(30):
            answers.append(await budget.take("fs__read", 17, member()))

    try:
        async with anyio.create_task_group() as tg:
            for budget in replicas:
                for _ in range(3):
                    tg.start_soon(hammer, budget)
    finally:
        for budget in replicas:
            await budget.aclose()
    assert len(answers) == 270
    assert sum(1 for a in answers if a is None) == 17
    assert all(0 < a <= 60 for a in answers if a is not None)


async def test_no_window_of_redis_time_holds_more_than_the_budget_across_expiries(redis_server: Redis) -> None:
    """Twelve clients on three replicas take slots for three windows of 0.5 s: every slot's Redis time (its
    score, read at once) is known, and no span of one window holds more than the budget, while slots do
    free and are taken again (more than the budget are taken in all)."""
    p = prefix()
    window, limit = 0.5, 4
    replicas = [RedisBudget(redis_server.url, prefix=p, window=window, timeout=LOADED) for _ in range(3)]
    taken: list[float] = []
    from redis.asyncio import Redis as Client

    reader = Client.from_url(redis_server.url)

    async def hammer(budget: RedisBudget) -> None:
        with anyio.move_on_after(3 * window):
            while True:
                me = member()
                if await budget.take("t", limit, me) is None:
                    score = await reader.zscore(budget.key("t"), me)
                    assert score is not None
                    taken.append(score / 1_000_000)
                await anyio.sleep(0)

    try:
        async with anyio.create_task_group() as tg:
            for budget in replicas:
                for _ in range(4):
                    tg.start_soon(hammer, budget)
    finally:
        for budget in replicas:
            await budget.aclose()
        await reader.aclose()
    taken.sort()
    assert len(taken) > limit
    for i, start in enumerate(taken):
        inside = sum(1 for t in taken[i:] if t < start + window)
        assert inside <= limit, (start, inside)


async def test_tools_are_counted_apart_and_a_slot_frees_after_the_window(redis_server: Redis) -> None:
    """Each exposed tool has its own window; a slot frees once the window has passed since the call that took it."""
    budget = RedisBudget(redis_server.url, prefix=prefix(), window=1.0, timeout=LOADED)
    try:
        assert await budget.take("a", 2, member()) is None
        taken = 1
        while (wait := await budget.take("a", 2, member())) is None:  # (once, unless a window passed meanwhile)
            taken += 1
        assert taken >= 2 and 0 < wait <= 1.0
        assert await budget.take("b", 2, member()) is None  # another tool: its own window
        await anyio.sleep(wait + 0.05)
        assert await budget.take("a", 2, member()) is None  # the oldest slot freed
    finally:
        await budget.aclose()


async def test_redis_counts_as_the_in_process_budget_does(redis_server: Redis) -> None:
    """Oracle: with the limits varying call by call, Redis and the in-process budget agree on every answer
    within one window (nothing expires in between)."""
    redis_budget = RedisBudget(redis_server.url, prefix=prefix(), timeout=LOADED)
    local = Budget()
    limits = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9]
    try:
        for limit in limits:
            remote = await redis_budget.take("t", limit, member())
            assert (remote is None) == (local.take("t", limit) is None), limit
    finally:
        await redis_budget.aclose()


async def test_an_unreachable_redis_raises_store_unavailable_without_the_password() -> None:
    budget = RedisBudget(f"redis://guard:s3cret-pw@127.0.0.1:{free_port()}/0", prefix=prefix(), timeout=1.0)
    try:
        with pytest.raises(StoreUnavailable) as caught:
            await budget.take("t", 5, member())
        assert "s3cret" not in str(caught.value) and "guard" not in str(caught.value)
        assert f"127.0.0.1:{budget.where.rsplit(':', 1)[1]}" in str(caught.value)
    finally:
        await budget.aclose()


def _kind(result: dict[str, Any]) -> str:
    return str(result["_meta"]["mcp-guard/rejection"]["kind"])


async def test_the_pipeline_refuses_governed_calls_while_redis_is_down_and_resumes() -> None:
    """Redis down: a governed call is refused ``budget_unavailable`` (isError, retry advice); a call no
    budget governs passes without touching Redis; once Redis is back, counting resumes (the script is
    loaded again into the fresh server)."""
    server = Redis()
    server.start()
    cat = catalog({"servers": {"fs": {"tools": {"read": {"callsPerMinute": 2}}}}})
    read, write = cat.route("fs__read"), cat.route("fs__write")
    assert read is not None and write is not None
    budget = RedisBudget(server.url, prefix=prefix(), timeout=1.0)
    pipe = Pipeline(budget=budget)
    try:
        assert await pipe.admit(Call(read, {"path": "a"})) is None
        server.stop()
        refused = await pipe.admit(Call(read, {"path": "a"}))
        assert refused is not None and refused.kind == "budget_unavailable" and refused.result is not None
        assert refused.result["isError"] is True and _kind(refused.result) == "budget_unavailable"
        assert refused.result["_meta"]["mcp-guard/rejection"]["retry_after_seconds"] == 5
        assert "Try again in 5 seconds" in refused.result["content"][0]["text"]
        assert await pipe.admit(Call(write, {"text": "x"})) is None  # ungoverned: Redis is not asked
        server.start()  # a fresh, empty Redis on the same port: its script cache is empty too
        assert await pipe.admit(Call(read, {"path": "a"})) is None
        assert await pipe.admit(Call(read, {"path": "a"})) is None
        over = await pipe.admit(Call(read, {"path": "a"}))
        assert over is not None and over.kind == "budget_exceeded" and over.result is not None
        assert over.result["_meta"]["mcp-guard/rejection"]["limit_per_minute"] == 2
    finally:
        await budget.aclose()
        server.close()


@pytest.mark.parametrize(
    ("password", "database", "cause"),
    [("WRONG-pw", 0, "authentication failed"), (None, 0, "authentication failed"), ("right-pass-35", 999, "index")],
)
async def test_a_lasting_refusal_is_told_apart_from_unreachable_and_promises_no_retry(
    redis_with_password: Redis, password: str | None, database: int, cause: str
) -> None:
    """Red team 35: a wrong password read as "cannot be reached now ... Try again in 5 seconds"."""
    auth = f":{password}@" if password else ""
    url = f"redis://{auth}127.0.0.1:{redis_with_password.port}/{database}"
    budget = RedisBudget(url, prefix=prefix(), timeout=1.0)
    cat = catalog({"servers": {"fs": {"tools": {"read": {"callsPerMinute": 2}}}}})
    read = cat.route("fs__read")
    assert read is not None
    try:
        problem = await budget.ping()
        assert problem is not None and cause in problem and "pw" not in problem
        refused = await Pipeline(budget=budget).admit(Call(read, {"path": "a"}))
        assert refused is not None and refused.kind == "budget_unavailable" and refused.result is not None
        text = refused.result["content"][0]["text"]
        assert cause in text and "Try again" not in text and "Retrying will not help" in text
        assert "retry_after_seconds" not in refused.result["_meta"]["mcp-guard/rejection"]
        assert "WRONG" not in text and "right-pass" not in text
    finally:
        await budget.aclose()


async def test_the_right_password_counts(redis_with_password: Redis) -> None:
    url = f"redis://:right-pass-35@127.0.0.1:{redis_with_password.port}/0"
    budget = RedisBudget(url, prefix=prefix(), timeout=1.0)
    try:
        assert await budget.ping() is None and await budget.take("t", 1, member()) is None
    finally:
        await budget.aclose()
