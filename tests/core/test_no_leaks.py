"""Messages never echo argument values (spec, "What a report carries").

Each case plants a unique secret in a value that breaks a constraint and checks that no
message, and no rendering of the report or its issues, contains it. Keys are not secret:
they appear in instance pointers by design.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_guard import check, classify
from mcp_guard import compile as compile_schema

SECRET = "s3cr3t-TOKEN-8f2a9c"
SECRET_NUMBER = 918273645
SECRET_FLOAT = -918273645.25
SECRET_BIG = 2**80 + 918273645  # 1208925819614630092349821
NAN = float("nan")


@pytest.fixture(params=["standard", "strict"])
def profile(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def renderings(report: Any) -> list[str]:
    texts = [str(report), repr(report), json.dumps(report.to_json()), json.dumps(report.issues_json())]
    for issue in report.issues:
        texts += [issue.message, str(issue), repr(issue), json.dumps(issue.to_json())]
    return texts


def assert_no_leak(report: Any, secrets: list[str]) -> None:
    assert report.issues, "the case must produce findings"
    for text in renderings(report):
        for secret in secrets:
            assert secret not in text


def secrets_of(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, float):
        return [repr(value), "918273645"]
    return [str(value), "918273645"]


INT = {"type": "integer"}
STR = {"type": "string"}

CASES = [
    # (schema, arguments, secret, a keyword that must be reported)
    pytest.param({"properties": {"a": INT}}, {"a": SECRET}, SECRET, "type", id="type-string-value"),
    pytest.param({"properties": {"a": STR}}, {"a": SECRET_NUMBER}, SECRET_NUMBER, "type", id="type-number-value"),
    pytest.param({"properties": {"a": STR}}, {"a": SECRET_FLOAT}, SECRET_FLOAT, "type", id="type-float-value"),
    pytest.param({"properties": {"a": STR}}, {"a": SECRET_BIG}, SECRET_BIG, "type", id="type-big-int-value"),
    pytest.param({"properties": {"a": STR}}, {"a": {"token": SECRET}}, SECRET, "type", id="type-object-value"),
    pytest.param({"properties": {"a": STR}}, {"a": [SECRET, 1]}, SECRET, "type", id="type-list-value"),
    pytest.param({"properties": {"a": INT}}, {"a": 1.5 + SECRET_NUMBER}, SECRET_NUMBER, "type", id="type-fraction"),
    pytest.param({"properties": {"a": {"type": "boolean"}}}, {"a": SECRET}, SECRET, "type", id="type-boolean"),
    pytest.param({}, SECRET, SECRET, "type", id="arguments-string"),
    pytest.param({}, json.dumps({"token": SECRET}), SECRET, "type", id="arguments-json-text"),
    pytest.param({}, [SECRET], SECRET, "type", id="arguments-list"),
    pytest.param({}, SECRET_NUMBER, SECRET_NUMBER, "type", id="arguments-number"),
    pytest.param(
        {"properties": {"n": {"type": "integer", "minimum": 10**12}}},
        {"n": SECRET_NUMBER},
        SECRET_NUMBER,
        "minimum",
        id="minimum-int",
    ),
    pytest.param(
        {"properties": {"n": {"type": "number", "minimum": 0}}},
        {"n": SECRET_FLOAT},
        SECRET_FLOAT,
        "minimum",
        id="minimum-float",
    ),
    pytest.param(
        {"properties": {"c": {"type": "string", "enum": ["red", "green"]}}},
        {"c": SECRET},
        SECRET,
        "enum",
        id="enum-string",
    ),
    pytest.param(
        {"properties": {"c": {"type": "integer", "enum": [1, 2]}}},
        {"c": SECRET_NUMBER},
        SECRET_NUMBER,
        "enum",
        id="enum-number",
    ),
    pytest.param(
        {"properties": {"c": {"type": "object", "enum": [{"k": "v"}]}}},
        {"c": {"k": SECRET}},
        SECRET,
        "enum",
        id="enum-object",
    ),
    pytest.param(
        {"properties": {"n": INT, "m": INT}, "required": ["n"]},
        {"m": SECRET},
        SECRET,
        "required",
        id="required-with-bad-value",
    ),
    pytest.param(
        {"properties": {"n": INT}, "required": ["n", "k"]},
        {"other": SECRET, "more": [SECRET]},
        SECRET,
        "required",
        id="required-with-undeclared-values",
    ),
    pytest.param(
        {"properties": {"n": INT}, "additionalProperties": False},
        {"extra": SECRET},
        SECRET,
        "additionalProperties",
        id="additionalProperties-value",
    ),
    pytest.param(
        {"properties": {"n": INT}, "additionalProperties": False},
        {"extra": {"deep": [SECRET_NUMBER]}},
        SECRET_NUMBER,
        "additionalProperties",
        id="additionalProperties-nested-value",
    ),
    pytest.param(
        {"properties": {"u": {"oneOf": [INT, {"type": "boolean"}]}}},
        {"u": SECRET},
        SECRET,
        "oneOf",
        id="oneOf-matches-none",
    ),
    pytest.param(
        {"properties": {"u": {"oneOf": [INT, {"type": "number"}]}}},
        {"u": SECRET_NUMBER},
        SECRET_NUMBER,
        "oneOf",
        id="oneOf-matches-two",
    ),
    pytest.param(
        {
            "properties": {
                "u": {
                    "oneOf": [
                        {"type": "object", "properties": {"k": INT}, "required": ["k"]},
                        {"type": "object", "properties": {"k": {"type": "boolean"}}, "required": ["k"]},
                    ]
                }
            }
        },
        {"u": {"k": SECRET}},
        SECRET,
        "oneOf",
        id="oneOf-object-branches",
    ),
    pytest.param(
        {"properties": {"v": {"type": "number"}, "note": INT}},
        {"v": NAN, "note": SECRET},
        SECRET,
        "json",
        id="json-non-finite-beside-secret",
    ),
    pytest.param(
        {"properties": {"v": {"type": "array", "items": {"type": "number"}}}},
        {"v": [NAN, SECRET_NUMBER, float("inf")]},
        SECRET_NUMBER,
        "json",
        id="json-non-finite-in-list-with-secret",
    ),
    pytest.param(
        {"properties": {"l": {"type": "array", "items": INT}}},
        {"l": [1, SECRET]},
        SECRET,
        "type",
        id="items-element",
    ),
    pytest.param(
        {"properties": {"o": {"type": "object", "properties": {"p": {"type": "object", "properties": {"q": INT}}}}}},
        {"o": {"p": {"q": SECRET}}},
        SECRET,
        "type",
        id="deep-value",
    ),
]


@pytest.mark.parametrize(("schema", "arguments", "secret", "keyword"), CASES)
def test_messages_never_contain_argument_values(
    schema: dict[str, Any], arguments: Any, secret: Any, keyword: str, profile: str
) -> None:
    assert classify(schema, profile=profile).ok
    for report in (
        check(schema, arguments, profile=profile),
        compile_schema(schema, profile=profile).check(arguments),
    ):
        assert keyword in {i.keyword for i in report.issues}
        assert_no_leak(report, secrets_of(secret))


def test_secret_in_string_that_is_also_a_long_value(profile: str) -> None:
    # A long value must not be echoed even truncated.
    long_secret = SECRET * 50
    report = check({"properties": {"a": INT}}, {"a": long_secret}, profile=profile)
    assert_no_leak(report, [SECRET[:8], SECRET[-8:]])


def test_unsupported_schema_report_carries_no_argument_value(profile: str) -> None:
    schema = {"properties": {"a": {"type": "string", "pattern": "^x"}}}
    report = compile_schema(schema, profile=profile).check({"a": SECRET})
    assert report.kind == "unsupported_capability"
    assert_no_leak(report, [SECRET])


class Leaky:
    def __repr__(self) -> str:
        return SECRET

    __str__ = __repr__


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param({"a": (SECRET,)}, id="tuple"),
        pytest.param({"a": {SECRET}}, id="set"),
        pytest.param({"a": SECRET.encode()}, id="bytes"),
        pytest.param({"a": Leaky()}, id="object-with-repr"),
        pytest.param({"a": {1: SECRET}}, id="non-string-key"),
    ],
)
def test_type_error_does_not_echo_the_value(arguments: Any, profile: str) -> None:
    with pytest.raises(TypeError) as raised:
        check({"type": "object"}, arguments, profile=profile)
    assert "/a" in str(raised.value)
    assert SECRET not in str(raised.value)
