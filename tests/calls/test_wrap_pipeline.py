"""``wrap`` judges a ``tools/call`` by the call pipeline's steps (``calls.pipeline``), those its options
enable, as ``serve`` does with all of them: one place decides what a client sees (issue 12 item 2)."""

from __future__ import annotations

import pytest

from mcp_guard.calls.call import Call, Rejection
from mcp_guard.sessions.relay import Relay
from mcp_guard.wire.meta import REJECTION_KEY
from tests.harness import ScriptedUpstream, running_guard

pytestmark = pytest.mark.anyio


async def test_wrap_runs_the_visibility_and_schema_steps() -> None:
    upstream = ScriptedUpstream()
    async with running_guard("wrap", upstream) as client:
        relay = client.guard.routing
        assert isinstance(relay, Relay)
        assert relay.pipeline.steps == ("visibility", "schema")
        refused = await client.call("echo", {"text": 5})
        assert refused["result"]["_meta"][REJECTION_KEY]["kind"] == "validation"
        assert (await client.call("echo", {"text": "hi"}))["result"]["content"][0]["text"] == "echo ok"
    assert len(upstream.calls()) == 1


async def test_a_step_that_fails_refuses_the_call_in_wrap_too() -> None:
    """Fail closed, as in ``serve``: a check that raises answers -32603 and nothing reaches the upstream."""
    upstream = ScriptedUpstream()
    async with running_guard("wrap", upstream) as client:
        relay = client.guard.routing
        assert isinstance(relay, Relay)

        def broken(call: Call) -> Rejection | None:
            raise RuntimeError("boom")

        relay.pipeline.checks = tuple((n, broken if n == "schema" else c) for n, c in relay.pipeline.checks)
        answer = await client.call("echo", {"text": "hi"})
        text = "mcp-guard could not check this call; it was not forwarded"
        assert answer["error"] == {"code": -32603, "message": text}
    assert upstream.calls() == []
