"""Differential property tests of the ``extended`` profile against python-jsonschema and jsonschema-rs.

Spec: ../shared/spec/input-schema-subset.md, "The extended profile". Generated schemas use the
whole extended keyword set, in 2020-12 (with or without a root ``$schema``) and draft-07 (with
its ``items`` list, ``additionalItems``, ``dependencies`` and ``definitions``): every applicator,
every validation keyword, ``$ref`` into ``$defs``/``definitions`` (recursion only through
positions that consume part of the instance, so no E6 cycle), boolean schemas, untyped nodes,
keywords beside a type they do not apply to, annotations, ``format``. Values are built to fit a
schema, then often changed in one spot, or drawn from the numbers, strings and names the schema
itself holds, so that both verdicts are common (asserted).

Three oracles:

- python-jsonschema (``Draft202012Validator`` / ``Draft7Validator`` by the root ``$schema``, with
  its format checker), as shipped: the *raw* oracle;
- jsonschema-rs (``validator_for``, ``validate_formats=True``): the second raw oracle;
- the *exact* oracle: python-jsonschema with the keywords where it is wrong by design replaced by
  the spec's exact rule, and nothing else changed:

  - E1: ``multipleOf``, ``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``,
    ``enum``, ``const`` and ``uniqueItems`` compare the mathematical values of the JSON literals
    (:func:`literal`: a double stands for the literal the relay would forward, its shortest
    ``repr`` below 2**53 and its integer value above; python-jsonschema divides doubles, and
    ``1e23 == 10**23`` is false in Python);
  - E3: ``pattern``, ``patternProperties`` (and the pattern matching inside
    ``additionalProperties``/``unevaluatedProperties``) search with ``regress`` (ECMA-262, ``u``
    flag), not Python ``re`` (whose ``\\d``, ``\\w``, ``\\s``, ``.`` and ``$`` differ);
  - E4: ``format`` is decided by the suite's ``optional/format`` verdict for that string when the
    suite has it (the generator draws a format-bearing schema's strings from that pool), else by
    the guard's own checker (held to the suite in test_conformance_extended and test_formats: here
    ``format`` is compared for where it applies, not for each checker's rule); python-jsonschema's
    and jsonschema-rs's checkers are lax by design (``email``, ``idn-*``, ``duration`` ...).

Every case must agree with the exact oracle. A raw python-jsonschema disagreement is accepted only
where the exact oracle differs from it (so the replaced keyword is the reason), and tallied by
keyword family; a jsonschema-rs disagreement only where the case involves a by-design family
(:func:`rs_by_design`), tallied. Anything else fails. Also: ``compile(defer=True)`` gives the
eager report and the same verdicts (as test_deferred does for the other profiles).

The classification modes are compared as test_deferred does for the other profiles:
``compile(defer=True)`` (the relay's listing) gives the eager report, notes and ``TypeError``, and
the same verdicts, on schema-shaped garbage, on generated in-profile schemas, on every suite and
corpus schema.

Profiles: CI (default) a fixed seed, 300 schemas; long: ``MCP_GUARD_HYPOTHESIS_LONG=1``,
randomized, 20,000 schemas (``pytest -s`` prints the tallies). No example database.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import types
from collections import Counter
from collections.abc import Callable, Iterator
from decimal import Decimal
from fractions import Fraction
from typing import Any

import jsonschema
import jsonschema._keywords
import jsonschema._legacy_keywords
import jsonschema._utils
import jsonschema_rs
import pytest
import regress
from hypothesis import HealthCheck, event, given, seed, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator, FormatChecker, ValidationError

from mcp_guard import UNSUPPORTED, VALIDATION, classify
from mcp_guard import compile as compile_schema
from mcp_guard.core.extended.table import KEYWORDS as EXTENDED_KEYWORDS
from mcp_guard.core.formats import FORMATS
from mcp_guard.core.json_values import Inexact
from tests.core.suite import SUITE_ROOT
from tests.core.test_deferred import CORPUS, HOSTILE, SCALARS, schema_like, suite_schemas
from tests.core.test_differential import mutate

try:
    classify({}, profile="extended")
except ValueError:
    pytest.skip("this build has no `extended` profile yet", allow_module_level=True)

PROFILE = "extended"
LONG = os.environ.get("MCP_GUARD_HYPOTHESIS_LONG") == "1"
SCHEMAS = 20_000 if LONG else 300
CI_SEED = 20261201

D2020 = "https://json-schema.org/draft/2020-12/schema"
D7 = "http://json-schema.org/draft-07/schema#"

Draw = Callable[[st.SearchStrategy[Any]], Any]


def profile_settings(max_examples: int) -> Callable[[Any], Any]:
    """CI: a fixed seed and bounded. Long: randomized. Never a database."""
    chosen = settings(
        max_examples=max_examples,
        database=None,
        deadline=None,
        print_blob=True,
        suppress_health_check=list(HealthCheck),
    )

    def apply(test: Any) -> Any:
        test = chosen(test)
        return test if LONG else seed(CI_SEED)(test)

    return apply


# --- exact values (E1) -------------------------------------------------------------------------

EXACT_SPAN = 2.0**53


def literal(x: Any) -> Fraction:
    """The mathematical value of the JSON literal a number stands for (E1)."""
    t = type(x)
    if t is int:
        return Fraction(x)
    if t is float:
        return Fraction(int(x)) if abs(x) >= EXACT_SPAN else Fraction(Decimal(repr(x)))
    if t is Decimal:
        return Fraction(x)
    if t is Inexact:
        return Fraction(Decimal(x.text))
    raise TypeError(t)


def is_num(x: Any) -> bool:
    return type(x) in (int, float, Decimal, Inexact)


def jeq(a: Any, b: Any) -> bool:
    """JSON equality with exact numbers (decisions 6 and 7, E1)."""
    if is_num(a) and is_num(b):
        return literal(a) == literal(b)
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(jeq(a[k], b[k]) for k in a)
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(jeq(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _is_number(validator: Any, instance: Any) -> bool:
    return bool(validator.is_type(instance, "number"))


def _bound(name: str, ok: Callable[[Fraction, Fraction], bool]) -> Any:
    def keyword(validator: Any, bound: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
        if _is_number(validator, instance) and not ok(literal(instance), literal(bound)):
            yield ValidationError(f"{name} (exact)")

    return keyword


def _multiple_of(validator: Any, divisor: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if _is_number(validator, instance) and (literal(instance) / literal(divisor)).denominator != 1:
        yield ValidationError("multipleOf (exact)")


def _enum(validator: Any, choices: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not any(jeq(instance, c) for c in choices):
        yield ValidationError("enum (exact)")


def _const(validator: Any, const: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not jeq(instance, const):
        yield ValidationError("const (exact)")


def _unique(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if unique and validator.is_type(instance, "array"):
        for i, a in enumerate(instance):
            if any(jeq(a, b) for b in instance[i + 1 :]):
                yield ValidationError("uniqueItems (exact)")
                return


EXACT_NUMBER_KEYWORDS = {
    "minimum": _bound("minimum", lambda v, b: v >= b),
    "maximum": _bound("maximum", lambda v, b: v <= b),
    "exclusiveMinimum": _bound("exclusiveMinimum", lambda v, b: v > b),
    "exclusiveMaximum": _bound("exclusiveMaximum", lambda v, b: v < b),
    "multipleOf": _multiple_of,
    "enum": _enum,
    "const": _const,
    "uniqueItems": _unique,
}


# --- ECMA-262 patterns (E3) ------------------------------------------------------------------


@functools.cache
def ecma(pattern: str) -> regress.Regex:
    return regress.Regex(pattern, "u")


def ecma_search(pattern: str, text: str) -> bool:
    return ecma(pattern).find(text) is not None


_ECMA_RE = types.SimpleNamespace(search=ecma_search)


@contextlib.contextmanager
def ecma_patterns() -> Iterator[None]:
    """python-jsonschema's modules search patterns with ``re.search``; here with ``regress`` instead."""
    modules = (jsonschema._keywords, jsonschema._utils, jsonschema._legacy_keywords)
    saved = [m.re for m in modules]  # type: ignore[attr-defined]
    for m in modules:
        m.re = _ECMA_RE  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for m, old in zip(modules, saved, strict=True):
            m.re = old  # type: ignore[attr-defined]


# --- formats (E4) ----------------------------------------------------------------------------

FORMAT_DIR = SUITE_ROOT / "draft2020-12" / "optional" / "format"


def suite_format_table() -> dict[str, dict[str, bool]]:
    """format → string → the suite's verdict (``optional/format``, 2020-12)."""
    table: dict[str, dict[str, bool]] = {}
    if not FORMAT_DIR.is_dir():
        return table
    for path in sorted(FORMAT_DIR.glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            name = group["schema"].get("format")
            if name not in FORMATS:  # unknown.json: formats 2020-12 does not define (annotations)
                continue
            for test in group["tests"]:
                if type(test["data"]) is str:
                    table.setdefault(name, {}).setdefault(test["data"], test["valid"])
    return table


FORMAT_TABLE = suite_format_table()
FORMAT_NAMES = sorted(FORMAT_TABLE)
UNKNOWN_FORMATS = ["int32", "password", "path", "binary"]


def format_truth(name: str, text: str) -> bool:
    """E4's rule for one string: the suite's verdict, else the guard's checker (see the module docstring)."""
    known = FORMAT_TABLE.get(name, {})
    if text in known:
        return known[text]
    from mcp_guard.core.formats import format_checker

    checker = format_checker(name)
    return True if checker is None else checker(text)


EXACT_FORMATS = FormatChecker(formats=())
for _name in FORMAT_NAMES:
    EXACT_FORMATS.checks(_name)(lambda value, _n=_name: type(value) is not str or format_truth(_n, value))


# --- the oracles -----------------------------------------------------------------------------

ExactDraft2020 = jsonschema.validators.extend(Draft202012Validator, EXACT_NUMBER_KEYWORDS)
ExactDraft7 = jsonschema.validators.extend(Draft7Validator, EXACT_NUMBER_KEYWORDS)


def oracle_view(schema: dict[str, Any]) -> dict[str, Any]:
    """Decision 1: an untyped root is an object root (the guard refuses other arguments, decision 11)."""
    return schema if "type" in schema else {**schema, "type": "object"}


def as_decimals(value: Any) -> Any:
    """The schema for python-jsonschema: an ``Inexact`` literal as its exact ``Decimal``."""
    if type(value) is Inexact:
        return Decimal(value.text)
    if type(value) is dict:
        return {k: as_decimals(v) for k, v in value.items()}
    if type(value) is list:
        return [as_decimals(v) for v in value]
    return value


def as_floats(value: Any) -> Any:
    """The schema for jsonschema-rs (no exact decimals): an ``Inexact`` literal rounded to a double."""
    if type(value) is Inexact:
        return float(value.text)
    if type(value) is dict:
        return {k: as_floats(v) for k, v in value.items()}
    if type(value) is list:
        return [as_floats(v) for v in value]
    return value


class Oracles:
    """The three oracles for one schema."""

    def __init__(self, schema: dict[str, Any]) -> None:
        view = oracle_view(schema)
        draft7 = schema.get("$schema") == D7
        raw_cls, exact_cls = (Draft7Validator, ExactDraft7) if draft7 else (Draft202012Validator, ExactDraft2020)
        decimals = as_decimals(view)
        self.raw = raw_cls(decimals, format_checker=raw_cls.FORMAT_CHECKER)
        self.exact = exact_cls(decimals, format_checker=EXACT_FORMATS)
        try:
            self.rs: Any = jsonschema_rs.validator_for(as_floats(view), validate_formats=True)
        except Exception as exc:  # an oracle limitation (e.g. a pattern its engine refuses), tallied
            self.rs = exc

    def reason(self, value: Any) -> str:
        """Which replaced family alone turns the raw verdict into the exact one (for the tally)."""
        exact = self.exact_verdict(value)
        raw_cls = type(self.raw)
        number_cls = jsonschema.validators.extend(raw_cls, EXACT_NUMBER_KEYWORDS)
        trials: dict[str, Callable[[], bool]] = {
            "numbers": lambda: bool(number_cls(self.raw.schema, format_checker=raw_cls.FORMAT_CHECKER).is_valid(value)),
            "format": lambda: bool(raw_cls(self.raw.schema, format_checker=EXACT_FORMATS).is_valid(value)),
        }
        for name, trial in trials.items():
            with contextlib.suppress(Exception):
                if trial() is exact:
                    return name
        with ecma_patterns(), contextlib.suppress(Exception):
            if bool(self.raw.is_valid(value)) is exact:
                return "pattern"
        return "several"

    def exact_verdict(self, value: Any) -> bool:
        with ecma_patterns():
            return bool(self.exact.is_valid(value))

    def raw_verdict(self, value: Any) -> bool | None:
        try:
            return bool(self.raw.is_valid(value))
        except Exception:  # Python `re` cannot read an ECMA pattern (`\p{L}`, `(?<name>...)`)
            return None

    def rs_verdict(self, value: Any) -> bool | None:
        if isinstance(self.rs, Exception):
            return None
        try:
            return bool(self.rs.is_valid(value))
        except Exception:  # numbers beyond its range
            return None


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


# --- by-design families ----------------------------------------------------------------------


def families(schema: Any, value: Any) -> set[str]:
    """The by-design families a case touches (jsonschema-rs is not asked about them)."""
    found: set[str] = set()

    def walk(node: Any, key: str | None = None) -> None:
        if type(node) is dict:
            for k, v in node.items():
                if k in ("pattern", "patternProperties"):
                    found.add("pattern")
                if k == "format":
                    found.add("format")
                if k == "multipleOf":
                    found.add("multipleOf")
                walk(v, k)
        elif type(node) is list:
            for v in node:
                walk(v, key)
        elif type(node) is Inexact or (type(node) in (int, float) and abs(node) >= EXACT_SPAN):
            found.add("exact numbers")
        elif type(node) is str and has_lone_surrogate(node):
            found.add("lone surrogate")

    walk(schema)
    walk(value)
    return found


def has_lone_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def rs_by_design(schema: Any, value: Any) -> bool:
    """jsonschema-rs is wrong by design here: binary numbers (``multipleOf``, literals beyond 2**53 or no
    double holds), its own regex engine and format checkers; it cannot take a lone surrogate."""
    return bool(families(schema, value))


# --- the properties --------------------------------------------------------------------------

STATS: Counter[str] = Counter()


def plain(value: Any) -> Any:
    """A comparable copy (an ``Inexact`` compares by identity; here by its text)."""
    if type(value) is Inexact:
        return ("Inexact", value.text)
    if type(value) is dict:
        return {k: plain(v) for k, v in value.items()}
    if type(value) is list:
        return [plain(v) for v in value]
    return value


def describe(schema: Any, value: Any, got: Any, expected: Any) -> str:
    return f"\nschema={schema!r}\nvalue={value!r}\nexpected={expected}\nguard={got.to_json()!r}"


@profile_settings(SCHEMAS)
@given(schema=schemas(), data=st.data())
def run_differential(schema: dict[str, Any], data: st.DataObject) -> None:
    before = plain(schema)
    report = classify(schema, profile=PROFILE)
    deferred = compile_schema(schema, profile=PROFILE, defer=True)
    compiled = compile_schema(schema, profile=PROFILE)
    assert deferred.report == report == compiled.report
    STATS["schemas"] += 1
    if not report.ok:
        # In the profile by construction: only E3 (a pattern whose work cannot be bounded) or the
        # E6 budget may refuse it, and then as unsupported_capability, never as malformed.
        assert report.kind == UNSUPPORTED, describe(schema, None, report, "supported")
        keywords = {i.keyword for i in report.issues}
        assert keywords <= {"pattern", "patternProperties", "budget", "schema"}, describe(schema, None, report, "ok")
        STATS["refused: " + ",".join(sorted(keywords))] += 1
        event("schema refused (E3/E6)")
        return
    oracles = Oracles(schema)
    for value in data.draw(st.lists(values_for(schema), min_size=1, max_size=4)):
        expected = oracles.exact_verdict(value)
        result = compiled.check(value)
        assert result.ok is expected, describe(schema, value, result, expected)
        assert deferred.check(value) == result
        if not result.ok:
            assert result.kind == VALIDATION and all(i.instance_path is not None for i in result.issues), result
        STATS["values"] += 1
        STATS["valid" if expected else "invalid"] += 1
        event("valid" if expected else "invalid")
        touched = families(schema, value)
        raw = oracles.raw_verdict(value)
        if raw is None:
            STATS["python-jsonschema raised: " + "+".join(sorted(touched))] += 1
            assert touched, describe(schema, value, result, "python-jsonschema raised")
        elif raw is not expected:
            # only the keywords the exact oracle replaces can explain it
            assert touched & {"pattern", "format", "multipleOf", "exact numbers"}, describe(schema, value, result, raw)
            STATS["python-jsonschema wrong by design: " + oracles.reason(value)] += 1
        rs = oracles.rs_verdict(value)
        if rs is None:
            STATS["jsonschema-rs could not answer"] += 1
            assert touched, describe(schema, value, result, "jsonschema-rs error")
        elif rs is not expected:
            assert rs_by_design(schema, value), f"jsonschema-rs disagrees{describe(schema, value, result, rs)}"
            STATS["jsonschema-rs wrong by design: " + "+".join(sorted(touched))] += 1
    assert plain(schema) == before, "the guard must not mutate the schema"


def test_guard_agrees_with_the_exact_oracle() -> None:
    STATS.clear()
    run_differential()
    print(f"\n[extended] differential: {dict(sorted(STATS.items()))}")
    assert STATS["schemas"] >= SCHEMAS, STATS
    assert STATS["values"] >= SCHEMAS, STATS
    assert STATS["valid"] >= STATS["values"] // 10 and STATS["invalid"] >= STATS["values"] // 10, STATS


# --- each by-design family, aimed at ------------------------------------------------------------

FAMILY_CASES: dict[str, tuple[list[dict[str, Any]], list[Any]]] = {
    "pattern": ([{"type": "string", "pattern": p} for p in PATTERNS], PATTERN_STRINGS),
    "multipleOf": (
        [{"type": "number", "multipleOf": d} for d in DIVISORS],
        [0.3, 0.7, 1.1, 0.03, 3.3, 0.6, 1e-5 * 3, 4.5, 10**20 * 3, 9.3, 0.1 * 3, 2**53 + 1, 1e300],
    ),
    "exact numbers": (
        [{k: b} for k in ("minimum", "exclusiveMaximum", "const") for b in INEXACT]
        + [{"enum": [Inexact("1e25"), 1e25, 10**25]}, {"maximum": 2**53}, {"exclusiveMinimum": 2.0**53}],
        [0.1, 0.10000000000000002, 3.0, 3.0000000000000004, 1e25, 10**25, 10**25 + 1, 2**53, 2**53 + 1, 2.0**53],
    ),
    "format": (
        [{"type": "string", "format": f} for f in FORMAT_NAMES],
        sorted({s for table in FORMAT_TABLE.values() for s in table}),
    ),
}
"""Per family: the keyword nodes and the values that meet the oracles' by-design faults."""

WRAPPERS: list[Callable[[Any], Any]] = [
    lambda n: n,
    lambda n: {"not": n},
    lambda n: {"anyOf": [{"type": "boolean"}, n]},
    lambda n: {"type": "array", "items": n},
    lambda n: {"if": n, "then": {"const": "never"}},
    lambda n: {"type": "object", "additionalProperties": n},
]
"""Where the family's node stands: plain, negated, in a branch, under items, as an `if`, as additionalProperties."""


@pytest.mark.parametrize("family", sorted(FAMILY_CASES))
def test_by_design_families_follow_the_exact_rule(family: str) -> None:
    """The oracles' by-design faults, met on purpose: the guard follows the exact rule, the raw oracles differ."""
    nodes, values = FAMILY_CASES[family]
    differs: Counter[str] = Counter()

    @profile_settings(1_000 if LONG else 150)
    @given(node=st.sampled_from(nodes), wrap=st.sampled_from(WRAPPERS), value=st.sampled_from(values))
    def prop(node: dict[str, Any], wrap: Callable[[Any], Any], value: Any) -> None:
        inner = wrap(node)
        schema = {"type": "object", "properties": {"v": inner}}
        argument = {
            "v": [value] if inner.get("type") == "array" else {"k": value} if "additionalProperties" in inner else value
        }
        report = classify(schema, profile=PROFILE)
        if not report.ok:
            assert report.kind == UNSUPPORTED and family == "pattern", report  # E3 may refuse a pattern
            return
        oracles = Oracles(schema)
        expected = oracles.exact_verdict(argument)
        result = compile_schema(schema, profile=PROFILE).check(argument)
        assert result.ok is expected, describe(schema, argument, result, expected)
        raw = oracles.raw_verdict(argument)
        if raw is not expected:
            differs["python-jsonschema" if raw is not None else "python-jsonschema raised"] += 1
        rs = oracles.rs_verdict(argument)
        if rs is not expected:
            differs["jsonschema-rs" if rs is not None else "jsonschema-rs could not answer"] += 1

    prop()
    print(f"\n[extended] {family}: raw oracles differ from the exact rule: {dict(differs)}")
    assert sum(differs.values()) > 0, f"{family}: no case met the oracles' fault (the traps are not traps)"


# --- the exact rules, pinned (so the oracle itself is right) ---------------------------------


def test_exact_oracle_rules() -> None:
    bound = Inexact("0.1000000000000000000001")  # as the relay reads that literal from a server
    o = Oracles({"type": "object", "properties": {"m": {"multipleOf": 0.1}, "n": {"minimum": bound}}})
    assert o.exact_verdict({"m": 0.3})  # E1: 0.3 is a multiple of 0.1
    assert not o.raw.is_valid({"m": 0.3})  # binary floats: 0.3 / 0.1 = 2.9999999999999996
    assert not o.exact_verdict({"n": 0.1})  # the literal 0.1 is below the bound
    assert o.raw.is_valid({"n": 0.1})  # the double 0.1 is 0.1000000000000000055511151231257827...
    assert o.exact_verdict({"n": 0.10000000000000002})
    o = Oracles({"properties": {"d": {"pattern": "^\\d$"}, "e": {"pattern": "^a$"}}})
    assert not o.exact_verdict({"d": "١"}) and o.raw.is_valid({"d": "١"})
    assert not o.exact_verdict({"e": "a\n"}) and o.raw.is_valid({"e": "a\n"})
    o = Oracles({"properties": {"c": {"const": Inexact("0.1000000000000000000001")}}})
    assert not o.exact_verdict({"c": 0.1})
    assert literal(2.0**53 + 2) == 2**53 + 2 and literal(0.1) == Fraction(1, 10)
    assert (
        literal(1e23) == 99999999999999991611392
    )  # the relay reads the literal 1e23 as an Inexact, never as this double


@pytest.mark.skipif(not FORMAT_TABLE, reason="the suite's optional/format files are absent")
def test_format_pool_covers_every_format() -> None:
    assert len(FORMAT_NAMES) == 19, FORMAT_NAMES
    for name in FORMAT_NAMES:
        verdicts = set(FORMAT_TABLE[name].values())
        assert verdicts == {True, False}, name  # both verdicts in every pool


# --- the classification modes: deferred (the relay's listing) and eager -------------------------

GARBAGE_KEYS = st.sampled_from([*EXTENDED_KEYWORDS, "x-extra", "nullable", "additional_properties", "$dynamicRef"])
GARBAGE_LEAVES = SCALARS | st.sampled_from(["#", "#/$defs/a", "#a", "^a", "(", "date", "path", "uuid", *INEXACT])


def outcome(schema: Any, defer: bool) -> tuple[str, Any]:
    """What compile says under extended: its report and notes, or the TypeError's message."""
    try:
        compiled = compile_schema(schema, profile=PROFILE, defer=defer)
    except TypeError as exc:
        return "TypeError", str(exc)
    return "report", (compiled.report.to_json(), compiled.notes)


def deferred_is_eager(schema: Any, arguments: tuple[Any, ...] = ({}, {"a": 1}, {"a": "x", "b": [None]})) -> None:
    got = outcome(schema, True)
    assert got == outcome(schema, False), schema
    if got[0] == "report" and got[1][0]["ok"]:
        deferred, eager = compile_schema(schema, profile=PROFILE, defer=True), compile_schema(schema, profile=PROFILE)
        for value in arguments:
            assert deferred.check(value) == eager.check(value), (schema, value)


@profile_settings(3_000 if LONG else 400)
@given(
    schema=st.dictionaries(GARBAGE_KEYS, schema_like(GARBAGE_LEAVES), max_size=6)
    | st.dictionaries(GARBAGE_KEYS, schema_like(GARBAGE_LEAVES | HOSTILE), max_size=4)
)
def test_deferred_report_is_the_eager_report(schema: Any) -> None:
    """Schema-shaped garbage and near-misses under extended: the same findings in the same order, notes, TypeErrors."""
    deferred_is_eager(schema)
    deferred_is_eager({"type": "object", "properties": {"p": schema}, "$defs": {"a": schema}})


@given(schema=schemas())
@profile_settings(1_000 if LONG else 100)
def test_deferred_is_eager_on_generated_in_profile_schemas(schema: dict[str, Any]) -> None:
    deferred_is_eager(schema)


@pytest.mark.skipif(not SUITE_ROOT.is_dir(), reason=f"the JSON Schema Test Suite is absent ({SUITE_ROOT})")
def test_deferred_is_eager_on_the_suite_and_corpus_schemas() -> None:
    count = 0
    for forms in suite_schemas().values():
        for schema in forms:
            deferred_is_eager(schema)
            count += 1
    if CORPUS.is_dir():
        for path in sorted(CORPUS.glob("*.json")):
            for tool in json.loads(path.read_text(encoding="utf-8"))["tools"]:
                deferred_is_eager(tool["inputSchema"])
                count += 1
    assert count > 3_000, count
