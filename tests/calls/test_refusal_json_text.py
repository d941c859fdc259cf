"""Refusals under ``--present-for`` for values shown as JSON text and constraints reached through ``$ref``
(issue 24 item 3): what the model was not shown is said so, and a place inside a JSON text is named as a
place in the JSON the model wrote, not by the server's type of it."""

from __future__ import annotations

import json
from typing import Any

from mcp_guard.calls import presenting
from mcp_guard.calls.call import Call, Route
from mcp_guard.calls.pipeline import WRAP_STEPS, Pipeline
from mcp_guard.calls.policy import ToolPolicy
from mcp_guard.calls.refusals import NOT_SHOWN
from mcp_guard.core import compile as compile_schema
from mcp_guard.hosts import host_profile, present_tools

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tree": {"$ref": "#/$defs/node"},
        "x-meta": {"type": "object", "additionalProperties": {"type": "integer"}},
        "q": {"type": "string"},
    },
    "$defs": {
        "node": {
            "type": "object",
            "properties": {
                "v": {"type": "integer", "maximum": 9},
                "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            },
            "additionalProperties": False,
        }
    },
}
"""Gemini takes no ``$ref``: ``tree`` is inlined (``maximum`` and ``additionalProperties`` dropped into the
text), its recursive ``kids`` items are shown as JSON text, ``x-meta`` (a map) as JSON text, renamed ``x_meta``."""


def refused(arguments: dict[str, Any], host: str = "gemini") -> tuple[str, list[dict[str, Any]]]:
    """The text and the issues' JSON of the refusal of ``arguments`` (as the model sends them) to ``t``."""
    presentation = present_tools([{"name": "t", "inputSchema": SCHEMA}], host_profile(host))
    pipeline = Pipeline(enabled=WRAP_STEPS)
    route = Route("t", "", "t", compile_schema(SCHEMA), ToolPolicy("allow", "", "reject", None, None))
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": arguments}}
    mapped = presenting.map_call(pipeline, message, presentation.shown)
    assert isinstance(mapped, tuple)
    rejection = pipeline.check(Call(route, mapped[0]["params"]["arguments"], shown=mapped[1]))
    assert rejection is not None and rejection.result is not None
    issues: list[dict[str, Any]] = rejection.result["_meta"]["mcp-guard/rejection"]["issues"]
    return rejection.result["content"][0]["text"], issues


def test_a_constraint_inside_a_recursive_ref_shown_as_json_text_is_said_not_shown() -> None:
    """The finding's schema pointer is the `$defs` entry's (`/$defs/node/...`), not the reference's position:
    the marking once missed it, and the text named `/tree/kids/0/v`, a place the model did not send."""
    text, issues = refused({"tree": {"v": 1, "kids": [json.dumps({"v": 10})]}})
    assert f"`/v` of the JSON written in `/tree/kids/0` must be ≤ 9 (maximum; {NOT_SHOWN})" in text, text
    assert [(i["schema_path"], i["instance_path"], i.get("shown")) for i in issues] == [
        ("/$defs/node/properties/v/maximum", "/tree/kids/0/v", False)
    ]
    text, issues = refused({"tree": {"kids": [json.dumps({"kids": [{"w": 1}]})]}})
    assert "`/kids/0/w` of the JSON written in `/tree/kids/0` is not allowed" in text, text
    assert f"(additionalProperties: false; {NOT_SHOWN}) — its declared properties are `v` and `kids`" in text
    assert issues[0]["shown"] is False


def test_a_keyword_dropped_inside_an_inlined_ref_is_said_not_shown() -> None:
    """`tree`'s `maximum` is dropped into its description: its findings point into `/$defs/node`."""
    text, issues = refused({"tree": {"v": 10}})
    assert f"`/tree/v` must be ≤ 9 (maximum; {NOT_SHOWN})" in text, text
    assert issues[0]["schema_path"] == "/$defs/node/properties/v/maximum" and issues[0]["shown"] is False
    text, issues = refused({"tree": {"v": "x"}})  # the type is shown: not said
    assert "(type)" in text and NOT_SHOWN not in text and "shown" not in issues[0]
    text, issues = refused({"tree": {"v": 10}}, host="openai-strict")  # strict is shown maximum and $ref
    assert "(maximum)" in text and NOT_SHOWN not in text and "shown" not in issues[0]


def test_a_value_shown_as_json_text_is_refused_in_terms_of_the_json_the_model_wrote() -> None:
    """The model sent a string holding JSON: the refusal says what the JSON inside must be, at the name the
    model was shown (`x_meta`), not that `/x-meta` must be an object (the model was shown a string)."""
    text, issues = refused({"x_meta": json.dumps([1])})
    assert f"The JSON written in `/x_meta` must be an object, not array (type; {NOT_SHOWN})." in text, text
    assert "`/x-meta`" not in text and "server. `/x_meta` must" not in text
    assert issues[0]["instance_path"] == "/x-meta" and issues[0]["shown"] is False  # the JSON: the server's
    text, _ = refused({"x_meta": json.dumps({"a": "x", "b": 2})})
    assert f"`/a` of the JSON written in `/x_meta` must be an integer, not string (type; {NOT_SHOWN})" in text
    text, _ = refused({"q": 1, "x_meta": json.dumps({"a": 1})})  # a shown place: as before
    assert "`/q` must be a string, not integer (type)." in text and "JSON written" not in text
