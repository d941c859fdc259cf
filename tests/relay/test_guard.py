"""``guard.ToolTable``: what a listing leaves in the table."""

from __future__ import annotations

from typing import Any

from mcp_guard.relay.guard import ToolTable


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
