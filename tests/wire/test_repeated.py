"""Repeated keys in an upstream's tool schemas make the tool unsupported, in ``wrap`` and ``serve``.

``wire.repeated`` notes them while the upstream decoder parses a listing; ``ToolTable.annotate``
(both commands) refuses such a tool with ``unsupported_capability``, keyword ``json``, the pointer
of the object and the key in its message.
"""

from __future__ import annotations

import gc
import json
from typing import Any

import pytest

from mcp_guard.wire import repeated
from mcp_guard.wire.jsonrpc import loads_upstream
from tests.harness import MemoryLink, ScriptedUpstream, name, running_guard

pytestmark = pytest.mark.anyio

TWICE = "DUPLICATED-KEY"
"""Stands for a key written a second time: the scripted upstream writes the key before it instead."""


def listing_line(tools: list[Any]) -> bytes:
    """A ``tools/list`` response whose ``TWICE`` keys repeat the key written just before them."""
    text = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}})
    out, at = [], 0
    while (i := text.find(f'"{TWICE}"', at)) >= 0:
        before = text.rfind('"', 0, text.rfind('":', 0, i))  # the key before: `"type": "string", "TWICE"`
        key = text[before : text.index('"', before + 1) + 1]
        out.append(text[at:i] + key)
        at = i + len(TWICE) + 2
    out.append(text[at:])
    return "".join(out).encode()


def tool(schema: dict[str, Any], tool_name: str = "t") -> dict[str, Any]:
    return {"name": tool_name, "inputSchema": schema}


def test_the_line_builder_repeats_the_key() -> None:
    line = listing_line([tool({"type": "object", TWICE: "array"})])
    assert b'"inputSchema": {"type": "object", "type": "array"}' in line


@pytest.mark.parametrize(
    ("schema", "where", "key"),
    [
        ({"type": "object", TWICE: "array"}, "", "type"),
        ({"type": "object", "properties": {"a": {"type": "string", TWICE: "integer"}}}, "/properties/a", "type"),
        ({"type": "object", "properties": {"a": {}, TWICE: {}}}, "/properties", "a"),
        ({"anyOf": [{"const": 1}, {"const": 2, TWICE: 3}]}, "/anyOf/1", "const"),
        ({"properties": {"x/y": {"minimum": 1, TWICE: 2}}}, "/properties/x~1y", "minimum"),
    ],
)
def test_the_decoder_notes_the_object_and_the_key(schema: dict[str, Any], where: str, key: str) -> None:
    message = loads_upstream(listing_line([tool({"type": "object"}, "clean"), tool(schema)]))
    clean, dup = message["result"]["tools"]
    assert repeated.repeated_key(dup["inputSchema"]) == (where, key)
    assert repeated.repeated_key(clean["inputSchema"]) is None
    assert repeated.repeated_key(json.loads(json.dumps(dup["inputSchema"]))) is None  # an equal copy: not it


def test_the_tools_own_object_repeating_input_schema_counts() -> None:
    line = (
        b'{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"string"},"inputSchema":{}}]}}'
    )
    message = loads_upstream(line)
    schema = message["result"]["tools"][0]["inputSchema"]
    assert schema == {}  # the value is as Python's json keeps it: the last
    assert repeated.repeated_key(schema) == ("", "inputSchema")


def test_other_messages_are_parsed_as_before() -> None:
    line = b'{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"a":1,"a":2}}}'
    assert loads_upstream(line)["result"]["structuredContent"] == {"a": 2}


class RepeatingUpstream(ScriptedUpstream):
    """A scripted upstream that lists :data:`TWICE` keys as repeated keys."""

    @staticmethod
    async def send(link: MemoryLink, message: dict[str, Any]) -> None:
        result = message.get("result")
        if type(result) is dict and "tools" in result:
            line = listing_line(result["tools"]).replace(b'"id": 1', f'"id": {json.dumps(message["id"])}'.encode(), 1)
            await link.send(line)
            return
        await ScriptedUpstream.send(link, message)


SCHEMA = {"type": "object", "properties": {"n": {"type": "string", TWICE: "integer"}}}


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_a_listed_tool_with_a_repeated_key_is_unsupported_and_refused(command: str) -> None:
    upstream = RepeatingUpstream(tools=[tool(SCHEMA, "dup"), tool({"type": "object"}, "clean")])
    async with running_guard(command, upstream) as client:
        listed = await client.request("tools/list")
        verdicts = {t["name"]: t["_meta"]["mcp-guard/schema"] for t in listed["result"]["tools"]}
        dup = verdicts[name(command, "dup")]
        assert dup["supported"] is False
        [issue] = dup["issues"]
        assert (issue["kind"], issue["keyword"], issue["schema_path"]) == (
            "unsupported_capability",
            "json",
            "/properties/n",
        )
        assert 'repeats the key "type"' in issue["message"]
        assert verdicts[name(command, "clean")]["supported"] is True
        refused = await client.call(name(command, "dup"), {"n": 1})
        assert refused["result"]["isError"] is True
        assert refused["result"]["_meta"]["mcp-guard/rejection"]["kind"] == "unsupported_capability"
        forwarded = await client.call(name(command, "clean"), {})
        assert forwarded["result"]["content"][0]["text"] == "clean ok"
    assert [c["params"]["name"] for c in upstream.calls()] == ["clean"]


def test_a_listings_parse_pauses_the_collector_and_restores_it_as_it_was() -> None:
    """Issue 14 item 5: parsed JSON holds no cycles; the collector's passes over a big listing's objects are spared."""
    seen: list[bool] = []

    def parse_float(text: str) -> float:
        seen.append(gc.isenabled())
        return float(text)

    text = '{"tools":[{"name":"t","inputSchema":{"maximum":1.5}}]}'
    raw = json.JSONDecoder(parse_float=parse_float).raw_decode
    assert gc.isenabled()
    repeated.decode(text, parse_float, raw, json.loads)
    assert seen == [False] and gc.isenabled()
    with pytest.raises(ValueError):
        repeated.decode(text[:-1], parse_float, raw, json.loads)  # the pause ends on an error too
    assert gc.isenabled()
    gc.disable()
    try:
        with repeated.collector_paused():
            pass
        assert not gc.isenabled()  # a pause inside a pause leaves it paused
    finally:
        gc.enable()
