"""One log form for a refused call, in ``wrap`` and in ``serve`` (issue 13 item 7: the gateway
logged ``type at schema /properties/text/type`` where ``wrap`` logged ``type at /text``)."""

from __future__ import annotations

import logging

import pytest

from mcp_guard.calls.refusals import logged_reason
from mcp_guard.core import compile
from mcp_guard.wire.meta import REJECTION_KEY
from tests.harness import ECHO, ScriptedUpstream, name, running_guard

pytestmark = pytest.mark.anyio

SECRET = "s3cr3t-value"


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_a_refusal_is_logged_alike_by_both_commands(command: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_guard")
    async with running_guard(command, ScriptedUpstream()) as client:
        refused = await client.call(name(command, "echo"), {"text": 5, SECRET: SECRET})
        assert refused["result"]["_meta"][REJECTION_KEY]["kind"] == "validation"
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("rejected tools/call")]
    assert lines == [
        f"rejected tools/call `{name(command, 'echo')}` (validation): "
        "type at /text; additionalProperties at schema /additionalProperties"
    ]
    assert SECRET not in caplog.text  # neither the value nor the undeclared key the client chose


def test_the_log_form_names_instance_pointers_only_where_the_schema_made_them() -> None:
    compiled = compile(ECHO["inputSchema"])
    report = compiled.check({"text": 5, "undeclared-key": 1})
    assert logged_reason(report) == "type at /text; additionalProperties at schema /additionalProperties"
