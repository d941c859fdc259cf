"""``jsonrpc.safe_as_received`` / ``loads_as_received``: when a big line may be forwarded as the peer sent it.

The relay forwards the parsed value re-serialized by rule (``dumps``: every peer reads what the
guard read). A big line's own bytes spare that re-serialization and its copy, and are as exact,
only when no reader can take them for something else: each rule below is one way a reader could.
"""

from __future__ import annotations

import json

import pytest

from mcp_guard.wire.jsonrpc import (
    AS_RECEIVED_MIN,
    MAX_OBJECTS_AS_RECEIVED,
    dumps,
    loads_as_received,
    loads_client,
    loads_upstream,
    safe_as_received,
)

PAD = "x" * AS_RECEIVED_MIN


def call(arguments: str, *, pad: str = PAD) -> bytes:
    """A ``tools/call`` line with ``arguments`` (raw JSON text) and a big ``pad`` string member."""
    return (
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", '
        f'"params": {{"name": "write", "arguments": {arguments}, "pad": "{pad}"}}}}'
    ).encode()


def test_a_big_plain_line_goes_as_received_and_parses_to_the_same_value() -> None:
    line = call('{"path": "a", "n": 1.5, "big": 123456789012345678901234567890, "e": 1e400}')
    value, as_received = loads_as_received(line)
    assert as_received
    assert dumps(value) == dumps(loads_client(line))
    assert value["params"]["arguments"]["big"] == 123456789012345678901234567890


def test_a_line_just_below_the_size_is_re_serialized() -> None:
    short = len(call("{}", pad=""))
    below = call("{}", pad="x" * (AS_RECEIVED_MIN - 1 - short))
    at = call("{}", pad="x" * (AS_RECEIVED_MIN - short))
    assert (len(below), len(at)) == (AS_RECEIVED_MIN - 1, AS_RECEIVED_MIN)
    assert not loads_as_received(below)[1]
    assert loads_as_received(at)[1]


BIG = call("{}")
MISREAD: dict[str, bytes] = {
    # universal-newline readers (the SDK's stdio server) break lines at a raw CR: anywhere, even at the end
    "crlf": BIG + b"\r",
    "cr-as-white-space": BIG.replace(b'"id": 7,', b'"id": 7,\r', 1),
    "leading-space": b" " + BIG,
    "trailing-space": BIG + b" ",
    "byte-order-mark": b"\xef\xbb\xbf" + BIG,
    # str.splitlines readers break at NEL, U+2028 and U+2029, which JSON allows raw in strings
    "nel": call('{"p": "\x85"}'),
    "line-separator": call('{"p": "\u2028"}'),
    "paragraph-separator": call('{"p": "\u2029"}'),
    # readers that keep the first of two values
    "repeated-key": call('{"path": "/etc/passwd", "path": "ok"}'),
    "repeated-escaped-key": call('{"path": "/etc/passwd", "p\\u0061th": "ok"}'),
    "repeated-envelope-key": BIG[:-1] + b', "method": "x/other"}',
    # not JSON: Python's parser takes them for numbers, dumps refuses them
    "nan": call('{"n": NaN}'),
    "infinity": call('{"n": Infinity}'),
    "minus-infinity": call('{"n": [1, -Infinity]}'),
    "batch": b"[" + BIG + b"]",
    "many-objects": call("[" + ",".join(["{}"] * MAX_OBJECTS_AS_RECEIVED) + "]"),
}


@pytest.mark.parametrize("line", MISREAD.values(), ids=MISREAD.keys())
def test_lines_a_reader_could_misread_are_re_serialized(line: bytes) -> None:
    value, as_received = loads_as_received(line)
    assert not as_received
    assert repr(value) == repr(loads_client(line))  # the same value as ever, re-serialized by the relay


def test_non_ascii_text_without_line_breaks_goes_as_received() -> None:
    line = call('{"p": "été 😀"}')
    assert not line.isascii()
    value, as_received = loads_as_received(line)
    assert as_received and value["params"]["arguments"]["p"] == "été 😀"


def test_constants_inside_strings_do_not_count() -> None:
    line = call('{"p": "NaN Infinity -Infinity"}')
    assert loads_as_received(line)[1]


@pytest.mark.parametrize("objects", [1, MAX_OBJECTS_AS_RECEIVED - 8])
def test_lines_with_few_objects_are_checked_for_repeated_keys(objects: int) -> None:
    line = call("[" + ",".join(['{"a": 1}'] * objects) + "]")
    assert line.count(b"{") <= MAX_OBJECTS_AS_RECEIVED
    assert loads_as_received(line)[1]
    repeated = call("[" + ",".join(['{"a": 1}'] * (objects - 1) + ['{"a": 1, "a": 2}']) + "]")
    assert not loads_as_received(repeated)[1]


def test_an_upstream_listing_is_parsed_noting_repeated_keys_and_re_serialized() -> None:
    tools = [{"name": f"t{i}", "inputSchema": {"type": "object"}, "description": PAD} for i in range(2)]
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}}).encode()
    value, as_received = loads_as_received(line, upstream=True)
    assert not as_received and value == loads_upstream(line)
    answer = json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": PAD}]}}).encode()
    assert loads_as_received(answer, upstream=True)[1]


@pytest.mark.parametrize("text", ["{", '{"a": "' + PAD + "}", '{"a": 1}x' + PAD + "}"])
def test_what_does_not_parse_raises_as_before(text: str) -> None:
    line = text.encode()
    with pytest.raises(ValueError):
        loads_client(line)
    with pytest.raises(ValueError):
        loads_as_received(line)


def test_safe_as_received_is_a_byte_check_before_any_parse() -> None:
    assert safe_as_received(BIG)
    assert safe_as_received(b"{" + b" " * AS_RECEIVED_MIN + b"}")  # (not JSON: the parse that follows says so)
    assert not safe_as_received(b"{" + b" " * (AS_RECEIVED_MIN - 3) + b"}")  # too short
