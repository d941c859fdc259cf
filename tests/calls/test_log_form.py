"""One log form for a refused call, in ``wrap`` and in ``serve`` (issue 13 item 7: the gateway
logged ``type at schema /properties/text/type`` where ``wrap`` logged ``type at /text``)."""

from __future__ import annotations

import logging

import pytest

from mcp_guard.calls.refusals import logged_reason
from mcp_guard.core import compile
from mcp_guard.wire.meta import REJECTION_KEY
from tests.harness import ECHO, ScriptedUpstream, name, running_guard

pytestmark = pytest.mark.anyio

SECRET = "s3cr3t-value"


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_a_refusal_is_logged_alike_by_both_commands(command: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_guard")
    async with running_guard(command, ScriptedUpstream()) as client:
        refused = await client.call(name(command, "echo"), {"text": 5, SECRET: SECRET})
        assert refused["result"]["_meta"][REJECTION_KEY]["kind"] == "validation"
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("rejected tools/call")]
    assert lines == [
        f"rejected tools/call `{name(command, 'echo')}` (validation): type at /text; additionalProperties at /…"
    ]
    assert SECRET not in caplog.text  # neither the value nor the undeclared key the client chose


def test_the_log_form_names_instance_pointers_only_where_the_schema_made_them() -> None:
    compiled = compile(ECHO["inputSchema"])
    report = compiled.check({"text": 5, "undeclared-key": 1})
    assert logged_reason(report) == "type at /text; additionalProperties at /…"


def test_keys_the_schema_does_not_declare_are_withheld_from_logged_instance_pointers() -> None:
    """Trial F4: a key matched by a schema-valued additionalProperties or by patternProperties (and an
    error nested under one) is client data; its segment is logged as ``…``, declared names and indexes stay."""
    schema = {
        "type": "object",
        "$defs": {"D": {"type": "object", "properties": {"q": {"type": "integer"}}}},
        "properties": {"a": {"$ref": "#/$defs/D"}, "arr": {"type": "array", "items": {"type": "integer"}}},
        "patternProperties": {"^SECRETP": {"type": "integer"}},
        "additionalProperties": {"type": "object", "properties": {"v": {"minimum": 3}}},
    }
    compiled = compile(schema, profile="extended")
    report = compiled.check({"SECRETP1": "x", "OTHER9": 5, "K0": {"v": 1}, "arr": [1, "x"], "a": {"q": "x"}})
    reason = logged_reason(report)
    assert "SECRET" not in reason and "OTHER9" not in reason and "K0" not in reason
    assert sorted(reason.split("; ")) == sorted(
        ["type at /…", "type at /…", "minimum at /…/v", "type at /arr/1", "type at /…/q"]
    )


def test_an_additional_key_and_a_map_key_of_digits_are_withheld_alike() -> None:
    """additionalProperties: false and a schema-valued one both log the key as ``/…``."""
    hidden = compile({"type": "object", "additionalProperties": False}).check({"SECRETP2": 1})
    valued = compile({"type": "object", "additionalProperties": {"type": "string"}}).check({"12": 1, "SECRETP3": 1})
    assert logged_reason(hidden) == "additionalProperties at /…"
    assert logged_reason(valued) == "type at /…; type at /…"


def test_every_keyword_is_logged_in_one_form_at_its_instance_pointer() -> None:
    """Trial T6: ``minimum at /offset`` but ``maximum at schema /properties/times/maximum`` before; one rule now."""
    schema = {
        "type": "object",
        "properties": {
            "times": {"type": "integer", "minimum": 1, "maximum": 5},
            "url": {"type": "string", "format": "uri", "maxLength": 3, "pattern": "^h"},
            "opts": {"type": "object", "additionalProperties": False},
        },
    }
    compiled = compile(schema)
    assert logged_reason(compiled.check({"times": 0})) == "minimum at /times"
    assert logged_reason(compiled.check({"times": 50})) == "maximum at /times"
    assert logged_reason(compiled.check({"url": "xxxxx"})) == "format at /url; maxLength at /url; pattern at /url"
    assert logged_reason(compiled.check({"opts": {SECRET: 1}})) == "additionalProperties at /opts/…"


def test_a_property_reached_through_a_ref_is_logged_by_name_and_a_client_key_still_is_not() -> None:
    """Trial3 T3: pydantic puts every nested model under ``$defs`` and ``$ref``s it, so the finding's
    schema pointer (``/$defs/Address/properties/zip/pattern``) does not pass ``properties/address``;
    ``address`` was logged ``…``. Any name the schema declares is schema text: logged by name."""
    schema = {
        "type": "object",
        "properties": {"address": {"$ref": "#/$defs/Address"}},
        "$defs": {
            "Address": {
                "type": "object",
                "properties": {"zip": {"type": "string", "pattern": "^[0-9]{5}$"}, "next": {"$ref": "#/$defs/Address"}},
                "additionalProperties": {"type": "integer"},
            }
        },
    }
    compiled = compile(schema)
    assert compiled.declared_names == {"address", "zip", "next"}  # through the $ref cycle, once
    report = compiled.check({"address": {"next": {"zip": "x"}, SECRET: "v"}})
    assert logged_reason(report) == "pattern at /…/…/zip; type at /…/…"  # the schema pointer's names alone
    assert logged_reason(report, compiled.declared_names) == "pattern at /address/next/zip; type at /address/…"
    assert compile({"type": "string"}).declared_names == frozenset()


def test_arguments_refused_unchecked_are_logged_as_such_not_as_a_keyword_at_the_root() -> None:
    """A new user (stop 31) read ``pattern at (root)`` for a lone surrogate the refusal calls unchecked."""
    compiled = compile({"type": "object", "properties": {"s": {"type": "string", "pattern": "^a"}}}, profile="extended")
    report = compiled.check({"s": "\ud800"})
    assert report.unchecked
    assert logged_reason(report) == (
        "refused unchecked: a string in these arguments holds a lone surrogate, which the guard's ECMA-262 "
        "pattern engine cannot read"
    )


def test_arguments_refused_unchecked_are_told_what_would_be_checked() -> None:
    """Red team 35: a lone surrogate was answered "smaller or simpler arguments can be checked"."""
    from mcp_guard.calls.refusals import rejection_result

    compiled = compile({"type": "object", "properties": {"s": {"type": "string", "pattern": "^a"}}}, profile="extended")
    text = rejection_result("t", compiled.check({"s": "\ud800"}), schema_broken=False)["content"][0]["text"]
    assert "valid Unicode text (no lone surrogate" in text and "smaller or simpler" not in text
