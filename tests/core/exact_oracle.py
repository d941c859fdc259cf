"""The exact oracle of the extended differential tests (shared, not a test module).

python-jsonschema with the keywords where it is wrong by design for this guard replaced by the
spec's exact rule, and nothing else changed (see test_differential_extended's docstring): E1 numbers
(:func:`literal`), E3 patterns (``regress`` in place of Python ``re``), E4 formats (the suite's
verdicts). :class:`Oracles` holds the raw python-jsonschema, the exact one and jsonschema-rs for
one schema; :func:`families` names the by-design families a case touches.
"""

from __future__ import annotations

import contextlib
import functools
import json
import types
from collections.abc import Callable, Iterator
from decimal import Decimal
from fractions import Fraction
from typing import Any

import jsonschema
import jsonschema._keywords
import jsonschema._legacy_keywords
import jsonschema._utils
import jsonschema_rs
import regress
from jsonschema import Draft7Validator, Draft202012Validator, FormatChecker, ValidationError

from mcp_guard.core.formats import FORMATS
from mcp_guard.core.json_values import Inexact
from tests.core.suite import SUITE_ROOT

D2020 = "https://json-schema.org/draft/2020-12/schema"
D7 = "http://json-schema.org/draft-07/schema#"


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


def numbers_as(value: Any, exact: bool) -> Any:
    """The schema for an oracle: an ``Inexact`` literal as its exact ``Decimal`` (python-jsonschema) or
    rounded to a double (jsonschema-rs, which has no exact decimals)."""
    if type(value) is Inexact:
        return Decimal(value.text) if exact else float(value.text)
    if type(value) is dict:
        return {k: numbers_as(v, exact) for k, v in value.items()}
    if type(value) is list:
        return [numbers_as(v, exact) for v in value]
    return value


class Oracles:
    """The three oracles for one schema."""

    def __init__(self, schema: dict[str, Any]) -> None:
        view = oracle_view(schema)
        draft7 = schema.get("$schema") == D7
        raw_cls, exact_cls = (Draft7Validator, ExactDraft7) if draft7 else (Draft202012Validator, ExactDraft2020)
        decimals = numbers_as(view, exact=True)
        self.raw = raw_cls(decimals, format_checker=raw_cls.FORMAT_CHECKER)
        self.exact = exact_cls(decimals, format_checker=EXACT_FORMATS)
        try:
            self.rs: Any = jsonschema_rs.validator_for(numbers_as(view, exact=False), validate_formats=True)
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
