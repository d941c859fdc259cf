"""A big listing's schemas of thousands of values get their validators in the worker thread (issue 25).

``ToolTable.prepare`` runs off the loop (``peer.offload``, ``Catalog.prepare``); a validator is otherwise
made on a tool's first call, on the loop: an ``anyOf`` of 1,000 branches took 0.2 s there (0.9 s before its
branches shared their code). A schema of at least ``BUILD_AHEAD_NODES`` values is built in ``prepare``;
smaller ones keep the lazy rule (no code for a tool never called).
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_guard.calls.tool_table import BUILD_AHEAD_NODES, ToolTable
from mcp_guard.core import compiler
from mcp_guard.wire.pieces import count_nodes

BRANCHES = [{"properties": {f"a{i}": {"type": "string"}}} for i in range(1000)]
MANY = {"type": "object", "anyOf": BRANCHES, "unevaluatedProperties": False}
SMALL = {"type": "object", "properties": {"a": {"type": "string"}}}


@pytest.fixture
def generated(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """One entry per validator generated (its profile)."""
    made: list[str] = []
    generate = compiler._generate

    def counting(root: Any, profile: str) -> Any:
        made.append(profile)
        return generate(root, profile)

    monkeypatch.setattr(compiler, "_generate", counting)
    return made


def test_only_the_big_schema_is_built_in_prepare(generated: list[str]) -> None:
    profile = "extended"
    assert count_nodes(MANY, BUILD_AHEAD_NODES) > BUILD_AHEAD_NODES > count_nodes(SMALL, BUILD_AHEAD_NODES)
    table = ToolTable(profile)
    listing = {"tools": [{"name": "many", "inputSchema": MANY}, {"name": "small", "inputSchema": SMALL}]}
    table.prepare(listing)
    assert generated == [profile]
    table.annotate(listing, cache=True, first_page=True)
    many, small = table.get("many"), table.get("small")
    assert many is not None and small is not None
    assert many.compiled.check({"a7": "x"}).ok and not many.compiled.check({"zz": 7}).ok
    assert generated == [profile]  # not again on the first call
    assert small.compiled.check({"a": "x"}).ok
    assert generated == [profile, profile]  # the small one on its first call, as before


def test_an_unsupported_big_schema_builds_nothing(generated: list[str]) -> None:
    table = ToolTable("extended")
    odd = {**MANY, "$dynamicRef": "#x"}
    table.prepare({"tools": [{"name": "odd", "inputSchema": odd}]})
    assert generated == []
