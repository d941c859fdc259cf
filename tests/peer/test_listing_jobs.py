"""A listing of 8 KiB or more is a job of the peer (``peer.offload.upstream_job``): its schemas are classified,
and a schema of thousands of values gets its validator, in the worker thread (issue 25 items 1 and 4).

Before, a listing under 64 KiB (an ``anyOf`` of 1,000 branches fits in 45 KB) was classified on the loop
and its validator made by the first call to the tool, on the loop too: under load a ``ping`` waited 0.5 s
(1 s before the branches shared their code). ``wrap``'s relay over a scripted upstream here; ``serve``
prepares its listings of more than 4,096 values off the loop already (``Catalog.prepare``).
"""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest

from mcp_guard.calls.tool_table import ToolTable
from mcp_guard.core import compiler
from mcp_guard.peer.offload import LISTING_MIN, OFFLOAD_MIN, upstream_job
from mcp_guard.sessions.relay import wrap_session
from tests.harness import Client, ScriptedUpstream

pytestmark = pytest.mark.anyio

BRANCHES = [{"properties": {f"a{i}": {"type": "string"}}} for i in range(1000)]
ANY_OF = {"name": "any_of", "inputSchema": {"type": "object", "anyOf": BRANCHES, "unevaluatedProperties": False}}


def test_which_upstream_lines_are_jobs() -> None:
    listing = b'{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{}}]}}'
    assert not upstream_job(listing)  # small: on the loop
    padded = listing[:-3] + b',"p":"' + b"x" * LISTING_MIN + b'"}}}'
    assert upstream_job(padded) and upstream_job(padded.decode())
    other = b'{"jsonrpc":"2.0","id":1,"result":{"content":"' + b"x" * LISTING_MIN + b'"}}'
    assert not upstream_job(other) and not upstream_job(other.decode())  # no schema in it
    assert upstream_job(b"x" * OFFLOAD_MIN)


async def test_a_mid_sized_listing_makes_its_big_validator_off_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[bool] = []
    generate = compiler._generate

    def noting(root: Any, profile: str) -> Any:
        threads.append(threading.current_thread() is not threading.main_thread())
        return generate(root, profile)

    monkeypatch.setattr(compiler, "_generate", noting)
    client = Client()
    relay = wrap_session(
        client.guard_link, ScriptedUpstream([ANY_OF]).connect, ToolTable("extended"), drain_timeout=0.2
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(relay.run)
        await client.initialize()
        listed = await client.request("tools/list")
        assert listed["result"]["tools"][0]["_meta"]["mcp-guard/schema"]["supported"] is True
        assert threads == [True]  # made with the listing, in the worker thread
        assert "isError" not in (await client.call("any_of", {"a7": "x"}))["result"]
        assert (await client.call("any_of", {"zz": 1}))["result"]["isError"] is True
        assert threads == [True]  # not again by the calls
        await client.link.close_send()
        tg.cancel_scope.deadline = anyio.current_time() + 10
