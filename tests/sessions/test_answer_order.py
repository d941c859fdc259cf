"""Answers in the order a client may rely on: ``initialize``'s first (red team 33)."""

from __future__ import annotations

import pytest

from tests.harness import INIT, ScriptedUpstream, running_guard

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_requests_pipelined_after_initialize_are_answered_after_it(command: str) -> None:
    """Red team 33: ``serve`` answered a ``tools/list`` and a ``ping`` sent right behind ``initialize`` before
    ``initialize`` itself (it waits for its upstreams to settle)."""
    upstream = ScriptedUpstream()
    async with running_guard(command, upstream, initialize=False) as client:
        await client.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": INIT})
        await client.send({"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
        await client.send({"jsonrpc": "2.0", "id": "ping", "method": "ping"})
        for request_id in ("init", "list", "ping"):
            await client.answer(request_id)
        assert next(m["id"] for m in client.seen) == "init"
