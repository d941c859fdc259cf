"""RFC 8785 canonical JSON: the RFC's own examples, ECMAScript number strings, and an oracle.

The oracle is the ``rfc8785`` package (Trail of Bits), compared on the inputs it accepts
(I-JSON: integers within ±(2^53 − 1), no lone surrogates).
"""

from __future__ import annotations

import json
import math
import struct
import sys
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_guard.calls.jcs import canonical_json, canonical_sha256, number_to_string
from mcp_guard.core.json_values import Inexact


def from_bits(bits: int) -> float:
    """The double whose IEEE 754 bit pattern is ``bits``."""
    return struct.unpack(">d", bits.to_bytes(8, "big"))[0]


# RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical strings.
APPENDIX_B = [
    (0x0000000000000000, "0"),
    (0x8000000000000000, "0"),
    (0x0000000000000001, "5e-324"),
    (0x8000000000000001, "-5e-324"),
    (0x7FEFFFFFFFFFFFFF, "1.7976931348623157e+308"),
    (0xFFEFFFFFFFFFFFFF, "-1.7976931348623157e+308"),
    (0x4340000000000000, "9007199254740992"),
    (0xC340000000000000, "-9007199254740992"),
    (0x4430000000000000, "295147905179352830000"),
    (0x44B52D02C7E14AF5, "9.999999999999997e+22"),
    (0x44B52D02C7E14AF6, "1e+23"),
    (0x44B52D02C7E14AF7, "1.0000000000000001e+23"),
    (0x444B1AE4D6E2EF4E, "999999999999999700000"),
    (0x444B1AE4D6E2EF4F, "999999999999999900000"),
    (0x444B1AE4D6E2EF50, "1e+21"),
    (0x3EB0C6F7A0B5ED8C, "9.999999999999997e-7"),
    (0x3EB0C6F7A0B5ED8D, "0.000001"),
    (0x41B3DE4355555553, "333333333.3333332"),
    (0x41B3DE4355555554, "333333333.33333325"),
    (0x41B3DE4355555555, "333333333.3333333"),
    (0x41B3DE4355555556, "333333333.3333334"),
    (0x41B3DE4355555557, "333333333.33333343"),
    (0xBECBF647612F3696, "-0.0000033333333333333333"),
    (0x43143FF3C1CB0959, "1424953923781206.2"),
]


@pytest.mark.parametrize(("bits", "expected"), APPENDIX_B, ids=[e for _, e in APPENDIX_B])
def test_rfc8785_appendix_b_numbers(bits: int, expected: str) -> None:
    assert number_to_string(from_bits(bits)) == expected
    assert canonical_json(from_bits(bits)) == expected.encode()


@pytest.mark.parametrize(
    "bits", [0x7FFFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000], ids=["NaN", "Infinity", "-Infinity"]
)
def test_rfc8785_appendix_b_non_finite_numbers_are_errors(bits: int) -> None:
    with pytest.raises(ValueError, match="NaN and Infinity"):
        canonical_json([from_bits(bits)])


def test_rfc8785_section_3_2_2_example() -> None:
    """Section 3.2.2's input (read as ECMAScript reads it) gives section 3.2.4's output."""
    text = (
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}'
    )
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert canonical_json(json.loads(text)) == expected.encode("utf-8")


def test_rfc8785_section_3_2_3_sorting_by_utf16_code_units() -> None:
    text = (
        '{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With Dagesh",'
        ' "1": "One", "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control",'
        ' "\\u00f6": "Latin Small Letter O With Diaeresis"}'
    )
    out = json.loads(canonical_json(json.loads(text)))
    assert list(out.values()) == [
        "Carriage Return",
        "One",
        "Control",
        "Latin Small Letter O With Diaeresis",
        "Euro Sign",
        "Emoji: Grinning Face",
        "Hebrew Letter Dalet With Dagesh",
    ]
    # U+1F600 sorts before U+FB33 in UTF-16 (0xD83D < 0xFB33), unlike in code points.
    assert "\U0001f600" > "\ufb33"


CASES: list[tuple[str, Any, bytes]] = [
    ("empty object", {}, b"{}"),
    ("empty array", [], b"[]"),
    (
        "nested keys sorted",
        {"b": {"d": 1, "c": 2}, "a": [3, {"z": 0, "y": None}]},
        b'{"a":[3,{"y":null,"z":0}],"b":{"c":2,"d":1}}',
    ),
    ("int and float alike", [1, 1.0, -0.0, 0], b"[1,1,0,0]"),
    ("ints from 1e21 in exponent form", [10**21, 10**20], b"[1e+21,100000000000000000000]"),
    ("int past 2^53 read as its double", [2**53 + 1], b"[9007199254740992]"),
    ("control characters", "\x00\x1f\x7f\b", b'"\\u0000\\u001f\x7f\\b"'),
    ("non-ASCII as UTF-8", "é€😀", '"é€😀"'.encode()),
    ("lone surrogate escaped", "a\ud800b", b'"a\\ud800b"'),
    ("surrogate pair joined", "\ud83d\ude00", '"😀"'.encode()),
    ("small numbers", [1e-6, 1e-7, 0.1, 123.456], b"[0.000001,1e-7,0.1,123.456]"),
    ("booleans are not numbers", [True, False, 1], b"[true,false,1]"),
]


@pytest.mark.parametrize(("value", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_canonical_forms(value: Any, expected: bytes) -> None:
    assert canonical_json(value) == expected


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ({"a": math.nan}, ValueError),
        ([10**400], ValueError),
        ({1: "x"}, TypeError),
        ((1, 2), TypeError),
        ({"a": b"x"}, TypeError),
        ({"a": {1, 2}}, TypeError),
    ],
    ids=["nan", "integer beyond double range", "non-string key", "tuple", "bytes", "set"],
)
def test_values_without_canonical_form_raise(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        canonical_json(value)


def test_error_messages_never_echo_values() -> None:
    with pytest.raises(ValueError) as info:
        canonical_json({"secret": 10**400})
    assert "secret" not in str(info.value) and "1000" not in str(info.value)


def test_sha256_is_hex_of_canonical_bytes() -> None:
    assert canonical_sha256({"b": 1, "a": 2}) == canonical_sha256({"a": 2, "b": 1.0})
    assert canonical_sha256({}) == "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_agrees_with_the_rfc8785_package(value: Any) -> None:
    assert canonical_json(value) == rfc8785.dumps(value)


@settings(max_examples=2000, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_numbers_agree_with_the_rfc8785_package_and_read_back(value: float) -> None:
    text = number_to_string(value)
    assert text.encode() == rfc8785.dumps(value)
    assert float(text) == value


def nested(depth: int, leaf: Any) -> Any:
    """``depth`` levels of alternating objects and arrays around ``leaf``, built without recursion."""
    value = leaf
    for level in range(depth):
        value = {"k": value, "a": 1} if level % 2 else [value, 2]
    return value


def test_nesting_past_the_recursion_limit_is_canonicalized() -> None:
    """The writer keeps its own stack: depth beyond ``sys.getrecursionlimit()`` raises nothing."""
    depth = sys.getrecursionlimit() * 5
    text = canonical_json(nested(depth, "x"))
    assert text.count(b"[") == depth // 2 and text.count(b"{") == depth // 2
    assert text == b'{"a":1,"k":[' * (depth // 2) + b'"x",2]' + b"},2]" * (depth // 2 - 1) + b"}"


def test_the_iterative_writer_keeps_the_order_of_members_and_items() -> None:
    value = {"b": [1, {"z": [], "y": {}}, "s"], "a": {"\u00e9": None, "e": [True, [False]]}, "": [[]]}
    assert canonical_json(value) == rfc8785.dumps(value)
    assert canonical_json(value) == b'{"":[[]],"a":{"e":[true,[false]],"\xc3\xa9":null},"b":[1,{"y":{},"z":[]},"s"]}'


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0.1000000000000000000001", b"0.1"), ("1e-400", b"0"), ("123456789012345678901234.5", b"1.2345678901234569e+23")],
)
def test_a_kept_literal_is_written_as_the_double_a_parser_reads(text: str, expected: bytes) -> None:
    """An ``Inexact`` (E1: the guard keeps the literal's text) canonicalizes as any RFC 8785 implementation
    reading that text would: as its double. The journal digests such arguments instead of crashing."""
    assert canonical_json({"x": Inexact(text)}) == b'{"x":' + expected + b"}"
    assert canonical_json({"x": Inexact(text)}) == rfc8785.dumps({"x": float(text)})


@pytest.mark.parametrize("text", ["1e400", "-1E+400"])
def test_a_kept_literal_beyond_the_double_range_has_no_canonical_form(text: str) -> None:
    with pytest.raises(ValueError):
        canonical_json([Inexact(text)])
    with pytest.raises(TypeError):
        canonical_json([Inexact()])  # no text: not a number at all
