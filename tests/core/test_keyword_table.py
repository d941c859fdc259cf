"""One keyword, one place (issue 23, item 3): each keyword is one row (``ir.Keyword``: its rule, quick
test, subset rules and the parts that emit its code), declared in its keyword module and registered
once by ``table.KEYWORDS``; a row's ``emits`` names exactly what its rule builds."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_guard.core.extended import kw_array, kw_members
from mcp_guard.core.extended.classify import Walker
from mcp_guard.core.extended.ir import Part
from mcp_guard.core.extended.table import _MODULES, KEYWORDS

SAMPLES: dict[str, list[Any]] = {
    "type": ["string", ["string", "null"]],
    "enum": [[1, "a"]],
    "const": [{"a": 1}],
    "minimum": [1],
    "maximum": [1.5],
    "exclusiveMinimum": [0],
    "exclusiveMaximum": [9],
    "multipleOf": [2],
    "minLength": [1],
    "maxLength": [3],
    "pattern": ["^a"],
    "format": ["date"],
    "properties": [{"a": {"type": "string"}}],
    "patternProperties": [{"^a": {}}],
    "additionalProperties": [{"type": "integer"}, False],
    "propertyNames": [{"maxLength": 3}],
    "required": [["a"]],
    "minProperties": [1],
    "maxProperties": [2],
    "dependentRequired": [{"a": ["b"]}],
    "dependentSchemas": [{"a": {"required": ["b"]}}],
    "dependencies": [{"a": ["b"], "c": {"required": ["d"]}}],
    "prefixItems": [[{"type": "string"}]],
    "items": [{"type": "string"}],
    "additionalItems": [{"type": "string"}],
    "contains": [{"const": 1}],
    "uniqueItems": [True],
    "minItems": [1],
    "maxItems": [2],
    "unevaluatedProperties": [False],
    "unevaluatedItems": [False],
    "allOf": [[{"minimum": 1}]],
    "anyOf": [[{"type": "string"}, {"type": "null"}]],
    "oneOf": [[{"type": "string"}, {"type": "null"}]],
    "not": [{"type": "null"}],
    "if": [{"type": "string"}],
    "$ref": ["#"],
}
"""A value each keyword that builds a part accepts (the rest build none)."""

BESIDE: dict[str, dict[str, Any]] = {"if": {"then": {}, "else": {}}, "additionalItems": {"items": [{}]}}
"""What a keyword needs beside it to build its part."""


def _parts(result: Any) -> list[Part]:
    return [] if result is None else result if isinstance(result, list) else [result]


def test_every_keyword_is_one_row_of_one_module() -> None:
    names = [row.name for module in _MODULES for row in module.ROWS]
    assert len(names) == len(set(names)) == len(KEYWORDS)
    for module in _MODULES:
        for row in module.ROWS:
            assert KEYWORDS[row.name] is row
    assert KEYWORDS["minimum"].rule.__module__ == "mcp_guard.core.extended.kw_number"


@pytest.mark.parametrize("name", sorted(KEYWORDS))
def test_a_row_emits_what_its_rule_builds(name: str) -> None:
    row = KEYWORDS[name]
    if not row.emits:
        assert name not in SAMPLES
        return
    built: set[type[Part]] = set()
    for value in SAMPLES[name]:
        walk = Walker()
        walk.classify({})  # a clean walk, ready as an ``ir.Ctx`` for a row's rule
        schema = {name: value, **BESIDE.get(name, {})}
        built |= {type(p) for p in _parts(row.rule(walk, value, schema, ("properties", "p", name)))}
    assert built and not walk.issues, (name, walk.issues)
    assert built <= set(row.emits), (name, built)


def _subclasses(cls: type[Part]) -> set[type[Part]]:
    found: set[type[Part]] = set()
    for sub in cls.__subclasses__():
        found |= {sub} | _subclasses(sub)
    return found


def test_every_part_of_the_keyword_modules_is_a_rows_emitter_or_a_fold() -> None:
    emitted = {cls for row in KEYWORDS.values() for cls in row.emits}
    folds = {kw_members.Members, kw_array.Elements}  # a node's ``finish`` folds several rows' parts into one loop
    parts = {c for c in _subclasses(Part) if c.__module__.startswith("mcp_guard.core.extended.kw_")}
    concrete = {c for c in parts if not c.__name__.startswith("_")}
    assert concrete == emitted | folds


VALUES: list[Any] = [
    None, True, False, 0, 1, -1, 2.5, float("nan"), 1e400, "", "a", "string", "object", "date", "regex",
    "email", "^a", "(", "#", "#/$defs/a", "https://json-schema.org/draft/2020-12/schema", [], ["a"],
    ["a", "a"], ["a", 1], [1, 1.0], [{"a": 1}], [[]], {}, {"type": "string"}, {"a": {"type": "string"}},
    {"a": {"x-unknown": 1}}, {"a": True}, [{"type": "string"}], [True], {"a": ["b"]}, {"a": ["b", "b"]},
    {"a": {"format": "nonsense"}}, list(range(10_001)),
]  # fmt: skip
"""Values of every shape a keyword may meet: well-formed, malformed, over budget, not JSON."""


@pytest.mark.parametrize("name", sorted(n for n, row in KEYWORDS.items() if row.quick is not None))
def test_a_rows_quick_test_vouches_only_for_what_its_rule_accepts(name: str) -> None:
    """The one promise the walk's verdict rests on, per row: a value the quick test passes is one
    the rule records no finding or note for (so the verdict is the findings' wherever it vouches)."""
    row = KEYWORDS[name]
    assert row.quick is not None
    for value in VALUES:
        for depth in (0, 1):
            schema = {name: value}
            if not row.quick(value, schema, depth, Walker()):
                continue
            walk = Walker()
            walk.classify({})
            walk.depth = depth + 1  # inside the node, as the walk is when it meets the keyword
            path: tuple[str | int, ...] = (name,) if depth == 0 else ("properties", "p", name)
            row.rule(walk, value, schema, path)
            assert not walk.issues and not walk.notes, (name, value, depth, walk.issues, walk.notes)
