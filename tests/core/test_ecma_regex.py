"""ecma_regex: syntax judged by regress, refusal kinds (placeholder suite, grows with the module)."""

from mcp_guard.core.ecma_regex import Pattern, PatternError, compile_pattern


def test_malformed_pattern_is_validation() -> None:
    result = compile_pattern("(")
    assert isinstance(result, PatternError)
    assert result.kind == "validation"


def test_result_types() -> None:
    assert isinstance(compile_pattern("^a+$"), Pattern | PatternError)
