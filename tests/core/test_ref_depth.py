"""A chain of ``$ref`` is nesting all the same: past ``MAX_SCHEMA_DEPTH`` it is unsupported, never a fault.

Found by a helper (hints24): a chain of ~200 in-place ``$ref`` classified as supported, and the first
check raised ``RecursionError`` while generating the validator (the pipeline failed closed with
-32603, but a schema the guard cannot check must say so in its verdict, like nesting does).
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_guard.core import MAX_SCHEMA_DEPTH, compile


def chain(length: int, *, nested: bool) -> dict[str, Any]:
    """``x`` reaches a string through ``length`` references, each inside an object when ``nested``."""
    defs: dict[str, Any] = {}
    for i in range(length):
        ref = {"$ref": f"#/$defs/d{i + 1}"}
        defs[f"d{i}"] = {"type": "object", "properties": {"y": ref}} if nested else ref
    defs[f"d{length}"] = {"type": "string"}
    return {"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs}


@pytest.mark.parametrize("nested", [False, True], ids=["in-place", "nested"])
@pytest.mark.parametrize("length", [80, 200, 400])
def test_a_reference_chain_past_the_depth_limit_is_unsupported(length: int, nested: bool) -> None:
    compiled = compile(chain(length, nested=nested))
    assert [(i.kind, i.keyword) for i in compiled.report.issues] == [("unsupported_capability", "$ref")]
    assert compiled.check({"x": 1}).issues  # refused as unsupported, no RecursionError


@pytest.mark.parametrize("nested", [False, True], ids=["in-place", "nested"])
def test_a_short_reference_chain_stays_supported_and_checked(nested: bool) -> None:
    compiled = compile(chain(MAX_SCHEMA_DEPTH // 4, nested=nested))
    assert compiled.report.issues == ()
    value: Any = "s"
    for _ in range(MAX_SCHEMA_DEPTH // 4 if nested else 0):
        value = {"y": value}
    assert compiled.check({"x": value}).issues == ()
    assert [i.keyword for i in compiled.check({"x": 1}).issues] == ["type"]


def test_recursion_through_the_instance_is_not_depth() -> None:
    node = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}
    tree = {"$defs": {"node": node}, "$ref": "#/$defs/node"}
    compiled = compile(tree)
    assert compiled.report.issues == ()
    assert compiled.check({"kids": [{"kids": []}]}).issues == ()
    assert compiled.check({"kids": [{"kids": 1}]}).issues
