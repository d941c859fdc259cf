"""``wrap --present-for`` / ``serve``'s ``guard.presentFor`` (issue 24, item 3), in memory, against both commands:
what the model's host is shown of each tool, and each call mapped back and judged against the server's own schema."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_guard.calls.refusals import NOT_SHOWN
from mcp_guard.hosts import check_schema, host_profile
from tests.harness import ScriptedUpstream, name, running_guard

pytestmark = pytest.mark.anyio

SEARCH = {
    "name": "search",
    "description": "find things",
    "inputSchema": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "maxLength": 20},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            "filters": {"type": "object"},
        },
        "required": ["query"],
    },
}
READ = {
    "name": "fs.read",
    "inputSchema": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": False,
    },
}
UNSUPPORTED = {"name": "weird", "inputSchema": {"type": "object", "$dynamicRef": "#x"}}
TOOLS: list[Any] = [SEARCH, READ, UNSUPPORTED]
COMMANDS = ("wrap", "serve")


def shown_name(command: str, tool: str) -> str:
    """The name the host is shown: ``serve``'s names already fit every host (``s__fs_read``); ``wrap``'s
    dotted name is made valid (``fs_read``)."""
    return name(command, tool).replace(".", "_")


async def listed(client: Any) -> dict[str, dict[str, Any]]:
    result = (await client.request("tools/list"))["result"]
    return {t["name"]: t for t in result["tools"]}


@pytest.mark.parametrize("command", COMMANDS)
async def test_the_host_is_shown_schemas_and_names_it_accepts(command: str) -> None:
    upstream = ScriptedUpstream(TOOLS)
    async with running_guard(command, upstream, host="openai-strict") as client:
        tools = await listed(client)
    search, read = name(command, "search"), shown_name(command, "fs.read")
    assert set(tools) == {search, read}  # the unsupported tool is withheld: the host is never shown it
    profile = host_profile("openai-strict")
    for tool in tools.values():
        assert not check_schema(tool["inputSchema"], profile)  # the host's own checker accepts what it is shown
    schema = tools[search]["inputSchema"]
    assert schema["required"] == ["query", "limit", "filters"] and schema["additionalProperties"] is False
    assert "maxLength" not in schema["properties"]["query"]
    assert tools[search]["description"] == "find things"  # the rest of the entry is the server's
    meta = tools[search]["_meta"]["mcp-guard/schema"]
    assert meta["supported"] is True  # the server's own schema's verdict stays
    assert meta["host"]["host"].startswith("openai-strict@") and meta["host"]["name"] == name(command, "search")
    assert {s["kind"] for s in meta["host"]["lowering"]} >= {"widening", "reshaping", "narrowing"}
    # the name the guard offers the tool by without a host (wrap: the server's; serve: its exposed name)
    assert tools[read]["_meta"]["mcp-guard/schema"]["host"]["name"] == name(command, "fs.read").replace(
        "s__fs.read", "s__fs_read"
    )


@pytest.mark.parametrize("command", COMMANDS)
async def test_nulls_for_optional_fields_reach_the_server_as_absent(command: str) -> None:
    upstream = ScriptedUpstream(TOOLS)
    async with running_guard(command, upstream, host="openai-strict") as client:
        await listed(client)
        answer = await client.call(name(command, "search"), {"query": "q", "limit": None, "filters": None})
        assert answer["result"]["content"][0]["text"] == "search ok"
        answer = await client.call(name(command, "search"), {"query": "q", "limit": 3, "filters": '{"a": [1]}'})
        assert answer["result"]["content"][0]["text"] == "search ok"
        answer = await client.call(shown_name(command, "fs.read"), {"path": "/x"})
        assert answer["result"]["content"][0]["text"] == "fs.read ok"
    sent = [m["params"] for m in upstream.calls()]
    assert sent == [
        {"name": "search", "arguments": {"query": "q"}},
        {"name": "search", "arguments": {"query": "q", "limit": 3, "filters": {"a": [1]}}},
        {"name": "fs.read", "arguments": {"path": "/x"}},  # the server's own name
    ]


@pytest.mark.parametrize("command", COMMANDS)
async def test_a_constraint_the_model_was_not_shown_is_enforced_and_said(command: str) -> None:
    upstream = ScriptedUpstream(TOOLS)
    async with running_guard(command, upstream, host="openai-strict") as client:
        await listed(client)
        answer = await client.call(name(command, "search"), {"query": "q" * 21, "limit": 500, "filters": None})
    result = answer["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert f"(maxLength; {NOT_SHOWN})" in text  # not shown: said so, for the model to correct itself
    assert "≤ 50 (maximum)." in text or "≤ 50 (maximum);" in text  # shown: said as usual
    issues = {i["keyword"]: i for i in result["_meta"]["mcp-guard/rejection"]["issues"]}
    assert issues["maxLength"]["shown"] is False and "shown" not in issues["maximum"]
    assert upstream.calls() == []


@pytest.mark.parametrize("command", COMMANDS)
async def test_calls_the_host_was_not_shown_or_cannot_be_mapped_back_are_refused(command: str) -> None:
    upstream = ScriptedUpstream(TOOLS)
    async with running_guard(command, upstream, host="openai-strict") as client:
        await listed(client)
        bad_json = await client.call(name(command, "search"), {"query": "q", "limit": None, "filters": "{nope"})
        raw = await client.call(name(command, "search"), {"query": "q", "limit": None, "filters": {"a": 1}})
        withheld = await client.call(name(command, "weird"), {})
        own_name = await client.call(name(command, "fs.read"), {"path": "/x"}) if command == "wrap" else None
    rejection = bad_json["result"]["_meta"]["mcp-guard/rejection"]
    assert rejection["kind"] == "validation" and rejection["issues"][0]["instance_path"] == "/filters"
    assert "must be JSON text" in bad_json["result"]["content"][0]["text"]
    # (red team rt39b F1: a raw object where the model was shown a string of JSON text has no inverse)
    assert raw["result"]["isError"] is True, raw
    assert raw["result"]["_meta"]["mcp-guard/rejection"]["issues"][0]["instance_path"] == "/filters"
    assert "must be JSON text" in raw["result"]["content"][0]["text"]
    assert withheld["error"]["code"] == -32602  # never shown: unknown to the model's host
    if own_name is not None:  # wrap: the server's dotted name is not what the host was shown
        assert own_name["error"]["code"] == -32602
    assert upstream.calls() == []


@pytest.mark.parametrize("command", COMMANDS)
async def test_a_call_before_any_listing_is_mapped_by_the_guards_own(command: str) -> None:
    upstream = ScriptedUpstream(TOOLS)
    async with running_guard(command, upstream, host="openai-strict") as client:
        answer = await client.call(shown_name(command, "fs.read"), {"path": "/x"})
    assert answer["result"]["content"][0]["text"] == "fs.read ok"
    assert [m["params"]["name"] for m in upstream.calls()] == ["fs.read"]


@pytest.mark.parametrize("command", COMMANDS)
async def test_without_a_host_nothing_changes(command: str) -> None:
    upstream = ScriptedUpstream(TOOLS)
    async with running_guard(command, upstream) as client:
        tools = await listed(client)
        answer = await client.call(name(command, "search"), {"query": "q", "limit": None})
    assert tools[name(command, "search")]["inputSchema"] == SEARCH["inputSchema"]
    assert "host" not in tools[name(command, "search")]["_meta"]["mcp-guard/schema"]
    assert answer["result"]["_meta"]["mcp-guard/rejection"]["kind"] == "validation"  # a null is a null


@pytest.mark.parametrize("command", COMMANDS)
async def test_a_big_listing_is_shown_and_called_alike(command: str) -> None:
    """Past ``PRESENT_ON_LOOP`` tools ``serve`` presents its view in a worker thread (``Catalog.presented_for``);
    ``wrap`` presents a page in the worker thread with its classification (``ShownNames.prepare``)."""
    many = [{**READ, "name": f"fs.read{i}"} for i in range(600)]
    upstream = ScriptedUpstream(many)
    async with running_guard(command, upstream, host="openai-strict") as client:
        shown: list[str] = []
        cursor = None
        while True:
            result = (await client.request("tools/list", {"cursor": cursor} if cursor else None))["result"]
            shown += [t["name"] for t in result["tools"]]
            cursor = result.get("nextCursor")
            if cursor is None:
                break
        answer = await client.call(shown_name(command, "fs.read599"), {"path": "/x"})
    assert shown == [shown_name(command, f"fs.read{i}") for i in range(600)]
    assert answer["result"]["content"][0]["text"] == "fs.read599 ok"


# --- red team 32 (a new user breaking --present-for) ----------------------------------------------------------

ODD = [
    {"name": "items", "inputSchema": {"type": "object", "properties": {"arr": {"type": "array"}}}},
    {
        "name": "names",
        "inputSchema": {"type": "object", "properties": {"a.b": {"type": "string"}, "n": {"type": "integer"}}},
    },
]


@pytest.mark.parametrize("command", COMMANDS)
async def test_json_text_nested_past_the_recursion_limit_is_refused_and_the_guard_goes_on(
    command: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An array without ``items`` is shown with its elements as JSON text (openai-strict); an element 5,000
    levels deep crashed the guard (RecursionError out of the mapping back). It is refused, and logged."""
    upstream = ScriptedUpstream(ODD)
    deep = "[" * 5000 + "]" * 5000
    async with running_guard(command, upstream, host="openai-strict") as client:
        await listed(client)
        refused = await client.call(name(command, "items"), {"arr": [deep]})
        after = await client.call(name(command, "items"), {"arr": ["[1]"]})
    rejection = refused["result"]["_meta"]["mcp-guard/rejection"]
    assert rejection["kind"] == "validation" and "deeper than the guard" in refused["result"]["content"][0]["text"]
    assert after["result"]["content"][0]["text"] == "items ok"
    assert [m["params"]["arguments"] for m in upstream.calls()] == [{"arr": [[1]]}]
    assert "rejected tools/call" in caplog.text and "not mapped back" in caplog.text  # (it was not logged)


@pytest.mark.parametrize("command", COMMANDS)
async def test_a_property_sent_under_its_server_name_instead_of_its_shown_one_is_refused(command: str) -> None:
    """Gemini is shown ``a.b`` as ``a_b`` in an open object: ``{"a_b": "x", "a.b": "y"}`` reached the server as
    one of the two values, by key order. A server-side name the model was not shown is refused."""
    upstream = ScriptedUpstream(ODD)
    async with running_guard(command, upstream, host="gemini") as client:
        await listed(client)
        both = await client.call(name(command, "names"), {"a_b": "x", "a.b": "y"})
        own = await client.call(name(command, "names"), {"a.b": "y"})
        shown = await client.call(name(command, "names"), {"a_b": "x", "n": 1})
    for refused in (both, own):
        assert refused["result"]["isError"] is True
        assert "is not a name your model was shown" in refused["result"]["content"][0]["text"]
    assert shown["result"]["content"][0]["text"] == "names ok"
    assert [m["params"]["arguments"] for m in upstream.calls()] == [{"a.b": "x", "n": 1}]
