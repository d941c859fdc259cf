"""Differential property tests: the guard against python-jsonschema's Draft 2020-12 validator.

Spec: docs/input-schema-subset.md. Inside the subset, the guard's verdict on arguments must be
the oracle's (``Draft202012Validator(schema).is_valid(value)``), in both profiles; outside the
subset, the guard must refuse every call, whatever the arguments.

The generators aim at the traps of decisions 1-15: booleans where numbers go, ``1.0``-style
floats, ``-0.0``, integers beyond 2**53 and floats near them, values at and around ``minimum``,
``enum`` with mixed and nested choices (and near-misses such as ``true`` for ``1``), ``oneOf``
with overlapping branches, ``required`` names that ``properties`` does not list, extra keys,
property names that look like keywords or need RFC 6901 escaping. Values are a mix of "built to
fit the schema" (:func:`fit`), "built to fit, then one spot changed" (:func:`mutate`) and
arbitrary JSON, so that both verdicts are common; each property asserts that they are.

Profiles:

- CI (default): ``derandomize=True`` and bounded example counts (400 per profile for the main
  property); the module runs in about half a minute.
- long: ``MCP_GUARD_HYPOTHESIS_LONG=1``, randomized: 100,000 examples per profile for the main
  property (each example checks one to six argument values), 20,000 for the annotation
  property, 10,000 per profile for "any injection" and 500 for each single injection. Run it
  with ``pytest -s`` to see the counts.

No example database is used in either profile (nothing is written to the repository).
"""

from __future__ import annotations

import copy
import math
import os
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, seed, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from mcp_guard import UNSUPPORTED, VALIDATION, check, classify
from mcp_guard import compile as compile_schema

# --- profiles --------------------------------------------------------------------------------

LONG = os.environ.get("MCP_GUARD_HYPOTHESIS_LONG") == "1"
MAIN_EXAMPLES = 100_000 if LONG else 400
OTHER_EXAMPLES = 20_000 if LONG else 250
ANY_INJECTION_EXAMPLES = 10_000 if LONG else 150
PER_INJECTION_EXAMPLES = 500 if LONG else 10


CI_SEED = 20261129
"""The CI profile's fixed seed. (``derandomize`` would seed from the test's own source, so an
unrelated edit of a test body changed the example stream, and with it which traps a run hit.)"""


def profile_settings(max_examples: int) -> Callable[[Any], Any]:
    """CI: a fixed seed and bounded. Long: randomized. Never a database."""
    chosen = settings(
        max_examples=max_examples,
        database=None,
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    )

    def apply(test: Any) -> Any:
        test = chosen(test)
        return test if LONG else seed(CI_SEED)(test)

    return apply


PROFILES = ["standard", "strict"]

# --- the oracle and its known bugs -----------------------------------------------------------

ORACLE_BUGS: dict[str, tuple[str, Callable[[Any, Any], bool]]] = {}
"""Disagreements that are python-jsonschema's bug, not the guard's: name -> (reason, predicate).

``predicate(schema, value)`` is True for exactly the excluded case. Empty: with
jsonschema 4.26 no disagreement was traced to the oracle. Its ``enum`` uses
``_utils.equal``, which keeps ``true`` apart from ``1`` at every depth and compares numbers by
value (``1 == 1.0``, ``0 == -0.0``), as decisions 6 and 7 require; its ``integer`` accepts
``1.0`` (decision 5); ``minimum`` compares ints and floats exactly, as Python does. The
oracle is never asked about NaN or Infinity (decision 12 differs from it on purpose).
"""


def oracle_view(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as the oracle must see it: a root without ``type`` gets ``type: "object"``.

    Not an oracle bug but a deliberate difference of the contract: decision 1 treats an untyped
    root as ``object`` (and decision 11 refuses non-object arguments), where JSON Schema would
    accept any value.
    """
    return schema if "type" in schema else {**schema, "type": "object"}


def oracle_bug(schema: Any, value: Any) -> str | None:
    """The name of the :data:`ORACLE_BUGS` entry that covers this case, if any."""
    for name, (_reason, applies) in ORACLE_BUGS.items():
        if applies(schema, value):
            return name
    return None


# --- JSON helpers ----------------------------------------------------------------------------

Path = tuple[str | int, ...]


def pointer(path: Path) -> str:
    """RFC 6901 pointer of a path."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def json_equal(a: Any, b: Any) -> bool:
    """JSON Schema equality (decisions 6, 7), for the trap tally only."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if type(a) in (int, float) and type(b) in (int, float):
        return bool(a == b)
    return type(a) is type(b) and a == b


def python_equal(a: Any, b: Any) -> bool:
    """Python's own equality (``True == 1``): what a guard must not use."""
    try:
        return bool(a == b)
    except Exception:  # pragma: no cover - JSON values always compare
        return False


def is_number(value: Any) -> bool:
    return type(value) in (int, float)


def schema_nodes(schema: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every schema node with its path: root, ``properties/<name>``, ``items``, ``oneOf/<i>``."""
    yield path, schema
    if type(schema) is not dict:
        return
    properties = schema.get("properties")
    if type(properties) is dict:
        for name, sub in properties.items():
            yield from schema_nodes(sub, (*path, "properties", name))
    if type(schema.get("items")) is dict:
        yield from schema_nodes(schema["items"], (*path, "items"))
    if type(schema.get("oneOf")) is list:
        for index, branch in enumerate(schema["oneOf"]):
            yield from schema_nodes(branch, (*path, "oneOf", index))


def replaced(document: Any, path: Path, new: Any) -> Any:
    """A deep copy of ``document`` with the node at ``path`` replaced by ``new``."""
    if not path:
        return new
    result = copy.deepcopy(document)
    parent = result
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = new
    return result


# --- schemas inside the subset ---------------------------------------------------------------

MAX_DEPTH = 4
MAX_PROPERTIES = 5
MAX_BRANCHES = 4
SCALAR_TYPES = ["string", "integer", "number", "boolean"]
ALL_KINDS = [*SCALAR_TYPES, "object", "array", "oneOf"]
BRANCH_POOLS: list[list[str]] = [ALL_KINDS, ["integer", "number"], ["integer"], ["object"], ["string"], ["array"]]
"""Kinds a ``oneOf`` node draws its branches from: narrow pools make overlapping branches common."""

NAMES = [
    "a",
    "b",
    "n",
    "type",
    "description",
    "$ref",
    "enum",
    "items",
    "oneOf",
    "minimum",
    "required",
    "title",
    "default",
    "a/b",
    "~1",
    "",
    "é",
]
"""Property names, including ones that look like keywords (decision 10) or need escaping (15)."""

KEYS = st.sampled_from(NAMES)
EXTRA_KEYS = st.sampled_from(["x", "extra", "a", "type", "A"])
TEXT = st.text(st.sampled_from("abAB1 ~/é"), max_size=4)

TRAP_INTS = [0, 1, -1, 2, -2, 7, 2**31, 2**53 - 1, 2**53, 2**53 + 1, -(2**53) - 1, 2**63, 2**64 + 1, 10**20, -(10**20)]
TRAP_FLOATS = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    1.5,
    2.0,
    0.1,
    1e-300,
    5e-324,
    -5e-324,
    2.0**53,
    2.0**53 + 2,
    math.nextafter(2.0**53, 0),
    -(2.0**53),
    2.0**63,
    1e20,
    1e300,
    -1e300,
    1.7976931348623157e308,
]
TRAP_STRINGS = ["", "a", "A", "1", "true", "null", "é"]

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(TRAP_INTS),
    st.integers(-3, 3),
    st.integers(),
    st.sampled_from(TRAP_FLOATS),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(TRAP_STRINGS),
)
SMALL_JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=6,
)
MINIMUMS = st.one_of(
    st.integers(-3, 10),
    st.sampled_from(TRAP_INTS),
    st.sampled_from(TRAP_FLOATS),
    st.floats(-1e6, 1e6, allow_nan=False),
    st.integers(-(2**70), 2**70),
)

ANNOTATION_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "title": TEXT,
    "default": SMALL_JSON,
    "examples": st.lists(SMALL_JSON, max_size=2),
    "$comment": TEXT,
    "deprecated": st.booleans(),
    "readOnly": st.booleans(),
    "writeOnly": st.booleans(),
}
ANNOTATIONS = frozenset(ANNOTATION_VALUES)
DIALECTS = [
    "https://json-schema.org/draft/2020-12/schema",
    "http://json-schema.org/draft-07/schema#",
    "http://json-schema.org/draft-06/schema",
    "https://json-schema.org/draft/2019-09/schema#",
]

Draw = Callable[[st.SearchStrategy[Any]], Any]


def add_annotations(draw: Draw, node: dict[str, Any]) -> None:
    names = draw(st.lists(st.sampled_from(sorted(ANNOTATIONS)), unique=True, max_size=3))
    for name in names:
        node[name] = draw(ANNOTATION_VALUES[name])


def gen_node(draw: Draw, depth: int, annotated: bool, pool: list[str] = ALL_KINDS) -> dict[str, Any]:
    """One nested schema node (depth >= 1). Children exist only below :data:`MAX_DEPTH`."""
    kinds = [k for k in pool if k != "oneOf"] if depth >= MAX_DEPTH else pool
    kind = draw(st.sampled_from(kinds))
    if kind == "oneOf":
        branch_pool = draw(st.sampled_from(BRANCH_POOLS))
        count = draw(st.integers(1, MAX_BRANCHES))
        node: dict[str, Any] = {"oneOf": [gen_node(draw, depth + 1, annotated, branch_pool) for _ in range(count)]}
        if draw(st.integers(0, 2)) == 0:
            node["description"] = draw(TEXT)
        if annotated:
            add_annotations(draw, node)
        return node
    return gen_typed(draw, kind, depth, annotated)


def gen_typed(draw: Draw, kind: str, depth: int, annotated: bool) -> dict[str, Any]:
    node: dict[str, Any] = {"type": kind}
    if kind == "object":
        if depth < MAX_DEPTH and (depth == 0 or draw(st.integers(0, 3)) > 0):
            names = draw(st.lists(KEYS, unique=True, max_size=MAX_PROPERTIES))
            node["properties"] = {name: gen_node(draw, depth + 1, annotated) for name in names}
        if draw(st.booleans()):
            pool = sorted({*node.get("properties", {}), "r", "x", "type"})
            node["required"] = draw(st.lists(st.sampled_from(pool), unique=True, max_size=4))
        additional = draw(st.sampled_from([None, True, False]))
        if additional is not None:
            node["additionalProperties"] = additional
    elif kind == "array":
        if depth < MAX_DEPTH and draw(st.integers(0, 3)) > 0:
            node["items"] = gen_node(draw, depth + 1, annotated)
    elif kind in ("integer", "number") and draw(st.booleans()):
        node["minimum"] = draw(MINIMUMS)
    if draw(st.integers(0, 2)) == 0:
        node["enum"] = gen_enum(draw, node)
    if draw(st.integers(0, 2)) == 0:
        node["description"] = draw(TEXT)
    if annotated:
        add_annotations(draw, node)
    return node


def gen_enum(draw: Draw, node: dict[str, Any]) -> list[Any]:
    """Mixed choices: values that fit the node, near-misses of them, and arbitrary JSON."""
    choices = []
    for _ in range(draw(st.integers(0, 5))):
        how = draw(st.sampled_from(["fit", "fit", "near", "json"]))
        if how == "json":
            choices.append(draw(SMALL_JSON))
        else:
            value = fit(draw, node)
            choices.append(mutate(draw, value) if how == "near" else value)
    return choices


@st.composite
def root_schemas(draw: Draw, annotated: bool) -> dict[str, Any]:
    """An in-subset root: an object schema, sometimes without ``type`` (decision 1)."""
    root = gen_typed(draw, "object", 0, annotated)
    if draw(st.integers(0, 3)) == 0:
        del root["type"]
    if annotated and draw(st.integers(0, 3)) == 0:
        root["$schema"] = draw(st.sampled_from(DIALECTS))
    return root


def has_annotation(schema: Any) -> bool:
    return any(type(n) is dict and (ANNOTATIONS | {"$schema"}) & n.keys() for _, n in schema_nodes(schema))


def stripped(schema: Any) -> Any:
    """The schema without annotations and ``$schema`` (property names are kept: decision 10)."""
    result = copy.deepcopy(schema)
    for _, node in schema_nodes(result):
        for key in ANNOTATIONS | {"$schema"}:
            node.pop(key, None)
    return result


# --- values ----------------------------------------------------------------------------------


def near(bound: int | float) -> list[int | float]:
    """Values at, just below and just above a bound, as ints and floats."""
    f = float(bound)
    out: list[int | float] = [bound, f, math.nextafter(f, -math.inf), math.nextafter(f, math.inf), f - 0.5, f + 0.5]
    whole = math.ceil(f) if type(bound) is float else bound
    out += [whole, whole - 1, whole + 1, float(whole), float(whole + 1)]
    return finite(out)


def finite(values: list[Any]) -> list[Any]:
    """Drop the floats that overflowed to infinity (``nextafter`` of the largest double)."""
    return [v for v in values if type(v) is not float or math.isfinite(v)]


KEY_NUMBERS: list[int | float] = [0, 1, -1, 1.0, 0.0, -0.0, 2**53 + 1, -(2**53) - 1, 2.0**53, 2.0**53 + 2]
"""The numbers every run must meet often: integral floats, ``-0.0``, and both sides of 2**53."""


def fit_number(draw: Draw, node: dict[str, Any]) -> int | float:
    integer = node["type"] == "integer"
    pool: list[int | float] = list(TRAP_INTS)
    if not integer:
        pool += TRAP_FLOATS
    options = [
        st.sampled_from(KEY_NUMBERS),
        st.sampled_from(pool),
        st.integers(-5, 20),
        st.integers(-(2**64), 2**64).map(float) if integer else st.floats(allow_nan=False, allow_infinity=False),
    ]
    if "minimum" in node:
        options = [st.sampled_from(near(node["minimum"]))] * 3 + options
    return draw(st.one_of(options))  # type: ignore[no-any-return]


def twin(value: Any) -> Any:
    """The same JSON value written another way: ints as floats and back, ``0`` as ``-0.0`` (decision 7)."""
    t = type(value)
    if t is int:
        if value == 0:
            return -0.0
        return float(value) if abs(value) <= 2**53 else value
    if t is float:
        return int(value) if value.is_integer() else value
    if t is list:
        return [twin(v) for v in value]
    if t is dict:
        return {k: twin(v) for k, v in value.items()}
    return value


def fit(draw: Draw, node: Any) -> Any:
    """A value built to fit ``node`` (it usually does; the oracle decides)."""
    if type(node) is not dict:
        return draw(SMALL_JSON)
    if "oneOf" in node:
        return fit(draw, draw(st.sampled_from(node["oneOf"])))
    choices = node.get("enum")
    if choices and draw(st.integers(0, 3)) > 0:
        choice = copy.deepcopy(draw(st.sampled_from(choices)))
        return twin(choice) if draw(st.integers(0, 3)) == 0 else choice
    kind = node.get("type", "object")
    if kind == "string":
        return draw(st.sampled_from(TRAP_STRINGS) | TEXT)
    if kind == "boolean":
        return draw(st.booleans())
    if kind in ("integer", "number"):
        return fit_number(draw, node)
    if kind == "array":
        if "items" not in node:
            return draw(st.lists(SMALL_JSON, max_size=3))
        return [fit(draw, node["items"]) for _ in range(draw(st.integers(0, 3)))]
    properties = node.get("properties", {})
    required = node.get("required", [])
    out: dict[str, Any] = {}
    for name, sub in properties.items():
        if name in required or draw(st.booleans()):
            out[name] = fit(draw, sub)
    for name in required:
        if name not in out:
            out[name] = draw(SMALL_JSON)
    if node.get("additionalProperties", True) is not False and draw(st.integers(0, 2)) == 0:
        for name in draw(st.lists(EXTRA_KEYS, unique=True, max_size=2)):
            if name not in properties:
                out.setdefault(name, draw(SMALL_JSON))
    return out


_DELETE = object()


def value_spots(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    yield path, value
    if type(value) is dict:
        for key, item in value.items():
            yield from value_spots(item, (*path, key))
    elif type(value) is list:
        for index, item in enumerate(value):
            yield from value_spots(item, (*path, index))


def put(value: Any, path: Path, new: Any) -> Any:
    """``value`` with the spot at ``path`` replaced (or removed, for ``_DELETE``); copies along the path."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if type(value) is dict:
        out = dict(value)
        inner = put(value[head], rest, new)
        if inner is _DELETE:
            del out[head]
        else:
            out[head] = inner
        return out
    items = list(value)
    inner = put(value[head], rest, new)
    if inner is _DELETE:
        del items[head]
    else:
        items[head] = inner
    return items


def variants(value: Any) -> list[Any]:
    """Replacements for one spot that hit the traps: same value in another JSON type, off by a hair."""
    t = type(value)
    if t is bool:
        return [int(value), float(value), not value, None, str(value).lower()]
    if t is int:
        out: list[Any] = [value + 1, value - 1, -value, str(value), [value], True, False, -0.0]
        if abs(value) < 2**1000:
            out.append(float(value))
        if value in (0, 1):
            out += [bool(value), bool(value)]
        return out
    if t is float:
        out = [
            math.nextafter(value, -math.inf),
            math.nextafter(value, math.inf),
            -value,
            value - 0.5,
            value + 0.5,
            True,
            False,
            -0.0,
        ]
        if value.is_integer():
            out += [int(value), int(value) + 1, int(value) - 1]
        if value == 0:
            out.append(-0.0 if math.copysign(1, value) > 0 else 0.0)
        return finite(out)
    if t is str:
        return [value.upper(), value + "x", "", 1, None]
    if t is list:
        return [[], [*value, None], value[:-1], [value], {}, None]
    if t is dict:
        out = [{}, [value], None, "{}"]
        for key in value:
            out.append({k: v for k, v in value.items() if k != key})  # a missing key
        out.append({**value, "extra": 1})
        out.append({**value, "x": True})
        return out
    return [0, False, "", {}, []]


def mutate(draw: Draw, value: Any) -> Any:
    """Change one spot of ``value``: a trap variant, a deleted member or element, or arbitrary JSON."""
    spots = list(value_spots(value))[:64]
    path, spot = draw(st.sampled_from(spots))
    how = draw(st.sampled_from(["variant", "variant", "variant", "delete", "json"]))
    if how == "delete" and path:
        return put(value, path, _DELETE)
    if how == "json":
        return put(value, path, draw(SMALL_JSON))
    return put(value, path, draw(st.sampled_from(variants(spot))))


@st.composite
def values_for(draw: Draw, schema: Any) -> Any:
    """One argument value: fitted, fitted and mutated, or arbitrary JSON (usually an object)."""
    how = draw(st.sampled_from(["fit", "fit", "fit", "mutated", "mutated", "mutated", "arbitrary"]))
    if how == "arbitrary":
        return draw(st.dictionaries(KEYS, SMALL_JSON, max_size=4) | SMALL_JSON)
    value = fit(draw, schema)
    return mutate(draw, value) if how == "mutated" else value


@st.composite
def cases(draw: Draw, annotated: bool) -> tuple[dict[str, Any], list[Any]]:
    """An in-subset schema and one to four argument values for it."""
    schema = draw(root_schemas(annotated))
    values = draw(st.lists(values_for(schema), min_size=1, max_size=6))
    return schema, values


# --- trap tally ------------------------------------------------------------------------------

REQUIRED_TRAPS = [
    "boolean where a number goes",
    "integral float for integer",
    "-0.0",
    "integer beyond 2**53",
    "float near 2**53",
    "at minimum",
    "just below minimum",
    "just above minimum",
    "enum choice",
    "enum choice in another number form",
    *(["enum near-miss (Python == only)"] if LONG else []),  # rare in a short run; unit-tested in test_json_values
    "nested container in enum position",
    "oneOf matches 0",
    "oneOf matches 1",
    "oneOf matches 2+",
    "missing required key",
    "required key not in properties",
    "extra key, additionalProperties false",
    "extra key allowed",
    "wrong JSON type",
]
"""Traps each in-subset run must have hit at least once (asserted at the end of the run)."""


TRAP_EXAMPLE: tuple[dict[str, Any], list[Any]] = (
    {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 3}, "x": {"type": "number"}},
        "required": ["n"],
    },
    [{"n": True}, {"n": 3, "x": 9007199254740993.0}, {"n": 2.0}, {"n": 4, "x": False}],
)
"""Run first in every profile's run, whatever the generator draws: the traps a drawn stream hits
only by luck (a boolean in a number's place, a float near 2**53). Hypothesis seeds part of its
generation from constants of every loaded module, so a bounded run's stream moves with unrelated
code; these traps are exercised against the oracle in every run regardless."""


def tally(node: Any, value: Any, seen: set[str]) -> None:
    """Which traps ``value`` hits against ``node`` (walks the positions the value reaches)."""
    if "oneOf" in node:
        matches = sum(1 for b in node["oneOf"] if Draft202012Validator(b).is_valid(value))
        seen.add(f"oneOf matches {matches}" if matches < 2 else "oneOf matches 2+")
        for branch in node["oneOf"]:
            tally(branch, value, seen)
        return
    kind = node.get("type", "object")
    t = type(value)
    if t is float and value == 0 and math.copysign(1, value) < 0:
        seen.add("-0.0")
    if t is int and abs(value) > 2**53:
        seen.add("integer beyond 2**53")
    if t is float and 2**52 <= abs(value) <= 2**54:
        seen.add("float near 2**53")
    if kind in ("integer", "number"):
        if t is bool:
            seen.add("boolean where a number goes")
        elif kind == "integer" and t is float and value.is_integer():
            seen.add("integral float for integer")
        if is_number(value) and "minimum" in node:
            bound = node["minimum"]
            if value == bound:
                seen.add("at minimum")
            elif bound - 1 <= value < bound:
                seen.add("just below minimum")
            elif bound < value <= bound + 1:
                seen.add("just above minimum")
    expected_type = {"object": dict, "array": list, "string": str, "boolean": bool}.get(kind)
    numeric = kind in ("integer", "number")
    if (expected_type is not None and t is not expected_type) or (numeric and not is_number(value)):
        seen.add("wrong JSON type")
    if "enum" in node:
        if any(json_equal(c, value) for c in node["enum"]):
            seen.add("enum choice")
            if any(json_equal(c, value) and repr(c) != repr(value) for c in node["enum"]):
                seen.add("enum choice in another number form")
        elif any(python_equal(c, value) for c in node["enum"]):
            seen.add("enum near-miss (Python == only)")
        if t in (dict, list):
            seen.add("nested container in enum position")
    if t is dict and kind == "object":
        properties = node.get("properties", {})
        for name in node.get("required", []):
            if name not in value:
                seen.add("missing required key")
            elif name not in properties:
                seen.add("required key not in properties")
        extras = [k for k in value if k not in properties]
        if extras:
            seen.add(
                "extra key allowed"
                if node.get("additionalProperties", True)
                else "extra key, additionalProperties false"
            )
        for name, sub in properties.items():
            if name in value:
                tally(sub, value[name], seen)
    elif t is list and kind == "array" and "items" in node:
        for item in value:
            tally(node["items"], item, seen)


# --- properties inside the subset ------------------------------------------------------------


def describe(schema: Any, value: Any, report: Any, expected: bool, profile: str) -> str:
    return (
        f"guard {'ok' if report.ok else 'rejects'} but oracle {'accepts' if expected else 'rejects'} "
        f"(profile {profile})\nschema={schema!r}\nvalue={value!r}\nissues={report.issues_json()!r}"
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_guard_agrees_with_oracle(profile: str) -> None:
    """check(schema, value).ok == Draft202012Validator(schema).is_valid(value) for in-subset schemas.

    ``standard`` schemas carry annotations and root ``$schema``; ``strict`` ones do not.
    """
    stats: Counter[str] = Counter()
    traps: set[str] = set()

    @profile_settings(MAIN_EXAMPLES)
    @given(case=cases(annotated=profile == "standard"))
    @example(case=TRAP_EXAMPLE)
    def prop(case: tuple[dict[str, Any], list[Any]]) -> None:
        schema, values = case
        before = copy.deepcopy(schema)
        Draft202012Validator.check_schema(schema)  # the generator makes schemas, not garbage
        validator = Draft202012Validator(oracle_view(schema))
        classified = classify(schema, profile=profile)
        assert classified.ok, f"an in-subset schema was refused:\nschema={schema!r}\n{classified.issues_json()!r}"
        compiled = compile_schema(schema, profile=profile)
        stats["examples"] += 1
        for value in values:
            expected = validator.is_valid(value)
            excluded = oracle_bug(schema, value)
            if excluded is not None:
                event(f"oracle bug excluded: {excluded}")
                stats[f"excluded {excluded}"] += 1
                continue
            report = check(schema, value, profile=profile)
            assert report.ok == expected, describe(schema, value, report, expected, profile)
            again = compiled.check(value)
            assert again.ok == expected, describe(schema, value, again, expected, profile)
            deferred = compile_schema(schema, profile=profile, defer=True).check(value)
            assert deferred == again, describe(schema, value, deferred, expected, profile)
            if not report.ok:
                assert report.kind == VALIDATION, report
                assert all(i.instance_path is not None for i in report.issues), report
            outcome = "ok" if expected else "rejected"
            event(f"outcome: {outcome}")
            stats[outcome] += 1
            stats["values"] += 1
            tally(schema, value, traps)
        assert schema == before, "the guard must not mutate the schema"

    prop()
    print(f"\n[{profile}] differential: {dict(stats)}")
    assert stats["ok"] >= stats["values"] // 10, stats
    assert stats["rejected"] >= stats["values"] // 10, stats
    missing = [trap for trap in REQUIRED_TRAPS if trap not in traps]
    assert not missing, f"traps never hit: {missing}"


@st.composite
def annotated_cases(draw: Draw) -> tuple[dict[str, Any], list[Any]]:
    """An in-subset standard schema with at least one annotation, and argument values."""
    schema = draw(root_schemas(annotated=True))
    if not has_annotation(schema):
        path, node = draw(st.sampled_from(list(schema_nodes(schema))))
        name = draw(st.sampled_from(sorted(ANNOTATIONS)))
        schema = replaced(schema, path, {**node, name: draw(ANNOTATION_VALUES[name])})
    values = draw(st.lists(values_for(schema), min_size=1, max_size=3))
    return schema, values


def test_annotations_are_strict_unsupported_and_never_validate() -> None:
    """strict refuses annotated schemas; standard validates them exactly like the stripped schema in strict."""
    stats: Counter[str] = Counter()

    @profile_settings(OTHER_EXAMPLES)
    @given(case=annotated_cases())
    def prop(case: tuple[dict[str, Any], list[Any]]) -> None:
        schema, values = case
        strict = classify(schema, profile="strict")
        assert not strict.ok and strict.kind == UNSUPPORTED, strict
        assert {i.keyword for i in strict.issues} <= ANNOTATIONS | {"$schema"}, strict
        assert all(i.kind == UNSUPPORTED for i in strict.issues), strict
        plain = stripped(schema)
        assert classify(schema, profile="standard").ok
        assert classify(plain, profile="strict").ok
        validator = Draft202012Validator(oracle_view(schema))
        for value in values:
            refused = check(schema, value, profile="strict")
            assert not refused.ok and refused.kind == UNSUPPORTED, refused
            assert all(i.instance_path is None for i in refused.issues), "never validates an unsupported schema"
            expected = validator.is_valid(value)
            if oracle_bug(schema, value) is not None:
                continue
            standard = check(schema, value, profile="standard").ok
            assert standard == expected, describe(schema, value, check(schema, value), expected, "standard")
            assert check(plain, value, profile="strict").ok == standard, (schema, value)
            stats["ok" if expected else "rejected"] += 1
        stats["examples"] += 1

    prop()
    print(f"\n[annotations] {dict(stats)}")
    assert stats["ok"] and stats["rejected"], stats


# --- schemas outside the subset --------------------------------------------------------------

UNSUPPORTED_KEYWORDS: list[tuple[str, Any]] = [
    ("pattern", "^a"),
    ("maximum", 10),
    ("exclusiveMinimum", 0),
    ("exclusiveMaximum", 10),
    ("multipleOf", 2),
    ("minLength", 1),
    ("maxLength", 3),
    ("minItems", 1),
    ("maxItems", 2),
    ("uniqueItems", True),
    ("const", "a"),
    ("anyOf", [{"type": "string"}]),
    ("allOf", [{"type": "string"}]),
    ("not", {"type": "string"}),
    ("if", {"type": "string"}),
    ("then", {"type": "string"}),
    ("else", {"type": "string"}),
    ("$ref", "#"),
    ("$defs", {"x": {"type": "string"}}),
    ("$id", "urn:example:x"),
    ("format", "email"),
    ("prefixItems", [{"type": "string"}]),
    ("patternProperties", {"^a": {"type": "string"}}),
    ("dependentRequired", {"a": ["b"]}),
    ("propertyNames", {"type": "string"}),
    ("contains", {"type": "string"}),
    ("unevaluatedProperties", False),
    ("x-unknown", 1),
    ("additional_properties", False),
    ("nullable", True),
]
"""Keywords outside the table (decision 9); each makes any node it stands in unsupported."""

KEYWORD_LABELS = frozenset(keyword for keyword, _ in UNSUPPORTED_KEYWORDS)


WRONG_TYPE: dict[str, list[tuple[str, Any]]] = {
    "string": [("minimum", 0), ("items", {"type": "string"}), ("properties", {}), ("required", [])],
    "boolean": [("minimum", 0), ("additionalProperties", True), ("items", {"type": "integer"})],
    "integer": [("items", {"type": "string"}), ("required", []), ("additionalProperties", False)],
    "number": [("properties", {}), ("items", {"type": "number"})],
    "object": [("minimum", 0), ("items", {"type": "string"})],
    "array": [("minimum", 0), ("properties", {}), ("required", []), ("additionalProperties", True)],
}
"""Supported keywords on a type they do not go with (decision 4)."""

ONE_OF_SIBLINGS: list[tuple[str, Any]] = [
    ("type", "object"),
    ("enum", [1]),
    ("properties", {}),
    ("required", []),
    ("minimum", 0),
    ("items", {"type": "string"}),
    ("additionalProperties", True),
]
"""Keys beside ``oneOf`` that decision 3 refuses."""


def injections(path: Path, node: Any, profile: str) -> list[tuple[str, Any, Path]]:
    """Ways to push the node at ``path`` outside the subset: (label, new node, pointer path of the finding)."""
    root = not path
    out: list[tuple[str, Any, Path]] = []
    for keyword, value in UNSUPPORTED_KEYWORDS:
        out.append((keyword, {**node, keyword: value}, (*path, keyword)))
    out.append(("boolean schema", True, path))
    out.append(("boolean schema", False, path))
    if root:
        out.append(("$schema draft-04", {**node, "$schema": "http://json-schema.org/draft-04/schema#"}, ("$schema",)))
        out.append(("root oneOf", {"oneOf": [node]}, ("oneOf",)))
        out.append(("root type", {**node, "type": "string"}, ("type",)))
    else:
        out.append(("nested $schema", {**node, "$schema": DIALECTS[0]}, (*path, "$schema")))
    if profile == "strict":
        out.append(("annotation in strict", {**node, "title": "t"}, (*path, "title")))
        if root:
            out.append(("$schema in strict", {**node, "$schema": DIALECTS[0]}, ("$schema",)))
    if "oneOf" in node:
        for keyword, value in ONE_OF_SIBLINGS:
            out.append((f"{keyword} beside oneOf", {**node, keyword: value}, (*path, keyword)))
        return out
    kind = node.get("type", "object")
    out.append(("type list", {**node, "type": [kind, "null"]}, (*path, "type")))
    out.append(('type "null"', {**node, "type": "null"}, (*path, "type")))
    if not root:
        out.append(("missing nested type", {k: v for k, v in node.items() if k != "type"}, path))
    if kind == "object":
        for schema_value in ({"type": "string"}, {}):
            out.append(
                (
                    "schema-valued additionalProperties",
                    {**node, "additionalProperties": schema_value},
                    (*path, "additionalProperties"),
                )
            )
    if kind == "array":
        items = node.get("items", {"type": "string"})
        out.append(("tuple items", {**node, "items": [items]}, (*path, "items")))
    for keyword, value in WRONG_TYPE[kind]:
        out.append((f"{keyword} on {kind}", {**node, keyword: value}, (*path, keyword)))
    return out


def reaches(schema: Any, value: Any, path: Path) -> bool:
    """Whether the arguments reach the node at ``path`` (present property, existing item, matching branch)."""
    node = schema
    current = [value]
    i = 0
    while i < len(path):
        step = path[i]
        if step == "properties":
            name = path[i + 1]
            current = [v[name] for v in current if type(v) is dict and name in v]
            node = node["properties"][name]
            i += 2
        elif step == "items":
            current = [item for v in current if type(v) is list for item in v]
            node = node["items"]
            i += 1
        else:  # oneOf
            node = node["oneOf"][path[i + 1]]
            validator = Draft202012Validator(node)
            current = [v for v in current if validator.is_valid(v)]
            i += 2
        if not current:
            return False
    return True


REPRESENTATIVE_NODES: list[tuple[Path, Any]] = [
    ((), {"type": "object"}),
    *((("properties", "p"), {"type": kind}) for kind in ["object", "array", *SCALAR_TYPES]),
    (("properties", "p"), {"oneOf": [{"type": "string"}]}),
]


def injection_labels(profile: str) -> list[str]:
    """Every injection label of the profile, in a stable order."""
    labels: list[str] = []
    for path, node in REPRESENTATIVE_NODES:
        for label, _, _ in injections(path, node, profile):
            if label not in labels:
                labels.append(label)
    return labels


LABELS = {profile: injection_labels(profile) for profile in PROFILES}
ANY = "any"
HOSTS: list[Any] = [
    {"type": "array", "items": {"type": "string"}},
    {"oneOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]},
    *({"type": kind} for kind in ["object", *SCALAR_TYPES]),
]
"""Nodes grafted in as property ``host`` when the drawn schema has no node the drawn injection applies to."""


@st.composite
def outside_cases(draw: Draw, profile: str, wanted: str) -> tuple[Any, ...]:
    """An in-subset schema with one spot pushed outside the subset, and argument values.

    ``wanted`` is one injection label, or :data:`ANY` for a label drawn from all of them.
    Returns (schema, label, expected finding pointer, values, reach facts). The label and
    the node index are drawn before the schema: draws made after a large schema lean hard
    towards the first choice. The values are built for the *original* schema, so many of them
    would pass if the guard ignored the injection.
    """
    label = draw(st.sampled_from(LABELS[profile])) if wanted == ANY else wanted
    spot = draw(st.integers(0, 63))
    base = draw(root_schemas(annotated=profile == "standard"))

    def matching(schema: Any) -> list[tuple[Path, Any, Path]]:
        return [
            (path, new, at)
            for path, node in schema_nodes(schema)
            for found, new, at in injections(path, node, profile)
            if found == label
        ]

    options = matching(base)
    for host in HOSTS:
        if options:
            break
        base = {**base, "properties": {**base["properties"], "host": host}}
        options = matching(base)
    path, new, at = options[spot % len(options)]
    schema = replaced(base, path, new)
    values = draw(st.lists(values_for(base), min_size=1, max_size=3))
    inside_one_of = "oneOf" in path
    sent = [reaches(base, v, path) for v in values]
    event(f"injected: {label}")
    where = "inside a oneOf branch" if inside_one_of else "outside oneOf"
    event(f"{where}, reached by {'some' if any(sent) else 'no'} value")
    return schema, label, pointer(at), values, (inside_one_of, any(sent), all(sent))


OUTSIDE_PARAMS = [
    pytest.param(profile, label, id=f"{profile}-{label}") for profile in PROFILES for label in [ANY, *LABELS[profile]]
]


@pytest.mark.parametrize(("profile", "wanted"), OUTSIDE_PARAMS)
def test_outside_the_subset_every_call_is_refused(profile: str, wanted: str) -> None:
    """One unsupported keyword or shape anywhere: classify is unsupported, no call passes.

    Parametrized by injection, so each is covered whatever Hypothesis draws; the ``any``
    case draws the injection too, runs longer, and asserts where the injections landed:
    inside a oneOf branch no value matches, in a property no value sends, in a node every
    value reaches.
    """
    stats: Counter[str] = Counter()

    @profile_settings(ANY_INJECTION_EXAMPLES if wanted == ANY else PER_INJECTION_EXAMPLES)
    @given(case=outside_cases(profile, wanted))
    def prop(case: Any) -> None:
        schema, label, at, values, (inside_one_of, some_sent, all_sent) = case
        report = classify(schema, profile=profile)
        assert not report.ok, (label, schema)
        assert compile_schema(schema, profile=profile, defer=True).report == report, (label, schema)
        assert report.kind == UNSUPPORTED, (label, schema, report.issues_json())
        found = {(i.kind, i.schema_path) for i in report.issues}
        assert (UNSUPPORTED, at) in found, (label, at, schema, report.issues_json())
        for value in values:
            refused = check(schema, value, profile=profile)
            assert not refused.ok, (label, schema, value)
            assert refused.kind == UNSUPPORTED, (label, schema, value, refused.issues_json())
            assert all(i.instance_path is None for i in refused.issues), "an unsupported schema never validates"
        stats["examples"] += 1
        stats["values"] += len(values)
        if inside_one_of and not some_sent:
            stats["inside a oneOf branch no value matched"] += 1
        if not inside_one_of and not some_sent:
            stats["in a node no value reaches"] += 1
        if all_sent:
            stats["in a node every value reaches"] += 1

    prop()
    print(f"\n[{profile}] outside the subset, {wanted}: {dict(stats)}")
    if wanted == ANY:
        for needed in (
            "inside a oneOf branch no value matched",
            "in a node no value reaches",
            "in a node every value reaches",
        ):
            assert stats[needed], (needed, stats)
