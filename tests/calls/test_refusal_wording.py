"""Refusal texts say what happened: an unchecked refusal does not claim a mismatch (trial T9), and every
sentence starts upper case without "the arguments object must be an object" (trial T10)."""

from __future__ import annotations

import re

from mcp_guard.calls.refusals import rejection_result
from mcp_guard.core import compile


def _text(schema: dict[str, object], arguments: object) -> str:
    report = compile(schema).check(arguments)
    assert report.issues
    return str(rejection_result("t", report, schema_broken=False)["content"][0]["text"])


def test_a_budget_refusal_says_the_arguments_were_not_checked() -> None:
    text = _text({"type": "object", "properties": {"e": {"type": "string", "format": "email"}}}, {"e": "a" * 1_000_006})
    assert "without checking its arguments" in text
    assert "is not known" in text
    assert "do not match" not in text and "Correct the arguments" not in text
    assert "subschema evaluations" not in text


def test_a_mismatch_still_says_so_and_sentences_start_upper_case() -> None:
    text = _text({"type": "object"}, "notanobject")
    assert "do not match" in text and "Correct the arguments" in text
    assert "The arguments must be an object, not string (type)." in text
    assert "arguments object must be an object" not in text
    assert not re.search(r"\. [a-z]", text.replace("`t`: the", "")), text


def test_a_withheld_result_text_starts_its_sentences_upper_case() -> None:
    from mcp_guard.calls.outputs import judge_result

    verdict = judge_result("t", compile({"type": "object"}), {"content": []}, "enforce", modern=False)
    text = verdict.result["content"][0]["text"]
    assert "The result has no `structuredContent`" in text, text
