"""Differential property tests of the ``extended`` profile against python-jsonschema and jsonschema-rs.

Spec: ../shared/spec/input-schema-subset.md, "The extended profile". Generated schemas use the
whole extended keyword set, in 2020-12 (with or without a root ``$schema``) and draft-07 (with
its ``items`` list, ``additionalItems``, ``dependencies`` and ``definitions``): every applicator,
every validation keyword, ``$ref`` into ``$defs``/``definitions`` (recursion only through
positions that consume part of the instance, so no E6 cycle), boolean schemas, untyped nodes,
keywords beside a type they do not apply to, annotations, ``format``. Values are built to fit a
schema, then often changed in one spot, or drawn from the numbers, strings and names the schema
itself holds, so that both verdicts are common (asserted).

The oracles live in :mod:`tests.core.exact_oracle`, the generators in :mod:`tests.core.extended_cases`.
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

Profiles (test_differential's ``profile_settings``): CI (default) its fixed seed, 150 schemas;
long: ``MCP_GUARD_HYPOTHESIS_LONG=1``, randomized, 20,000 schemas (``pytest -s`` prints the
tallies). No example database.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from mcp_guard import UNSUPPORTED, VALIDATION, classify
from mcp_guard import compile as compile_schema
from mcp_guard.core.extended.table import KEYWORDS as EXTENDED_KEYWORDS
from mcp_guard.core.json_values import Inexact
from tests.core.exact_oracle import FORMAT_NAMES, FORMAT_TABLE, Oracles, families, literal, rs_by_design
from tests.core.extended_cases import DIVISORS, INEXACT, PATTERN_STRINGS, PATTERNS, schemas, values_for
from tests.core.test_deferred import CORPUS, HOSTILE, SCALARS, schema_like, suite_schemas
from tests.core.test_differential import profile_settings

try:
    classify({}, profile="extended")
except ValueError:
    pytest.skip("this build has no `extended` profile yet", allow_module_level=True)

PROFILE = "extended"
LONG = os.environ.get("MCP_GUARD_HYPOTHESIS_LONG") == "1"
SCHEMAS = 20_000 if LONG else 150


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


def test_deferred_is_eager_on_the_suite_and_corpus_schemas() -> None:
    count = 0
    for forms in suite_schemas().values():
        for schema in forms:
            deferred_is_eager(schema)
            count += 1
    for path in sorted(CORPUS.glob("*.json")):
        for tool in json.loads(path.read_text(encoding="utf-8"))["tools"]:
            deferred_is_eager(tool["inputSchema"])
            count += 1
    assert count > 3_000, count


BIG_DOUBLES = [1e300, 2.0**60, 3.0 * 2**70, 1e22 * 3, 2.0**53]


@pytest.mark.parametrize(("divisor", "value"), [(d, v) for d in (0.3, 0.1, 0.7, 1.5, 3) for v in BIG_DOUBLES])
def test_multiple_of_a_double_from_2_53_up_is_its_integer_value(divisor: Any, value: float) -> None:
    """E1, ``json_values.exact_float``: a double from 2**53 up is its integer value (long run: 0.3 and 1e300)."""
    schema = {"type": "object", "properties": {"v": {"type": "number", "multipleOf": divisor}}}
    expected = (literal(value) / literal(divisor)).denominator == 1
    assert Oracles(schema).exact_verdict({"v": value}) is expected
    assert compile_schema(schema, profile=PROFILE).check({"v": value}).ok is expected
