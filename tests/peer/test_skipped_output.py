"""Skipped upstream output is said once, then counted (trial F15: one log line per non-JSON line)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcp_guard.peer.triage import SkipLog
from tests.harness import MemoryLink, ScriptedUpstream, name, running_guard

pytestmark = pytest.mark.anyio

COMMANDS = ["wrap", "serve"]


@pytest.mark.parametrize("command", COMMANDS)
async def test_a_chatty_upstream_costs_a_few_log_lines_not_one_per_line(
    command: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_guard")

    async def chatty(upstream: ScriptedUpstream, link: MemoryLink, message: dict[str, Any]) -> None:
        for _ in range(300):
            await link.send(b"garbage line not json")
        for _ in range(5):
            await link.send(b'{"not": "json-rpc"}')
        await upstream.answer_call(link, message)

    async with running_guard(command, ScriptedUpstream(on_call=chatty)) as client:
        answer = await client.call(name(command, "echo"), {"text": "hi"})
        assert answer["result"]["content"][0]["text"] == "echo ok"
    lines = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    full = [x for x in lines if "skipped a line of 21 bytes from the upstream that is not JSON" in x]
    counted = [x for x in lines if "lines that are not JSON (or nest too deeply) from the upstream so far" in x]
    assert len(full) == 1 and [x.split("skipped ")[1].split(" ")[0] for x in counted] == [
        "2", "4", "8", "16", "32", "64", "128", "256"
    ]  # fmt: skip
    assert sum("JSON but not" in x for x in lines) == 3  # 1 in full, then 2 and 4
    assert len(lines) < 20


def test_the_count_is_logged_at_each_power_of_two(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_guard")
    skips = SkipLog("upstream x: ")
    for _ in range(1100):
        skips.skipped("lines that are not JSON", "skipped a line of %d bytes", 3)
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0] == "upstream x: skipped a line of 3 bytes" and len(messages) == 11
    assert messages[-1] == (
        "upstream x: skipped 1,024 lines that are not JSON from the upstream so far (counted again at 2,048)"
    )


NOT_MESSAGES = [
    b'{"jsonrpc":"2.0"}',
    b'{"jsonrpc":"2.0","method":5}',
    b'{"jsonrpc":"2.0","result":{}}',
    b'{"jsonrpc":"2.0","error":{"code":1,"message":"m"}}',
    b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
    b'{"jsonrpc":"2.0","id":true,"result":{}}',
]
"""Objects that say ``"jsonrpc": "2.0"`` but are no JSON-RPC message (red team 37 F4: the first three reached
the client verbatim): no string method, a response without an id, an id JSON-RPC does not allow."""


@pytest.mark.parametrize("command", COMMANDS)
async def test_objects_that_say_jsonrpc_but_are_no_message_are_skipped_and_counted(
    command: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_guard")

    async def odd(upstream: ScriptedUpstream, link: MemoryLink, message: dict[str, Any]) -> None:
        for line in NOT_MESSAGES:
            await link.send(line)
        await link.send(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "after"}}
        await upstream.send(link, note)
        await upstream.answer_call(link, message)

    async with running_guard(command, ScriptedUpstream(on_call=odd)) as client:
        answer = await client.call(name(command, "echo"), {"text": "hi"})
        assert answer["result"]["content"][0]["text"] == "echo ok"
        assert [m["method"] for m in client.notifications] == ["notifications/message"]  # what came after: relayed
        assert [m.get("id") for m in client.seen] == [1, 2]  # initialize and the call: nothing else
    lines = [r.getMessage() for r in caplog.records]
    first = (
        "skipped output from the upstream that is JSON but not a JSON-RPC message (it has neither a method nor an id)"
    )
    assert sum(first in x for x in lines) == 1
    assert sum("outputs that are JSON but not JSON-RPC messages from the upstream so far" in x for x in lines) == 2
    # the error with a null id is JSON-RPC's (section 5: the server could not tell the request): it names no
    # request of the guard's, and is dropped as every answer to an id not in flight is
    assert any("dropped an answer from the upstream to an id the guard has no request open for" in x for x in lines)


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    ("body", "fault"),
    [
        ({}, "it has neither a result nor an error"),
        ({"result": {}, "error": {"code": 1, "message": "m"}}, "it has both a result and an error"),
        ({"error": "boom"}, "its error is not an object with an integer code and a string message"),
        (
            {"error": {"code": "E1", "message": "m"}},
            "its error is not an object with an integer code and a string message",
        ),
    ],
    ids=["neither", "both", "error-text", "error-code-text"],
)
async def test_an_answer_that_is_no_jsonrpc_response_is_answered_with_an_error_in_its_place(
    command: str, body: dict[str, Any], fault: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Red team 37 F4: it names the request, so skipping it would leave that request open forever; the client
    gets -32603 saying what was wrong (the log says it once, then counts)."""
    caplog.set_level(logging.INFO, logger="mcp_guard")

    async def wrong(upstream: ScriptedUpstream, link: MemoryLink, message: dict[str, Any]) -> None:
        await upstream.send(link, {"jsonrpc": "2.0", "id": message["id"], **body})

    async with running_guard(command, ScriptedUpstream(on_call=wrong)) as client:
        answer = await client.call(name(command, "echo"), {"text": "hi"})
    assert answer["error"] == {
        "code": -32603,
        "message": f"mcp-guard: the upstream's answer is not a JSON-RPC response ({fault}); it was dropped",
    }
    assert f"skipped an answer from the upstream that is not a JSON-RPC response ({fault})" in caplog.text
