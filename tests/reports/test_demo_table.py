"""The demo's refusal table fits the terminal: long pointers are cut with a marker, long messages wrap."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from mcp_guard.commands.demo import MARKER, fixture_server_path, issue_table, terminal_width
from mcp_guard.reports.tools import judge_tool, listed_status

LONG_POINTER = "/properties/method/properties/card/properties/token/discriminator"
MESSAGE = "`discriminator` is not a JSON Schema keyword; the guard refuses unknown keys (they may be constraints)"


@pytest.mark.parametrize("width", [60, 80, 100, 140])
def test_every_line_fits_and_nothing_of_the_message_is_lost(width: int) -> None:
    rows = [("discriminator", LONG_POINTER, MESSAGE), ("minimum", "/n", "`/n` must be ≥ 1 (minimum)")]
    lines = issue_table(rows, width=width)
    assert max(len(line) for line in lines) <= width
    words = " ".join(lines).split()
    assert words.count("discriminator") == 1 and words.count("minimum") == 1
    text = " ".join(words)
    assert MESSAGE in text and "`/n` must be ≥ 1 (minimum)" in text
    assert lines[0].startswith(" " * 8 + "discriminator ")


def test_a_pointer_too_long_for_its_column_keeps_its_end_after_the_marker() -> None:
    lines = issue_table([("discriminator", LONG_POINTER, "x")], width=80)
    cell = lines[0].split()[1]
    assert cell.startswith(MARKER) and LONG_POINTER.endswith(cell[1:]) and len(cell) < len(LONG_POINTER)
    wide = issue_table([("discriminator", LONG_POINTER, "x")], width=200)
    assert wide[0].split()[1] == LONG_POINTER and MARKER not in wide[0]


def test_the_message_wraps_under_its_own_column() -> None:
    lines = issue_table([("type", "/a", MESSAGE)], width=60)
    assert len(lines) > 1
    column = lines[0].index("`discriminator`")
    assert all(line[:column].strip() == "" and line[column] != " " for line in lines[1:])


def test_the_width_is_the_terminals_or_100(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_terminal(fd: int = 1) -> os.terminal_size:
        raise OSError("not a terminal")

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(os, "get_terminal_size", no_terminal)
    assert terminal_width() == 100
    monkeypatch.setenv("COLUMNS", "72")
    assert terminal_width() == 72


@pytest.mark.e2e
def test_the_demo_fits_a_narrow_terminal() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_guard", "demo"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, "COLUMNS": "72"},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 72
    assert any(MARKER in line for line in lines)  # some pointer was too long for its column
    # Each listed tool's word is the one `check` gives it (supported, unsupported, malformed).
    listed = {m[2]: m[3] for line in lines if (m := re.match(r"  (✔|✘) (\S+) +(\w+)", line))}
    folder = fixture_server_path().parent
    files = [*folder.glob("*.json"), *(folder / "extra").glob("*.json"), *(folder / "beyond").glob("*.json")]
    tools = [json.loads(f.read_text(encoding="utf-8")) for f in files]
    assert listed == {t["name"]: judge_tool(t).status for t in tools}
    assert listed["broken_tool"] == "malformed" and listed["create_event"] == "unsupported"


@pytest.mark.parametrize(
    ("verdict", "status"),
    [
        ({"supported": True}, "supported"),
        ({"supported": False, "issues": [{"kind": "unsupported_capability"}]}, "unsupported"),
        ({"supported": False, "issues": [{"kind": "unsupported_capability"}, {"kind": "validation"}]}, "malformed"),
        ({"supported": False}, "unsupported"),
        ({}, "unsupported"),
        ({"supported": "yes", "issues": "x"}, "unsupported"),
    ],
)
def test_a_listed_verdict_gets_checks_word(verdict: dict[str, object], status: str) -> None:
    assert listed_status(verdict) == status
