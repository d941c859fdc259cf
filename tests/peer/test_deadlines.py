"""Forwarded requests' deadlines (``--request-timeout``), shared by wrap and serve: due order, progress restarts."""

from __future__ import annotations

import anyio
import pytest

from mcp_guard.peer.deadlines import Deadlines
from mcp_guard.wire.jsonrpc import id_key

pytestmark = pytest.mark.anyio


async def test_requests_expire_in_due_order_and_progress_restarts_one() -> None:
    deadlines = Deadlines(0.2)
    a, b, c = id_key("a"), id_key("b"), id_key("c")
    deadlines.start(a, {"_meta": {"progressToken": "tok-a"}})
    deadlines.start(b, {})
    deadlines.start(c, {})
    deadlines.done(c)  # answered: never expires
    deadlines.progressed({"progressToken": "tok-a"})  # a is due a whole timeout from now: after b
    expired = []
    with anyio.fail_after(5):
        async for key in deadlines.expired():
            expired.append(key)
            if len(expired) == 2:
                break
    assert expired == [b, a]
    assert len(deadlines) == 0


async def test_progress_for_an_unknown_token_and_a_cleared_table_change_nothing() -> None:
    deadlines = Deadlines(30.0)
    deadlines.start(id_key(1), {"_meta": {"progressToken": 7}})
    deadlines.progressed({"progressToken": "other"})
    deadlines.progressed(None)
    assert len(deadlines) == 1
    deadlines.clear()
    assert len(deadlines) == 0
