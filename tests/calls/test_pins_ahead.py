"""A big listing's pin work made ahead in a worker thread (``pinning.PreparedPins``, issue 25 items 1 and 4).

The gateway's catalog prepares a big listing's digests and diffs off the loop; :func:`server_status` and
:func:`diff_tool` then take what was made for these very objects, and compute the rest: the statuses,
the field changes and their summaries are the same as without it.
"""

from __future__ import annotations

import copy
import json
import threading
from typing import Any

import pytest

from mcp_guard.calls import pinning
from mcp_guard.calls.pinning import LockFile, PreparedPins, diff_tool, server_status, tool_digest
from mcp_guard.calls.tool_table import ToolTable
from mcp_guard.config import parse_config
from mcp_guard.sessions.catalog import Catalog

SCHEMA = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(20)}}
PINNED = {"name": "kept", "inputSchema": SCHEMA}
CHANGED = {"name": "moved", "description": "before", "inputSchema": SCHEMA}


def listing() -> list[Any]:
    """The upstream's listing as the catalog gets it: new objects, one tool changed, one new, one odd."""
    moved = copy.deepcopy(CHANGED)
    moved["description"] = "after"
    moved["inputSchema"]["properties"]["p3"] = {"type": "integer"}
    moved["inputSchema"]["properties"]["p9"] = {"type": "null"}
    return [copy.deepcopy(PINNED), moved, {"name": "fresh", "inputSchema": {}}, {"name": "nan", "x": float("nan")}]


LOCK = LockFile(
    tools={f"s/{t['name']}": tool_digest(t) for t in (PINNED, CHANGED)} | {"s/nan": "sha256:" + "0" * 64},
    definitions={f"s/{t['name']}": copy.deepcopy(t) for t in (PINNED, CHANGED)},
)


@pytest.fixture
def digests(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the tools whose digest is computed."""
    seen: list[str] = []
    digest = pinning.tool_digest

    def counting(tool: Any) -> str:
        seen.append(tool.get("name"))
        return digest(tool)

    monkeypatch.setattr(pinning, "tool_digest", counting)
    return seen


def test_the_statuses_are_those_of_the_digests_made_ahead(digests: list[str]) -> None:
    tools = listing()
    expected = server_status(LOCK, "s", listing())
    assert expected == {"s/kept": "pinned", "s/moved": "changed", "s/fresh": "new", "s/nan": "changed"}
    digests.clear()
    prepared = PreparedPins()
    changed = prepared.prepare(LOCK, "s", tools)
    assert changed == [LOCK.definitions["s/moved"]]  # (its pinned definition is shown: classified ahead too)
    assert sorted(digests) == ["kept", "moved", "nan"]  # (in the worker thread)
    assert server_status(LOCK, "s", tools, prepared) == expected
    assert sorted(digests) == ["kept", "moved", "nan"]  # none again on the loop
    assert server_status(LOCK, "s", tools, prepared) == expected  # taken once: computed again, the same
    assert len(digests) == 6


def test_other_objects_are_digested_anew(digests: list[str]) -> None:
    prepared = PreparedPins()
    prepared.prepare(LOCK, "s", listing())
    digests.clear()
    assert server_status(LOCK, "s", listing(), prepared)["s/kept"] == "pinned"  # another listing: not the one prepared
    assert sorted(digests) == ["kept", "moved", "nan"]
    prepared.prepare(None, "s", listing())  # no lock: nothing is made
    assert server_status(None, "s", listing(), prepared) == dict.fromkeys(
        ("s/kept", "s/moved", "s/fresh", "s/nan"), "unpinned"
    )


def test_the_changes_are_those_walked_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = listing()
    moved = tools[1]
    pinned = LOCK.definitions["s/moved"]
    expected = diff_tool(pinned, moved)
    prepared = PreparedPins()
    prepared.prepare(LOCK, "s", tools)
    walks: list[Any] = []
    walk = pinning._leaf_changes

    def counting(before: Any, after: Any, limit: int) -> Any:
        if type(before) is dict:  # (a scalar field is compared where it is: one comparison)
            walks.append(before)
        return walk(before, after, limit)

    monkeypatch.setattr(pinning, "_leaf_changes", counting)
    annotated = {**moved, "_meta": {"mcp-guard/schema": {}}}  # (the catalog's: the same field values)
    changes = diff_tool(pinned, annotated, prepared)
    assert changes == expected and [c.field for c in changes] == ["description", "inputSchema"]
    assert [c.summary() for c in changes] == [c.summary() for c in expected]
    assert (
        changes[1].summary()
        == 'inputSchema: /properties/p3/type "string" → "integer", /properties/p9/type "string" → "null"'
    )
    assert walks == []  # the schema's walk was made ahead, and the summary shows it
    assert changes[1].summary(1).endswith("and 1 more") and walks == []
    diff_tool(pinned, listing()[1], prepared)  # other objects: walked here
    assert len(walks) == 1


def test_the_catalog_compares_and_classifies_a_big_listing_in_the_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Catalog.prepare`` (the worker thread) digests and compares the listing, and classifies the pinned
    definition shown for the changed tool; ``Catalog.update`` (the loop) only looks them up."""
    where: list[str] = []
    compile_schema = ToolTable._compile
    digest = pinning.tool_digest

    def compiling(self: ToolTable, schema: Any, **kwargs: Any) -> Any:
        where.append("compile in " + threading.current_thread().name)
        return compile_schema(self, schema, **kwargs)

    def digesting(tool: Any) -> str:
        where.append("digest in " + threading.current_thread().name)
        return digest(tool)

    monkeypatch.setattr(ToolTable, "_compile", compiling)
    monkeypatch.setattr(pinning, "tool_digest", digesting)
    config = parse_config(json.dumps({"mcpServers": {"s": {"command": "unused"}}}), environ={})
    catalog = Catalog(config, LOCK)
    tools = listing()
    worker = threading.Thread(target=catalog.prepare, args=("s", tools), name="worker")
    worker.start()
    worker.join()
    assert where and all(w.endswith("in worker") for w in where), where
    where.clear()
    assert catalog.update("s", tools)
    assert all(w.endswith("in worker") for w in where), where  # nothing on the loop (this thread)
    assert catalog.pins.status == {"s/kept": "pinned", "s/moved": "changed", "s/fresh": "new", "s/nan": "changed"}
    shown = {t["name"]: t for t in catalog.tools}
    assert shown["s__moved"]["description"] == "before"  # its pinned definition
    assert (
        catalog.report.pin_changes["s/moved"]
        .line()
        .endswith(
            'description: "before" → "after"; inputSchema: /properties/p3/type "string" → "integer", '
            '/properties/p9/type "string" → "null"'
        )
    )
