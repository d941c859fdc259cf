"""``guard.schema_key``: the tool table's cache key is exact, and what it proves is true (issue 14 item 5)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from mcp_guard.calls.tool_table import ToolTable, schema_key
from mcp_guard.core.json_values import Inexact
from mcp_guard.wire.jsonrpc import loads_upstream


def test_values_python_calls_equal_but_json_does_not_have_different_keys() -> None:
    variants: list[Any] = [1, 1.0, True, 0, 0.0, -0.0, False, None, "1", [1], {"a": 1}]
    keys = [schema_key({"const": v}) for v in variants]
    assert None not in keys
    assert len(set(keys)) == len(variants)
    assert schema_key({"a": 1, "b": 2}) != schema_key({"b": 2, "a": 1})  # key order, as the JSON text has it


def test_the_key_depends_on_the_value_alone() -> None:
    """Shared, interned or fresh string objects, the same value: the same key (marshal format 2 has no
    back-references), so a schema listed again, parsed anew, finds its validator."""
    fresh = "".join(["ty", "pe"])
    shared = {"type": "object", "properties": {"type": {"type": "string"}}}
    unshared = {fresh: "object", "".join(["prop", "erties"]): {"".join(["ty", "pe"]): {sys.intern(fresh): "string"}}}
    assert schema_key(shared) == schema_key(unshared)


def test_a_schema_listed_again_in_a_new_parse_reuses_its_validator() -> None:
    line = (
        b'{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":'
        b'{"type":"object","properties":{"n":{"type":"number","minimum":0.5}}}}]}}'
    )
    table = ToolTable()
    table.replace(loads_upstream(line)["result"]["tools"])
    first = table.get("t")
    table.replace(loads_upstream(line)["result"]["tools"])
    again = table.get("t")
    assert first is not None and again is not None and again.compiled is first.compiled and again.supported


def test_a_schema_with_no_key_is_still_judged() -> None:
    deep: Any = {}
    for _ in range(3000):  # deeper than marshal writes
        deep = {"not": deep}
    inexact = {"type": "object", "properties": {"n": {"type": "number", "minimum": Inexact("1e400")}}}
    assert schema_key(deep) is None and schema_key(inexact) is None
    table = ToolTable("standard")  # where a literal no double holds is not supported (E1)
    table.replace([{"name": "deep", "inputSchema": deep}, {"name": "inexact", "inputSchema": inexact}])
    for name in ("deep", "inexact"):
        entry = table.get(name)
        assert entry is not None and not entry.supported, name


@pytest.mark.parametrize(
    "text",
    [
        '{"type":"object","properties":{"n":{"const":-Infinity}}}',
        '{"type":"object","properties":{"n":{"enum":[1,NaN]}}}',
        '{"type":"object","properties":{"n":{"type":"number","maximum":Infinity}}}',
    ],
)
def test_a_non_finite_number_the_upstream_sent_makes_the_schema_malformed(text: str) -> None:
    """The decoder reads ``NaN``/``Infinity``; the key does not vouch for such a schema as JSON, so the core
    scans it and names the number (with the scan skipped, ``const``/``enum`` would pass as supported)."""
    table = ToolTable()
    table.replace([{"name": "t", "inputSchema": loads_upstream(text)}])
    entry = table.get("t")
    assert entry is not None and not entry.supported
    assert "json" in [i["keyword"] for i in entry.compiled.report.issues_json()]
