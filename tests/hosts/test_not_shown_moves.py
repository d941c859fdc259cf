"""A refusal says which constraint the model was not shown, wherever the lowering walked the keyword (mend35).

The guard's findings name a keyword by its place in the server's schema (``/a/allOf/0/maxLength``,
``/$defs/x/maxLength``); the lowering walks a merged ``allOf`` branch, a root alternative or an inlined
``$ref`` at its node's place (``/a/maxLength``). ``ShownTool.not_shown_at`` once compared the two and
missed every keyword dropped inside a merged ``allOf`` branch. Property: for a refused call, every finding
whose keyword the host was not shown is marked, and no finding whose keyword it was shown is.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_guard.calls import presenting
from mcp_guard.calls.call import Call, Route
from mcp_guard.calls.pipeline import WRAP_STEPS, Pipeline
from mcp_guard.calls.policy import ToolPolicy
from mcp_guard.calls.refusals import NOT_SHOWN
from mcp_guard.core import compile as compile_schema
from mcp_guard.hosts import HOSTS, ShownTool, host_profile, present_tools


def shown_tool(schema: dict[str, Any], host: str) -> ShownTool:
    presentation = present_tools([{"name": "t", "inputSchema": schema}], HOSTS[host])
    assert "t" in presentation.shown, presentation.withheld
    return presentation.shown["t"]


def marks(schema: dict[str, Any], arguments: dict[str, Any], host: str = "openai-strict") -> list[tuple[str, bool]]:
    """Each finding on ``arguments`` (as the server's schema takes them): ``(its schema pointer, said not shown)``."""
    tool = shown_tool(schema, host)
    report = compile_schema(schema).check(arguments)
    return [(i.schema_path, tool.not_shown_at(i.schema_path, i.instance_path)) for i in report.issues]


def test_a_keyword_dropped_in_a_merged_all_of_branch_is_said_not_shown() -> None:
    schema = {
        "type": "object",
        "properties": {"s": {"allOf": [{"type": "string", "maxLength": 3}, {"pattern": "^a"}]}},
        "required": ["s"],
    }
    assert marks(schema, {"s": "bbbbb"}) == [
        ("/properties/s/allOf/0/maxLength", True),  # strict is not shown maxLength
        ("/properties/s/allOf/1/pattern", False),  # ... and is shown pattern
    ]


def test_a_keyword_in_a_merged_root_all_of_and_in_a_ref_branch_is_said_not_shown() -> None:
    schema = {
        "type": "object",
        "allOf": [{"properties": {"s": {"type": "string", "maxLength": 2}}}, {"$ref": "#/$defs/more"}],
        "$defs": {"more": {"properties": {"n": {"type": "integer", "maximum": 3, "minLength": 1}}}},
    }
    found = marks(schema, {"s": "bbbbb", "n": 9})
    assert found == [("/allOf/0/properties/s/maxLength", True), ("/$defs/more/properties/n/maximum", False)]
    assert marks(schema, {"n": 9}, "gemini") == [("/$defs/more/properties/n/maximum", True)]


def test_an_all_of_inside_a_ref_target_and_a_ref_inside_an_all_of_branch() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/x"},
            "b": {"allOf": [{"$ref": "#/$defs/y"}]},
        },
        "$defs": {"x": {"allOf": [{"type": "string", "maxLength": 2}]}, "y": {"type": "string", "maxLength": 2}},
    }
    assert marks(schema, {"a": "xxx", "b": "yyy"}) == [
        ("/$defs/x/allOf/0/maxLength", True),
        ("/$defs/y/maxLength", True),
    ]


def test_a_root_alternatives_properties_are_located_in_their_branch() -> None:
    """The root's `anyOf` is merged into one object (its findings are the `anyOf`'s, said not shown); the
    steps inside a merged property are located in their branch, a property two branches differ on in both."""
    schema = {
        "type": "object",
        "properties": {"s": {"type": "string"}},
        "anyOf": [
            {"properties": {"s": {"type": "string", "maxLength": 2}}, "required": ["s"]},
            {"$ref": "#/$defs/b"},
        ],
        "$defs": {"b": {"properties": {"n": {"type": "string", "minLength": 2}}, "required": ["n"]}},
    }
    tool = shown_tool(schema, "openai-strict")
    assert tool.lowered is not None
    assert set(tool.lowered.located) == {"/anyOf/0/properties/s/maxLength", "/$defs/b/properties/n/minLength"}
    assert marks(schema, {"s": "sss"}) == [("/anyOf", True)]
    assert not tool.not_shown_at("/properties/s/type")


def test_a_one_of_shown_as_any_of_keeps_its_branches_places() -> None:
    schema = {"type": "object", "properties": {"s": {"oneOf": [{"type": "string", "maxLength": 2}, {"type": "null"}]}}}
    tool = shown_tool(schema, "openai-strict")
    assert tool.lowered is not None and tool.lowered.located == ("/properties/s/oneOf/0/maxLength",)


def test_the_refusal_text_says_so() -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "allOf": [{"maxLength": 2}]}}}
    presentation = present_tools([{"name": "t", "inputSchema": schema}], host_profile("openai-strict"))
    pipeline = Pipeline(enabled=WRAP_STEPS)
    route = Route("t", "", "t", compile_schema(schema), ToolPolicy("allow", "", "reject", None, None))
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {"s": "sss"}}}
    mapped = presenting.map_call(pipeline, message, presentation.shown)
    assert isinstance(mapped, tuple)
    rejection = pipeline.check(Call(route, mapped[0]["params"]["arguments"], shown=mapped[1]))
    assert rejection is not None and rejection.result is not None
    assert f"(maxLength; {NOT_SHOWN})" in rejection.result["content"][0]["text"]
    assert rejection.result["_meta"]["mcp-guard/rejection"]["issues"][0]["shown"] is False


# --- the property ---------------------------------------------------------------------------------------

_STRING = {"minLength": st.integers(1, 3), "maxLength": st.integers(1, 3), "pattern": st.just("^a")}
_INTEGER = {"minimum": st.integers(-2, 2), "maximum": st.integers(3, 5)}


@st.composite
def _leaf(draw: st.DrawFn) -> dict[str, Any]:
    """A string or integer node with some of its type's keywords."""
    kind = draw(st.sampled_from(["string", "integer"]))
    table = _STRING if kind == "string" else _INTEGER
    keys = draw(st.lists(st.sampled_from(sorted(table)), unique=True, max_size=len(table)))
    return {"type": kind, **{k: draw(table[k]) for k in keys}}


@st.composite
def _node(draw: st.DrawFn, defs: dict[str, Any]) -> dict[str, Any]:
    """A leaf as it is, split between its node and ``allOf`` branches (disjoint keywords: always merged),
    behind a ``$ref``, or an ``allOf`` branch behind one."""
    leaf = draw(_leaf())
    how = draw(st.sampled_from(["plain", "allOf", "ref", "allOf-ref", "ref-allOf"]))
    if how == "plain":
        return leaf
    if how in ("ref", "ref-allOf"):
        name = f"d{len(defs)}"
        defs[name] = leaf if how == "ref" else {"allOf": [leaf]}
        return {"$ref": f"#/$defs/{name}"}
    keys = list(leaf)
    cut = draw(st.integers(0, len(keys)))
    own = {k: leaf[k] for k in keys[:cut]}
    rest = {k: leaf[k] for k in keys[cut:]}
    branches: list[Any] = [rest] if rest else []
    if how == "allOf-ref" and branches:
        name = f"d{len(defs)}"
        defs[name] = rest
        branches = [{"$ref": f"#/$defs/{name}"}]
    return {**own, "allOf": branches} if branches else own


@st.composite
def _case(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any], str]:
    """A tool's schema (properties, some in a root ``allOf`` or ``anyOf`` branch), arguments, a host."""
    defs: dict[str, Any] = {}
    names = iter(f"p{i}" for i in range(20))
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    for _ in range(draw(st.integers(1, 3))):
        schema["properties"][next(names)] = draw(_node(defs))
    if draw(st.booleans()):
        schema["allOf"] = [{"properties": {next(names): draw(_node(defs))}}]
    if draw(st.booleans()):
        schema[draw(st.sampled_from(["anyOf", "oneOf"]))] = [
            {"properties": {next(names): draw(_node(defs))}} for _ in range(draw(st.integers(1, 2)))
        ]
    if defs:
        schema["$defs"] = defs
    values = st.sampled_from(["", "a", "abcd", "bbbbb", -9, 0, 4, 99])
    arguments = {}
    for branch in [schema, *schema.get("allOf", []), *schema.get("anyOf", []), *schema.get("oneOf", [])]:
        for name in branch["properties"]:
            if draw(st.booleans()):
                arguments[name] = draw(values)
    return schema, arguments, draw(st.sampled_from(["openai-strict", "gemini", "anthropic"]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_case())
def test_every_finding_on_a_keyword_not_shown_is_marked_and_no_other(case: tuple[Any, Any, str]) -> None:
    """The generator merges every ``allOf`` (disjoint keywords), so a keyword is shown exactly when the host
    takes it (``HostProfile.keywords``), except the root's ``anyOf``/``oneOf``, merged into one object."""
    schema, arguments, host = case
    presentation = present_tools([{"name": "t", "inputSchema": schema}], HOSTS[host])
    tool = presentation.shown.get("t")
    assert tool is not None, presentation.withheld  # (the generator's schemas are all presentable)
    for issue in compile_schema(schema).check(arguments).issues:
        marked = tool.not_shown_at(issue.schema_path, issue.instance_path)
        merged = issue.schema_path in ("/anyOf", "/oneOf")  # the root's alternatives, shown as one object
        expected = merged or issue.keyword not in HOSTS[host].keywords
        assert marked is expected, (issue.keyword, issue.schema_path, host, schema)


def test_a_property_equal_in_several_alternatives_is_located_in_each() -> None:
    """One schema shown once for the root's own property and two alternatives' equal ones: its dropped keyword
    is at the three places (a group of relocations applies every prefix it holds for a pointer)."""
    s = {"type": "string", "maxLength": 2}
    schema = {
        "type": "object",
        "properties": {"s": s},
        "oneOf": [{"properties": {"s": s}}, {"properties": {"s": s, "n": {"type": "integer"}}}],
    }
    tool = shown_tool(schema, "openai-strict")
    assert tool.lowered is not None and tool.lowered.unshown_at is not None
    assert {"/properties/s/maxLength", "/oneOf/0/properties/s/maxLength", "/oneOf/1/properties/s/maxLength"} <= set(
        tool.lowered.unshown_at
    )
    assert marks(schema, {"s": "sss"}) == [("/properties/s/maxLength", True), ("/oneOf", True)]
