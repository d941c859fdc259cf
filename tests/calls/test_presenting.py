"""``calls.presenting``: a listing shown to a model host, made ahead in the worker thread or on the loop alike."""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

import pytest

from mcp_guard.calls import presenting
from mcp_guard.calls.tool_table import ToolTable
from mcp_guard.hosts import host_profile
from tests.datasets import TOOL_CORPUS

needs_corpus = pytest.mark.skipif(not TOOL_CORPUS.is_dir(), reason=f"the tool corpus is absent ({TOOL_CORPUS})")


def corpus_listing() -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    for path in sorted(TOOL_CORPUS.glob("*.json")):
        tools += json.loads(path.read_text(encoding="utf-8"))["tools"]
    tools.append(copy.deepcopy(tools[0]))  # listed twice: refused (and so withheld) by the guard's verdict
    tools.append({"name": "no schema"})
    return tools


def shown_page(host: str, listing: list[dict[str, Any]], *, ahead: bool) -> list[Any]:
    table = ToolTable(host=host_profile(host))
    result = {"tools": listing}
    if ahead:
        table.prepare(result)  # (what the worker thread does for a listing answered to the client)
    shown: list[Any] = table.annotate(result, cache=True, first_page=True)["tools"]
    return shown


@needs_corpus
@pytest.mark.parametrize("host", ["openai-strict", "gemini", "openai"])
def test_a_page_made_ahead_is_the_page_made_on_the_loop(host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    listing = corpus_listing()
    on_loop = shown_page(host, listing, ahead=False)
    calls: list[str] = []
    real = presenting.present_tools

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append("lowered")
        return real(*args, **kwargs)

    monkeypatch.setattr(presenting, "present_tools", counted)
    ahead = shown_page(host, listing, ahead=True)
    assert json.dumps(ahead, sort_keys=True) == json.dumps(on_loop, sort_keys=True)
    assert calls == ["lowered"]  # once, in prepare: annotate (the loop) only copied the entries
    assert listing[0]["name"] not in {t["name"] for t in ahead}  # its name is listed twice: withheld


def test_a_page_that_is_not_the_prepared_one_is_presented_anew() -> None:
    table = ToolTable(host=host_profile("openai-strict"))
    first = {"name": "a.b", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}
    table.prepare({"tools": [first]})
    other = {**first, "inputSchema": {"type": "object", "properties": {"y": {"type": "integer"}}}}
    (shown,) = table.annotate({"tools": [other]}, cache=True, first_page=True)["tools"]
    assert shown["name"] == "a_b" and set(shown["inputSchema"]["properties"]) == {"y"}
    assert table.listed("a_b") and not table.listed("a.b")


def test_a_fault_of_the_lowering_shows_nothing(monkeypatch: pytest.MonkeyPatch, caplog: Any) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("bug")

    monkeypatch.setattr(presenting, "present_tools", broken)
    tool = {"name": "t", "inputSchema": {"type": "object"}, "_meta": {"mcp-guard/schema": {"supported": True}}}
    with caplog.at_level(logging.ERROR):
        out = presenting.presented([tool], host_profile("gemini"))
    assert out.tools == [] and out.shown == {} and out.withheld == {"t": "internal error"}
    assert "internal error while lowering" in caplog.text


def _reference_map_call(message: dict[str, Any], shown: Any) -> Any:
    """What ``map_call`` answers, through ``called`` alone (its reference: no fast path)."""
    params = message["params"]
    mapped = presenting.called(params, shown, modern=False)
    if mapped is None or isinstance(mapped, dict):
        return mapped
    return (message if mapped.params is params else {**message, "params": mapped.params}), mapped.shown


@needs_corpus
@pytest.mark.parametrize("host", ["openai-strict", "gemini", "openai", "anthropic"])
def test_map_call_maps_as_called_does(host: str) -> None:
    """``map_call``'s fast path gives what ``called`` gives (the same request object where nothing changes),
    for every corpus tool shown, its arguments as the model sends them, with nulls, with texts that are not
    JSON, without ``arguments``; a call it cannot map goes to ``called``, which refuses it."""
    from mcp_guard.calls.pipeline import Pipeline
    from mcp_guard.hosts import present_tools

    tools = [t for t in corpus_listing() if "inputSchema" in t][:-1]
    presentation = present_tools(tools, host_profile(host))
    pipeline = Pipeline(enabled={"schema"})
    compared = refused = 0
    for tool in tools:
        entry = presentation.shown.get(tool["name"]) or next(
            (t for t in presentation.shown.values() if t.name == tool["name"]), None
        )
        if entry is None:
            continue
        schema = tool["inputSchema"]
        args = {r: "x" for r in schema.get("required", []) if isinstance(r, str)}
        shown_args = args if entry.lowered is None else entry.lowered.present(args)
        variants: list[Any] = [shown_args, {}, {k: None for k in shown_args}, [1], "x"]
        variants += [{**shown_args, k: "{not json"} for k in list(shown_args)[:3]]
        for arguments in variants:
            for params in ({"name": entry.shown_name, "arguments": arguments}, {"name": entry.shown_name}):
                message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
                got = presenting.map_call(pipeline, message, presentation.shown)
                expected = _reference_map_call(message, presentation.shown)
                if isinstance(expected, dict):  # refused: map_call answers with the refusal as a response
                    assert isinstance(got, dict) and got["result"] == expected
                    refused += 1
                    continue
                assert isinstance(got, tuple)
                assert got[1] is expected[1]
                assert json.dumps(got[0]) == json.dumps(expected[0])  # equal, key order included
                assert (got[0] is message) == (expected[0] is message)
                assert (got[0]["params"] is params) == (expected[0]["params"] is params)
                compared += 1
    assert compared > 1000
    if host in ("openai-strict", "gemini"):
        assert refused > 0


def test_a_refusal_for_gemini_names_the_properties_as_the_model_was_shown_them() -> None:
    """Gemini is shown `x_loc` for the server's `x-loc`: the refusal's text says `/x_loc` (the JSON keeps the
    server's pointers), below a renamed object too, and an unknown key's hint offers the shown names."""
    from mcp_guard.calls.call import Call, Route
    from mcp_guard.calls.pipeline import WRAP_STEPS, Pipeline
    from mcp_guard.calls.policy import ToolPolicy
    from mcp_guard.core import compile as compile_schema
    from mcp_guard.hosts import present_tools

    schema = {
        "type": "object",
        "properties": {
            "x-loc": {"type": "string"},
            "a.b": {"type": "object", "properties": {"c-d": {"type": "integer"}}, "additionalProperties": False},
        },
        "required": ["x-loc"],
    }
    presentation = present_tools([{"name": "t x", "inputSchema": schema}], host_profile("gemini"))
    pipeline = Pipeline(enabled=WRAP_STEPS)
    route = Route("t x", "", "t x", compile_schema(schema), ToolPolicy("allow", "", "reject", None, None))
    texts: list[str] = []
    paths: list[list[str]] = []
    for arguments in ({"a_b": {"c_d": "no"}}, {"x_loc": "v", "a_b": {"c_dd": 1}}):
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t_x", "arguments": arguments}}
        mapped = presenting.map_call(pipeline, message, presentation.shown)
        assert isinstance(mapped, tuple)
        rejection = pipeline.check(Call(route, mapped[0]["params"]["arguments"], shown=mapped[1]))
        assert rejection is not None and rejection.result is not None
        texts.append(rejection.result["content"][0]["text"])
        issues = rejection.result["_meta"]["mcp-guard/rejection"]["issues"]
        paths.append([i["instance_path"] for i in issues])
    assert "`t_x`" in texts[0] and "`/x_loc` is required" in texts[0] and "`/a_b/c_d` must be an integer" in texts[0]
    assert "x-loc" not in texts[0] and "a.b" not in texts[0]
    assert paths == [["", "/a.b/c-d"], ["/a.b/c_dd"]]  # the JSON: the server's pointers
    assert "`/a_b/c_dd` is not allowed" in texts[1] and "did you mean `c_d`?" in texts[1]
