"""``tool_table.ToolTable``: what a listing leaves in the table."""

from __future__ import annotations

import gc
import logging
from typing import Any

import pytest

from mcp_guard.calls import tool_table
from mcp_guard.calls.tool_table import ToolTable


def test_a_relisted_identical_schema_reuses_its_validator_and_a_changed_one_does_not() -> None:
    table = ToolTable()

    def listing(minimum: Any) -> list[Any]:
        schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": minimum}}}
        return [{"name": "t", "inputSchema": schema}]

    table.replace(listing(1))
    first = table.get("t")
    table.replace(listing(1))
    again = table.get("t")
    assert first is not None and again is not None and again.compiled is first.compiled
    table.replace(listing(True))  # equal to 1 in Python, a different schema in JSON (malformed here)
    changed = table.get("t")
    assert changed is not None and changed.compiled is not first.compiled and not changed.supported
    table.replace(listing(1.5))
    relisted = table.get("t")
    assert relisted is not None and relisted.supported and not relisted.compiled.check({"n": 1}).ok


def _page(*names: str) -> dict[str, Any]:
    return {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names]}


def _supported(result: Any) -> dict[str, bool]:
    return {t["name"]: t["_meta"]["mcp-guard/schema"]["supported"] for t in result["tools"]}


def test_a_page_fetched_again_is_not_a_duplicate_of_itself() -> None:
    """A client that fetches the second page twice (or only it, after list_changed) sees its tools supported."""
    table = ToolTable()
    table.annotate({**_page("a"), "nextCursor": "p2"}, cache=True, first_page=True)
    assert _supported(table.annotate(_page("b"), cache=True, cursor="p2")) == {"b": True}
    assert _supported(table.annotate(_page("b"), cache=True, cursor="p2")) == {"b": True}
    entry = table.get("b")
    assert entry is not None and entry.supported
    hidden = ToolTable(hide_unsupported=True)
    hidden.annotate({**_page("a"), "nextCursor": "p2"}, cache=True, first_page=True)
    hidden.annotate(_page("b"), cache=True, cursor="p2")
    assert [t["name"] for t in hidden.annotate(_page("b"), cache=True, cursor="p2")["tools"]] == ["b"]


def test_a_name_on_two_pages_of_one_pass_is_still_refused() -> None:
    table = ToolTable()
    table.annotate({**_page("a"), "nextCursor": "p2"}, cache=True, first_page=True)
    assert _supported(table.annotate(_page("a", "b"), cache=True, cursor="p2")) == {"a": False, "b": True}
    assert _supported(table.annotate(_page("b", "b"), cache=True, cursor="p3")) == {"b": False}


def test_an_empty_name_is_malformed_as_check_says_and_its_calls_are_refused() -> None:
    """F12: `check` calls a tool named "" malformed; the table lists it unsupported and holds a refusing entry."""
    table = ToolTable()
    shown = table.annotate(_page("", "ok"), cache=True, first_page=True)
    verdict = shown["tools"][0]["_meta"]["mcp-guard/schema"]
    assert verdict["supported"] is False and verdict["issues"][0]["kind"] == "validation"
    entry = table.get("")
    assert entry is not None and not entry.supported
    hidden = ToolTable(hide_unsupported=True)
    assert [t["name"] for t in hidden.annotate(_page("", "ok"), cache=True, first_page=True)["tools"]] == ["ok"]


def test_hiding_leaves_out_tools_without_a_string_name_and_the_counts_line_counts_every_entry(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """F5: nameless and non-string-named tools (and non-objects) are hidden; every listed entry is counted."""
    tools: list[Any] = [
        {"inputSchema": {"type": "object"}},
        {"name": 5, "inputSchema": {"type": "object"}},
        "not a tool",
        {"name": "", "inputSchema": {"type": "object"}},
        {"name": "dup", "inputSchema": {"type": "object"}},
        {"name": "dup", "inputSchema": {"type": "object"}},
        {"name": "big", "inputSchema": {"type": "object", "if": {}}},
        {"name": "ok", "inputSchema": {"type": "object"}},
    ]
    table = ToolTable("strict", hide_unsupported=True, label="")
    with caplog.at_level(logging.INFO, logger="mcp_guard"):
        shown = table.annotate({"tools": tools}, cache=True, first_page=True)
    assert [t["name"] for t in shown["tools"]] == ["ok"]
    line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("tools: "))
    assert line.startswith("tools: 1 supported, 3 unsupported, 4 malformed (")
    assert line.count("dup") == 1 and "dup ×2" in line and "(no name)" in line and "''" in line  # each name once (T10)


@pytest.mark.parametrize(
    ("outputs", "line"),
    [
        ("enforce", "tools: 1 supported, 1 unsupported, 1 malformed (odd, broken)"),
        ("report", "tools: 3 supported, 0 unsupported, 0 malformed"),
    ],
)
def test_the_counts_line_counts_a_tool_whose_output_schema_enforce_cannot_check(
    caplog: pytest.LogCaptureFixture, outputs: str, line: str
) -> None:
    """Trial T1: under ``outputs="enforce"`` every call of a tool with an unsupported (or malformed)
    ``outputSchema`` is refused, so the start-up line must not count it supported; under ``report`` it is."""
    tools: list[Any] = [
        {"name": "ok", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}},
        {"name": "odd", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object", "if": {}}},
        {"name": "broken", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object", "required": 3}},
    ]
    table = ToolTable("strict", label="", outputs=outputs)
    with caplog.at_level(logging.INFO, logger="mcp_guard"):
        table.annotate({"tools": tools}, cache=True, first_page=True)
    assert [r.getMessage() for r in caplog.records if r.getMessage().startswith("tools: ")] == [line]


def test_tools_sharing_a_schema_share_one_verdict_and_others_get_their_own() -> None:
    """Issue 14 item 5: a verdict is built once per distinct compiled schema pair of a listing; it is the same value."""
    table = ToolTable("strict", label=None)
    same = {"type": "object", "properties": {"a": {"type": "string"}}}
    odd = {"type": "object", "properties": {"a": {"type": "string", "format": "color"}}}
    out = table.annotate(
        {
            "tools": [
                {"name": "a", "inputSchema": same},
                {"name": "b", "inputSchema": dict(same)},
                {"name": "c", "inputSchema": odd},
                {"name": "d", "inputSchema": same, "outputSchema": odd},
            ]
        },
        cache=True,
        first_page=True,
    )
    verdicts = [t["_meta"]["mcp-guard/schema"] for t in out["tools"]]
    assert verdicts[0] is verdicts[1] and verdicts[0] == {"supported": True, "issues": []}
    assert verdicts[2]["supported"] is False and verdicts[2]["issues"]
    assert verdicts[3]["supported"] is True and verdicts[3]["output"] == verdicts[2]


def test_annotating_a_listing_pauses_the_collector_and_restores_it() -> None:
    """Issue 14 item 5: a listing's annotation makes many acyclic objects; the collector is paused meanwhile."""
    seen: list[bool] = []
    table = ToolTable("extended", label=None)
    real = tool_table.listed_status

    def spy(verdict: Any) -> Any:
        seen.append(gc.isenabled())
        return real(verdict)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tool_table, "listed_status", spy)
        table.annotate({"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}, cache=True, first_page=True)
    assert seen == [False] and gc.isenabled()
