"""Differential property tests of result checking (issue 15) against the argument oracles.

The core's differential tests (tests/core/test_differential.py, test_differential_extended.py)
hold ``Compiled.check`` to python-jsonschema and jsonschema-rs for arguments. Here the same
generated schemas are a tool's ``outputSchema`` and the same generated values its
``structuredContent``, and the whole output path is judged:

- the tool is listed (``calls.tool_table.ToolTable.annotate``, which classifies ``outputSchema`` as the
  relay does: deferred, from the cache of schema texts), the result travels as the upstream's
  JSON-RPC line (``wire.jsonrpc.dumps`` then ``loads_upstream``, so numbers reach the check as the
  relay parses them), and ``calls.outputs.judge_result`` judges it under ``enforce`` and ``report``;
- ``enforce``: a result the oracle accepts is passed on unchanged (the very object); one it
  rejects is withheld: a tool error (``isError``) of kind ``output_invalid`` whose issues point
  into ``structuredContent``, and whose text holds no value of the result;
- ``report``: the result passes, with ``_meta["mcp-guard/output"]["valid"]`` the oracle's verdict;
- an ``isError`` result is never judged, whatever it carries.

Oracles: ``standard`` and ``strict`` against python-jsonschema (Draft 2020-12, the generators of
test_differential, its known oracle bugs excluded); ``extended`` against the exact oracle of
tests/core/exact_oracle.py, with python-jsonschema and jsonschema-rs raw disagreements allowed
only where that module allows them (a by-design family). CI: the core's fixed seed, 60 schemas per
profile; ``MCP_GUARD_HYPOTHESIS_LONG=1``: randomized, 5,000. No example database.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from mcp_guard.calls.outputs import OUTPUT_INVALID, judge_result
from mcp_guard.calls.tool_table import ToolTable
from mcp_guard.core import Compiled
from mcp_guard.wire.jsonrpc import dumps, loads_upstream
from mcp_guard.wire.meta import OUTPUT_KEY, REJECTION_KEY
from tests.core.exact_oracle import Oracles, families, rs_by_design
from tests.core.extended_cases import schemas as extended_schemas
from tests.core.extended_cases import values_for as extended_values
from tests.core.test_differential import cases, oracle_bug, oracle_view, profile_settings

LONG = os.environ.get("MCP_GUARD_HYPOTHESIS_LONG") == "1"
SCHEMAS = 5_000 if LONG else 60
SENTINEL = "zq-result-secret-9"
"""The string that replaces every string of a rejected value (``standard``, ``strict``): no withheld
result's text or issues may hold it."""


def listed(schema: Any, profile: str) -> Compiled | None:
    """``schema`` as the relay holds a listed tool's ``outputSchema`` (None: the profile cannot enforce it)."""
    table = ToolTable(profile, outputs="enforce")
    tool = {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": schema}
    listing = loads_upstream(dumps({"tools": [tool]}))
    table.annotate(listing, cache=True, first_page=True)
    entry = table.get("t")
    assert entry is not None and entry.output is not None
    return entry.output if entry.output.supported else None


def over_the_wire(structured: Any) -> dict[str, Any]:
    """A ``CallToolResult`` carrying ``structured``, as the relay parses the upstream's line."""
    line = dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "structuredContent": structured}})
    message = loads_upstream(line)
    assert type(message) is dict
    result = message["result"]
    assert type(result) is dict
    return result


def resolves(document: Any, pointer: str) -> bool:
    """Whether the JSON Pointer ``pointer`` (RFC 6901) names a value inside ``document``."""
    if pointer == "":
        return True
    if not pointer.startswith("/"):
        return False
    for raw in pointer[1:].split("/"):
        segment = raw.replace("~1", "/").replace("~0", "~")
        if type(document) is dict and segment in document:
            document = document[segment]
        elif type(document) is list and segment.isdigit() and int(segment) < len(document):
            document = document[int(segment)]
        else:
            return False
    return True


def judged_like(compiled: Compiled, structured: Any, expected: bool, stats: Counter[str]) -> None:
    """The output path's verdicts on ``structured`` agree with the oracle's ``expected``."""
    result = over_the_wire(structured)
    enforced = judge_result("t", compiled, result, "enforce", modern=False)
    why = f"\nvalue={structured!r}\nexpected={expected}\nfindings={enforced.report.issues_json()!r}"
    if expected:
        assert enforced.outcome is None and enforced.result is result, "a valid result was not passed on" + why
    else:
        assert enforced.outcome == OUTPUT_INVALID, "an invalid result was passed on" + why
        withheld = enforced.result
        assert withheld["isError"] is True and "structuredContent" not in withheld, why
        rejection = withheld["_meta"][REJECTION_KEY]
        assert rejection["kind"] == OUTPUT_INVALID and rejection["schema"] == "outputSchema", why
        assert rejection["issues"], why
        for issue in rejection["issues"]:  # each instance pointer names a place in structuredContent
            assert resolves(structured, issue["instance_path"]), f"{issue!r}{why}"
        assert SENTINEL not in dumps(withheld).decode(), "a withheld result's text or issues hold a result value"
    reported = judge_result("t", compiled, result, "report", modern=False)
    note = reported.result["_meta"][OUTPUT_KEY]
    assert note["checked"] is True and note["valid"] is expected, why
    assert reported.result["structuredContent"] == result["structuredContent"], "report changed the result"
    failed = {"content": [], "isError": True, "structuredContent": structured}
    assert judge_result("t", compiled, failed, "enforce", modern=False).result is failed
    stats["valid" if expected else "invalid"] += 1


def with_sentinel(value: Any) -> Any:
    """``value`` with every string in it (not the keys) replaced by :data:`SENTINEL`."""
    if type(value) is str:
        return SENTINEL
    if type(value) is list:
        return [with_sentinel(v) for v in value]
    if type(value) is dict:
        return {k: with_sentinel(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize("profile", ["standard", "strict"])
def test_results_are_judged_as_python_jsonschema_judges_them(profile: str) -> None:
    """``standard`` and ``strict``: the output path's verdict is python-jsonschema's (Draft 2020-12)."""
    stats: Counter[str] = Counter()

    @profile_settings(SCHEMAS)
    @given(case=cases(annotated=profile == "standard"))
    def prop(case: tuple[dict[str, Any], list[Any]]) -> None:
        schema, values = case
        compiled = listed(schema, profile)
        assert compiled is not None, f"an in-subset outputSchema was refused: {schema!r}"
        validator = Draft202012Validator(oracle_view(schema))
        for value in values:
            if oracle_bug(schema, value) is not None:
                continue
            judged_like(compiled, value, bool(validator.is_valid(value)), stats)
            secret = with_sentinel(value)  # its strings made one a withheld result's text must not hold
            if secret != value and oracle_bug(schema, secret) is None and not validator.is_valid(secret):
                judged_like(compiled, secret, False, stats)
                stats["invalid, holding the sentinel"] += 1

    prop()
    print(f"\n[{profile}] output differential: {dict(stats)}")
    assert stats["valid"] >= 20 and stats["invalid"] >= 20 and stats["invalid, holding the sentinel"] >= 3, stats


def test_results_are_judged_as_the_exact_oracle_judges_them() -> None:
    """``extended``: the output path's verdict is the exact oracle's; python-jsonschema and jsonschema-rs
    differ only where tests/core/exact_oracle.py says they are wrong by design."""
    stats: Counter[str] = Counter()

    @profile_settings(SCHEMAS)
    @given(schema=extended_schemas(), data=st.data())
    def prop(schema: dict[str, Any], data: st.DataObject) -> None:
        compiled = listed(schema, "extended")
        if compiled is None:  # E3/E6 (an unboundable pattern, the budget): refused, as test_differential_extended says
            stats["refused"] += 1
            return
        oracles = Oracles(schema)
        for value in data.draw(st.lists(extended_values(schema), min_size=1, max_size=3)):
            structured = over_the_wire(value)["structuredContent"]  # as the relay parses it
            expected = oracles.exact_verdict(structured)
            judged_like(compiled, structured, expected, stats)
            raw = oracles.raw_verdict(structured)
            if raw is not None and raw is not expected:
                assert families(schema, structured) & {"pattern", "format", "multipleOf", "exact numbers"}, schema
            rs = oracles.rs_verdict(structured)
            if rs is not None and rs is not expected:
                assert rs_by_design(schema, structured), f"jsonschema-rs disagrees: {schema!r} {structured!r}"
                stats["jsonschema-rs wrong by design"] += 1

    prop()
    print(f"\n[extended] output differential: {dict(stats)}")
    assert stats["valid"] >= 20 and stats["invalid"] >= 20, stats
