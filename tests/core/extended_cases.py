"""Hypothesis strategies for the extended differential tests (shared, not a test module).

:func:`schemas` draws in-profile roots (2020-12 or draft-07) over the whole extended keyword set;
:func:`values_for` draws arguments for one: fitted to it (:class:`Fitter`), fitted then changed in
one spot, or built from the numbers, strings and names the schema holds.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from mcp_guard.core.json_values import Inexact
from tests.core.exact_oracle import (
    D7,
    D2020,
    FORMAT_NAMES,
    FORMAT_TABLE,
    UNKNOWN_FORMATS,
    families,
    has_lone_surrogate,
    literal,
)
from tests.core.test_differential import mutate

Draw = Callable[[st.SearchStrategy[Any]], Any]


# --- schema generation -----------------------------------------------------------------------

NAMES = ["a", "b", "c", "aa", "A", "1", "x-y", "é", "", "type", "$ref", "properties"]
PATTERN_POOL: list[tuple[str, list[str]]] = [
    # (pattern, strings that it should meet often: matches and the ECMA-vs-Python traps)
    ("^a", ["a", "ab", "ba", "A"]),
    ("^\\d+$", ["12", "١٢", "1a", "", "0"]),  # ECMA \d is ASCII only; Python's is Unicode
    ("^\\w+$", ["ab_1", "é", "ß", "a b"]),  # ECMA \w ASCII (u flag without i); Python Unicode
    ("^a$", ["a", "a\n", "aa"]),  # Python $ matches before a final newline
    ("^.$", ["a", "\r", "\u2028", "😀", "\n", "ab"]),  # ECMA . excludes \r \u2028 \u2029; u: one code point
    ("\\s", ["a b", "\x1c", "\ufeff", "\u00a0", "ab"]),  # Python \s has \x1c-\x1f; ECMA has \ufeff
    ("^[a-c]{2,3}$", ["ab", "abc", "abcd", "a"]),
    ("b+", ["b", "abba", "a", ""]),
    ("^\\p{Lu}", ["A", "É", "a", "1"]),  # Unicode property escape (u flag); Python re has none
    ("^(?<x>a)\\k<x>$", ["aa", "a", "ab"]),  # named group + backreference, ECMA syntax
    ("[^\\x00-\\x7F]", ["é", "a", "😀"]),
    ("^\\u0041", ["A", "a"]),
    ("", ["", "a"]),
]
PATTERNS = [p for p, _ in PATTERN_POOL]
PATTERN_STRINGS = sorted({s for _, strings in PATTERN_POOL for s in strings})
TRAP_STRINGS = ["", "a", "ab", "abc", "A", "1", "é", "😀", "\ud800", "a\ud800b", "true", "null"]
"""Strings every run meets; lone surrogates count as one code point each for lengths (E2)."""

INTS = [0, 1, -1, 2, 3, 5, 10, 100, 2**53, 2**53 + 1, 10**23, -(10**23), 2**64 + 1, 10**30]
FLOATS = [0.0, -0.0, 0.5, 1.0, 1.5, 0.1, 0.3, 0.2, 0.7, 2.5, 1e-5, 1e23, 2.0**53, 1e308, -1.5, 3.3, 0.30000000000000004]
INEXACT = [Inexact("0.1000000000000000000001"), Inexact("1e25"), Inexact("3.00000000000000000001")]
"""Schema literals no double holds (the relay keeps their text, E1)."""
DIVISORS: list[Any] = [1, 2, 3, 10, 0.5, 0.1, 0.01, 0.3, 1e-5, 1.5, 10**20, Inexact("0.0000000000000000000001")]


def number(draw: Draw, exotic: bool = True) -> Any:
    pools: list[st.SearchStrategy[Any]] = [st.sampled_from(INTS), st.sampled_from(FLOATS), st.integers(-5, 5)]
    if exotic:
        pools.append(st.sampled_from(INEXACT))
    return draw(st.one_of(pools))


SMALL_JSON = st.recursive(
    st.none() | st.booleans() | st.sampled_from(INTS[:6] + FLOATS[:6]) | st.sampled_from(["a", "b", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(NAMES[:4]), inner, max_size=2),
    max_leaves=4,
)

ANNOTATION_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "$comment": st.just("c"),
    "default": SMALL_JSON,
    "deprecated": st.booleans(),
    "description": st.just("d"),
    "examples": st.lists(SMALL_JSON, max_size=2),
    "title": st.just("t"),
    "~contentMediaType": st.just("application/json"),  # sorted last; the key is written without "~"
}
"""Annotations (never validated, E-section "Annotations")."""

PROPERTY_NAMES: list[Any] = [{"maxLength": 1}, {"pattern": "^[a-c]"}, {"enum": ["a", "b"]}, False, {"minLength": 1}]

ALL_TYPES = ["object", "array", "string", "integer", "number", "boolean", "null"]


class Gen:
    """State of one generated schema: dialect, its one format, its definitions."""

    def __init__(self, draw: Draw, draft7: bool) -> None:
        self.draw = draw
        self.draft7 = draft7
        self.fmt = draw(st.sampled_from([None, None, *FORMAT_NAMES, *UNKNOWN_FORMATS])) if FORMAT_NAMES else None
        self.defs: dict[str, Any] = {}
        self.def_count = draw(st.integers(0, 3))
        self.holder = "definitions" if draft7 else "$defs"

    def maybe(self, odds: int) -> bool:
        """True with probability ``1 / (odds + 1)``."""
        return bool(self.draw(st.integers(0, odds)) == 0)

    def ref(self, above: int, consuming: bool) -> dict[str, Any] | None:
        """A ``$ref`` to a definition: to a later one (a DAG), or to any one in a consuming position."""
        first = 0 if consuming else above
        if first >= self.def_count:
            return None
        index = self.draw(st.integers(first, self.def_count - 1))
        return {"$ref": f"#/{self.holder}/d{index}"}

    def node(self, depth: int, level: int, consuming: bool) -> Any:
        """One subschema. ``level`` is the definition index it belongs to (refs go to later ones)."""
        draw = self.draw
        if depth >= 4:
            return draw(st.sampled_from([True, {}, {"type": "string"}, {"type": "integer", "minimum": 0}]))
        kind = draw(st.sampled_from(["typed"] * 6 + ["untyped", "bool", "applicator", "applicator", "ref"]))
        if kind == "bool":
            return draw(st.booleans())
        if kind == "ref":
            ref = self.ref(level + 1, consuming)
            if ref is not None:
                if not self.draft7 and draw(st.booleans()):
                    ref.update(self.keywords(draw(st.sampled_from(ALL_TYPES)), depth, level))
                return ref
            kind = "typed"
        node: dict[str, Any] = {}
        if kind == "typed":
            types_ = draw(st.lists(st.sampled_from(ALL_TYPES), min_size=1, max_size=2, unique=True))
            node["type"] = types_[0] if len(types_) == 1 and draw(st.booleans()) else types_
            node.update(self.keywords(draw(st.sampled_from(types_)), depth, level))
        elif kind == "untyped":
            node.update(self.keywords(draw(st.sampled_from(ALL_TYPES)), depth, level))
        if kind == "applicator" or draw(st.integers(0, 4)) == 0:
            node.update(self.applicator(depth, level))
        if draw(st.integers(0, 5)) == 0:
            node["enum"] = draw(st.lists(SMALL_JSON | st.sampled_from(INTS + FLOATS), max_size=4))
        if draw(st.integers(0, 8)) == 0:
            node["const"] = draw(SMALL_JSON | st.sampled_from(INTS + FLOATS + INEXACT))
        if draw(st.integers(0, 6)) == 0:
            # content* are annotations from 2019-09 on; draft-07 lets an implementation assert them
            name = draw(st.sampled_from(sorted(ANNOTATION_VALUES)[: -1 if self.draft7 else None]))
            node[name.lstrip("~")] = draw(ANNOTATION_VALUES[name])
        return node

    def applicator(self, depth: int, level: int) -> dict[str, Any]:
        draw = self.draw
        which = draw(st.sampled_from(["allOf", "anyOf", "oneOf", "not", "if"]))
        if which == "not":
            return {"not": self.node(depth + 1, level, False)}
        if which == "if":
            out = {"if": self.node(depth + 1, level, False)}
            if draw(st.booleans()):
                out["then"] = self.node(depth + 1, level, False)
            if draw(st.booleans()):
                out["else"] = self.node(depth + 1, level, False)
            return out
        return {which: [self.node(depth + 1, level, False) for _ in range(draw(st.integers(1, 3)))]}

    def keywords(self, kind: str, depth: int, level: int) -> dict[str, Any]:
        """Keywords of one JSON type (they constrain only values of that type)."""
        draw = self.draw
        out: dict[str, Any] = {}
        maybe = self.maybe
        if kind in ("integer", "number"):
            for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
                if maybe(3):
                    out[key] = number(draw)
            if maybe(2):
                out["multipleOf"] = draw(st.sampled_from(DIVISORS))
        elif kind == "string":
            if maybe(2):
                out["minLength"] = draw(st.integers(0, 3))
            if maybe(2):
                out["maxLength"] = draw(st.integers(0, 3))
            if maybe(2):
                out["pattern"] = draw(st.sampled_from(PATTERNS))
            if self.fmt is not None and maybe(1):
                out["format"] = self.fmt
        elif kind == "array":
            out.update(self.array(depth, level))
        elif kind == "object":
            out.update(self.object(depth, level))
        return out

    def array(self, depth: int, level: int) -> dict[str, Any]:
        draw = self.draw
        out: dict[str, Any] = {}
        maybe = self.maybe
        tuple_form = maybe(2)
        if tuple_form:
            prefix = [self.node(depth + 1, level, True) for _ in range(draw(st.integers(1, 2)))]
            if self.draft7:
                out["items"] = prefix
                if maybe(1):
                    out["additionalItems"] = self.node(depth + 1, level, True)
            else:
                out["prefixItems"] = prefix
                if maybe(1):
                    out["items"] = self.node(depth + 1, level, True)
        elif maybe(1):
            out["items"] = self.node(depth + 1, level, True)
        if maybe(2):
            out["contains"] = self.node(depth + 1, level, True)
            if not self.draft7 and maybe(1):
                out[draw(st.sampled_from(["minContains", "maxContains"]))] = draw(st.integers(0, 2))
        for key in ("minItems", "maxItems"):
            if maybe(3):
                out[key] = draw(st.integers(0, 3))
        if maybe(2):
            out["uniqueItems"] = draw(st.booleans())
        if not self.draft7 and maybe(3):
            out["unevaluatedItems"] = self.node(depth + 1, level, True)
        return out

    def object(self, depth: int, level: int) -> dict[str, Any]:
        draw = self.draw
        out: dict[str, Any] = {}
        maybe = self.maybe
        names = draw(st.lists(st.sampled_from(NAMES), max_size=3, unique=True))
        if names:
            out["properties"] = {n: self.node(depth + 1, level, True) for n in names}
        if maybe(3):
            out["patternProperties"] = {draw(st.sampled_from(PATTERNS[:8])): self.node(depth + 1, level, True)}
        if maybe(2):
            out["additionalProperties"] = draw(st.booleans()) if maybe(1) else self.node(depth + 1, level, True)
        if maybe(4):
            out["propertyNames"] = draw(
                st.sampled_from(
                    [{"maxLength": 1}, {"pattern": "^[a-c]"}, {"enum": ["a", "b"]}, False, {"minLength": 1}]
                )
            )
        if maybe(1):
            out["required"] = draw(st.lists(st.sampled_from(NAMES[:6]), max_size=3, unique=True))
        if maybe(3):
            dependents = {draw(st.sampled_from(NAMES[:4])): draw(st.lists(st.sampled_from(NAMES[:4]), unique=True))}
            if self.draft7:
                out["dependencies"] = dependents if maybe(1) else {"a": self.node(depth + 1, level, False)}
            else:
                out["dependentRequired"] = dependents
        if not self.draft7 and maybe(4):
            out["dependentSchemas"] = {draw(st.sampled_from(NAMES[:4])): self.node(depth + 1, level, False)}
        for key in ("minProperties", "maxProperties"):
            if maybe(4):
                out[key] = draw(st.integers(0, 3))
        if not self.draft7 and maybe(3):
            out["unevaluatedProperties"] = draw(st.booleans()) if maybe(1) else self.node(depth + 1, level, True)
        return out


@st.composite
def schemas(draw: Draw) -> dict[str, Any]:
    """An in-profile root: object-only, 2020-12 or draft-07, with definitions."""
    draft7 = draw(st.integers(0, 3)) == 0
    gen = Gen(draw, draft7)
    for index in range(gen.def_count):
        gen.defs[f"d{index}"] = gen.node(1, index, False)
    root: dict[str, Any] = {}
    if draft7:
        root["$schema"] = D7
    elif draw(st.booleans()):
        root["$schema"] = D2020
    if draw(st.integers(0, 3)) > 0:
        root["type"] = "object" if draw(st.integers(0, 3)) > 0 else ["object"]
    root.update(gen.object(0, -1))
    if draw(st.integers(0, 3)) == 0:
        root.update(gen.applicator(0, -1))
    if gen.defs:
        root[gen.holder] = gen.defs
        ref = gen.ref(0, True)
        if ref is not None and draw(st.booleans()):
            root.setdefault("properties", {})["r"] = ref
    return root


# --- values ----------------------------------------------------------------------------------


def vocabulary(schema: Any) -> tuple[list[Any], list[str], list[str]]:
    """Numbers, strings and property names the schema holds (values near them hit its bounds)."""
    numbers: list[Any] = []
    strings: list[str] = []
    names: list[str] = []

    def walk(node: Any, key: str | None = None) -> None:
        if type(node) is dict:
            for k, v in node.items():
                if key in ("properties", "patternProperties", "dependentRequired", "dependentSchemas", "dependencies"):
                    names.append(k)
                walk(v, k)
        elif type(node) is list:
            for v in node:
                if key == "required" and type(v) is str:
                    names.append(v)
                walk(v, key)
        elif type(node) in (int, float) and type(node) is not bool:
            numbers.append(node)
        elif type(node) is Inexact:
            numbers.append(float(node.text))
        elif type(node) is str:
            strings.append(node)

    walk(schema)
    return numbers, strings, names


def near(x: Any) -> list[Any]:
    """Numbers at and around ``x``, as ints and floats."""
    out: list[Any] = [x]
    if type(x) is int:
        out += [x - 1, x + 1, 2 * x, -x]
        if abs(x) < 2**60:
            out.append(float(x))
    elif type(x) is float and math.isfinite(x):
        out += [math.nextafter(x, -math.inf), math.nextafter(x, math.inf), x * 2, x * 3, x / 2, -x]
        if x.is_integer() and abs(x) < 2**60:
            out.append(int(x))
    return [v for v in out if type(v) is not float or math.isfinite(v)]


@st.composite
def arbitrary_for(draw: Draw, schema: dict[str, Any]) -> Any:
    """One argument object built from the schema's vocabulary (often valid, often not)."""
    numbers, strings, names = vocabulary(schema)
    fmt_pool = [s for name, table in FORMAT_TABLE.items() if name in strings for s in table]
    string_pool = sorted({*safe_strings(schema), *pattern_examples(strings), *fmt_pool, *names[:6]})
    number_pool = [v for n in numbers for v in near(n)] + INTS[:6] + FLOATS[:8]
    name_pool = sorted({*names, "a", "b", "x"})
    scalar = st.one_of(
        st.sampled_from(number_pool),
        st.sampled_from(string_pool),
        st.booleans(),
        st.none(),
    )
    if fmt_pool:  # a format-bearing schema: its strings come from the suite's pool (module docstring)
        scalar = st.one_of(st.sampled_from(fmt_pool), scalar)
    value = st.recursive(
        scalar,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(name_pool), inner, max_size=4),
        max_leaves=10,
    )
    return draw(st.dictionaries(st.sampled_from(name_pool), value, max_size=5))


def safe_strings(schema: Any) -> list[str]:
    """The trap strings, without lone surrogates where a pattern must search them (the engine refuses those, E3)."""
    if "pattern" in families(schema, None):
        return [s for s in TRAP_STRINGS if not has_lone_surrogate(s)]
    return TRAP_STRINGS


def pattern_examples(strings: list[str]) -> list[str]:
    return [s for p, pool in PATTERN_POOL if p in strings for s in pool]


class Fitter:
    """Builds a value aimed at one schema: each keyword's boundary and trap values (the oracle decides)."""

    def __init__(self, draw: Draw, root: dict[str, Any]) -> None:
        self.draw = draw
        self.root = root
        self.strings = safe_strings(root)

    def target(self, ref: str) -> Any:
        node: Any = self.root
        for token in ref.removeprefix("#/").split("/"):
            node = node.get(token, {}) if type(node) is dict else {}
        return node

    def fit(self, node: Any, depth: int = 0) -> Any:
        draw = self.draw
        if type(node) is not dict or depth > 8:
            return draw(SMALL_JSON)
        if "const" in node and draw(st.integers(0, 3)) > 0:
            return plain_number(node["const"])
        if node.get("enum") and draw(st.integers(0, 3)) > 0:
            return plain_number(draw(st.sampled_from(node["enum"])))
        if "$ref" in node and draw(st.integers(0, 3)) > 0:
            return self.fit(self.target(node["$ref"]), depth + 1)
        for key in ("allOf", "anyOf", "oneOf"):
            if node.get(key) and draw(st.booleans()):
                return self.fit(draw(st.sampled_from(node[key])), depth + 1)
        kinds = node.get("type", ALL_TYPES)
        kinds = [kinds] if type(kinds) is str else kinds
        kind = draw(st.sampled_from(kinds or ALL_TYPES))
        if kind == "object":
            return self.fit_object(node, depth)
        if kind == "array":
            prefix = node.get("prefixItems", node.get("items") if type(node.get("items")) is list else [])
            rest = node.get("items") if type(node.get("items")) is not list else node.get("additionalItems", True)
            out = [self.fit(sub, depth + 1) for sub in prefix[: draw(st.integers(0, len(prefix)))]]
            out += [self.fit(rest, depth + 1) for _ in range(draw(st.integers(0, 3)))]
            return out
        if kind == "string":
            if "format" in node and node["format"] in FORMAT_TABLE:
                return draw(st.sampled_from(sorted(FORMAT_TABLE[node["format"]])))
            if "pattern" in node:
                return draw(st.sampled_from(pattern_examples([node["pattern"]]) or self.strings))
            return draw(st.sampled_from(self.strings))
        if kind in ("integer", "number"):
            return self.fit_number(node, kind == "integer")
        if kind == "boolean":
            return draw(st.booleans())
        return None

    def fit_object(self, node: dict[str, Any], depth: int) -> dict[str, Any]:
        draw = self.draw
        properties = node.get("properties", {})
        required = node.get("required", [])
        out: dict[str, Any] = {}
        for name, sub in properties.items():
            if name in required or draw(st.booleans()):
                out[name] = self.fit(sub, depth + 1)
        for pattern, sub in node.get("patternProperties", {}).items():
            for key in pattern_examples([pattern])[:2]:
                if draw(st.booleans()):
                    out[key] = self.fit(sub, depth + 1)
        for name in required:
            out.setdefault(name, draw(SMALL_JSON))
        if draw(st.integers(0, 3)) == 0:
            out[draw(st.sampled_from(["x", "zz", "é"]))] = self.fit(node.get("additionalProperties", True), depth + 1)
        return out

    def fit_number(self, node: dict[str, Any], integer: bool) -> Any:
        draw = self.draw
        options: list[Any] = []
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if key in node:
                options += near(plain_number(node[key]))
        divisor = node.get("multipleOf")
        if divisor is not None:
            exact = literal(divisor)
            for k in (0, 1, 2, 3, 7, -3, 10**6):
                options += [float(k * exact), k * exact.numerator // exact.denominator]
            options += [float(exact) * 3, 0.3, 0.7, 1.1]
        options += [0, 1, -1, 0.5, 2.0, 10**23, 2**53 + 1]
        value = draw(st.sampled_from([v for v in options if type(v) is not float or math.isfinite(v)]))
        return int(value) if integer and type(value) is float and value.is_integer() and draw(st.booleans()) else value


def plain_number(value: Any) -> Any:
    """A schema value as an argument can hold it (an ``Inexact`` literal as its nearest double)."""
    if type(value) is Inexact:
        return float(value.text)
    if type(value) is list:
        return [plain_number(v) for v in value]
    if type(value) is dict:
        return {k: plain_number(v) for k, v in value.items()}
    return value


@st.composite
def values_for(draw: Draw, schema: dict[str, Any]) -> Any:
    """Fitted (half), fitted then changed in one spot (a quarter), or from the schema's vocabulary."""
    how = draw(st.sampled_from(["fit", "fit", "mutated", "arbitrary"]))
    if how == "arbitrary":
        return draw(arbitrary_for(schema))
    value = Fitter(draw, schema).fit_object(schema, 0)
    if how == "mutated":
        value = mutate(draw, value)
    if type(value) is not dict:
        value = {"a": value}
    if "pattern" in families(schema, None) and has_lone_surrogate(json.dumps(value, ensure_ascii=False)):
        return {}
    return value
