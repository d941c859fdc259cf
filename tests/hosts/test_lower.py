"""The lowering (issue 24, item 2): widening, reshaping with exact inverses, narrowing, not presentable."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_guard.hosts import HOST_NAMES, HOSTS, BackError, check_schema, lower


def lowered(schema: Any, host: str) -> Any:
    result = lower(schema, HOSTS[host])  # type: ignore[index]
    assert result.presentable, result.reasons
    assert check_schema(result.schema, HOSTS[host]) == ()  # type: ignore[index]
    return result


OPTIONAL = {
    "type": "object",
    "properties": {
        "q": {"type": "string", "maxLength": 10, "description": "query"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
        "tag": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
    },
    "required": ["q"],
}


def test_openai_strict_optional_properties_are_required_and_nullable_and_null_maps_back_to_absent() -> None:
    result = lowered(OPTIONAL, "openai-strict")
    shown = result.schema
    assert shown["required"] == ["q", "limit", "tag"]
    assert shown["additionalProperties"] is False
    assert shown["properties"]["limit"]["anyOf"][1] == {"type": "null"}
    assert result.back({"q": "a", "limit": None, "tag": None}) == {"q": "a"}
    assert result.back({"q": "a", "limit": 5, "tag": "x"}) == {"q": "a", "limit": 5, "tag": "x"}
    assert result.present({"q": "a"}) == {"q": "a", "limit": None, "tag": None}
    kinds = {(s.kind, s.code, s.pointer) for s in result.steps}
    assert ("reshaping", "nullable", "/properties/limit") in kinds
    assert ("narrowing", "null-is-absent", "/properties/tag") in kinds  # the original takes null: not sendable
    assert ("narrowing", "closed", "") in kinds
    # maxLength is not in strict's table: dropped, written as text, listed as not shown
    assert ("widening", "dropped", "/properties/q/maxLength") in kinds
    assert "maxLength 10" in shown["properties"]["q"]["description"]
    assert [s.detail for s in result.not_shown] == ["maxLength"]
    assert result.narrowed({"q": "a", "tag": None}) == "/tag"
    assert result.narrowed({"q": "a", "other": 1}) == "/other"


def test_a_free_form_value_is_shown_as_json_text_and_parsed_back() -> None:
    schema = {"type": "object", "properties": {"meta": {"type": "object"}, "any": {}}, "required": ["meta", "any"]}
    for host in ("openai-strict", "gemini"):
        result = lowered(schema, host)
        assert result.schema["properties"]["meta"]["type"] == "string"
        assert result.back({"meta": '{"a": [1, 2.5]}', "any": "null"}) == {"meta": {"a": [1, 2.5]}, "any": None}
        assert result.present({"meta": {"a": 1}, "any": [True]}) == {"meta": '{"a": 1}', "any": "[true]"}
        with pytest.raises(BackError) as refused:
            result.back({"meta": "{not json", "any": "1"})
        assert refused.value.pointer == "/meta" and "{not json" not in str(refused.value)
        with pytest.raises(BackError):
            result.back({"meta": '{"a": 1, "a": 2}', "any": "NaN"})


def test_gemini_type_lists_nullable_enums_and_names() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"]},
            "n": {"type": "integer", "enum": [1, 2, 3]},
            "x-loc": {"type": "string"},
            "u": {"type": ["string", "integer"], "minimum": 3},
        },
        "additionalProperties": False,
    }
    result = lowered(schema, "gemini")
    props = result.schema["properties"]
    assert props["a"] == {"type": "string", "nullable": True}
    assert props["n"]["type"] == "integer" and "enum" not in props["n"] and "enum [1,2,3]" in props["n"]["description"]
    assert "x_loc" in props and "x-loc" not in props
    assert result.back({"x_loc": "v", "a": None}) == {"x-loc": "v", "a": None}
    assert props["u"]["anyOf"][0] == {"type": "string"}
    assert "additionalProperties" not in result.schema


def test_gemini_renamed_properties_that_collide_make_the_tool_not_presentable() -> None:
    schema = {"type": "object", "properties": {"a-b": {"type": "string"}, "a.b": {"type": "string"}}}
    result = lower(schema, HOSTS["gemini"])
    assert not result.presentable and "two property names" in result.reasons[0]


def test_root_combinators_are_merged_into_one_object() -> None:
    schema = {
        "type": "object",
        "oneOf": [
            {"properties": {"id": {"type": "string"}}, "required": ["id"]},
            {"properties": {"name": {"type": "string"}}, "required": ["name"]},
        ],
    }
    for host in ("openai", "anthropic", "openai-strict", "gemini"):
        result = lowered(schema, host)
        assert set(result.schema["properties"]) == {"id", "name"}, host
    assert lower(schema, HOSTS["gemini-json"]).schema == schema  # accepted as-is: nothing to widen


def test_recursive_references_stay_in_defs_or_become_json_text() -> None:
    schema = {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/node"}},
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "label": {"type": "string"},
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                },
                "required": ["label"],
            }
        },
    }
    strict = lowered(schema, "openai-strict")
    assert "$defs" in strict.schema
    value = {"tree": {"label": "r", "kids": [{"label": "c"}]}}
    shown = strict.present(value)
    assert shown["tree"]["kids"][0] == {"label": "c", "kids": None}
    assert strict.back(shown) == value
    gemini = lowered(schema, "gemini")
    assert "$defs" not in gemini.schema
    kids = gemini.schema["properties"]["tree"]["properties"]["kids"]
    assert kids["items"]["type"] == "string"  # the recursion, as JSON text
    assert gemini.back(gemini.present(value)) == value


def test_oneof_is_shown_as_anyof_and_enforced_by_the_guard() -> None:
    schema = {"type": "object", "properties": {"v": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]}}}
    result = lowered(schema, "openai-strict")
    assert "anyOf" in result.schema["properties"]["v"]
    assert any(s.code == "anyOf" and s.pointer == "/properties/v/oneOf" for s in result.steps)


@pytest.mark.parametrize("host", HOST_NAMES)
def test_arrays_without_items_and_boolean_schemas(host: str) -> None:
    schema = {"type": "object", "properties": {"xs": {"type": "array"}, "t": True}, "required": ["xs"]}
    result = lowered(schema, host)
    assert result.back(result.present({"xs": [1, "a", None], "t": {"k": 1}})) == {"xs": [1, "a", None], "t": {"k": 1}}


def test_a_map_at_the_root_is_not_presentable_for_openai_strict() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "string"}}
    result = lower(schema, HOSTS["openai-strict"])
    assert not result.presentable and result.schema is None
    assert lower(schema, HOSTS["gemini-json"]).presentable


def test_a_tag_member_picks_the_branch_of_a_union_of_objects_that_map_back_differently() -> None:
    schema = {
        "type": "object",
        "properties": {
            "op": {
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "put"}, "doc": {"type": "object"}},
                        "required": ["kind", "doc"],
                    },
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "tag"}, "labels": {"type": "object"}},
                        "required": ["kind", "labels"],
                    },
                ]
            }
        },
        "required": ["op"],
    }
    result = lowered(schema, "gemini")  # open objects: key sets cannot tell; the `kind` constant does
    put = {"op": {"kind": "put", "doc": {"a": 1}}}
    tag = {"op": {"kind": "tag", "labels": {"x": "y"}}}
    for value in (put, tag):
        assert result.back(result.present(value)) == value
    assert result.back({"op": {"kind": "tag", "labels": '{"x": 2}'}}) == {"op": {"kind": "tag", "labels": {"x": 2}}}


def test_null_is_never_mapped_so_a_nullable_union_of_other_kinds_is_presentable() -> None:
    schema = {
        "type": "object",
        "properties": {
            "g": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "object"}}, {"type": "null"}]}
        },
    }
    result = lowered(schema, "gemini")
    assert result.back({"g": ['{"a": 1}']}) == {"g": [{"a": 1}]}
    assert result.back({"g": "x"}) == {"g": "x"}
    assert result.back({"g": None}) == {"g": None}


def test_objects_nested_past_openai_strict_limit_are_shown_as_json_text() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}, "required": ["a"]}
    node = schema
    for _ in range(12):
        inner: dict[str, Any] = {"type": "object", "properties": {}, "required": ["a"]}
        node["properties"]["a"] = inner
        node = inner
    node["properties"]["a"] = {"type": "string"}
    result = lowered(schema, "openai-strict")
    value: dict[str, Any] = {"a": "leaf"}
    for _ in range(12):
        value = {"a": value}
    assert result.back(result.present(value)) == value
    assert any("nested past" in s.detail for s in result.steps)


def test_gemini_long_property_names_are_cut_with_a_hash_and_stay_apart() -> None:
    head = "x" * 70
    long_a, long_b = head + "-a", head + "-b"  # alike for their first 70 characters
    schema = {"type": "object", "properties": {long_a: {"type": "string"}, long_b: {"type": "integer"}}}
    result = lowered(schema, "gemini")
    shown = list(result.schema["properties"])
    assert len(shown) == 2 and shown[0] != shown[1]
    assert all(len(n) == 64 and n.startswith("x" * 55 + "_") for n in shown)
    assert result.back({shown[0]: "v", shown[1]: 1}) == {long_a: "v", long_b: 1}
    assert lower(schema, HOSTS["gemini"]).schema == result.schema  # the same name each time
    fits = "a-" + "b" * 62  # 64 characters once made valid: no hash
    assert list(lowered({"type": "object", "properties": {fits: {}}}, "gemini").schema["properties"]) == [
        "a_" + "b" * 62
    ]
    first_digit = "1" + "b" * 63  # the `_` put before it makes 65: cut, with a hash
    (name,) = lowered({"type": "object", "properties": {first_digit: {}}}, "gemini").schema["properties"]
    assert len(name) == 64 and name.startswith("_1" + "b" * 53 + "_")


def test_shown_pointer_follows_renamed_members_through_objects_arrays_and_choices() -> None:
    from mcp_guard.hosts.inverse import shown_pointer

    schema = {
        "type": "object",
        "properties": {
            "x-loc": {"type": "string"},
            "a.b": {"type": "object", "properties": {"c/d": {"type": "integer"}}},
            "arr": {"type": "array", "items": {"type": "object", "properties": {"e.f": {"type": "string"}}}},
            "u": {"anyOf": [{"type": "object", "properties": {"g-h": {"type": "string"}}}, {"type": "string"}]},
            "blob": {},
        },
    }
    mapping = lowered(schema, "gemini").mapping
    cases = {
        "": "",
        "/x-loc": "/x_loc",
        "/a.b/c~1d": "/a_b/c_d",
        "/arr/3/e.f": "/arr/3/e_f",
        "/u/g-h": "/u/g_h",
        "/blob/a.b": "/blob/a.b",  # inside a value shown as JSON text: as it is
        "/zz/a.b": "/zz/a.b",  # an undeclared key: as it is, and below it
    }
    for server, shown in cases.items():
        assert shown_pointer(mapping, server) == shown, server
    assert shown_pointer(None, "/a.b") == "/a.b"


def test_property_names_kept_as_fitting_match_the_pattern() -> None:
    """``checker.fitting_names``: a name is kept only once the host's pattern matched it, and a refused one is
    renamed however often it is met (issue 24 item 6: the pattern is not matched again for a kept name)."""
    from mcp_guard.hosts.checker import fitting_names

    host = HOSTS["gemini"]
    schema = {"type": "object", "properties": {"ok_name": {"type": "string"}, "bad-name": {"type": "string"}}}
    for _ in range(2):
        result = lower(schema, host)  # type: ignore[arg-type]
        assert result.presentable
        assert set(result.schema["properties"]) == {"ok_name", "bad_name"}
        assert check_schema(result.schema, host) == ()  # type: ignore[arg-type]
    kept = fitting_names(host)  # type: ignore[arg-type]
    assert "ok_name" in kept and "bad-name" not in kept
    assert all(host.property_names.fullmatch(n) for n in kept)  # type: ignore[union-attr]
    assert check_schema({"type": "object", "properties": {"bad-name": {"type": "string"}}}, host)  # type: ignore[arg-type]


def test_a_dropped_default_is_told_as_a_default_not_as_something_checked() -> None:
    """Red team 38 F5: ``Also checked: default "x"`` told the model the guard checks a default (it does not)."""
    schema = {"type": "object", "properties": {"c": {"type": "string", "maxLength": 3, "default": "x"}}}
    description = lowered(schema, "openai-strict").schema["properties"]["c"]["description"]
    assert description == 'Also checked: maxLength 3. Default: "x".'
    only_default = lowered({"type": "object", "properties": {"d": {"type": "integer", "default": 2}}}, "openai-strict")
    assert only_default.schema["properties"]["d"]["description"] == "Default: 2."
