"""``mcp-guard check --host NAME`` (issue 24, item 2): per tool as-is / presentable / not presentable."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_guard.cli import main
from mcp_guard.commands import gateway as commands

TOOLS = [
    {
        "name": "search",
        "inputSchema": {
            "type": "object",
            "properties": {"q": {"type": "string", "maxLength": 50}, "limit": {"type": "integer"}},
            "required": ["q"],
        },
    },
    {
        "name": "plain",
        "inputSchema": {
            "type": "object",
            "properties": {"q": {"type": "string"}},
            "required": ["q"],
            "additionalProperties": False,
        },
    },
    {"name": "fs.read", "inputSchema": {"type": "object", "properties": {"p": {"type": "string"}}}},
    {"name": "fs_read", "inputSchema": {"type": "object", "properties": {"p": {"type": "string"}}}},
    {"name": "map", "inputSchema": {"type": "object", "additionalProperties": {"type": "string"}}},
]


def check(capsys: pytest.CaptureFixture[str], tmp_path: Path, tools: list[Any], *flags: str) -> tuple[int, str]:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": tools}), encoding="utf-8")
    status = main(["check", "--tools-file", str(path), *flags])
    return status, capsys.readouterr().out


def test_each_tool_has_a_host_status_with_what_is_not_shown_and_why_not(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out = check(capsys, tmp_path, TOOLS, "--host", "openai-strict", "--json")
    assert status == 1  # not presentable tools fail --fail-on unsupported (the default)
    host = json.loads(out)["host"]
    by_name = {t["name"]: t for t in host["tools"]}
    assert {n: t["status"] for n, t in by_name.items()} == {
        "search": "presentable",
        "plain": "as-is",
        "fs.read": "not presentable",
        "fs_read": "not presentable",
        "map": "not presentable",
    }
    assert by_name["search"]["not_shown"] == ["/properties/q/maxLength"]
    assert by_name["search"]["schema"]["required"] == ["q", "limit"]
    assert "never merged" in by_name["fs.read"]["reasons"][0]
    assert host["summary"] == {"total": 5, "as-is": 1, "presentable": 1, "not presentable": 3}
    assert json.loads(out)["failed"] is True


def test_the_table_and_the_exit_status_follow_fail_on(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out = check(capsys, tmp_path, TOOLS[:2], "--host", "gemini")
    assert status == 0
    assert "not shown (the guard enforces it): maxLength at /properties/q/maxLength" in out
    assert "2 tools for gemini: 0 as-is, 2 presentable, 0 not presentable" in out
    status, out = check(capsys, tmp_path, TOOLS, "--host", "openai", "--fail-on", "never")
    assert status == 0
    assert "fs.read  presentable      fs_read" not in out  # a collision is never a presentable tool
    assert "not presentable: its name becomes `fs_read`" in out
    status, _ = check(capsys, tmp_path, TOOLS[:2], "--host", "anthropic")
    assert status == 0


def test_an_unknown_host_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as stopped:
        check(capsys, tmp_path, TOOLS, "--host", "gpt")
    assert stopped.value.code == 2


SERVER = """
import json, sys
tools = json.loads(sys.argv[1])
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "t", "version": "1"}}
    elif m["method"] == "tools/list":
        r = {"tools": tools}
    else:
        r = {}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"""


@pytest.mark.e2e
def test_check_config_judges_the_offered_names_for_the_host(tmp_path: Path) -> None:
    server = tmp_path / "server.py"
    server.write_text(SERVER, encoding="utf-8")
    config = tmp_path / "gateway.json"
    servers = {"s": {"command": sys.executable, "args": [str(server), json.dumps(TOOLS[:2])]}}
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    out = io.StringIO()
    assert commands.run_check(str(config), out=out, as_json=True, timeout=30, host="openai-strict") == 0
    host = json.loads(out.getvalue())["host"]
    assert {t["name"]: t["status"] for t in host["tools"]} == {"s__search": "presentable", "s__plain": "as-is"}
    out = io.StringIO()
    assert commands.run_check(str(config), out=out, timeout=30, host="gemini") == 0
    assert "2 tools for gemini: 0 as-is, 2 presentable, 0 not presentable" in out.getvalue()


RED_TEAM_32 = [
    {"name": "req_undeclared", "inputSchema": {"type": "object", "required": ["zz"]}},
    {"name": "root_any", "inputSchema": {"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}}]}},
    {"name": "const_obj", "inputSchema": {"type": "object", "properties": {"c": {"const": {"k": 1}}}}},
]


def test_what_a_new_user_found_the_report_left_out(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Red team 32: Gemini refuses a `required` name it is not shown declared (400 `property is not defined`),
    and `check --host` called it as-is; a merged root `anyOf` and a value shown as JSON text were missing from
    `not_shown` (JSON) and the merge from the text report."""
    _, out = check(capsys, tmp_path, RED_TEAM_32, "--host", "gemini", "--json")
    gemini = {t["name"]: t for t in json.loads(out)["host"]["tools"]}
    assert gemini["req_undeclared"]["status"] == "presentable"
    assert "required" not in gemini["req_undeclared"]["schema"] and "/required" in gemini["req_undeclared"]["not_shown"]
    assert "/anyOf" in gemini["root_any"]["not_shown"]
    _, out = check(capsys, tmp_path, RED_TEAM_32, "--host", "openai-strict", "--json")
    strict = {t["name"]: t for t in json.loads(out)["host"]["tools"]}
    assert strict["const_obj"]["not_shown"] == ["/properties/c"]  # its const is only text in a description
    _, text = check(capsys, tmp_path, RED_TEAM_32, "--host", "openai-strict")
    assert "widening: root anyOf merged into one object at /anyOf (not shown: the guard enforces it)" in text


def test_a_merged_root_null_that_one_alternative_requires_is_not_presentable(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Red team 32: OpenAI strict merges a root ``oneOf`` into one object whose ``a`` is optional, so a ``null``
    for it meant "absent"; but the second alternative requires ``a`` and takes ``null``: ``{"a": null, "k": 2}``,
    valid, was refused. No exact inverse: not presentable (gemini, which keeps nulls, shows it)."""
    tool = {
        "name": "alt",
        "inputSchema": {
            "oneOf": [
                {"type": "object", "properties": {"a": {"type": "string"}, "k": {"const": 1}}, "required": ["k"]},
                {
                    "type": "object",
                    "properties": {"a": {"type": ["string", "null"]}, "k": {"const": 2}},
                    "required": ["k", "a"],
                },
            ]
        },
    }
    _, out = check(capsys, tmp_path, [tool], "--host", "openai-strict", "--json")
    (strict,) = json.loads(out)["host"]["tools"]
    assert strict["status"] == "not presentable" and "no exact inverse" in strict["reasons"][0]
    _, out = check(capsys, tmp_path, [tool], "--host", "gemini", "--json")
    assert json.loads(out)["host"]["tools"][0]["status"] == "presentable"


def test_a_type_or_null_is_said_to_be_shown_as_gemini_shows_it(tmp_path: Path) -> None:
    """Red team 33: ``["string", "null"]`` was said to be "a list of types shown as anyOf" while Gemini is
    shown ``{"type": "string", "nullable": true}``."""
    from mcp_guard.hosts import HOSTS, lower

    schema = {"type": "object", "properties": {"a": {"type": ["string", "null"]}, "b": {"type": ["string", "integer"]}}}
    result = lower(schema, HOSTS["gemini"])
    assert result.schema["properties"]["a"] == {"type": "string", "nullable": True}
    texts = {step.pointer: step.detail for step in result.steps}
    assert texts["/properties/a/type"] == "a type or null shown as nullable"
    assert texts["/properties/b/type"] == "a list of types shown as anyOf"


def test_a_recursive_reference_shown_as_json_text_carries_its_definitions() -> None:
    """Red team 33: Gemini was told to write JSON text matching ``{"$ref": "#/$defs/Node"}`` and never shown
    ``Node``; the text now carries every definition the value refers to (``$defs`` and ``definitions``)."""
    from mcp_guard.hosts import HOSTS, lower

    node = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
        "required": ["name"],
    }
    schema = {"type": "object", "properties": {"root": {"$ref": "#/$defs/Node"}}, "$defs": {"Node": node}}
    shown = lower(schema, HOSTS["gemini"]).schema
    text = shown["properties"]["root"]["properties"]["children"]["items"]["description"]
    described = json.loads(text[text.index("{") : text.rindex("}") + 1])
    assert described == {"$ref": "#/$defs/Node", "$defs": {"Node": node}}


@pytest.mark.e2e
def test_check_config_counts_what_serve_offers_under_present_for(tmp_path: Path) -> None:
    """Red team 34: ``guard.presentFor: gemini`` and a tool gemini cannot be shown (two properties both
    becoming ``x_loc``); ``serve`` left it out of tools/list but ``check --config`` said every tool was
    offered. The config's host is now judged as ``--host`` would be, and ``--host`` overrides it."""
    server = tmp_path / "server.py"
    server.write_text(SERVER, encoding="utf-8")
    clash = {
        "name": "clash",
        "inputSchema": {"type": "object", "properties": {"x-loc": {"type": "string"}, "x_loc": {"type": "integer"}}},
    }
    config = tmp_path / "gateway.json"
    servers = {"s": {"command": sys.executable, "args": [str(server), json.dumps([*TOOLS[:2], clash])]}}
    config.write_text(json.dumps({"mcpServers": servers, "guard": {"presentFor": "gemini"}}), encoding="utf-8")
    out = io.StringIO()
    assert commands.run_check(str(config), out=out, timeout=30, fail_on="never") == 0
    text = out.getvalue()
    assert "2 tool(s) offered to clients (shown to gemini, from guard.presentFor; 1 left out for it)" in text
    assert "3 tools for gemini: 0 as-is, 2 presentable, 1 not presentable" in text
    out = io.StringIO()
    assert commands.run_check(str(config), out=out, as_json=True, timeout=30) == 1  # not presentable: unsupported
    data = json.loads(out.getvalue())
    assert data["exposed"] == ["s__search", "s__plain"]
    assert data["shown_to"] == {"host": "gemini", "from": "guard.presentFor"}
    out = io.StringIO()
    assert commands.run_check(str(config), out=out, timeout=30, host="anthropic") == 0
    assert "3 tool(s) offered to clients (shown to anthropic, from --host)" in out.getvalue()


def test_not_shown_names_the_places_in_the_servers_schema(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A keyword the host is not shown behind an inlined ``$ref`` is named where it is in the server's schema
    (``/$defs/...``, once, as a refusal's schema pointer names it), not at the positions the lowering walked
    (``/properties/a/properties/v/maximum`` is no place in the server's document)."""
    node = {"type": "object", "properties": {"v": {"type": "integer", "maximum": 9}}}
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/node"},
            "b": {"$ref": "#/$defs/node"},
            "c": {"type": "string", "maxLength": 3},
        },
        "$defs": {"node": node},
    }
    _, out = check(capsys, tmp_path, [{"name": "t", "inputSchema": schema}], "--host", "gemini", "--json")
    (tool,) = json.loads(out)["host"]["tools"]
    assert tool["status"] == "presentable"
    assert tool["not_shown"] == ["/$defs/node/properties/v/maximum", "/properties/c/maxLength"]
