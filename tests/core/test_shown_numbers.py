"""How a refusal shows a schema number (``values.show_number``, ``kw_any.show_value``): exactly, never
rounded (red team 36, 6a: ``maximum: 1e308`` read "too long to show")."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_guard import check
from mcp_guard.core.extended.kw_any import show_value
from mcp_guard.core.extended.values import literal, show_number
from mcp_guard.core.json_values import Inexact


def _obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (5, "5"),
        (0.1, "0.1"),
        (1e-05, "1e-05"),
        (-0.0, "-0.0"),
        (10**39, "1" + "0" * 39),  # 40 characters: plain, as before
        (10**40, "1e40"),
        (10**308, "1e308"),
        (-(10**5000), "-1e5000"),
        (123456789 * 10**50, "1.23456789e58"),
        (Decimal("-2.5e-300"), "-2.5e-300"),
        (Decimal("1E+400"), "1e400"),
        (Decimal("0.000001"), "0.000001"),
        (Decimal("0E-50"), "0"),
        (1e25, "10000000000000000905969664"),  # a double from 2**53 up stands for its exact value
    ],
    ids=lambda v: v if type(v) is str else type(v).__name__,
)
def test_numbers_are_shown_exactly(value: int | float | Decimal, shown: str) -> None:
    assert show_number(value) == shown


def test_a_number_of_too_many_digits_is_cut_and_says_so() -> None:
    text = show_number(3**1000)
    assert text.startswith("1.32207081948080663689045…e477") and "(478 significant digits)" in text
    assert len(show_number(Decimal("0." + "1" * 5000))) < 70


_MANTISSAS = st.integers(-(10**32), 10**32)
_EXPONENTS = st.integers(-4300, 4300)


@given(_MANTISSAS, _EXPONENTS)
@settings(max_examples=400, deadline=None)
def test_a_shown_number_parses_back_to_its_value(mantissa: int, exponent: int) -> None:
    """Oracle: ``Decimal`` of the text. Every value of at most 32 significant digits is shown whole,
    in at most 40 characters; ints (the relay's integral literals) and Decimals alike."""
    value = Decimal(mantissa).scaleb(exponent)
    for shown in (show_number(value), show_number(int(value)) if exponent >= 0 else None):
        if shown is not None:
            assert "…" not in shown and len(shown) <= 40
            assert Decimal(shown) == value


@given(st.floats(allow_nan=False, allow_infinity=False))
@settings(max_examples=400, deadline=None)
def test_a_shown_double_is_the_literal_it_stands_for(value: float) -> None:
    shown = show_number(value)
    if "…" not in shown:
        assert Decimal(shown) == literal(value)
    else:  # a double past 2**53 of more than 32 significant digits: the leading ones, exactly
        assert abs(value) >= 2**53 and str(abs(int(value)))[:24] == shown.lstrip("-")[:25].replace(".", "")


def test_refusals_show_long_bounds_and_choices_exactly() -> None:
    """Through the checker, in the message a client reads, for bounds, multipleOf, enum and const."""
    cases: list[tuple[dict[str, Any], Any, str]] = [
        ({"type": "number", "maximum": Inexact("1e308")}, 1.7e308, "≤ 1e308 (maximum)"),
        ({"type": "number", "exclusiveMinimum": Inexact("-2.5e-300")}, -1.0, "> -2.5e-300 (exclusiveMinimum)"),
        ({"type": "number", "multipleOf": Inexact("1e-300")}, 1e-301, "multiple of 1e-300 (multipleOf)"),
        ({"enum": [10**5000, 1]}, 2, "one of: 1e5000, 1 (enum)"),
        ({"const": Inexact("1" + "0" * 60)}, 2, "be 1e60 (const)"),
    ]
    for schema, argument, expected in cases:
        (issue,) = check(_obj(a=schema), {"a": argument}, profile="extended").issues
        assert expected in issue.message and "too long" not in issue.message


def test_choices_as_written_when_short() -> None:
    assert show_value(Inexact("1.00000000000000000001")) == "1.00000000000000000001"
    assert show_value(Inexact("1E2000")) == "1E2000"
    assert show_value(Inexact("1" + "0" * 60)) == "1e60"
    assert show_value("x" * 50) == '"' + "x" * 36 + "…"
