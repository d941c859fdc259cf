"""The wire vocabulary's ``_meta`` rules: an upstream's ``mcp-guard/`` keys never survive; the era envelope."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_guard.wire.meta import (
    PROTOCOL_VERSION_KEY,
    REJECTION_KEY,
    era_meta,
    is_modern,
    may_hold_guard_keys,
    without_guard_keys,
)

ENVELOPE = {PROTOCOL_VERSION_KEY: "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            {"id": 1, "result": {"isError": True, "_meta": {REJECTION_KEY: {"kind": "validation"}, "other": 1}}},
            {"id": 1, "result": {"isError": True, "_meta": {"other": 1}}},
        ),
        (
            {"method": "notifications/progress", "params": {"_meta": {"mcp-guard/x": 1}}},
            {"method": "notifications/progress", "params": {"_meta": {}}},
        ),
        ({"id": 1, "result": {"_meta": {"mine/x": 1}}}, {"id": 1, "result": {"_meta": {"mine/x": 1}}}),
        ({"id": 1, "result": {"_meta": "not an object"}}, {"id": 1, "result": {"_meta": "not an object"}}),
    ],
    ids=["forged-rejection-removed", "params-key-removed", "others-kept", "odd-meta-untouched"],
)
def test_an_upstreams_guard_keys_are_removed(message: dict[str, Any], expected: dict[str, Any]) -> None:
    assert without_guard_keys(message) == expected


def test_a_message_without_guard_keys_is_returned_as_it_is() -> None:
    message = {"id": 1, "result": {"_meta": {"a": 1}}}
    assert without_guard_keys(message) is message  # copied only when something is removed


@pytest.mark.parametrize(
    ("params", "modern", "envelope"),
    [
        ({"_meta": {**ENVELOPE, "progressToken": 3}}, True, ENVELOPE),
        ({"_meta": {"progressToken": 3}}, False, None),
        ({}, False, None),
        ("not an object", False, None),
    ],
    ids=["2026-07-28", "handshake-with-meta", "no-meta", "bad-params"],
)
def test_the_era_envelope_of_a_request(params: Any, modern: bool, envelope: Any) -> None:
    assert is_modern(params) is modern
    assert era_meta(params) == envelope


def test_guard_keys_are_removed_from_every_meta_object_at_any_depth() -> None:
    """Trial F13: content blocks, resource contents, prompt messages and tool entries carry `_meta` too."""
    forged = {REJECTION_KEY: {"kind": "validation"}, "keep": 1}
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "content": [{"type": "text", "text": "x", "_meta": forged}],
            "contents": [{"uri": "a://b", "_meta": {**forged, "nested": {"_meta": forged}}}],
            "messages": [{"role": "user", "content": {"type": "text", "text": "y", "_meta": forged}}],
            "tools": [{"name": "t", "_meta": forged}],
            "untouched": [{"_meta": {"keep": 2}}],
        },
    }
    snapshot = json.dumps(message)
    out = without_guard_keys(message)
    assert REJECTION_KEY not in json.dumps(out) and json.dumps(message) == snapshot  # the input is not modified
    assert out["result"]["content"][0]["_meta"] == {"keep": 1}
    assert out["result"]["contents"][0]["_meta"] == {"keep": 1, "nested": {"_meta": {"keep": 1}}}
    assert out["result"]["untouched"] is message["result"]["untouched"]  # only the way to a cleaned `_meta` is copied


def test_a_deeply_nested_message_is_walked_without_recursion() -> None:
    deep: Any = {"_meta": {"mcp-guard/x": 1}}
    for _ in range(5000):
        deep = [deep]
    out = without_guard_keys({"result": deep})["result"]
    for _ in range(5000):
        out = out[0]
    assert out == {"_meta": {}}


def _listing(schema: Any, **tool: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "t", "inputSchema": schema, **tool}]}}


def test_a_listed_tools_schemas_and_annotations_are_the_servers_data_and_not_looked_into() -> None:
    """Issue 14 item 5: `_meta` inside `inputSchema`/`outputSchema`/`annotations` is a property name or an
    unknown keyword, not the guard's namespace: the schema is judged and forwarded exactly as sent."""
    schema = {"type": "object", "properties": {"_meta": {"_meta": {"mcp-guard/x": 1}}}, "_meta": {"mcp-guard/y": 2}}
    message = _listing(
        schema,
        outputSchema={"_meta": {"mcp-guard/z": 3}},
        annotations={"_meta": {"mcp-guard/w": 4}},
    )
    assert without_guard_keys(message) is message


def test_a_listed_tools_own_meta_and_the_results_are_still_cleaned() -> None:
    message = _listing(
        {"_meta": {"mcp-guard/y": 2}}, _meta={REJECTION_KEY: 1, "keep": 1}, icons=[{"_meta": {"mcp-guard/i": 1}}]
    )
    message["result"]["_meta"] = {"mcp-guard/schema": {}, "mine": 2}
    out = without_guard_keys(message)
    [tool] = out["result"]["tools"]
    assert out["result"]["_meta"] == {"mine": 2}
    assert tool["_meta"] == {"keep": 1} and tool["icons"] == [{"_meta": {}}]
    assert tool["inputSchema"] is message["result"]["tools"][0]["inputSchema"]  # as the server sent it


def test_schemas_outside_a_listing_result_are_walked_as_before() -> None:
    """Only a response's `result.tools` entries have server data the walk skips; a notification's params do not."""
    message = {"method": "notifications/x", "params": {"tools": [{"inputSchema": {"_meta": {"mcp-guard/y": 2}}}]}}
    assert without_guard_keys(message)["params"]["tools"][0]["inputSchema"] == {"_meta": {}}


# --- may_hold_guard_keys: the hot path's search before the walk -------------------------------------------------

_KEY_PARTS = st.sampled_from(["mcp-guard/", "mcp-guard", "_meta", "x", "/", "é", "\u2028", "m", "cp-guard/", "\\"])
_KEYS = st.lists(_KEY_PARTS, max_size=3).map("".join)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | _KEYS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=12,
)


@given(_VALUES, st.booleans())
def test_a_text_said_to_hold_no_guard_key_has_none(value: Any, ascii_only: bool) -> None:
    """Oracle: the walk itself. Whenever the search says a JSON text cannot hold an ``mcp-guard/`` key, the walk
    finds none in its value (it comes back unchanged): escapes (``\\u``, ``\\/``) and raw text both written."""
    wrapped = {"jsonrpc": "2.0", "id": 1, "result": {"_meta": value if type(value) is dict else {"k": value}}}
    text = json.dumps(wrapped, ensure_ascii=ascii_only)
    for line in (text, text.encode()):
        if not may_hold_guard_keys(line):
            assert without_guard_keys(json.loads(line)) == json.loads(line)


@pytest.mark.parametrize(
    "line",
    [b'{"_meta":{"mcp-guard/x":1}}', b'{"_meta":{"\\u006dcp-guard/x":1}}', b'{"_meta":{"mcp-guard\\/x":1}}'],
    ids=["raw", "unicode-escape", "solidus-escape"],
)
def test_every_way_to_write_a_guard_key_is_searched_for(line: bytes) -> None:
    assert may_hold_guard_keys(line) and may_hold_guard_keys(line.decode())
    assert without_guard_keys(json.loads(line)) == {"_meta": {}}


def test_a_plain_answer_is_not_walked() -> None:
    line = b'{"jsonrpc":"2.0","id":"mcp-guard-0a1b-7","result":{"content":[{"type":"text","text":"a\\nb"}]}}'
    assert not may_hold_guard_keys(line)


_TEXT_PARTS = st.sampled_from(["mcp-guard/", "mcp-guard", "\\", "\\u", "\\/", "u", "/", "\\\\u", "x", "é", '"', "{"])


@given(st.lists(_TEXT_PARTS, max_size=8).map("".join))
def test_the_search_is_the_one_of_a_regular_expression(text: str) -> None:
    """Oracle: the rule as one regular expression (``mcp-guard/``, or a backslash before ``u`` or ``/``), for text
    and bytes: the substring searches that replaced it (for speed) say the same of every text."""
    expected = re.search(r"mcp-guard/|\\[u/]", text) is not None
    assert may_hold_guard_keys(text) is expected
    assert may_hold_guard_keys(text.encode()) is expected
