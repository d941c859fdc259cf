"""formats: the 2020-12 format set (placeholder suite, grows with the module)."""

from mcp_guard.core.formats import FORMATS, format_checker


def test_nineteen_formats() -> None:
    assert len(FORMATS) == 19


def test_unknown_format_is_annotation() -> None:
    assert format_checker("int32") is None
