"""Host tables and their checkers (issue 24, item 1): each rule cited, each checker able to fail."""

from __future__ import annotations

import pytest

from mcp_guard.hosts import HOST_NAMES, HOSTS, check_name, check_schema, host_profile

PLAIN = {
    "type": "object",
    "properties": {"q": {"type": "string", "description": "query"}, "n": {"type": "integer"}},
    "required": ["q", "n"],
    "additionalProperties": False,
}


def rules(schema: object, host: str) -> set[tuple[str, str]]:
    return {(i.rule, i.pointer) for i in check_schema(schema, HOSTS[host])}  # type: ignore[index]


def test_every_host_has_a_table_with_sources() -> None:
    assert tuple(HOSTS) == HOST_NAMES
    for host in HOSTS.values():
        assert host.rules and all(r.source and r.read for r in host.rules), host.name
        assert any(not r.certain for r in host.rules), f"{host.name}: no rule marked uncertain"
    with pytest.raises(ValueError, match="unknown host"):
        host_profile("gpt")


@pytest.mark.parametrize("host", HOST_NAMES)
def test_a_plain_closed_schema_is_accepted_as_is_by_every_host_but_gemini(host: str) -> None:
    expected = {("keyword", "/additionalProperties")} if host == "gemini" else set()
    assert rules(PLAIN, host) == expected


def test_openai_strict_needs_closed_objects_with_every_property_required() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert rules(schema, "openai-strict") == {("open-object", "/additionalProperties"), ("not-required", "/required")}
    assert rules(schema, "openai") == set()


def test_openai_strict_refuses_keywords_outside_its_table() -> None:
    schema = {**PLAIN, "properties": {"q": {"type": "string", "maxLength": 3, "format": "uri"}, "n": {"allOf": []}}}
    found = rules(schema, "openai-strict")
    assert ("keyword", "/properties/q/maxLength") in found
    assert ("format", "/properties/q/format") in found
    assert ("keyword", "/properties/n/allOf") in found
    assert ("untyped", "/properties/n") in found


def test_gemini_refuses_what_its_threads_show() -> None:
    schema = {
        "type": "object",
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"type": "integer", "enum": [1, 2]},
            "c": {"type": "object"},
            "d": {"type": "array"},
            "e-f": {"type": "string"},
            "g": {},
        },
        "additionalProperties": False,
    }
    found = rules(schema, "gemini")
    assert {
        ("keyword", "/$schema"),
        ("keyword", "/additionalProperties"),
        ("type-list", "/properties/a/type"),
        ("enum", "/properties/b/enum"),
        ("empty-object", "/properties/c"),
        ("items", "/properties/d"),
        ("property-name", "/properties/e-f"),
        ("untyped", "/properties/g"),
    } <= found
    assert rules(schema, "gemini-json") == {("keyword", "/$schema")}


def test_roots_that_hosts_refuse() -> None:
    schema = {"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}
    assert ("root", "/anyOf") in rules(schema, "openai")
    assert ("root", "/anyOf") in rules(schema, "anthropic")
    assert ("root", "/anyOf") not in rules(schema, "gemini-json")
    assert ("root", "/type") in rules({"properties": {}}, "anthropic")


def test_names() -> None:
    assert check_name("get_weather", HOSTS["openai"]) is None
    assert check_name("fs.read", HOSTS["openai"]) is not None
    assert check_name("fs.read", HOSTS["gemini"]) is None
    assert check_name("1tool", HOSTS["gemini"]) is not None
    assert check_name("x" * 65, HOSTS["anthropic"]) is not None
    assert check_name("x" * 64, HOSTS["anthropic"]) is None


def test_docs_show_every_rule_of_every_table_with_its_source() -> None:
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "hosts.md").read_text(encoding="utf-8")
    for host in HOSTS.values():
        assert f"### `{host.name}` (table {host.version})" in page
        for rule in host.rules:
            row = f"| {rule.text.replace('|', chr(92) + '|')} | {rule.source} ({rule.read}) |"
            assert row in page, (host.name, rule.text)
