"""The official JSON Schema Test Suite as the conformance tests read it (shared, not a test module).

The suite is ``tests/data/json-schema-test-suite`` (:mod:`tests.datasets`; one folder per dialect,
each with ``optional/`` and ``optional/format/``).
Files are parsed as the relay parses them: a schema as the relay reads an upstream's text
(``json_values.literal_float``: a literal no double holds keeps its text, as an ``Inexact``), a
test's data as it reads a client's request (``json_values.exact_float``). So ``bignum.json``'s
``972783798187987123879878123.18878137`` reaches the guard exactly, never rounded.

:func:`keyword_positions` walks a schema's keywords and never mistakes a property name, an
``enum``/``const`` value or an unknown keyword's contents for a keyword.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, NamedTuple

from mcp_guard.core.json_values import exact_float, literal_float
from tests.datasets import JSON_SCHEMA_TEST_SUITE

SUITE_ROOT = JSON_SCHEMA_TEST_SUITE

DIALECT_FOLDERS = ("draft2020-12", "draft2019-09", "draft7", "draft6")
"""The suite's dialect folders the guard is held to (spec, "The extended profile", Dialects)."""

# Keywords whose value is one schema, a list of schemas, or a map of name → schema, in any of
# the four dialects. Every other keyword's value (enum choices, const, required names, property
# *names*, an unknown keyword's value) is data, never a schema, and is not walked.
# ``contentSchema`` is an annotation: its schema is never applied, so it is not walked either.
SCHEMA_VALUED = frozenset(
    {
        "additionalProperties",
        "items",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "additionalItems",
    }
)
SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"})
"""``dependencies`` (draft-07 and older) maps a name to a schema or to a list of names; only the schemas are walked."""


def escape(token: str) -> str:
    """One RFC 6901 reference token."""
    return token.replace("~", "~0").replace("/", "~1")


def keyword_positions(schema: Any) -> Iterator[tuple[str, str]]:
    """Yield ``(schema pointer, keyword)`` for every key that stands as a keyword.

    Keys of ``properties`` (and of the other name → schema maps) are property names, not
    keywords; values of ``enum``, ``const`` and ``required`` are data. A boolean schema has
    no keywords.
    """
    for pointer, node in subschemas(schema):
        if isinstance(node, dict):
            for key in node:
                yield f"{pointer}/{escape(key)}", key


def subschemas(schema: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    """Yield ``(pointer, node)`` for the schema and every subschema :func:`keyword_positions` walks into."""
    yield pointer, schema
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        here = f"{pointer}/{escape(key)}"
        if key in SCHEMA_VALUED:
            if isinstance(value, list):
                for index, sub in enumerate(value):
                    yield from subschemas(sub, f"{here}/{index}")
            else:
                yield from subschemas(value, here)
        elif key in SCHEMA_LISTS and isinstance(value, list):
            for index, sub in enumerate(value):
                yield from subschemas(sub, f"{here}/{index}")
        elif key in SCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                if isinstance(sub, dict | bool):
                    yield from subschemas(sub, f"{here}/{escape(name)}")


def uses_keyword(schema: Any, keyword: str) -> bool:
    """Whether ``keyword`` stands as a keyword anywhere in ``schema``."""
    return any(key == keyword for _, key in keyword_positions(schema))


def wrap(schema: Any) -> dict[str, Any]:
    """``schema`` as the required property ``v`` of an object root (a test's data goes in as ``{"v": data}``)."""
    return {"type": "object", "properties": {"v": schema}, "required": ["v"]}


class RawGroup(NamedTuple):
    """One group of a suite file, as written (schema and data parsed as the relay parses them)."""

    folder: str  # "draft2020-12", ...
    file: str  # relative to the dialect folder: "ref.json", "optional/bignum.json", "optional/format/uuid.json"
    description: str
    schema: Any
    tests: tuple[tuple[str, Any, bool], ...]  # (description, data, valid)


def read_groups(folder: str, files: list[str] | None = None) -> list[RawGroup]:
    """Every group of ``files`` (default: every ``*.json`` below the folder, ``optional/`` included), in file order."""
    base = SUITE_ROOT / folder
    names = files if files is not None else sorted(p.relative_to(base).as_posix() for p in base.rglob("*.json"))
    groups = []
    for name in names:
        path = base / name
        assert path.is_file(), f"suite file missing: {path}"
        text = path.read_text(encoding="utf-8")
        as_schema = json.loads(text, parse_float=literal_float)
        as_data = json.loads(text, parse_float=exact_float)
        for schema_group, data_group in zip(as_schema, as_data, strict=True):
            tests = tuple((t["description"], t["data"], t["valid"]) for t in data_group["tests"])
            groups.append(RawGroup(folder, name, schema_group["description"], schema_group["schema"], tests))
    return groups
