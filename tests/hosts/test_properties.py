"""The lowering, proven against an oracle (issue 24, item 4), over the corpus and the official suite.

For every host, with python-jsonschema as the oracle (``tests.core.exact_oracle``: its exact-number,
ECMA-pattern and format replacements, so its verdicts are the spec's):

1. every instance ``v`` the server's schema accepts, and that no narrowing step keeps the model
   from sending, is accepted by the shown schema as ``present(v)``, and ``back(present(v)) == v``
   (exactly: kinds and values);
2. for every instance ``w`` the shown schema accepts, the guard's verdict on ``back(w)`` is the
   oracle's verdict under the server's schema (a JSON text that does not parse is refused by
   ``back`` itself, before any judgement);
3. every shown schema passes its host's checker, and the corpus's presentable shares meet the
   issue's goals.

Instances come from the suite's own test data (deterministic) and from a small generator guided by
the schema and filtered by the oracle (hypothesis, bounded examples: these run in CI on 2 cores).
"""

from __future__ import annotations

import json
import math
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from mcp_guard.core import Compiled
from mcp_guard.core import compile as compile_schema
from mcp_guard.hosts import HOST_NAMES, HOSTS, BackError, Lowered, check_schema, lower
from mcp_guard.hosts.checker import accepts
from tests.core.exact_oracle import Oracles, ecma_patterns
from tests.core.suite import SUITE_ROOT, read_groups, wrap
from tests.datasets import TOOL_CORPUS

CORPUS = TOOL_CORPUS
GOALS = {"openai": 0.99, "anthropic": 0.99, "gemini-json": 0.99, "openai-strict": 0.95, "gemini": 0.95}

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the tool corpus is absent ({CORPUS})")
needs_suite = pytest.mark.skipif(not SUITE_ROOT.is_dir(), reason=f"the JSON Schema Test Suite is absent ({SUITE_ROOT})")


@cache
def corpus() -> tuple[tuple[str, Any], ...]:
    tools = []
    for path in sorted(CORPUS.glob("*.json")):
        for tool in json.loads(path.read_text(encoding="utf-8"))["tools"]:
            tools.append((f"{path.stem}/{tool['name']}", tool["inputSchema"]))
    return tuple(tools)


@cache
def lowered(index: int, host: str) -> Lowered:
    return lower(corpus()[index][1], HOSTS[host])  # type: ignore[index]


def same(a: Any, b: Any) -> bool:
    """JSON equality that also keeps kinds apart (``True`` is not ``1``, ``1`` is not ``"1"``)."""
    if type(a) is bool or type(b) is bool or a is None or b is None:
        return a is b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, str) or isinstance(b, str):
        return type(a) is type(b) and a == b
    return type(a) in (int, float) and type(b) in (int, float) and a == b


def json_schema_view(shown: Any) -> Any:
    """The shown schema as JSON Schema proper: Gemini's ``nullable: true`` as a union with null."""
    if isinstance(shown, list):
        return [json_schema_view(x) for x in shown]
    if not isinstance(shown, dict):
        return shown
    out = {k: json_schema_view(v) if k not in ("enum", "const", "required") else v for k, v in shown.items()}
    if out.pop("nullable", False):
        return {"anyOf": [out, {"type": "null"}]}
    return out


def shown_accepts(result: Lowered, value: Any) -> bool:
    """The shown schema's verdict (python-jsonschema, ECMA-262 patterns as the hosts read them)."""
    with ecma_patterns():
        return bool(Draft202012Validator(json_schema_view(result.schema)).is_valid(value))


def serializable(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def holds_both_ways(schema: dict[str, Any], result: Lowered, v: Any, oracle: Oracles) -> None:
    """Properties 1 and 2 for one server-side instance ``v`` (and its shown form as a ``w``)."""
    valid = oracle.exact_verdict(v)
    if valid and result.narrowed(v) is None:
        shown = result.present(v)
        assert shown_accepts(result, shown), (result.host, v, shown)
        assert same(result.back(shown), v), (result.host, v, shown)
    w = result.present(v) if serializable(v) else None
    if w is not None and shown_accepts(result, w):
        guard_on(schema, result, w, oracle)


@cache
def compiled(text: str) -> Compiled:
    return compile_schema(json.loads(text))


def guard_on(schema: dict[str, Any], result: Lowered, w: Any, oracle: Oracles) -> None:
    """Property 2: the guard's verdict on ``back(w)`` is the oracle's under the server's schema."""
    try:
        mapped = result.back(w)
    except BackError:
        return  # refused before any judgement
    guard = compiled(json.dumps(schema, sort_keys=True)).check(mapped).ok
    assert guard is oracle.exact_verdict(mapped), (result.host, w)


# --- the corpus ---------------------------------------------------------------------------------


@needs_corpus
@pytest.mark.parametrize("host", HOST_NAMES)
def test_every_corpus_tool_is_shown_a_schema_its_host_accepts(host: str) -> None:
    tools = corpus()
    presentable = 0
    for index, (name, schema) in enumerate(tools):
        result = lowered(index, host)
        assert accepts(schema, HOSTS[host]) is (check_schema(schema, HOSTS[host]) == ()), name  # type: ignore[index]
        if result.presentable:
            presentable += 1
            assert check_schema(result.schema, HOSTS[host]) == (), name  # type: ignore[index]
            assert result.schema["type"] == "object"
        else:
            assert result.schema is None and result.reasons, name
    assert len(tools) > 800
    assert presentable / len(tools) >= GOALS[host], f"{host}: {presentable}/{len(tools)} presentable"


JSON_LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 100), st.sampled_from([0.5, -1.25, 1e20]), st.text(max_size=4)
)
ANY_JSON = st.recursive(
    JSON_LEAF,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=4,
)


def guided(node: Any, root: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """Candidate instances shaped by a schema (filtered by an oracle afterwards: any shape is fine)."""
    if depth > 4 or not isinstance(node, dict):
        return ANY_JSON
    if "$ref" in node:
        ref = node["$ref"]
        target: Any = root
        if ref.startswith("#/"):
            for token in ref[2:].split("/"):
                target = target.get(token.replace("~1", "/").replace("~0", "~"), {}) if isinstance(target, dict) else {}
        return guided(target, root, depth + 1)
    options: list[st.SearchStrategy[Any]] = []
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list) and node[key]:
            options += [guided(b, root, depth + 1) for b in node[key]]
    if isinstance(node.get("enum"), list) and node["enum"]:
        options.append(st.sampled_from(node["enum"]))
    if "const" in node:
        options.append(st.just(node["const"]))
    types = node.get("type")
    types = [types] if isinstance(types, str) else types if isinstance(types, list) else []
    for t in types:
        if t == "object" or (t is None and "properties" in node):
            props = node.get("properties") if isinstance(node.get("properties"), dict) else {}
            required = [r for r in node.get("required", []) if r in props]
            optional = [p for p in props if p not in required]
            options.append(
                st.fixed_dictionaries(
                    {p: guided(props[p], root, depth + 1) for p in required},
                    optional={
                        **{p: guided(props[p], root, depth + 1) for p in optional},
                        "zz_extra": JSON_LEAF,
                    },
                )
            )
        elif t == "array":
            items = node.get("items") if isinstance(node.get("items"), dict) else {}
            options.append(st.lists(guided(items, root, depth + 1), max_size=3))
        elif t == "string":
            options.append(st.text(max_size=6) | st.sampled_from(["2024-01-02", "a@b.co", '{"a": 1}', "[1]", "null"]))
        elif t == "integer":
            options.append(st.integers(-3, 200))
        elif t == "number":
            options.append(st.integers(-3, 200) | st.floats(-10, 300, allow_nan=False))
        elif t == "boolean":
            options.append(st.booleans())
        elif t == "null":
            options.append(st.none())
    options.append(ANY_JSON)
    return st.one_of(options)


@cache
def oracle_for(index: int) -> Oracles:
    return Oracles(corpus()[index][1])


@needs_corpus
@pytest.mark.parametrize("host", HOST_NAMES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_corpus_instances_map_back_exactly(host: str, data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(corpus()) - 1), label="tool")
    schema = corpus()[index][1]
    result = lowered(index, host)
    if not result.presentable:
        return
    oracle = oracle_for(index)
    v = data.draw(guided(schema, schema), label="v")
    if isinstance(v, float) and not math.isfinite(v):
        return
    holds_both_ways(schema, result, v, oracle)
    w = data.draw(guided(json_schema_view(result.schema), result.schema), label="w")
    if serializable(w) and shown_accepts(result, w):
        guard_on(schema, result, w, oracle)


# --- the official suite -------------------------------------------------------------------------


@cache
def suite_cases() -> tuple[tuple[dict[str, Any], tuple[Any, ...]], ...]:
    """The suite's 2020-12 groups (``optional/`` too, formats aside) whose schema the guard supports,
    wrapped as the property ``v`` of an object root, with their test data as ``{"v": data}``."""
    out = []
    for group in read_groups("draft2020-12"):
        if group.file.startswith("optional/format") or not isinstance(group.schema, dict | bool):
            continue
        raw = group.schema
        if isinstance(raw, dict):  # a nested `$schema` is unsupported: the dialect is the root's
            raw = {k: v for k, v in raw.items() if k != "$schema"}
        schema = wrap(raw)
        try:
            if not compile_schema(schema).supported or not serializable(schema):
                continue
        except TypeError:
            continue
        data = tuple({"v": d} for _, d, _ in group.tests if serializable(d))
        out.append((schema, data))
    return tuple(out)


@cache
def suite_oracle(text: str) -> Oracles:
    return Oracles(json.loads(text))


@needs_suite
@pytest.mark.parametrize("host", HOST_NAMES)
def test_suite_instances_map_back_exactly(host: str) -> None:
    cases = suite_cases()
    assert len(cases) > 300
    presentable = 0
    for schema, instances in cases:
        result = lower(schema, HOSTS[host])  # type: ignore[index]
        if not result.presentable:
            continue
        presentable += 1
        assert check_schema(result.schema, HOSTS[host]) == ()  # type: ignore[index]
        oracle = suite_oracle(json.dumps(schema, sort_keys=True))
        for v in instances:
            holds_both_ways(schema, result, v, oracle)
    assert presentable > len(cases) // 2, f"{host}: {presentable}/{len(cases)}"
