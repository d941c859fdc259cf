"""``_meta["mcp-guard/schema"]`` on a listed tool carries the profile's notes (E4), in ``wrap`` and ``serve``.

Under ``extended`` a ``format`` that 2020-12 does not define is an annotation, checked by nothing;
``check --json`` said so in its notes, and now so does the listing a client sees.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import ScriptedUpstream, name, running_guard

pytestmark = pytest.mark.anyio

COLOR = {"type": "object", "properties": {"c": {"type": "string", "format": "color"}, "d": {"format": "date"}}}


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_format_notes_reach_the_listed_tools_meta(command: str) -> None:
    tools: list[Any] = [{"name": "paint", "inputSchema": COLOR}, {"name": "plain", "inputSchema": {"type": "object"}}]
    async with running_guard(command, ScriptedUpstream(tools=tools)) as client:
        listed = await client.request("tools/list")
        verdicts = {t["name"]: t["_meta"]["mcp-guard/schema"] for t in listed["result"]["tools"]}
        paint, plain = verdicts[name(command, "paint")], verdicts[name(command, "plain")]
        assert paint["supported"] is True and paint["issues"] == []
        [note] = paint["notes"]
        assert note["note"] == "annotation" and note["schema_path"] == "/properties/c/format"
        assert "color" in note["message"]
        assert "notes" not in plain  # no notes: the verdict keeps its two keys
        forwarded = await client.call(name(command, "paint"), {"c": "not checked", "d": "2026-12-01"})
        assert forwarded["result"]["content"][0]["text"] == "paint ok"


# `_meta` inside a schema is the server's data (here an instance in `const`), not the guard's namespace.
PINNED = {"type": "object", "properties": {"opts": {"const": {"_meta": {"mcp-guard/x": 1}}}}, "required": ["opts"]}


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_a_schema_is_listed_and_judged_as_the_server_sent_it_guard_keys_and_all(command: str) -> None:
    """Issue 14 item 5: only `_meta` namespaces lose `mcp-guard/` keys; the schema the client sees, and the
    one its calls are judged by, is the server's (it once lost `mcp-guard/x` and judged `{"_meta": {}}`)."""
    tools: list[Any] = [{"name": "pin", "inputSchema": PINNED, "_meta": {"mcp-guard/schema": "forged", "own": 1}}]
    upstream = ScriptedUpstream(tools=tools)
    async with running_guard(command, upstream) as client:
        listed = await client.request("tools/list")
        [tool] = listed["result"]["tools"]
        assert tool["inputSchema"] == PINNED
        assert tool["_meta"]["own"] == 1 and tool["_meta"]["mcp-guard/schema"]["supported"] is True
        refused = await client.call(name(command, "pin"), {"opts": {"_meta": {}}})
        assert refused["result"]["isError"] is True and not upstream.calls()
        forwarded = await client.call(name(command, "pin"), {"opts": {"_meta": {"mcp-guard/x": 1}}})
        assert forwarded["result"].get("isError") is not True and len(upstream.calls()) == 1
