"""Config errors are the guard's own words for every field of every config model (red team 36, 6c).

``guard.deny: "c/echo"`` read pydantic's "Input should be a valid list". Every field reachable from the
config file (the guard section, with ``auth``, ``otel``, ``state``, ``journal``, ``servers``,
``principals``; the server entries) is given values of every wrong JSON kind; each error line must say the
key as a JSON path, what it takes and what kind of value was found, never pydantic's message and never the
value (a config holds tokens).
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections.abc import Iterator
from typing import Any, get_args, get_origin

import pytest
from pydantic import BaseModel, ValidationError

from mcp_guard.config import ConfigError, GuardSettings, HttpServer, StdioServer, parse_config
from mcp_guard.config_messages import bare_type, describe, field_at

SECRET = "s3cret-Zq9"
WRONG: list[Any] = [SECRET, "", 7, -3, 1.5, True, None, [SECRET], [], {"k": SECRET}]
"""A value of every JSON kind (strings hold the secret that must never be shown)."""

BASE_GUARD: dict[str, Any] = {
    "servers": {"a": {"tools": {"t*": {}}}},
    "principals": {"r": {"match": {"authenticated": True}, "tools": {"a/*": {}}}},
    "state": {"redis": "redis://h"},
    "journal": {"postgres": "postgresql://h/db"},
    "auth": {"issuer": "https://id.example", "resource": "https://mcp.example/mcp"},
    "otel": {},
}
"""A valid guard section that reaches every nested model, so that each field can be spoiled alone."""

PYDANTIC_WORDS = re.compile(r"Input should|should be a valid|should have|Field required|Value error|Extra inputs|type=")


def _fields(model: type[BaseModel], loc: tuple[str | int, ...]) -> Iterator[tuple[str | int, ...]]:
    """Every location in ``model`` a config can spoil: each field, each list item, each nested model's field."""
    for name, info in model.model_fields.items():
        if name == "name" and model in (StdioServer, HttpServer):
            continue  # the entry's key, not a field of the file
        here = (*loc, info.alias or name)
        yield here
        yield from _inside(info.annotation, here)


def _inside(annotation: Any, loc: tuple[str | int, ...]) -> Iterator[tuple[str | int, ...]]:
    bare = bare_type(annotation)
    origin = get_origin(bare)
    if origin is list or origin is tuple:
        yield (*loc, 0)
    elif origin is dict:
        key = {("servers",): "a", ("principals",): "r"}.get(loc[-1:], "t*" if loc[-1] == "tools" else "K")
        yield (*loc, key)
        yield from _inside(get_args(bare)[1], (*loc, key))
    elif isinstance(bare, type) and issubclass(bare, BaseModel):
        yield from _fields(bare, loc)
    else:  # a union (guard.journal: a path or an object): each member model
        for member in get_args(bare):
            inner = bare_type(member)
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                yield from _fields(inner, loc)


def _spoiled(base: dict[str, Any], loc: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(base)
    node: Any = data
    for step, following in itertools.pairwise(loc):
        if isinstance(node, dict) and node.get(step) is None:
            node[step] = [] if isinstance(following, int) else {}
        node = node[step]
        if isinstance(node, list) and not node and isinstance(following, int):
            node.append(None)
    last = loc[-1]
    if isinstance(node, list) and isinstance(last, int) and not node:
        node.append(value)
    else:
        node[last] = value
    return data


GUARD_LOCS = list(_fields(GuardSettings, ()))
ENTRY_LOCS = list(_fields(StdioServer, ())) + list(_fields(HttpServer, ()))


def _lines(data: dict[str, Any]) -> list[str]:
    try:
        parse_config(json.dumps(data), environ={"TOKEN": SECRET})
    except ConfigError as exc:
        text = str(exc)
        assert SECRET not in text
        return [line.strip() for line in text.split(": ", 1)[1].splitlines() if line.strip()]
    return []


def _check(lines: list[str]) -> None:
    for line in lines:
        assert not PYDANTIC_WORDS.search(line), line
        path, _, said = line.partition(": ")
        assert path and said, line
        assert (
            ("expected " in said and ", found " in said)
            or said.startswith(("missing (required): expected ", "unknown key", "no server of that name"))
            or "expected" not in said  # a rule of a validator of ours: its own sentence
        ), line


def test_the_walk_reaches_every_model() -> None:
    reached = {loc[-1] for loc in GUARD_LOCS}
    assert {"deny", "callsPerMinute", "redisEnv", "postgres", "issuer", "scopes", "endpoint", "groups"} <= reached
    assert len(GUARD_LOCS) > 60


@pytest.mark.parametrize("loc", GUARD_LOCS, ids=lambda loc: ".".join(map(str, loc)))
def test_every_guard_field_refuses_in_our_words(loc: tuple[str | int, ...]) -> None:
    for value in WRONG:
        data = {"mcpServers": {"a": {"command": "x"}}, "guard": _spoiled(BASE_GUARD, loc, value)}
        _check(_lines(data))


@pytest.mark.parametrize("loc", ENTRY_LOCS, ids=lambda loc: ".".join(map(str, loc)))
def test_every_entry_field_refuses_in_our_words(loc: tuple[str | int, ...]) -> None:
    for value in WRONG:
        for base in ({"command": "x"}, {"url": "http://h/mcp"}):
            _check(_lines({"mcpServers": {"a": _spoiled(base, loc, value)}}))


def test_the_red_teams_example_and_its_kind() -> None:
    """The key, what it takes (read from the model), what was found: the kind only."""
    cases = [
        ({"deny": "c/echo"}, "guard.deny: expected a list of non-empty strings, found a string (one item is written"),
        (
            {"servers": {"a": {"allow": {"x": 1}}}},
            "guard.servers.a.allow: expected a list of non-empty strings, found an",
        ),
        ({"pageSize": 1.5}, "guard.pageSize: expected an integer greater than 0, at most 10000, found a number with a"),
        (
            {"state": {"redis": "redis://h", "timeoutSeconds": 99}},
            "guard.state.timeoutSeconds: expected a number greater",
        ),
        ({"auth": {"issuer": "https://i", "resource": "https://r", "clientSecretEnv": "no way"}}, "an environment"),
        (
            {"presentFor": "gpt"},
            "guard.presentFor: expected one of openai-strict, openai, gemini, gemini-json, anthropic",
        ),
        ({"otel": {"serviceName": 5}}, "guard.otel.serviceName: expected a non-empty string (at most 200 characters)"),
        ({"principals": {"r": {}}}, "guard.principals.r.match: missing (required): expected an object (its keys:"),
    ]
    for guard, expected in cases:
        text = "\n".join(_lines({"mcpServers": {"a": {"command": "x"}}, "guard": guard}))
        assert expected in text, text


def test_a_secret_in_a_wrong_place_is_never_shown() -> None:
    for guard in ({"profile": SECRET}, {"journal": [SECRET]}, {"auth": {"issuer": SECRET, "resource": SECRET}}):
        _lines({"mcpServers": {"a": {"command": "x"}}, "guard": guard})  # asserts SECRET is absent
    try:
        GuardSettings.model_validate({"profile": SECRET})
    except ValidationError as exc:  # pydantic's own message would have said it: the guard's must not
        assert SECRET in str(exc)


def test_describe_reads_the_annotation() -> None:
    assert describe(field_at(GuardSettings, ("deny",))) == "a list of non-empty strings"
    assert describe(field_at(GuardSettings, ("maxArgumentBytes",))) == "an integer greater than 0"
    assert describe(field_at(StdioServer, ("env",))) == "an object whose values are strings"
    assert field_at(GuardSettings, ("nope",)) is None
