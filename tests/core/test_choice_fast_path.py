"""``enum``/``const`` with int choices test an int argument against them directly, before the canonical key.

The shortcut must not change a verdict (decision 6: ``1`` equals ``1.0``; ``true`` is never ``1``).
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_guard import compile as compile_schema


@pytest.mark.parametrize("profile", ["extended", "standard"])
@pytest.mark.parametrize(
    ("choices", "value", "ok"),
    [
        ([1], 1, True),
        ([1], 1.0, True),
        ([1], True, False),
        ([1], 2, False),
        ([1.0], 1, True),
        ([1, 2.5], 2.5, True),
        ([0], False, False),
        ([1, "a"], "a", True),
        ([10**30], 10**30, True),
        ([10**30], 10**30 + 1, False),
    ],
)
def test_int_choices_keep_their_verdicts(profile: str, choices: list[Any], value: Any, ok: bool) -> None:
    kind = {"type": "integer"} if profile == "standard" else {}
    if profile == "standard" and not all(type(c) is int for c in choices):
        pytest.skip("standard's enum needs one type; these cases are extended's")
    schema = {"type": "object", "properties": {"v": {**kind, "enum": choices}}}
    if profile == "standard" and type(value) is not int and not (type(value) is float and value.is_integer()):
        ok = False  # `type: integer` refuses it before the enum
    assert compile_schema(schema, profile=profile).check({"v": value}).ok is ok
    if len(choices) == 1 and profile == "extended":
        const = {"type": "object", "properties": {"v": {"const": choices[0]}}}
        assert compile_schema(const, profile=profile).check({"v": value}).ok is ok
