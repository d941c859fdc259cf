"""The wire vocabulary's ``_meta`` rules: an upstream's ``mcp-guard/`` keys never survive; the era envelope."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_guard.wire.meta import PROTOCOL_VERSION_KEY, REJECTION_KEY, era_meta, is_modern, without_guard_keys

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
