"""Log lines a peer can trigger at will are bounded: the first in full, then a count at powers of two (trial T2)."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from mcp_guard.log_counts import LogCounts
from tests.harness import TIMEOUT, MemoryLink, ScriptedUpstream, running_guard

pytestmark = pytest.mark.anyio

CHANGED = "upstream tools changed; schemas will be listed again before the next judgement"


def test_log_counts_logs_the_first_and_each_power_of_two(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_guard")
    counts = LogCounts("upstream lab: ")
    for _ in range(500):
        counts.log(logging.INFO, "thing %s", "x")
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "upstream lab: thing x"
    assert lines[1:] == [
        f"upstream lab: thing x ({n:,} times so far; logged again at {2 * n:,})"
        for n in (2, 4, 8, 16, 32, 64, 128, 256)
    ]


async def _flood(upstream: ScriptedUpstream, link: MemoryLink, message: dict[str, Any]) -> None:
    for _ in range(500):
        await upstream.send(link, {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    await upstream.answer_call(link, message)


async def test_a_burst_of_list_changed_costs_a_few_log_lines_not_one_each(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_guard")
    upstream = ScriptedUpstream(on_call=_flood)
    async with running_guard("wrap", upstream) as client:
        assert "result" in await client.request("tools/list")
        assert "result" in await client.call("echo", {"text": "a"})
        with anyio.fail_after(TIMEOUT):
            while sum(1 for n in client.notifications if n.get("method") == "notifications/tools/list_changed") < 500:
                await anyio.sleep(0.01)
    changed = [r.getMessage() for r in caplog.records if r.getMessage().startswith("upstream tools changed")]
    assert changed[0] == CHANGED
    assert len(changed) == 9  # 1, 2, 4, ... 256


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_unparsable_client_lines_are_logged_bounded_without_their_text(
    command: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Trial T10: a -32700 answer left no log line; now it is logged (1, 2, 4, ...), saying why, never the text."""
    caplog.set_level(logging.INFO, logger="mcp_guard")
    async with running_guard(command, ScriptedUpstream()) as client:
        for _ in range(5):
            await client.send_raw(b'{"id": 1, "SECRET-VALUE"')
        assert "result" in await client.request("ping")
    lines = [r.getMessage() for r in caplog.records if "does not parse" in r.getMessage()]
    assert len(lines) == 3, lines  # the 1st, 2nd and 4th
    assert lines[0].startswith("answered a client line that does not parse with -32700: it is not valid JSON")
    assert "SECRET" not in caplog.text
