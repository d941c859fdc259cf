"""Exposed names, collisions (fail closed, order-free), resource routes, and the guard's cursors."""

from __future__ import annotations

import base64
import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_guard.sessions.naming import (
    NAME_RULE,
    Collision,
    CursorCodec,
    InvalidCursor,
    NameMap,
    Origin,
    ResourceMap,
    exposed_name,
)

NAMES = [
    ("default format", "time", "get_current_time", "{server}__{tool}", "time__get_current_time"),
    ("dots and spaces become _", "my.server", "read file", "{server}__{tool}", "my_server__read_file"),
    ("hyphens kept", "git-hub", "list-repos", "{server}__{tool}", "git-hub__list-repos"),
    ("non-ASCII becomes _", "café", "naïve", "{server}__{tool}", "caf___na_ve"),
    ("custom format", "fs", "read", "{tool}_via_{server}", "read_via_fs"),
    ("no prefix", "fs", "read", "{tool}", "read"),
    ("separator sanitized", "fs", "read", "{server}.{tool}", "fs_read"),
    ("empty tool name", "fs", "", "{tool}", "_"),
]


@pytest.mark.parametrize(("server", "tool", "fmt", "expected"), [n[1:] for n in NAMES], ids=[n[0] for n in NAMES])
def test_exposed_name(server: str, tool: str, fmt: str, expected: str) -> None:
    assert exposed_name(server, tool, fmt) == expected


def test_long_names_are_shortened_with_a_hash_suffix() -> None:
    a = exposed_name("a-server-with-a-rather-long-name", "a_tool_whose_name_is_also_far_too_long_to_fit_one")
    b = exposed_name("a-server-with-a-rather-long-name", "a_tool_whose_name_is_also_far_too_long_to_fit_two")
    assert len(a) == len(b) == 64
    assert a[:55] == b[:55] and a[55] == "_" and a != b
    assert all(c in "0123456789abcdef" for c in a[56:])
    assert a == exposed_name("a-server-with-a-rather-long-name", "a_tool_whose_name_is_also_far_too_long_to_fit_one")


@given(st.text(max_size=80), st.text(max_size=150))
def test_every_exposed_name_fits_the_llm_rule(server: str, tool: str) -> None:
    assert NAME_RULE.match(exposed_name(server, tool))


def tools(*names: str) -> list[dict[str, Any]]:
    return [{"name": n, "inputSchema": {"type": "object"}} for n in names]


def test_name_map_routes_and_keeps_order() -> None:
    names = NameMap.build([("b", tools("x", "y")), ("a", tools("x"))])
    assert list(names.items) == ["b__x", "b__y", "a__x"]
    assert names.origin("a__x") == Origin("a", "x")
    assert names.exposed_for(Origin("b", "y")) == "b__y"
    assert names.collisions == [] and names.origin("nope") is None


COLLISIONS = [
    ("sanitizing merges names", [("s", tools("a.b", "a_b"))], "{server}__{tool}", "s__a_b"),
    ("no prefix across servers", [("s1", tools("read")), ("s2", tools("read"))], "{tool}", "read"),
    ("one server lists a name twice", [("s", tools("x", "x"))], "{server}__{tool}", "s__x"),
    ("server prefix meets tool name", [("a", tools("b__c")), ("a__b", tools("c"))], "{server}__{tool}", "a__b__c"),
]


@pytest.mark.parametrize(("listings", "fmt", "exposed"), [c[1:] for c in COLLISIONS], ids=[c[0] for c in COLLISIONS])
def test_collisions_withhold_every_claimant_whatever_the_order(
    listings: list[tuple[str, list[dict[str, Any]]]], fmt: str, exposed: str
) -> None:
    results = []
    for order in itertools.permutations(listings):
        reordered = [(s, list(reversed(items))) for s, items in order]
        for variant in (list(order), reordered):
            names = NameMap.build(variant, fmt)
            assert exposed not in names.items
            results.append(names.collisions)
    assert all(r == results[0] for r in results)
    (collision,) = results[0]
    assert collision.exposed == exposed and len(collision.origins) == 2
    assert "all are withheld" in collision.describe()


def test_of_claimants_to_one_name_the_one_offered_takes_it() -> None:
    """Red team 38 F3: a tool denied (or hidden) for every caller is never listed nor callable, so it does not
    take its name from the one tool of that name that is offered; two offered still collide."""
    listings = [("a", tools("read", "write")), ("b", tools("read", "write")), ("c", tools("write"))]
    names = NameMap.build(listings, "{tool}", lambda o: o.server != "b")
    assert names.origin("read") == Origin("a", "read")  # b/read is not offered
    assert [c.exposed for c in names.collisions] == ["write"]  # a/write and c/write are both offered
    nobody = NameMap.build(listings[:2], "{tool}", lambda o: False)
    assert [c.exposed for c in nobody.collisions] == ["read", "write"]  # none offered: withheld as before


def test_nameless_items_are_withheld() -> None:
    names = NameMap.build([("s", [{"inputSchema": {}}, "junk", {"name": 3}, {"name": ""}, *tools("ok")])])
    assert list(names.items) == ["s__ok"]  # an empty name is no name: not exposed as `s__`
    assert [s for s, _ in names.nameless] == ["s", "s", "s", "s"]


def test_collision_describe() -> None:
    c = Collision("x", (Origin("a", "x"), Origin("b", "x")))
    assert c.describe() == "`x` would name 2 items (a/x, b/x); all are withheld"


# --- resources ----------------------------------------------------------------------------------


def test_resource_routes() -> None:
    rmap = ResourceMap.build(
        {
            "fs": [{"uri": "file:///a", "name": "a"}, {"uri": "file:///shared", "name": "s"}, {"name": "no uri"}],
            "web": [{"uri": "https://x/1", "name": "1"}, {"uri": "file:///shared", "name": "s"}],
        },
        {
            "fs": [{"uriTemplate": "file:///{+path}", "name": "files"}],
            "web": [{"uriTemplate": "https://x/{id}", "name": "pages"}, {"uriTemplate": "db://{t}", "name": "t"}],
            "db": [{"uriTemplate": "db://{t}", "name": "t"}, {"uriTemplate": "mem://{a}{b}", "name": "bad"}],
        },
    )
    assert [(s, r["uri"]) for s, r in rmap.resources] == [("fs", "file:///a"), ("web", "https://x/1")]
    assert rmap.withheld_uris == {"file:///shared": ("fs", "web")}
    assert rmap.withheld_templates == {"db://{t}": ("db", "web")}
    assert [t["uriTemplate"] for _, t in rmap.templates] == ["file:///{+path}", "https://x/{id}", "mem://{a}{b}"]
    assert [reason for _, _, reason in rmap.invalid] == [
        "no string `uri`",
        "a `uriTemplate` the guard cannot match; offered, not routed",
    ]
    assert rmap.route("file:///a").server == "fs"
    assert rmap.route("https://x/1").server == "web"
    assert rmap.route("file:///deep/er.txt").server == "fs"  # by template
    assert rmap.route("https://x/42").server == "web"
    shared = rmap.route("file:///shared")
    assert shared.server is None and "more than one server (fs, web)" in shared.reason
    withheld = rmap.route("db://users")  # its template is withheld: said so, not "no server lists it"
    assert withheld.server is None
    assert withheld.reason == (
        "the URI matches the resource template db://{t}, which several servers list (db, web); it is withheld"
    )
    assert rmap.route("gopher://x").reason == "no server lists this resource or a template matching it"


def test_a_uri_matching_templates_of_two_servers_is_not_guessed() -> None:
    rmap = ResourceMap.build({}, {"a": [{"uriTemplate": "x://{+p}"}], "b": [{"uriTemplate": "x://files/{name}"}]})
    route = rmap.route("x://files/report")
    assert route.server is None and "several servers (a, b)" in route.reason
    assert rmap.route("x://other/deep/path").server == "a"


# --- cursors ----------------------------------------------------------------------------------------


def test_paging_walks_the_whole_list() -> None:
    codec = CursorCodec(b"k" * 32)
    items = list(range(7))
    seen: list[int] = []
    cursor = None
    for _ in range(10):
        page, cursor = codec.page(items, cursor, "tools", 3, page_size=3)
        seen += page
        if cursor is None:
            break
    assert seen == items


def test_an_empty_list_is_one_empty_page() -> None:
    assert CursorCodec().page([], None, "tools", 0, 10) == ([], None)


def _tampered(cursor: str) -> str:
    body, mac = cursor.split(".")
    data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    data["o"] = 0
    forged = base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()
    return f"{forged}.{mac}"


BAD_CURSORS = [
    ("not a string", lambda c: 5, "not one the guard issued"),
    ("garbage", lambda c: "abc", "not one the guard issued"),
    ("bad base64", lambda c: "!!!.???", "not one the guard issued"),
    ("tampered offset", _tampered, "not one the guard issued"),
    ("another key", lambda c: CursorCodec(b"x" * 32).encode("tools", 1, 2), "not one the guard issued"),
    ("another list", lambda c: CursorCodec(b"k" * 32).encode("prompts", 1, 2), "belongs to another list"),
    ("older generation", lambda c: CursorCodec(b"k" * 32).encode("tools", 0, 2), "list changed since this cursor"),
    ("past the end", lambda c: CursorCodec(b"k" * 32).encode("tools", 1, 99), "past the end"),
    ("huge", lambda c: "a" * 10_000 + "." + "b", "not one the guard issued"),
]


@pytest.mark.parametrize(("make", "message"), [b[1:] for b in BAD_CURSORS], ids=[b[0] for b in BAD_CURSORS])
def test_invalid_cursors_are_refused(make: Any, message: str) -> None:
    codec = CursorCodec(b"k" * 32)
    good = codec.encode("tools", 1, 2)
    assert codec.page(list(range(5)), good, "tools", 1, 2) == ([2, 3], codec.encode("tools", 1, 4))
    with pytest.raises(InvalidCursor, match=message) as info:
        codec.page(list(range(5)), make(good), "tools", 1, 2)
    assert str(info.value).startswith("Invalid params: ")
