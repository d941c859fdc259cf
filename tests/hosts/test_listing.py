"""One listing shown to a host, each call mapped back (the API the session wiring calls, issue 24 item 3)."""

from __future__ import annotations

import pytest

from mcp_guard.core import compile as compile_schema
from mcp_guard.hosts import HOSTS, BackError, present_tools

TOOLS = [
    {
        "name": "fs.search",
        "description": "search files",
        "inputSchema": {
            "type": "object",
            "properties": {
                "q": {"type": "string"},
                "limit": {"type": "integer", "maximum": 100},
                "meta": {"type": "object"},
            },
            "required": ["q"],
        },
    },
    {"name": "ok", "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False, "required": []}},
    {"name": "a.b", "inputSchema": {"type": "object"}},
    {"name": "a_b", "inputSchema": {"type": "object"}},
    {"name": "bad", "inputSchema": {"type": "object", "properties": {"x": {"type": "strng"}}}},
]


def test_the_listing_shows_valid_names_and_lowered_schemas_and_withholds_the_rest() -> None:
    supported = {t["name"]: compile_schema(t["inputSchema"]).supported for t in TOOLS}
    shown = present_tools(TOOLS, HOSTS["openai-strict"], supported=supported.__getitem__)
    assert [t["name"] for t in shown.tools] == ["fs_search", "ok"]
    assert shown.tools[0]["description"] == "search files"  # the rest of the entry is the server's
    assert shown.tools[1]["inputSchema"] is TOOLS[1]["inputSchema"]  # as-is: the server's own schema
    assert set(shown.withheld) == {"a.b", "a_b", "bad"}
    name, arguments = shown.call("fs_search", {"q": "x", "limit": None, "meta": '{"k": [1]}'})
    assert (name, arguments) == ("fs.search", {"q": "x", "meta": {"k": [1]}})
    # judged against the server's own schema, exactly as without a host
    assert compile_schema(TOOLS[0]["inputSchema"]).check({"q": "x", "limit": 101}).ok is False
    with pytest.raises(BackError) as refused:
        shown.call("fs_search", {"q": "x", "limit": None, "meta": "{"})
    assert refused.value.pointer == "/meta"
    with pytest.raises(KeyError):
        shown.call("fs.search", {})  # only shown names are called
    tool = shown.shown["fs_search"]
    assert tool.meta()["host"] == "openai-strict@2026-12" and tool.meta()["name"] == "fs.search"
    assert tool.not_shown_at("/properties/limit/maximum") is False  # strict shows maximum
    assert shown.call("ok", {}) == ("ok", {})


def test_not_shown_constraints_are_known_for_the_refusal_text() -> None:
    shown = present_tools(TOOLS[:1], HOSTS["gemini"])
    tool = shown.shown["fs.search"]  # Gemini takes dots in names
    assert tool.not_shown_at("/properties/limit/maximum")
    assert not tool.not_shown_at("/properties/q/type")


def test_places_inside_json_text_and_behind_a_ref_are_known_not_shown() -> None:
    """A recursive `$ref` shown to Gemini as JSON text: findings in it point into `$defs`, so the instance
    pointer tells (`json_text_at`); a keyword dropped in an inlined `$ref` is known by its `$defs` place."""
    node = {
        "type": "object",
        "properties": {
            "v": {"type": "integer", "maximum": 9},
            "kids": {"type": "array", "items": {"$ref": "#/$defs/n"}},
        },
    }
    schema = {
        "type": "object",
        "properties": {
            "tree": {"$ref": "#/$defs/n"},
            "a-b": {"anyOf": [{"type": "array", "items": {}}, {"type": "integer"}]},
        },
        "$defs": {"n": node},
    }
    tool = present_tools([{"name": "t", "inputSchema": schema}], HOSTS["gemini"]).shown["t"]
    assert tool.lowered is not None and tool.lowered.located == ("/$defs/n/properties/v/maximum",)
    assert tool.json_text_at("/tree/kids/3/kids/0/v") == ("/tree/kids/3", "/kids/0/v")
    assert tool.json_text_at("/tree/kids/3") == ("/tree/kids/3", "")
    assert tool.json_text_at("/a-b/2/x") == ("/a_b/2", "/x")  # an array branch of a choice; the shown name
    for outside in ("", "/tree", "/tree/kids", "/tree/v", "/a-b", "/zz/0", "/tree/kids/x"):
        assert tool.json_text_at(outside) is None, outside
    assert tool.not_shown_at("/$defs/n/properties/v/type", "/tree/kids/0/v")
    assert not tool.not_shown_at("/$defs/n/properties/v/type", "/tree/v")
    assert tool.not_shown_at("/$defs/n/properties/v/maximum", "/tree/v")
    assert tool.not_shown_at("/$defs/n/properties/v/maximum")


@pytest.mark.parametrize("host", ["openai-strict", "gemini", "anthropic"])
def test_the_callers_keys_give_the_same_presentation(host: str) -> None:
    """``present_tools(keys=...)`` (the classification's exact keys, ``marshal`` format 2, by ``id()`` of the
    schema; some missing or None: keyed there, format 4) shows what it shows without them (issue 24 item 6)."""
    import json
    import marshal

    tools = json.loads(json.dumps(TOOLS * 3))  # equal schemas, distinct objects
    for i, tool in enumerate(tools):
        tool["name"] = f"{tool['name']}{i}"
    keys: dict[int, bytes | None] = {id(t["inputSchema"]): marshal.dumps(t["inputSchema"], 2) for t in tools[::2]}
    keys[id(tools[1]["inputSchema"])] = None
    plain = present_tools(tools, HOSTS[host])
    keyed = present_tools(tools, HOSTS[host], keys=keys)
    assert keyed.tools == plain.tools
    assert keyed.withheld == plain.withheld
    assert {n: (t.name, t.lowered and t.lowered.schema) for n, t in keyed.shown.items()} == {
        n: (t.name, t.lowered and t.lowered.schema) for n, t in plain.shown.items()
    }
