"""Conformance of the ``extended`` profile against the whole official JSON Schema Test Suite.

Spec: ../shared/spec/input-schema-subset.md, "The extended profile" (Dialects, E1-E6). Every
group of every file of the four dialect folders (draft2020-12, draft2019-09, draft7, draft6,
each with ``optional/`` and ``optional/format/``) is adapted by one rule, then classified with
``profile="extended"``; the groups and tests are read by :mod:`tests.core.suite` (schemas as
the relay reads an upstream, data as it reads a client: no literal is rounded).

Adaptation (one rule for every group; the guard takes object roots only, spec "Dialects"):

- The root ``$schema`` is the folder's dialect URI. A group's own ``$schema`` naming that same
  dialect is dropped (it is now at the root); one naming anything else (a test metaschema such
  as ``http://localhost:1234/draft2020-12/metaschema-no-validation.json``) is left where it
  stands, so it is nested after wrapping and must be refused, as the guard cannot read it.
- A schema whose root has ``type: "object"`` is used as it is (with the ``$schema`` above).
- Any other schema ``S`` (boolean schemas included) is wrapped:
  ``{"$schema": D, "$id": <S's $id>, "type": "object", "properties": {"v": S'}, "required": ["v"],
  "$defs": <S's $defs>, "definitions": <S's definitions>}``, and each test's data is sent as
  ``{"v": data}``. ``S'`` is ``S`` without the hoisted members, with its local references
  rewritten to keep their targets:

  - ``$id`` (a URI, not a draft-07 ``#name`` anchor), ``$defs`` and ``definitions`` of the root
    of ``S`` move to the wrapper root: a root ``$id`` names the document (so leaving it at
    ``/properties/v`` would make it an embedded resource, E5), and definitions are only
    reference targets, never constraints. Exception (draft-06/07): beside a root ``$ref``
    nothing is hoisted, since that dialect ignores ``$ref``'s siblings.
  - A ``$ref`` into the document (a fragment, or a URI that resolves against the root ``$id`` to
    that ``$id``): ``#`` becomes ``#/properties/v``; ``#/$defs/...`` and ``#/definitions/...``
    stay (hoisted); any other pointer ``#/p`` becomes ``#/properties/v/p``; a plain-name
    fragment (``#foo``, an anchor) is unchanged, as anchors do not depend on location. The
    URI part before ``#`` is kept as written. Every other ``$ref`` (remote, or into an embedded
    resource) is unchanged: it leaves the document and must be refused.

Which groups are *in the profile* (the denominator of the 95% rule) is computed from the
adapted schema by :func:`outside_profile`, with no reference to what the guard says: a group is
in the profile when every key standing as a keyword (:func:`tests.core.suite.keyword_positions`)
is in :data:`IN_PROFILE` for its dialect (the spec's "Enforced exactly", "References" and
annotation lists, ``format``, a root ``$schema``/``$id``; for draft-06/07 without the content
annotations, which draft-07 lets a validator assert, see :data:`CONTENT`), and it has none of: an E5 feature (a
``$ref`` leaving the document, ``$dynamicRef``/``$dynamicAnchor``/``$recursiveRef``/
``$recursiveAnchor``, ``$vocabulary``, an embedded ``$id``, a key no dialect defines), a keyword
of another dialect, a nested ``$schema``, a draft-06/07 ``$ref`` with a sibling that constrains,
a ``$ref`` cycle that consumes no part of the instance (E6).

Then, per group:

- It classifies and checks without raising, eagerly and with ``defer=True`` alike.
- Outside the profile for a named reason (E5, another dialect's keyword, an unknown key, a
  nested ``$schema``) it is ``unsupported_capability``; and every group the guard does not
  classify ok has every test's call refused with the classification's issues.
- Classified ok, it is in the profile, and it agrees with the suite on every test, except the
  rule of :func:`diverges` (``format.json``: the suite's formats are annotations by default,
  the guard asserts them, E4): those tests are refused, keyword ``format``.
- Per dialect (:data:`PINS`): the counts are pinned exactly, so the module can never silently
  compare nothing; for 2020-12 and draft-07 the supported groups are at least 95% of the
  in-profile groups.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from typing import Any, NamedTuple
from urllib.parse import unquote, urldefrag, urljoin

import pytest

from mcp_guard import UNSUPPORTED, VALIDATION, check, classify
from mcp_guard import compile as compile_schema
from tests.core.suite import (
    DIALECT_FOLDERS,
    RawGroup,
    escape,
    keyword_positions,
    read_groups,
    subschemas,
    wrap,
)

try:
    classify({}, profile="extended")
except ValueError:
    pytest.skip("this build has no `extended` profile yet", allow_module_level=True)

PROFILE = "extended"

DIALECT_URI = {
    "draft2020-12": "https://json-schema.org/draft/2020-12/schema",
    "draft2019-09": "https://json-schema.org/draft/2019-09/schema",
    "draft7": "http://json-schema.org/draft-07/schema#",
    "draft6": "http://json-schema.org/draft-06/schema#",
}
OLD = frozenset({"draft7", "draft6"})
"""Dialects where ``$ref`` siblings are ignored and ``$id: "#name"`` is an anchor."""


def same_dialect(uri: Any, folder: str) -> bool:
    """Whether ``uri`` names the folder's dialect (with or without ``#``, ``http`` or ``https``)."""
    if type(uri) is not str:
        return False
    norm = uri.removesuffix("#").replace("https://", "http://", 1)
    return norm == DIALECT_URI[folder].removesuffix("#").replace("https://", "http://", 1)


# --------------------------------------------------------------------------- the profile's keywords

ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
    }
)
"""The meta-data vocabulary, ``$comment`` and the content annotations (never validated)."""

CONTENT = frozenset({"contentEncoding", "contentMediaType", "contentSchema"})
"""Annotations from 2019-09 on. draft-07 lets an implementation assert them (its suite's
``optional/content.json`` does), so there its author may mean a constraint: not counted in the
profile for draft-06/07 (the guard may refuse them; it must not pass them as annotations and
then disagree with that file)."""

_VALIDATION_07 = frozenset(
    {
        "type",
        "enum",
        "const",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxProperties",
        "minProperties",
        "required",
        "format",
    }
)
_APPLICATORS_06 = frozenset(
    {
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "items",
        "additionalItems",
        "contains",
        "properties",
        "patternProperties",
        "additionalProperties",
        "propertyNames",
        "dependencies",
    }
)
_REFERENCES = frozenset({"$ref", "$defs", "definitions", "$schema", "$id"})  # $schema, $id: root only (checked apart)

IN_PROFILE: dict[str, frozenset[str]] = {
    "draft6": _VALIDATION_07 | _APPLICATORS_06 | _REFERENCES | (ANNOTATIONS - CONTENT),
    "draft7": _VALIDATION_07 | _APPLICATORS_06 | {"if", "then", "else"} | _REFERENCES | (ANNOTATIONS - CONTENT),
    "draft2019-09": (
        _VALIDATION_07
        | {"maxContains", "minContains", "dependentRequired"}
        | (_APPLICATORS_06 - {"dependencies"})
        | {"if", "then", "else", "dependentSchemas", "unevaluatedItems", "unevaluatedProperties"}
        | _REFERENCES
        | {"$anchor"}
        | ANNOTATIONS
    ),
    "draft2020-12": (
        _VALIDATION_07
        | {"maxContains", "minContains", "dependentRequired"}
        | (_APPLICATORS_06 - {"dependencies", "additionalItems"})
        | {"prefixItems", "if", "then", "else", "dependentSchemas", "unevaluatedItems", "unevaluatedProperties"}
        | _REFERENCES
        | {"$anchor"}
        | ANNOTATIONS
    ),
}
"""Per dialect, the keywords the spec's extended profile enforces (or accepts as annotations):
"Enforced exactly" (2020-12 names, their draft-07 equivalents), "References", the annotations,
``format`` (E4). draft-06 and 2019-09: the same lists restricted to the keywords the dialect defines."""

E5_KEYWORDS = frozenset({"$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor", "$vocabulary"})
"""Keywords E5 keeps ``unsupported_capability`` in every dialect."""

DEFINED_SOMEWHERE = frozenset().union(*IN_PROFILE.values()) | E5_KEYWORDS
"""Every key some dialect defines; any other key is unknown (E5)."""

# In-place applicators (same instance): the edges of the E6 cycle check.
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_MAPS = ("dependentSchemas", "dependencies")


# --------------------------------------------------------------------------- adaptation


def _refers_to_root(base: str, root_id: str | None) -> bool:
    """Whether the URI part ``base`` of a ``$ref`` (before ``#``; not empty) names the document (its root ``$id``)."""
    if root_id is None:
        return False
    root = urldefrag(root_id)[0]
    return base == root or urldefrag(urljoin(root, base))[0] == root


def local_fragment(ref: str, root_id: str | None) -> str | None:
    """The fragment of a ``$ref`` that stays in the document (``""`` for the root), or ``None`` when it leaves it."""
    base, _, fragment = ref.partition("#")
    if base and not _refers_to_root(base, root_id):
        return None
    return fragment


HOISTED = ("$defs", "definitions")


def _rewrite_ref(ref: str, root_id: str | None) -> str:
    fragment = local_fragment(ref, root_id)
    if fragment is None or (fragment and not fragment.startswith("/")):
        return ref  # leaves the document, or an anchor
    base = ref.partition("#")[0]
    first = unquote(fragment[1:].split("/")[0]) if fragment else None
    if first in HOISTED:
        return ref
    return f"{base}#/properties/v{fragment}"


def _rewrite_refs(schema: Any, root_id: str | None) -> None:
    for _, node in subschemas(schema):
        if type(node) is dict and type(node.get("$ref")) is str:
            node["$ref"] = _rewrite_ref(node["$ref"], root_id)


def adapt(folder: str, raw: Any) -> tuple[Any, bool]:
    """The group's schema as the guard receives it, and whether it was wrapped (module docstring)."""
    uri = DIALECT_URI[folder]
    schema = copy.deepcopy(raw)
    if type(schema) is dict and same_dialect(schema.get("$schema"), folder):
        del schema["$schema"]
    if type(schema) is dict and schema.get("type") == "object":
        return {"$schema": uri, **schema}, False
    root: dict[str, Any] = {"$schema": uri}
    hoist = type(schema) is dict and not (folder in OLD and "$ref" in schema)
    root_id = None
    if hoist and type(schema.get("$id")) is str and not schema["$id"].startswith("#"):
        root_id = schema.pop("$id")
        root["$id"] = root_id
    root.update(wrap(None))
    if hoist:
        for key in HOISTED:
            if key in schema:
                root[key] = schema.pop(key)
    root["properties"] = {"v": schema}
    _rewrite_refs(root, root_id)
    return root, True


# --------------------------------------------------------------------------- what the spec says of a group


def _anchors(schema: Any, folder: str) -> dict[str, str]:
    """Plain-name anchor → schema pointer (``$anchor``; draft-06/07 ``$id: "#name"``)."""
    found = {}
    for pointer, node in subschemas(schema):
        if type(node) is dict:
            if type(node.get("$anchor")) is str:
                found[node["$anchor"]] = pointer
            if folder in OLD and type(node.get("$id")) is str and node["$id"].startswith("#"):
                found[node["$id"][1:]] = pointer
    return found


def _target(ref: str, root_id: str | None, anchors: dict[str, str]) -> str | None:
    """The schema pointer a local ``$ref`` lands on (``None``: leaves the document or names no anchor)."""
    fragment = local_fragment(ref, root_id)
    if fragment is None:
        return None
    fragment = unquote(fragment)
    if fragment == "" or fragment.startswith("/"):
        return fragment
    return anchors.get(fragment)


def _in_place_edges(
    pointer: str, node: Any, folder: str, root_id: str | None, anchors: dict[str, str]
) -> Iterator[str]:
    if type(node) is not dict:
        return
    if type(node.get("$ref")) is str:
        target = _target(node["$ref"], root_id, anchors)
        if target is not None:
            yield target
        if folder in OLD:
            return  # siblings of $ref are ignored in draft-06/07
    for key in _IN_PLACE_ONE:
        if key in node:
            yield f"{pointer}/{key}"
    for key in _IN_PLACE_LISTS:
        if type(node.get(key)) is list:
            yield from (f"{pointer}/{key}/{i}" for i in range(len(node[key])))
    for key in _IN_PLACE_MAPS:
        if type(node.get(key)) is dict:
            yield from (f"{pointer}/{key}/{escape(k)}" for k, v in node[key].items() if type(v) in (dict, bool))


def has_in_place_cycle(schema: Any, folder: str) -> bool:
    """Whether references form a cycle that applies to the same instance all the way round (E6)."""
    nodes = dict(subschemas(schema))
    root_id = schema.get("$id") if type(schema) is dict and type(schema.get("$id")) is str else None
    anchors = _anchors(schema, folder)
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(pointer: str) -> bool:
        state[pointer] = 1
        for nxt in _in_place_edges(pointer, nodes[pointer], folder, root_id, anchors):
            if nxt not in nodes:
                continue
            if state.get(nxt) == 1 or (nxt not in state and visit(nxt)):
                return True
        state[pointer] = 2
        return False

    return any(pointer not in state and visit(pointer) for pointer in nodes)


def outside_profile(schema: Any, folder: str) -> dict[str, str]:
    """Why the adapted ``schema`` is outside the extended profile for ``folder``: reason → example (empty: inside).

    Reasons ``"E5"``, ``"other dialect"``, ``"nested $schema"`` are ones the spec names as
    ``unsupported_capability``; ``"$ref siblings"`` (draft-06/07) and ``"E6 cycle"`` likewise.
    """
    why: dict[str, str] = {}
    root_id = schema.get("$id") if type(schema) is dict and type(schema.get("$id")) is str else None
    allowed = IN_PROFILE[folder]
    for pointer, key in keyword_positions(schema):
        at_root = pointer.count("/") == 1
        if key in E5_KEYWORDS:
            why.setdefault("E5", key)
        elif key not in DEFINED_SOMEWHERE:
            why.setdefault("E5", f"unknown key {key!r}")
        elif key not in allowed:
            why.setdefault("other dialect", key)
        elif key == "$schema" and not at_root:
            why.setdefault("nested $schema", pointer)
        elif key == "$id" and not at_root:
            holder = schema
            value = _at(schema, pointer)
            if not (folder in OLD and type(value) is str and value.startswith("#")):
                why.setdefault("E5", f"embedded $id at {pointer}")
            del holder
    for pointer, node in subschemas(schema):
        if type(node) is not dict:
            continue
        ref = node.get("$ref")
        if type(ref) is str and local_fragment(ref, root_id) is None:
            why.setdefault("E5", f"$ref leaves the document at {pointer}")
        if type(ref) is str and folder in OLD:
            siblings = set(node) - {"$ref"} - ANNOTATIONS - {"$id", "$defs", "definitions", "$schema"}
            if siblings:
                why.setdefault("$ref siblings", f"{pointer}: {sorted(siblings)}")
    if not why and has_in_place_cycle(schema, folder):
        why["E6 cycle"] = "a reference cycle that consumes no part of the instance"
    return why


def _at(schema: Any, pointer: str) -> Any:
    node = schema
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if type(node) is list else node[token]
    return node


MUST_BE_UNSUPPORTED = frozenset({"E5", "other dialect", "nested $schema", "$ref siblings", "E6 cycle"})


# --------------------------------------------------------------------------- groups


class Group(NamedTuple):
    folder: str
    file: str
    description: str
    schema: Any  # adapted
    tests: tuple[tuple[str, Any, bool], ...]  # (description, adapted data, valid)
    outside: dict[str, str]  # outside_profile(schema): empty when in the profile

    @property
    def id(self) -> str:
        return f"{self.folder}/{self.file.removesuffix('.json')}::{self.description}"


def load(raw: RawGroup) -> Group:
    schema, wrapped = adapt(raw.folder, raw.schema)
    tests = tuple((d, {"v": data} if wrapped else data, valid) for d, data, valid in raw.tests)
    return Group(raw.folder, raw.file, raw.description, schema, tests, outside_profile(schema, raw.folder))


GROUPS = [load(raw) for folder in DIALECT_FOLDERS for raw in read_groups(folder)]


@functools.cache
def verdict(index: int) -> Any:
    """The classification of ``GROUPS[index]`` (cached: several tests ask)."""
    return classify(GROUPS[index].schema, profile=PROFILE)


ANNOTATION_ONLY = "only an annotation by default"


def diverges(group: Group, description: str) -> bool:
    """E4's documented divergence: in ``format.json`` an invalid string "is only an annotation by
    default" for the suite; the guard asserts every 2020-12 format, in every dialect."""
    return group.file == "format.json" and description.endswith(ANNOTATION_ONLY)


# --------------------------------------------------------------------------- the pins


class Pin(NamedTuple):
    groups: int  # groups in the folder's files
    in_profile: int  # outside_profile() is empty
    supported: int  # classify(...).ok
    unsupported: int  # kind unsupported_capability
    malformed: int  # kind validation
    compared: int  # tests of supported groups compared with the suite


PINS: dict[str, Pin] = {
    "draft2020-12": Pin(groups=461, in_profile=387, supported=387, unsupported=74, malformed=0, compared=2048),
    "draft2019-09": Pin(groups=448, in_profile=387, supported=387, unsupported=61, malformed=0, compared=2009),
    "draft7": Pin(groups=321, in_profile=291, supported=291, unsupported=30, malformed=0, compared=1651),
    "draft6": Pin(groups=276, in_profile=254, supported=254, unsupported=22, malformed=0, compared=1220),
}
"""Per dialect folder, the counts of this suite snapshot under the current engine. Update them
here (one table) when the engine or the suite changes; ``test_pins`` prints the new row."""

MIN_SHARE = 0.95
"""For 2020-12 and draft-07: supported groups / in-profile groups (issue 11, item 4)."""
SHARE_DIALECTS = ("draft2020-12", "draft7")

GROUP_PARAMS = [pytest.param(i, id=g.id) for i, g in enumerate(GROUPS)]


# --------------------------------------------------------------------------- adaptation self-tests


def test_adapt_wraps_and_rewrites_local_refs() -> None:
    raw = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:x:root",
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"items": {"$ref": "#"}}},
        "properties": {"p": {"$ref": "#/properties/q"}, "q": {"$ref": "#item"}, "r": {"$ref": "urn:x:root#/$defs/a"}},
        "prefixItems": [{"$ref": "urn:x:root"}, {"$ref": "other.json#/x"}],
    }
    schema, wrapped = adapt("draft2020-12", raw)
    assert wrapped
    assert list(schema)[:3] == ["$schema", "$id", "type"]
    assert schema["$id"] == "urn:x:root" and schema["required"] == ["v"]
    assert schema["$defs"] == {"a": {"$ref": "#/$defs/b"}, "b": {"items": {"$ref": "#/properties/v"}}}
    v = schema["properties"]["v"]
    assert "$id" not in v and "$defs" not in v and "$schema" not in v
    assert v["properties"] == {
        "p": {"$ref": "#/properties/v/properties/q"},
        "q": {"$ref": "#item"},
        "r": {"$ref": "urn:x:root#/$defs/a"},
    }
    assert v["prefixItems"] == [{"$ref": "urn:x:root#/properties/v"}, {"$ref": "other.json#/x"}]
    assert raw["$defs"]["b"]["items"] == {"$ref": "#"}  # the suite's data is never changed


def test_adapt_keeps_object_roots_and_old_ref_siblings() -> None:
    schema, wrapped = adapt("draft7", {"type": "object", "properties": {"a": {"$ref": "#"}}})
    assert not wrapped and schema == {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"a": {"$ref": "#"}},
    }
    schema, _ = adapt("draft7", {"$id": "http://x/y", "$ref": "#/definitions/a", "definitions": {"a": {}}})
    assert schema["properties"]["v"] == {"$id": "http://x/y", "$ref": "#/definitions/a", "definitions": {"a": {}}}
    assert "$id" not in schema and "definitions" not in schema
    schema, _ = adapt("draft6", True)
    assert schema["properties"] == {"v": True}
    schema, _ = adapt("draft2020-12", {"$schema": "http://localhost:1234/meta.json", "type": "string"})
    assert schema["properties"]["v"]["$schema"] == "http://localhost:1234/meta.json"


def test_outside_profile_reasons() -> None:
    def why(folder: str, raw: Any) -> set[str]:
        return set(outside_profile(adapt(folder, raw)[0], folder))

    assert why("draft2020-12", {"minLength": 1, "format": "uuid", "$defs": {"a": {"$anchor": "x"}}}) == set()
    assert why("draft2020-12", {"$dynamicRef": "#x"}) == {"E5"}
    assert why("draft2020-12", {"x-extra": 1}) == {"E5"}
    assert why("draft2020-12", {"$ref": "http://example.com/s.json"}) == {"E5"}
    assert why("draft2020-12", {"$defs": {"a": {"$id": "http://x/a"}}}) == {"E5"}
    assert why("draft2020-12", {"dependencies": {"a": ["b"]}}) == {"other dialect"}
    assert why("draft7", {"prefixItems": [{}]}) == {"other dialect"}
    assert why("draft7", {"definitions": {"a": {"$id": "#foo"}}, "$ref": "#foo"}) == set()
    assert why("draft7", {"$ref": "#/definitions/a", "maximum": 1, "definitions": {"a": {}}}) == {"$ref siblings"}
    assert why("draft2020-12", {"properties": {"a": {"$schema": DIALECT_URI["draft2020-12"]}}}) == {"nested $schema"}
    assert why("draft2020-12", {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}) == {"E6 cycle"}
    assert why("draft2020-12", {"$ref": "#"}) == {"E6 cycle"}  # becomes #/properties/v on itself
    assert why("draft2020-12", {"items": {"$ref": "#"}}) == set()  # consumes an element each round
    assert why("draft2020-12", {"anyOf": [{"$ref": "#/$defs/a"}], "$defs": {"a": {"not": {"$ref": "#"}}}}) == {
        "E6 cycle"
    }


# --------------------------------------------------------------------------- per group


@pytest.mark.parametrize("index", GROUP_PARAMS)
def test_group(index: int) -> None:
    group = GROUPS[index]
    report = verdict(index)
    deferred = compile_schema(group.schema, profile=PROFILE, defer=True)
    eager = compile_schema(group.schema, profile=PROFILE)
    assert deferred.report == report == eager.report
    assert report.ok or report.kind in (UNSUPPORTED, VALIDATION)
    assert all(issue.instance_path is None for issue in report.issues)
    if MUST_BE_UNSUPPORTED & group.outside.keys():
        assert report.kind == UNSUPPORTED, f"outside the profile ({group.outside}) but {report.to_json()}"
    if report.ok:
        assert not group.outside, f"classified ok, but outside the profile: {group.outside}"
    for description, data, valid in group.tests:
        result = eager.check(data)
        assert deferred.check(data) == result, description
        assert check(group.schema, data, profile=PROFILE) == result, description
        if not report.ok:
            assert not result.ok and result.issues == report.issues, description
        elif diverges(group, description):
            assert valid and not result.ok, f"{description}: listed divergence no longer diverges"
            assert {issue.keyword for issue in result.issues} == {"format"}, result.issues
        else:
            assert result.ok is valid, f"{description}: suite says valid={valid}, guard: {result.issues}"
            assert result.ok or (result.kind == VALIDATION and all(i.instance_path is not None for i in result.issues))


# --------------------------------------------------------------------------- per dialect


def counts(folder: str) -> Pin:
    indices = [i for i, g in enumerate(GROUPS) if g.folder == folder]
    reports = [verdict(i) for i in indices]
    return Pin(
        groups=len(indices),
        in_profile=sum(not GROUPS[i].outside for i in indices),
        supported=sum(r.ok for r in reports),
        unsupported=sum(r.kind == UNSUPPORTED for r in reports),
        malformed=sum(r.kind == VALIDATION for r in reports),
        compared=sum(len(GROUPS[i].tests) for i, r in zip(indices, reports, strict=True) if r.ok),
    )


@pytest.mark.parametrize("folder", DIALECT_FOLDERS)
def test_pins(folder: str) -> None:
    got = counts(folder)
    assert got == PINS[folder], f"update PINS[{folder!r}] = {got!r}"


@pytest.mark.parametrize("folder", SHARE_DIALECTS)
def test_supported_share_of_the_profile(folder: str) -> None:
    in_profile = [i for i, g in enumerate(GROUPS) if g.folder == folder and not g.outside]
    refused = [GROUPS[i].id for i in in_profile if not verdict(i).ok]
    share = 1 - len(refused) / len(in_profile)
    assert share >= MIN_SHARE, f"{share:.1%} of {len(in_profile)} in-profile groups supported; refused: {refused}"


def test_the_divergence_rule_names_real_cases() -> None:
    hits = [(g.id, d) for g in GROUPS for d, _, _ in g.tests if diverges(g, d)]
    # 2020-12's format.json has one such test per format it defines (19); the other folders have none
    assert len(hits) == 19, hits
    assert {g.folder for g in GROUPS if g.file == "format.json" and any(diverges(g, d) for d, _, _ in g.tests)} == {
        "draft2020-12"
    }
