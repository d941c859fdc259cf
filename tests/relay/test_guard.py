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
    assert table.judge({"name": "t", "arguments": {"n": 1}}).forward is False
