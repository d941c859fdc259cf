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
