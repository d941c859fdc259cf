"""Pinning: digests over the whole tool minus _meta, the lock file, run-time comparison."""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_guard.gateway.pinning import LockError, LockFile, compare, tool_digest

TOOL: dict[str, Any] = {
    "name": "read",
    "title": "Read",
    "description": "Read a file",
    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
    "outputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": True},
    "_meta": {"x": 1},
}


def test_digest_is_sha256_of_the_canonical_tool_without_meta() -> None:
    body = {k: v for k, v in TOOL.items() if k != "_meta"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()  # ASCII-only keys and values here
    assert tool_digest(TOOL) == "sha256:" + hashlib.sha256(canonical).hexdigest()


def _changed(path: list[str], value: Any) -> dict[str, Any]:
    tool = copy.deepcopy(TOOL)
    target = tool
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return tool


CHANGES = [
    ("description", ["description"], "Read a file!"),
    ("schema", ["inputSchema", "properties", "path", "type"], "integer"),
    ("output schema", ["outputSchema", "type"], "array"),
    ("annotation", ["annotations", "readOnlyHint"], False),
    ("title", ["title"], "Reader"),
    ("new field", ["icons"], []),
]


@pytest.mark.parametrize(("path", "value"), [c[1:] for c in CHANGES], ids=[c[0] for c in CHANGES])
def test_every_change_but_meta_changes_the_digest(path: list[str], value: Any) -> None:
    assert tool_digest(_changed(path, value)) != tool_digest(TOOL)


@pytest.mark.parametrize(
    "variant",
    [
        _changed(["_meta"], {"y": 2}),
        {k: v for k, v in TOOL.items() if k != "_meta"},
        dict(reversed(list(TOOL.items()))),
        json.loads(json.dumps(TOOL).replace('"object"}}}', '"object"}}   }')),
    ],
    ids=["other meta", "no meta", "key order", "whitespace"],
)
def test_meta_and_formatting_do_not_count(variant: dict[str, Any]) -> None:
    assert tool_digest(variant) == tool_digest(TOOL)


def test_lock_from_listings_and_round_trip(tmp_path: Path) -> None:
    listings = [
        ("fs", [TOOL, {"name": "list", "inputSchema": {"type": "object"}}]),
        ("web", [{"name": "get", "inputSchema": {"type": "object"}}, {"nameless": True}, {"name": ""}]),
    ]
    lock, problems = LockFile.from_listings(listings)
    assert sorted(lock.tools) == ["fs/list", "fs/read", "web/get"]
    assert problems == ["web: a tool without a name (missing, empty or not a string) cannot be pinned"] * 2
    path = tmp_path / "sub" / "gw.json.lock"
    lock.write(path)
    text = path.read_text(encoding="utf-8")
    assert text.endswith("}\n") and json.loads(text)["version"] == 1
    assert list(json.loads(text)["tools"]) == ["fs/list", "fs/read", "web/get"]
    assert LockFile.read(path) == lock
    assert [p.name for p in path.parent.iterdir()] == ["gw.json.lock"]  # no temporary file left


def test_tools_that_cannot_be_pinned() -> None:
    lock, problems = LockFile.from_listings(
        [("s", [{"name": "nan", "inputSchema": {"minimum": float("nan")}}, TOOL, _changed(["title"], "other")])]
    )
    assert lock.tools == {}
    assert problems == [
        "s/nan: cannot be pinned: RFC 8785: NaN and Infinity have no canonical JSON form",
        "s/read: listed twice with different definitions; not pinned",
    ]


BAD_LOCKS = [
    ("not json", "{", "not valid JSON"),
    ("not an object", "[]", "must hold an object"),
    ("wrong version", '{"version": 2, "tools": {}}', "version: must be 1"),
    ("no tools", '{"version": 1}', "tools: must be an object"),
    (
        "key without slash",
        '{"version": 1, "tools": {"x": "sha256:' + "0" * 64 + '"}}',
        'tools["x"]: the key must be server/tool',
    ),
    ("bad digest", '{"version": 1, "tools": {"a/b": "sha256:XYZ"}}', 'tools["a/b"]: must be sha256:'),
    ("upper-case hex", '{"version": 1, "tools": {"a/b": "sha256:' + "A" * 64 + '"}}', "must be sha256:"),
    ("unknown key", '{"version": 1, "tools": {}, "extra": 1}', "extra: unknown key"),
]


@pytest.mark.parametrize(("text", "message"), [b[1:] for b in BAD_LOCKS], ids=[b[0] for b in BAD_LOCKS])
def test_bad_lock_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "x.lock"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LockError) as info:
        LockFile.read(path)
    assert str(info.value).startswith(str(path)) and message in str(info.value)


def test_absent_lock() -> None:
    assert LockFile.read_optional(None) is None
    assert LockFile.read_optional(Path("/nonexistent/x.lock")) is None
    with pytest.raises(FileNotFoundError):
        LockFile.read(Path("/nonexistent/x.lock"))


def test_compare_with_the_lock() -> None:
    lock, _ = LockFile.from_listings(
        [("fs", [TOOL, {"name": "gone", "inputSchema": {}}]), ("down", [{"name": "x", "inputSchema": {}}])]
    )
    report = compare(
        lock,
        [("fs", [_changed(["description"], "evil"), {"name": "added", "inputSchema": {}}, {"name": "gone2"}])],
    )
    assert report.of("fs", "read") == "changed"
    assert report.keys("new") == ["fs/added", "fs/gone2"]
    assert report.missing == ["fs/gone"]  # down/x is not missing: the server was not compared
    same = compare(lock, [("fs", [TOOL])])
    assert same.of("fs", "read") == "pinned"
    assert compare(None, [("fs", [TOOL])]).of("fs", "read") == "unpinned"
    assert report.of("nowhere", "x") == "unpinned"


def test_a_tool_without_canonical_form_counts_as_changed() -> None:
    lock, _ = LockFile.from_listings([("fs", [TOOL])])
    broken = _changed(["inputSchema", "minimum"], float("inf"))
    assert compare(lock, [("fs", [broken])]).of("fs", "read") == "changed"


def test_a_name_listed_twice_must_match_twice() -> None:
    lock, _ = LockFile.from_listings([("fs", [TOOL])])
    for listing in ([TOOL, _changed(["title"], "x")], [_changed(["title"], "x"), TOOL]):
        assert compare(lock, [("fs", listing)]).of("fs", "read") == "changed"


def test_a_schema_nested_past_the_recursion_limit_is_compared() -> None:
    """``compare`` computes the digest of a deep schema (it raised ``RecursionError`` when JCS recursed)."""
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(sys.getrecursionlimit() * 3):
        schema = {"type": "array", "items": schema}
    deep = {**TOOL, "inputSchema": schema}
    lock = LockFile({"srv/read": tool_digest(deep)})
    assert compare(lock, [("srv", [deep])]).status == {"srv/read": "pinned"}
    changed = {**TOOL, "inputSchema": {"type": "array", "items": schema}}
    assert compare(lock, [("srv", [changed])]).status == {"srv/read": "changed"}
