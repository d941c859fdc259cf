"""Skipped upstream output is said once, then counted (trial F15: one log line per non-JSON line)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcp_guard.peer.connection import SkipLog
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
