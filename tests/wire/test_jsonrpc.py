"""The relay's JSON-RPC helpers: exact numbers, strict serialization, ids of lines that do not parse."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from mcp_guard import check
from mcp_guard.core.json_values import Inexact, exact_float, is_uncarriable
from mcp_guard.wire import jsonrpc
from mcp_guard.wire.jsonrpc import (
    NO_ID,
    Uncarriable,
    dumps,
    invalid_request_text,
    loads_client,
    recover_id,
    valid_id,
)


@pytest.mark.parametrize(
    "text",
    [
        "0.1",
        "2.5",
        "1e2",
        "1E0",
        "-0.0",
        "5e-324",
        "123456789.125",
        "1e22",
        "9007199254740992.0",
        "1.8014398509481984e16",
    ],
)
def test_literals_that_round_trip_parse_to_their_double(text: str) -> None:
    value = exact_float(text)
    assert type(value) is float and value == float(text)
    assert json.loads(dumps(value)) == float(text)


@pytest.mark.parametrize("text", ["1.7976931348623157e308", "1e25", "1E23", "-1e300", "9007199254740993.0"])
def test_big_literals_whose_double_is_another_number_are_inexact(text: str) -> None:
    """From 2**53 up a double is an integer compared with integers by its own value: 1e25 stands
    for 10**25, the double for 10000000000000000905969664, so the literal is not taken for it."""
    value = exact_float(text)
    assert type(value) is Inexact
    assert dumps({"n": value}) == b'{"n":' + text.encode() + b"}"  # still written back digit for digit


@pytest.mark.parametrize(
    "text",
    [
        "0.99999999999999999999",
        "-1e-400",
        "1e-400",
        "1.0000000000000001",
        "9007199254740993.0",
        "0.1000000000000000000001",
    ],
)
def test_literals_a_double_cannot_hold_become_inexact(text: str) -> None:
    assert type(exact_float(text)) is Inexact
    assert "9" not in repr(exact_float(text))  # it carries and shows no value


def test_overflow_stays_infinite_and_both_are_uncarriable() -> None:
    assert math.isinf(exact_float("1e400"))  # type: ignore[arg-type]
    assert is_uncarriable(exact_float("1e400")) and is_uncarriable(Inexact()) and not is_uncarriable(1.5)


def test_inexact_arguments_are_a_json_finding_at_their_pointer() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "number"}}}}
    report = check(schema, loads_client(b'{"a": [1, 0.99999999999999999999], "b": 1e-400}'), profile="standard")
    assert sorted((i.keyword, i.instance_path) for i in report.issues) == [("json", "/a/1"), ("json", "/b")]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), Inexact(), {"a": [float("-inf")]}])
def test_dumps_never_writes_what_json_cannot_carry(value: Any) -> None:
    with pytest.raises(Uncarriable):
        dumps({"jsonrpc": "2.0", "id": 1, "result": value})


def test_dumps_is_ascii_and_compact() -> None:
    assert dumps({"s": "é\u2028\ud800", "n": [1, 2.5]}) == b'{"s":"\\u00e9\\u2028\\ud800","n":[1,2.5]}'


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":"x","method":"ping","params":{"a":' + b"[" * 5000 + b"]" * 5000 + b"}}", "x"),
        (b'{"jsonrpc":"2.0","method":"ping","params":{"a":' + b"[" * 5000 + b"]" * 5000 + b'},"id":7}', 7),
        (b'{"id": 2**60}', NO_ID),
        (b'{"a":"}\\"{","id":3,', 3),  # braces inside strings do not count
        (b'{"id":null,"x":', None),
        (b'{"id":true}', NO_ID),
        (b'{"id":{"x":1}}', NO_ID),
        (b"[1,2", NO_ID),
        (b"not json", NO_ID),
        (b'{"a":[1,}, "id": 5}', NO_ID),  # broken before the id: nothing to trust
    ],
    ids=[
        "deep-after-id",
        "deep-before-id",
        "not-a-number",
        "strings",
        "null",
        "bool",
        "object",
        "array",
        "text",
        "broken",
    ],
)
def test_recover_id(line: bytes, expected: Any) -> None:
    assert recover_id(line) == expected if expected is not NO_ID else recover_id(line) is NO_ID


@pytest.mark.parametrize(
    ("value", "ok"),
    [("a", True), (0, True), (2**70, True), (3.0, True), (1.5, False), (True, False), (None, False), ([], False)],
)
def test_valid_id(value: Any, ok: bool) -> None:
    assert valid_id(value) is ok


@pytest.mark.parametrize(
    "literal",
    ["0.12345678901234567890", "1.00000000000000000001", "1e400", "-1E+400", "4.9e-325", "123456789012345678901234.5"],
)
def test_upstream_literals_are_written_back_digit_for_digit(literal: str) -> None:
    from mcp_guard.wire.jsonrpc import loads_upstream

    line = f'{{"jsonrpc":"2.0","id":1,"result":{{"v":[{literal}],"w":{literal}}}}}'
    parsed = loads_upstream(line.encode())
    assert type(parsed["result"]["w"]) is Inexact and repr(parsed["result"]["w"]) == "Inexact()"  # no digits shown
    assert dumps(parsed) == line.encode()


@pytest.mark.parametrize(
    "literal",
    ["-9223372036854775808.0", "1180591620717411303424.0", "1e22", "-1.8014398509481984e16", "2.305843009213693952e18"],
)
def test_doubles_from_1e16_up_are_written_as_their_exact_value(literal: str) -> None:
    """``repr`` writes -2**63 as ``-9.223372036854776e+18``, another decimal: the peer must read the checked value."""
    from decimal import Decimal

    from mcp_guard.wire.jsonrpc import loads_upstream

    line = f'{{"a":[{literal}],"k":"1e+22","s":"x\\"1.5e+300"}}'.encode()
    for parsed in (loads_client(line), loads_upstream(line)):
        assert type(parsed["a"][0]) is float
        out = dumps(parsed)
        exact = json.loads(out, parse_float=Decimal)
        assert exact["a"][0] == Decimal(literal) and json.loads(out) == json.loads(line)
        assert out.endswith(b',"k":"1e+22","s":"x\\"1.5e+300"}')  # strings are never touched


def test_exact_big_doubles_and_kept_literals_in_one_message() -> None:
    from mcp_guard.wire.jsonrpc import loads_upstream

    message = loads_upstream(b'{"a":-9223372036854775808.0,"b":1.00000000000000000001e+30,"c":1E+400}')
    assert dumps(message) == b'{"a":-9.223372036854775808e+18,"b":1.00000000000000000001e+30,"c":1E+400}'


def test_a_placeholder_lookalike_string_stays_a_string() -> None:
    from mcp_guard.wire.jsonrpc import loads_upstream

    message = loads_upstream(b'{"a":1.00000000000000000001,"b":"\\u0000mcp-guard-literal-0000000000000000-0\\u0000"}')
    assert dumps(message) == b'{"a":1.00000000000000000001,"b":"\\u0000mcp-guard-literal-0000000000000000-0\\u0000"}'


def test_doubles_that_round_trip_stay_doubles() -> None:
    from mcp_guard.wire.jsonrpc import loads_upstream

    assert loads_upstream(b'{"a":0.1,"b":2.5,"c":-0.0}') == {"a": 0.1, "b": 2.5, "c": -0.0}


def test_id_key_tells_strings_from_numbers_and_never_fails_on_unhashable_ids() -> None:
    from mcp_guard.wire.jsonrpc import id_key

    assert id_key("1") != id_key(1) and id_key(1) == id_key(1.0)
    keys = {id_key([1]), id_key({"a": 1}), id_key(None)}  # no TypeError: arrays and objects are keyed by repr
    assert len(keys) == 3 and id_key([1]) != id_key("[1]")


@pytest.mark.parametrize(
    ("message", "batches", "text"),
    [
        (42, True, "Invalid Request: a JSON-RPC message is an object, not a number"),
        ("x", True, "Invalid Request: a JSON-RPC message is an object, not a string"),
        (None, True, "Invalid Request: a JSON-RPC message is an object, not null"),
        (True, True, "Invalid Request: a JSON-RPC message is an object, not a boolean"),
        ([], True, "Invalid Request: an empty batch"),
        ([], False, "Invalid Request: JSON-RPC batches (arrays) are not supported; send one message object per line"),
        ({"jsonrpc": "1.0", "id": 6, "method": "ping"}, True, 'Invalid Request: `jsonrpc` must be "2.0"'),
        ({"jsonrpc": "2.0", "id": {"o": 1}, "method": "ping"}, True, "Invalid Request: a request id must"),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, True, "Invalid Request: `method` must be a string"),
    ],
)
def test_invalid_request_texts_say_what_is_wrong(message: Any, batches: bool, text: str) -> None:
    assert invalid_request_text(message, batches=batches).startswith(text)


def test_a_leading_bom_is_tolerated_from_either_side() -> None:
    """Trial F17: the client's lines accepted a BOM and the upstream's did not; one rule both ways."""
    line = b'\xef\xbb\xbf{"jsonrpc":"2.0","id":7,"result":{"content":[]}}'
    assert (
        jsonrpc.loads_upstream(line)
        == jsonrpc.loads_client(line)
        == {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"content": []},
        }
    )


def test_forwarded_line_is_the_line_when_it_may_go_as_received_else_its_message_serialized() -> None:
    big = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "t", "arguments": {"s": "x" * 70000}}}
    line = json.dumps(big, separators=(",", ":")).encode()
    message, as_received = jsonrpc.loads_as_received(line)
    assert as_received
    assert jsonrpc.forwarded_line(line, message, as_received, None) is line
    assert jsonrpc.forwarded_line(line, message, as_received, "g-1") == line.replace(b'"id":5', b'"id":"g-1"')
    small = b'{"jsonrpc": "2.0", "id": 5, "method": "ping"}'
    message, as_received = jsonrpc.loads_as_received(small)
    assert not as_received
    assert jsonrpc.forwarded_line(small, message, as_received, "g-1") == b'{"jsonrpc":"2.0","id":"g-1","method":"ping"}'
    assert jsonrpc.forwarded_line(small, message, as_received, None) == b'{"jsonrpc":"2.0","id":5,"method":"ping"}'
    nan = b'{"jsonrpc":"2.0","method":"n","params":{"x":NaN}}'
    with pytest.raises(jsonrpc.Uncarriable):
        jsonrpc.forwarded_line(nan, *jsonrpc.loads_as_received(nan), None)


BAD_ERROR = "its error is not an object with an integer code and a string message"


@pytest.mark.parametrize(
    ("line", "fault"),
    [
        ('{"jsonrpc":"2.0","id":1,"method":"ping"}', None),
        ('{"jsonrpc":"2.0","id":null,"method":"ping"}', None),
        ('{"jsonrpc":"2.0","method":"notifications/x","params":null}', None),  # (params not looked at)
        ('{"jsonrpc":"2.0","id":"a","result":0}', None),
        ('{"jsonrpc":"2.0","id":1.5,"result":{}}', None),
        ('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}', None),
        ('{"jsonrpc":"2.0","id":1,"error":{"code":-32603.0,"message":"m","data":[1]}}', None),
        ('{"jsonrpc":"2.0"}', "it has neither a method nor an id"),
        ('{"jsonrpc":"2.0","result":{}}', "it has neither a method nor an id"),
        ('{"jsonrpc":"2.0","method":5}', "its method is not a string"),
        ('{"jsonrpc":"2.0","method":null,"id":1}', "its method is not a string"),
        ('{"jsonrpc":"2.0","id":true,"method":"ping"}', "its id is not a string, a number or null"),
        ('{"jsonrpc":"2.0","id":[1],"result":{}}', "its id is not a string, a number or null"),
        ('{"jsonrpc":"2.0","id":1}', "it has neither a result nor an error"),
        ('{"jsonrpc":"2.0","id":1,"result":1,"error":null}', "it has both a result and an error"),
        ('{"jsonrpc":"2.0","id":1,"error":null}', BAD_ERROR),
        ('{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}', BAD_ERROR),
        ('{"jsonrpc":"2.0","id":1,"error":{"code":true,"message":"m"}}', BAD_ERROR),
        ('{"jsonrpc":"2.0","id":1,"error":{"code":1}}', BAD_ERROR),
    ],
)
def test_message_fault_is_json_rpc_2_sections_4_and_5(line: str, fault: str | None) -> None:
    """Red team 37 F4: what the guard passes on from an upstream is a JSON-RPC message; the faults of a response
    that names a request by a valid id are ``ANSWER_FAULTS`` (answered with an error in its place)."""
    message = jsonrpc.loads_upstream(line)
    assert jsonrpc.message_fault(message) == fault
    answers = fault in jsonrpc.ANSWER_FAULTS
    assert answers == (fault is not None and ("result" in fault or "error" in fault))
