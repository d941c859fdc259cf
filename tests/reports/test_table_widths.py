"""Report tables aligned by terminal columns, not code points (red team 34, item 4).

A tool named ``"\\ud800lone"`` (a lone surrogate: JSON decodes one) was measured as 5 characters
and written as 10 (the stream's ``backslashreplace``), pushing its row 5 columns right; East Asian
wide names and combining marks were measured wrong the other way.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mcp_guard.cli import main
from mcp_guard.safe_text import display_width, escape, escape_json, pad


def test_display_width_counts_columns() -> None:
    assert display_width("tool") == 4
    assert display_width("検索") == 4  # East Asian wide: 2 columns each
    assert display_width("ｔｏｏｌ") == 8  # fullwidth forms
    assert display_width("e\u0301te") == 3  # a combining acute accent takes none
    assert display_width("a\u200bb") == 2  # zero-width space
    assert display_width("\u00ad") == 1  # the soft hyphen is shown
    assert display_width("\ud800") == 6  # as a stream writes it, should one reach it unescaped
    assert pad("検索", 6) == "検索  " and pad("toolong", 3) == "toolong"


def test_a_lone_surrogate_is_escaped() -> None:
    assert escape("\ud800lone\udfff") == "\\ud800lone\\udfff"
    assert json.loads(escape_json(json.dumps("\ud800", ensure_ascii=False))) == "\ud800"  # the same JSON value
    assert escape_json(json.dumps("\ud800", ensure_ascii=False)).isascii()


def second_column(line: str) -> int:
    """The terminal column where the second cell of a table row starts (cells are 2 spaces apart or more)."""
    found = re.match(r"(.*?\S {2,})\S", line)
    assert found is not None, line
    return display_width(found.group(1))


@pytest.mark.parametrize("name", ["\ud800lone", "検索ツール", "cafe\u0301", "ok"])
@pytest.mark.parametrize("host", [None, "gemini"])
def test_the_check_tables_line_up(
    name: str, host: str | None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tools = [
        {"name": name, "inputSchema": {"type": "object"}},
        {"name": "a_much_longer_plain_name", "inputSchema": {"type": "object", "nullable": True}},
    ]
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": tools}), encoding="utf-8")
    main(["check", "--tools-file", str(path), "--fail-on", "never", *(["--host", host] if host else [])])
    out = capsys.readouterr().out.splitlines()
    if host is not None:  # the host's table, after the tools'
        out = out[out.index(next(line for line in out if line.startswith("TOOL ") and "HOST STATUS" in line)) :]
    shown = escape(name)
    row = next(line for line in out if line.startswith(shown + " "))
    other = next(line for line in out if line.startswith("a_much_longer_plain_name "))
    header = next(line for line in out if line.startswith("TOOL "))
    assert second_column(row) == second_column(other) == second_column(header)
