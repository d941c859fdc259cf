"""A request without an id is never forwarded to be run unjudged (red team 32): ``serve`` broadcast an id-less
``tools/call`` to every upstream, past the schema check, policy, pins, budget and journal. Both commands
drop it (a notification cannot be judged and answered); real notifications still reach the upstream."""

from __future__ import annotations

import pytest

from tests.harness import ScriptedUpstream, name, running_guard

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("command", ["wrap", "serve"])
@pytest.mark.parametrize("method", ["tools/call", "prompts/get", "resources/read"])
async def test_an_idless_request_is_dropped_and_notifications_pass(command: str, method: str) -> None:
    upstream = ScriptedUpstream()
    async with running_guard(command, upstream) as client:
        params = {"name": name(command, "echo"), "arguments": {"text": 5}, "uri": "x://y"}
        await client.send({"jsonrpc": "2.0", "method": method, "params": params})
        await client.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
        answer = await client.call(name(command, "echo"), {"text": "hi"})  # (after both, in order)
        assert answer["result"]["content"][0]["text"] == "echo ok"
    received = [m for m in upstream.received if "id" not in m]
    assert [m["method"] for m in received if m["method"] != "notifications/initialized"] == [
        *([method] if command == "wrap" and method != "tools/call" else []),  # wrap relays what it does not judge
        "notifications/roots/list_changed",
    ]
    assert all(m.get("method") != "tools/call" or "id" in m for m in upstream.received)
