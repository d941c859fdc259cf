"""Per-call validation speed of ``Compiled.check``, and the cost of classifying a long tool list.

Part 1, per call, on the Sigma schemas (``fixtures/sigma``) with hand-written valid and
invalid arguments, and on every supported schema of the MCP tool corpus
(``tests/data/mcp-tool-corpus``) with arguments derived from the schema
(a valid value, confirmed by the oracle, and one mutation of it that is invalid):

- ``mcp_guard.compile(schema).check(arguments)`` (compiled once, code generated on first use);
- ``jsonschema.Draft202012Validator(schema).iter_errors(arguments)`` drained to a list
  (built once; all errors, as the guard reports all) — the reference;
- ``fastjsonschema.compile(schema)(arguments)`` and ``jsonschema_rs.validator_for(schema)``
  ``.iter_errors`` when importable (fastjsonschema stops at the first error, which favours it).

Part 2: classifying a ``tools/list`` of 10,000 distinct tools (the corpus, repeated with a
distinct root description each) with ``mcp_guard.compile(..., defer=True)`` (as the relay
does: validators are built on a tool's first call) vs merely parsing its JSON with
``json.loads``, and vs parsing it into the SDK's ``ListToolsResult``; the relay's own
``ToolTable.replace`` on the parsed tools (its cache key, the classification, the verdicts it
writes into the listing) is shown as the end-to-end figure, and eager ``compile`` (trees built
at once) beside it.

Part 3 (``--profile extended``): one 1 MiB argument (10,000 objects) valid under an extended
schema (``$ref``/``$defs``, ``anyOf`` with ``null``, bounds, lengths, ``const``, ``format``,
``uniqueItems``, ``additionalProperties: false``), checked vs ``json.loads`` of its text, as the
relay checks it (``check(arguments, parsed=True)``) and as the API's default.

Part 4 (``--profile extended``, ``big-invalid``): the same argument with one error near its
start, and near its end, vs the same argument valid (every error collected, as a refusal does).

``--profile`` picks the profile of every part (default ``standard``). Under ``extended`` the
references validate the same thing: python-jsonschema (``Draft7Validator`` when the root
``$schema`` names draft-07) and jsonschema-rs assert ``format`` as the guard does (E4).

Method, the same for every side of every ratio: the contenders are timed in interleaved
rounds (a burst of load on the shared machine falls on all of them) and the best round
counts; the cyclic collector is collected before each round and paused during it (with it
running, a collection's cost depends on this script's own heap and falls on the side that
allocates: it once made ``json.loads`` of the listing 3.4x slower, which flattered the
guard); what a timed call returns is freed after the clock stops, for every side. In part 2
the sides take turns to go first after each round's parse (the first classification after it
ran ~2% slower: main against a copy of itself read 1.023 with a fixed order), and the ratio
against ``--before`` is taken over two rounds, one in which each side went first.
``--parts`` picks parts (``sigma,corpus,list,big,big-invalid``).

``--before DIR`` (or ``--baseline DIR``) times another checkout's core (say, the tree before a
refactor, or main) in the same process and the same interleaved rounds, as ``before``: DIR's
``mcp_guard/core`` is imported as ``mcp_guard_before.core`` (the core imports nothing outside
itself: tests/test_layering.py) and only its public API is used (``compile``, ``Compiled.check``
and ``.supported``, ``Report.ok`` and ``.issues``), which the cores of 7e06dad and later share.
The relay's ``ToolTable`` (part 2) is timed for this checkout only. Printed then, as times
this/before (>1: this checkout slower) with their median, quartiles and range: per case (part 1;
the ratio of each case's best rounds, so the spread is the cases'), and each round's own ratio
(parts 2-4; the spread is the rounds').

Figures are ratios against references measured in the same run. Usage::

    python benchmarks/core_speed.py [--profile standard|strict|extended] [--seconds 0.2] [--corpus PATH]
        [--parts sigma,corpus,list,big,big-invalid] [--before DIR] [--split] [--every N]

``--split`` adds the corpus figures of valid and of invalid arguments apart (the same measurements);
``--every N`` times every Nth corpus case only (a loaded machine). Before and after, for issue 23
(run from a folder that is not a checkout, once per profile that matters)::

    cd /tmp && PYTHONPATH=/path/to/this python /path/to/this/benchmarks/core_speed.py \
        --before /path/to/before [--profile extended]
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import jsonschema
from relay_throughput import spread  # (this folder's benchmark, on sys.path when a script runs)

from mcp_guard import compile as guard_compile

ROOT = Path(__file__).resolve().parents[1]
SIGMA = ROOT / "fixtures" / "sigma"
CORPUS = ROOT / "tests" / "data" / "mcp-tool-corpus"

SIGMA_CASES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "read": [
        ("valid", {"path": "/src/main.py", "offset": 10, "limit": 200}),
        ("invalid", {"path": 7, "offset": 0, "limit": True}),
    ],
    "write": [("valid", {"path": "/tmp/x", "content": "hello\n" * 20}), ("invalid", {"path": "/tmp/x"})],
    "grep": [
        ("valid", {"pattern": "TODO", "path": "src", "glob": "*.py", "ignore_case": True, "context": 2, "limit": 50}),
        ("invalid", {"pattern": "TODO", "context": -1, "limit": 0, "ignore_case": "yes"}),
    ],
    "AskUserQuestion": [
        (
            "valid",
            {
                "question": "Which?",
                "options": ["a", {"label": "b", "value": "2"}, {"label": "c", "description": "third"}],
                "allow_freeform": False,
                "timeout_ms": 5000,
            },
        ),
        ("invalid", {"question": "Which?", "options": [{"value": "x"}, 3], "timeout_ms": 10}),
    ],
    "todo": [
        ("valid", {"action": "update", "id": "t1", "status": "in_progress"}),
        ("invalid", {"action": "archive", "status": "done"}),
    ],
}


def race(fns: dict[str, Callable[[], object]], seconds: float) -> dict[str, float]:
    """Seconds per call of each function: the best of 5 rounds, the functions interleaved in each.

    Each function's batch is sized to about ``seconds / 10``; a round runs every batch in turn,
    so a burst of load on the shared machine falls on all of them. The collector is run before
    each round and paused during it, for every side alike (see :func:`paused`).
    """
    sizes = {}
    for name, fn in fns.items():
        n = 1
        while True:
            start = time.perf_counter()
            for _ in range(n):
                fn()
            if time.perf_counter() - start > seconds / 50:
                break
            n *= 2
        sizes[name] = n * 5
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(5):
        with paused():
            for name, fn in fns.items():
                batch = sizes[name]
                start = time.perf_counter()
                for _ in range(batch):
                    fn()
                best[name] = min(best[name], (time.perf_counter() - start) / batch)
    return best


class paused:
    """``with paused():`` the cyclic collector collected, then paused; enabled again on exit.

    Every timed figure here is taken this way, the guard and its reference alike. With the
    collector running, what a collection costs depends on everything else the process holds
    (this script's own heap: 10,000 parsed tools, 1,700 compiled validators), and it falls
    mostly on the side that allocates (``json.loads`` builds every container; a check builds
    almost none): in one run it made ``json.loads`` of the 10,000-tool list 3.4× slower,
    which flattered the guard.
    """

    def __enter__(self) -> None:
        gc.collect()
        gc.disable()

    def __exit__(self, *_exc: object) -> None:
        gc.enable()


FORMAT_EXAMPLES = {
    "uri": "https://example.com/a?b=c",
    "uri-reference": "/a/b",
    "iri": "https://example.com/é",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "date-time": "2026-12-01T10:00:00Z",
    "date": "2026-12-01",
    "time": "10:00:00Z",
    "email": "someone@example.com",
    "hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
}


def example(schema: Any, root: Any = None, depth: int = 0) -> Any:
    """A value the (supported) schema usually accepts: required and declared properties filled in.

    Follows ``$ref`` into the document, the first non-null ``anyOf``/``oneOf`` branch, ``const``,
    ``enum``, lengths, bounds, ``minItems`` and common formats; the caller keeps it only when the
    reference validator agrees it is valid.
    """
    root = schema if root is None else root
    if type(schema) is not dict or depth > 20:
        return "example"
    if type(schema.get("$ref")) is str and schema["$ref"].startswith("#/"):
        target: Any = root
        for token in schema["$ref"][2:].split("/"):
            target = target.get(token.replace("~1", "/").replace("~0", "~"), {}) if type(target) is dict else {}
        return example(target, root, depth + 1)
    for key in ("oneOf", "anyOf", "allOf"):
        if schema.get(key):
            branches = [b for b in schema[key] if not (type(b) is dict and b.get("type") == "null")]
            return example((branches or schema[key])[0], root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if type(kind) is list:
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: example(sub, root, depth + 1) for name, sub in props.items()}
    if kind == "array":
        count = max(int(schema.get("minItems", 0)), 3 if "items" in schema else 2)
        if "items" not in schema or type(schema["items"]) is not dict:
            return [1, "a"][:count] if not schema.get("uniqueItems") else list(range(count))
        item = example(schema["items"], root, depth + 1)
        return [item] if schema.get("uniqueItems") else [item] * count
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        value = low + 1 if kind == "integer" else low + 0.5
        if high is not None and value > high:
            value = high if "maximum" in schema else (low + high) / 2
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    text = FORMAT_EXAMPLES.get(schema.get("format", ""), "example")
    return (text * (1 + int(schema.get("minLength", 0)) // len(text)))[: schema.get("maxLength", 10_000)]


def mutate(value: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """An invalid variant: the first property's value replaced by a list of nulls, a required key removed."""
    bad = dict(value)
    if bad:
        bad[next(iter(bad))] = [None]
    required = schema.get("required", [])
    if len(required) > 1:
        bad.pop(required[-1], None)
    return bad


def reference(schema: dict[str, Any], profile: str) -> Any:
    """python-jsonschema for the schema's dialect; asserting formats under ``extended`` (as the guard does)."""
    draft7 = str(schema.get("$schema", "")).startswith("http://json-schema.org/draft-07")
    cls = jsonschema.Draft7Validator if draft7 and profile == "extended" else jsonschema.Draft202012Validator
    return cls(schema, format_checker=cls.FORMAT_CHECKER) if profile == "extended" else cls(schema)


def validators(profile: str) -> dict[str, Callable[[dict[str, Any]], Callable[[Any], object]]]:
    """The third-party validators that are installed (under ``extended``: jsonschema-rs only, asserting formats)."""
    found: dict[str, Callable[[dict[str, Any]], Callable[[Any], object]]] = {}
    try:
        if profile == "extended":
            raise ImportError  # fastjsonschema has no 2020-12 (unevaluated*, prefixItems, $defs)
        import fastjsonschema

        def fjs(schema: dict[str, Any]) -> Callable[[Any], object]:
            validate = fastjsonschema.compile(schema)

            def run(value: Any) -> object:
                try:
                    return validate(value)
                except fastjsonschema.JsonSchemaException as exc:
                    return exc

            return run

        found["fastjsonschema"] = fjs
    except ImportError:
        pass
    try:
        import jsonschema_rs

        def rs(schema: dict[str, Any]) -> Callable[[Any], object]:
            validator = jsonschema_rs.validator_for(schema, validate_formats=profile == "extended")
            return lambda value: list(validator.iter_errors(value))

        found["jsonschema-rs"] = rs
    except ImportError:
        pass
    return found


def measure_calls(
    cases: list[tuple[str, str, dict[str, Any], Any]], seconds: float, profile: str, guards: dict[str, Any]
) -> dict[str, list[float]]:
    """Speed-up over python-jsonschema per case, for the guard(s) and each installed validator."""
    others = validators(profile)
    ratios: dict[str, list[float]] = {**{name: [] for name in guards}, **{name: [] for name in others}}
    for label, kind, schema, arguments in cases:
        oracle = reference(schema, profile)
        fns: dict[str, Callable[[], object]] = {"reference": lambda a=arguments, v=oracle: list(v.iter_errors(a))}
        for name, compile_ in guards.items():
            compiled = compile_(schema, profile=profile)
            assert compiled.check(arguments).ok == (not list(oracle.iter_errors(arguments))), (name, label, kind)
            fns[name] = lambda a=arguments, c=compiled: c.check(a)
        for name, make in others.items():
            run = make(schema)
            fns[name] = lambda a=arguments, r=run: r(a)
        times = race(fns, seconds)
        for name in ratios:
            ratios[name].append(times["reference"] / times[name])
    return ratios


def report(title: str, ratios: dict[str, list[float]]) -> None:
    print(f"\n{title}")
    for name, values in ratios.items():
        if values:
            print(
                f"  {name:<15} × python-jsonschema: median {statistics.median(values):5.1f}, "
                f"geometric mean {statistics.geometric_mean(values):5.1f}, "
                f"min {min(values):5.1f}, max {max(values):6.1f}  ({len(values)} cases, "
                f"{sum(v >= 20 for v in values)} at 20× or more)"
            )
    if ratios.get("before"):  # speed-ups over the same reference: time this/before = before's / this one's
        per_case = [b / g for g, b in zip(ratios["mcp-guard"], ratios["before"], strict=True)]
        print(f"  time mcp-guard / before, per case (>1: mcp-guard slower): {spread(per_case)}")
    rs = ratios.get("jsonschema-rs")
    for name in ("mcp-guard", "before"):
        if rs and ratios.get(name):
            per_case = [g / r for g, r in zip(ratios[name], rs, strict=True)]
            print(f"  {name} / jsonschema-rs, per case (>1: {name} faster): median {statistics.median(per_case):.2f}")


def sigma_cases() -> list[tuple[str, str, dict[str, Any], Any]]:
    cases = []
    for tool, pairs in SIGMA_CASES.items():
        schema = json.loads((SIGMA / f"{tool}.json").read_text())["inputSchema"]
        cases += [(tool, kind, schema, arguments) for kind, arguments in pairs]
    return cases


def corpus_tools(corpus: Path) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    for path in sorted(corpus.glob("*.json")):
        tools += json.loads(path.read_text())["tools"]
    return tools


def corpus_cases(tools: list[dict[str, Any]], profile: str) -> list[tuple[str, str, dict[str, Any], Any]]:
    cases = []
    for tool in tools:
        schema = tool["inputSchema"]
        if not guard_compile(schema, profile=profile).supported:
            continue
        oracle = reference(schema, profile)
        valid = example(schema)
        invalid = mutate(valid, schema)
        if oracle.is_valid(valid):
            cases.append((tool["name"], "valid", schema, valid))
        if not oracle.is_valid(invalid):
            cases.append((tool["name"], "invalid", schema, invalid))
    return cases


def classify_list(tools: list[dict[str, Any]], profile: str, guards: dict[str, Any]) -> None:
    """Part 2: classifying 10,000 distinct tools vs parsing their tools/list result (collector paused, all sides)."""
    import mcp_types

    from mcp_guard.calls.tool_table import ToolTable

    listed = []
    for i in range(10_000):
        tool = json.loads(json.dumps(tools[i % len(tools)]))
        tool["name"] = f"{tool['name']}_{i}"
        tool["inputSchema"] = {**tool["inputSchema"], "description": f"variant {i}"}
        listed.append(tool)
    text = json.dumps({"tools": listed})
    del listed  # only the text stays: the parse below runs over a heap without a second copy
    listed = []
    best: dict[str, float] = {}
    rounds: dict[str, list[float]] = {}

    def timed(label: str, fn: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        result = fn()  # kept past the clock: freeing it is timed for no side
        spent = time.perf_counter() - start
        best[label] = min(best.get(label, float("inf")), spent)
        rounds.setdefault(label, []).append(spent)
        return result

    names = list(guards)
    for round_ in range(LIST_ROUNDS):
        with paused():
            listed = timed("json.loads", lambda: json.loads(text))["tools"]
            # each side goes first in turn: the first classify after the parse runs ~2% slower
            # (measured: main against a copy of itself, 1.023 with a fixed order)
            turn = round_ % len(names)
            for name in names[turn:] + names[:turn]:
                compile_ = guards[name]
                timed(
                    f"{name} classify",
                    lambda c=compile_, got=listed: [c(t["inputSchema"], profile=profile, defer=True) for t in got],
                )
            timed("relay table", lambda got=listed: ToolTable(profile, label=None).replace(got))
            timed("eager", lambda got=listed: [guard_compile(t["inputSchema"], profile=profile) for t in got])
            timed("SDK parse", lambda: mcp_types.ListToolsResult.model_validate_json(text))
            del listed  # nor is the last round's document alive during the next parse
    supported = sum(guard_compile(t["inputSchema"], profile=profile, defer=True).supported for t in tools)
    parse = best["json.loads"]
    print(
        f"\nclassifying a tools/list of 10,000 distinct tools ({len(text) / 1e6:.1f} MB of JSON; "
        f"profile {profile}: {supported} of the {len(tools)} corpus schemas supported; best of {LIST_ROUNDS} rounds, "
        "the collector paused in each, for every side):"
    )
    print(f"    json.loads                                  {parse * 1e3:7.1f} ms   (the reference)")
    print(f"    SDK ListToolsResult parse                   {best['SDK parse'] * 1e3:7.1f} ms")
    for name in guards:
        figure = best[f"{name} classify"]
        pairs = zip(rounds[f"{name} classify"], rounds["json.loads"], strict=True)
        per_round = statistics.median(c / p for c, p in pairs)
        print(
            f"    {name + ' classify (compile, defer=True)':<43} {figure * 1e3:7.1f} ms   "
            f"classify / json.loads = {figure / parse:.2f} (best), {per_round:.2f} (median of the rounds' ratios)"
        )
    if "before" in guards:
        ours, theirs = rounds["mcp-guard classify"], rounds["before classify"]
        # one ratio per two rounds, one in which each side went first (the order's bias cancels)
        twos = [(ours[i] + ours[i + 1]) / (theirs[i] + theirs[i + 1]) for i in range(0, len(ours) - 1, 2)]
        print(f"    classify mcp-guard / before, two rounds each (>1: mcp-guard slower): {spread(twos)}")
    relay = best["relay table"]
    print(
        f"    relay ToolTable.replace (key, classify, verdicts) {relay * 1e3:5.1f} ms   "
        f"relay / json.loads = {relay / parse:.2f}   (what the relay does with a parsed listing)"
    )
    print(f"    mcp-guard compile, validators' trees built  {best['eager'] * 1e3:7.1f} ms")


LIST_ROUNDS: Final = 12
"""Part 2's rounds: each times every side once, in turn (best and the median of per-round ratios shown)."""

BIG_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "item": {
            "type": "object",
            "properties": {
                "id": {"type": "integer", "minimum": 0},
                "name": {"type": "string", "minLength": 1, "maxLength": 64},
                "kind": {"enum": ["book", "film", "song"]},
                "price": {"anyOf": [{"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.01}, {"type": "null"}]},
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 16}, "uniqueItems": True},
                "created": {"type": "string", "format": "date"},
                "v": {"const": 1},
            },
            "required": ["id", "name", "kind"],
            "additionalProperties": False,
        }
    },
    "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/item"}, "maxItems": 100_000}},
    "required": ["items"],
}
"""Part 3's extended schema: what pydantic and zod emit for a list of records."""


def big_items() -> list[dict[str, Any]]:
    """Part 3's 10,000 records, valid under :data:`BIG_SCHEMA` (about 1.1 MiB of JSON)."""
    return [
        {
            "id": i,
            "name": f"item {i}",
            "kind": ("book", "film", "song")[i % 3],
            "price": None if i % 5 == 0 else round(1 + (i % 1000) * 0.25, 2),
            "tags": [f"t{i % 7}", f"u{i % 3}"] if i % 2 else [],
            "created": f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}",
            "v": 1,
        }
        for i in range(10_000)
    ]


def checker(compiled: Any, parsed: bool) -> Callable[[Any], Any]:
    """``compiled.check`` as the relay calls it (``parsed=True``: the arguments are what its JSON
    decoder returned), or as the API's default; an older core without ``parsed`` takes it plain."""
    if parsed and "parsed" in inspect.signature(compiled.check).parameters:
        return lambda value: compiled.check(value, parsed=True)
    return compiled.check  # type: ignore[no-any-return]


def big_argument(rounds: int, guards: dict[str, Any]) -> None:
    """Part 3: a 1 MiB argument (10,000 objects) valid under :data:`BIG_SCHEMA` vs ``json.loads`` of it.

    Timed as the relay checks it (``parsed=True``) and as the API does by default (every object
    key's type tested), beside ``json.loads`` in each round.
    """
    text = json.dumps({"items": big_items()})
    arguments = json.loads(text)
    assert jsonschema.Draft202012Validator(BIG_SCHEMA, format_checker=jsonschema.FormatChecker()).is_valid(arguments)
    checks: dict[str, Callable[[Any], Any]] = {}
    for name, compile_ in guards.items():
        compiled = compile_(BIG_SCHEMA, profile="extended")
        checks[name] = checker(compiled, parsed=True)
        if name == "mcp-guard":
            checks[name + " (API default)"] = checker(compiled, parsed=False)
    for name, check in checks.items():
        assert check(arguments).ok, name
    best: dict[str, float] = dict.fromkeys(["json.loads", *checks], float("inf"))
    per_round: dict[str, list[float]] = {name: [] for name in checks}
    for _ in range(rounds):
        with paused():
            start = time.perf_counter()
            parsed = json.loads(text)  # kept past the clock: freeing it is timed for no side
            loads = time.perf_counter() - start
            best["json.loads"] = min(best["json.loads"], loads)
            for name, check in checks.items():
                start = time.perf_counter()
                report = check(arguments)
                took = time.perf_counter() - start
                best[name] = min(best[name], took)
                per_round[name].append(took / loads)  # both sides of one round: the same load
            del parsed, report
    parse = best["json.loads"]
    print(
        f"\none argument of {len(text) / 2**20:.2f} MiB (10,000 objects), valid under an extended schema "
        f"(best of {rounds} interleaved rounds, the collector paused for every side; the median is of "
        "each round's own ratio):"
    )
    print(f"  json.loads                   {parse * 1e3:7.1f} ms")
    for name in checks:
        took = best[name]
        print(
            f"  {name + ' check':<28} {took * 1e3:7.1f} ms   check / json.loads = {took / parse:.2f} (best), "
            f"{statistics.median(per_round[name]):.2f} (median of rounds)"
        )
    if "before" in per_round:  # both are per-round ratios to the same json.loads: theirs is this over before
        pairs = zip(per_round["mcp-guard"], per_round["before"], strict=True)
        print(
            f"  check mcp-guard / before, each round's own (>1: mcp-guard slower): {spread([a / b for a, b in pairs])}"
        )


BIG_ERRORS = (("near the start", 10), ("near the end", 9_990))
"""Part 4: where the one error of an invalid big argument sits (the index of the record it breaks)."""


def big_invalid(rounds: int, guards: dict[str, Any]) -> None:
    """Part 4: the 1 MiB argument of part 3 with one error (``minimum`` on one record's ``id``)
    near its start, and near its end, vs the same argument valid: all errors collected, with
    their pointers and messages, as the relay refuses the call. Ratios of each round's own times."""
    valid = json.loads(json.dumps({"items": big_items()}))
    cases: dict[str, Any] = {"valid": valid}
    for label, index in BIG_ERRORS:
        bad = json.loads(json.dumps(valid))
        bad["items"][index]["id"] = -1
        cases[label] = bad
    checks = {name: checker(compile_(BIG_SCHEMA, profile="extended"), parsed=True) for name, compile_ in guards.items()}
    for name, check in checks.items():
        for label, index in [("valid", None), *BIG_ERRORS]:
            report = check(cases[label])
            if index is None:
                assert report.ok, name
            else:
                assert [i.instance_path for i in report.issues] == [f"/items/{index}/id"], (name, label)
    best = {(name, label): float("inf") for name in checks for label in cases}
    ratios: dict[tuple[str, str], list[float]] = {(name, label): [] for name in checks for label, _ in BIG_ERRORS}
    times: dict[tuple[str, str], list[float]] = {(name, label): [] for name in checks for label in cases}
    for _ in range(rounds):
        with paused():
            for name, check in checks.items():
                took = {}
                for label, value in cases.items():
                    start = time.perf_counter()
                    report = check(value)
                    took[label] = time.perf_counter() - start
                    best[name, label] = min(best[name, label], took[label])
                    times[name, label].append(took[label])
                for label, _ in BIG_ERRORS:
                    ratios[name, label].append(took[label] / took["valid"])
            del report
    print(
        f"\nthe same 1 MiB argument with one error, vs valid (best of {rounds} interleaved rounds, the collector "
        "paused; the ratio is the median of each round's own invalid / valid):"
    )
    for name in checks:
        print(f"  {name + ' valid':<30} {best[name, 'valid'] * 1e3:7.1f} ms")
        for label, _ in BIG_ERRORS:
            print(
                f"  {name + ' error ' + label:<30} {best[name, label] * 1e3:7.1f} ms   "
                f"invalid / valid = {statistics.median(ratios[name, label]):.2f}"
            )
    if "before" in checks:
        for label in cases:
            pairs = zip(times["mcp-guard", label], times["before", label], strict=True)
            ratios = spread([a / b for a, b in pairs])
            print(f"  {label} mcp-guard / before, each round's own (>1: mcp-guard slower): {ratios}")


def before_compile(checkout: Path) -> Any:
    """``compile`` of another checkout's core (``checkout/mcp_guard/core``), imported beside this one.

    The core imports nothing outside itself (tests/test_layering.py), so it loads as
    ``mcp_guard_before.core`` without that checkout's other modules: the two versions are then
    timed in the same process, in the same interleaved rounds. Only the package's public
    ``compile`` is taken (not a module path inside it, which a refactor may move).
    """
    import importlib
    import types

    package = types.ModuleType("mcp_guard_before")
    package.__path__ = [str(checkout.resolve() / "mcp_guard")]
    sys.modules["mcp_guard_before"] = package
    core = importlib.import_module("mcp_guard_before.core")
    assert core.__file__ is not None and core.__file__.startswith(package.__path__[0]), core.__file__
    return core.compile


PARTS = ("sigma", "corpus", "list", "big", "big-invalid")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=0.2, help="rough time budget per measurement")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="folder of tools/list corpus files")
    parser.add_argument("--profile", default="standard", choices=["standard", "strict", "extended"])
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    parser.add_argument("--every", type=int, default=1, help="time every Nth corpus case only (a loaded machine)")
    parser.add_argument(
        "--before",
        "--baseline",
        dest="before",
        type=Path,
        metavar="DIR",
        help="a checkout (say, the tree before a refactor) whose core is timed beside this one, as `before`",
    )
    parser.add_argument("--split", action="store_true", help="also report the corpus figures of valid, invalid apart")
    args = parser.parse_args()
    profile = args.profile
    parts = set(args.parts.split(","))
    guards: dict[str, Any] = {"mcp-guard": guard_compile}
    if args.before is not None:
        guards["before"] = before_compile(args.before)
    print(f"profile: {profile}" + (f"; before: the core of {args.before.resolve()}" if args.before else ""))
    if "sigma" in parts:
        report(
            "Sigma schemas, valid and invalid arguments", measure_calls(sigma_cases(), args.seconds, profile, guards)
        )
    if not args.corpus.is_dir():
        print(f"\n(corpus not found at {args.corpus}: corpus figures skipped)")
        return 0
    tools = corpus_tools(args.corpus)
    if "corpus" in parts:
        cases = corpus_cases(tools, profile)[:: args.every]
        supported = len({label for label, _kind, _schema, _args in cases})
        every = f" (every {args.every}th case)" if args.every > 1 else ""
        title = f"corpus: {supported} supported schemas of {len(tools)} tools"
        ratios = measure_calls(cases, args.seconds / 4, profile, guards)
        report(f"{title}, valid and invalid arguments{every}", ratios)
        if args.split:  # the same measurements, by kind of arguments
            for kind in ("valid", "invalid"):
                mine = [i for i, case in enumerate(cases) if case[1] == kind]
                report(f"{title}, {kind} arguments only", {n: [r[i] for i in mine] for n, r in ratios.items()})
    if "list" in parts:
        classify_list(tools, profile, guards)
    if profile == "extended" and "big" in parts:
        big_argument(max(5, int(args.seconds * 100)), guards)
    if profile == "extended" and "big-invalid" in parts:
        big_invalid(max(5, int(args.seconds * 100)), guards)
    return 0


if __name__ == "__main__":
    sys.exit(main())
