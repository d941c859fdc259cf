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
from mcp_guard.reports.tools import render_table, report_tools
from mcp_guard.safe_text import COLUMN_MAX, display_width, escape, escape_json, pad


def test_display_width_counts_columns() -> None:
    assert display_width("tool") == 4
    assert display_width("検索") == 4  # East Asian wide: 2 columns each
    assert display_width("ｔｏｏｌ") == 8  # fullwidth forms
    assert display_width("e\u0301te") == 3  # a combining acute accent takes none
    assert display_width("a\u200bb") == 2  # zero-width space
    assert display_width("\u00ad") == 1  # the soft hyphen is shown
    assert display_width("\ud800") == 6  # as a stream writes it, should one reach it unescaped
    assert pad("検索", 6) == "検索  " and pad("toolong", 3) == "toolong"


CLUSTERS = {
    "\U0001f1eb\U0001f1f7": 2,  # a flag: two regional indicators
    "\U0001f1eb": 1,  # a lone regional indicator
    "\U0001f1eb\U0001f1f7\U0001f1e9\U0001f1ea": 4,  # two flags
    "\U0001f468\u200d\U0001f469\u200d\U0001f467": 2,  # a family: emoji joined by ZERO WIDTH JOINERs
    "\u2764\ufe0f": 2,  # a narrow symbol made an emoji by VARIATION SELECTOR-16
    "\u2764\ufe0f\u200d\U0001f525": 2,  # ... and joined to another
    "1\ufe0f\u20e3": 2,  # a keycap
    "\U0001f3f3\ufe0f\u200d\u26a7\ufe0f": 2,  # a flag of a ZWJ sequence
    "\U0001f44d\U0001f3fd": 2,  # a skin tone modifier
    "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f": 2,  # a tag sequence
    "e\u0301\u0323": 1,  # two combining marks
    "\u1100\u1161\u11a8": 2,  # a Hangul syllable of conjoining jamo
    "a\u200d\U0001f600": 3,  # a joiner between a letter and an emoji joins nothing
    "\u2708\ufe0e": 1,  # VARIATION SELECTOR-15: text presentation
}
"""Grapheme clusters and the columns a terminal gives them (wcwidth's, and what xterm, VTE, kitty draw)."""


@pytest.mark.parametrize(("text", "columns"), list(CLUSTERS.items()))
def test_display_width_counts_a_grapheme_cluster_once(text: str, columns: int) -> None:
    """Each part of an emoji sequence counted (the family: 6 columns, the skin tone: 4), a heart with
    VARIATION SELECTOR-16 too few (1)."""
    assert display_width(text) == columns
    assert display_width(f"ab{text}cd") == columns + 4


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


def as_measured(line: str, name: str) -> str:
    """``line`` with ``name`` replaced by as many ``#`` as the columns :data:`CLUSTERS` says it takes: a line
    whose columns are its length (the oracle, independent of ``display_width``)."""
    return line.replace(name, "#" * CLUSTERS[name])


def ascii_second_column(line: str) -> int:
    found = re.match(r"(.*?\S {2,})\S", line)
    assert found is not None, line
    return len(found.group(1))


@pytest.mark.parametrize(
    "name", ["\U0001f468\u200d\U0001f469\u200d\U0001f467", "\u2764\ufe0f", "\U0001f44d\U0001f3fd", "e\u0301\u0323"]
)
def test_the_check_and_journal_tables_line_up_emoji_sequences(
    name: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tools = [
        {"name": name, "inputSchema": {"type": "object"}},
        {"name": "a_much_longer_plain_name", "inputSchema": {"type": "object"}},
    ]
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": tools}), encoding="utf-8")
    main(["check", "--tools-file", str(path), "--fail-on", "never", "--host", "gemini"])
    out = [as_measured(line, name) for line in capsys.readouterr().out.splitlines()]
    tables = [i for i, line in enumerate(out) if line.startswith("TOOL ")]
    assert len(tables) == 2  # the tools' table, the host's
    for start in tables:
        header, *rows = out[start : start + 3]
        assert ascii_second_column(header) == ascii_second_column(rows[0]) == ascii_second_column(rows[1])

    from mcp_guard.calls.journal import format_summary, read_records, summarize

    journal = tmp_path / "j.jsonl"
    intent = {"event": "intent", "time": "2026-12-04T11:59:25.301Z", "server": "s"}
    records = [{**intent, "call_id": "c1", "tool": name}, {**intent, "call_id": "c2", "tool": "plain"}]
    journal.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    lines = [as_measured(line, name) for line in format_summary(summarize(*read_records(journal))).splitlines()[:3]]
    starts = {len(m.group(1)) for m in (re.match(r"(\S+ {2,}\S+ {2,})\S", line) for line in lines) if m}
    assert len(starts) == 1, lines


def test_one_long_name_does_not_widen_every_row() -> None:
    """Red team 37 (F11): a tool named with 5,000 characters made every row of the table 5,207 wide; a column is
    laid out at most COLUMN_MAX wide, the long name shown whole on its own row."""
    long_name = "n" * 5000
    tools = [
        {"name": long_name, "inputSchema": {"type": "object"}},
        {"name": "short", "inputSchema": {"type": "object"}},
    ]
    table = render_table(report_tools(tools))
    rows = table.splitlines()
    assert any(long_name in row for row in rows)  # shown whole
    short_row = next(row for row in rows if row.startswith("short"))
    assert len(short_row) <= COLUMN_MAX + 60
    assert max(len(row) for row in rows if long_name not in row) <= COLUMN_MAX + 60
