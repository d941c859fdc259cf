"""``check`` and ``schema --output`` judge a tool's ``outputSchema`` beside its ``inputSchema`` (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_guard.cli import main

OUTPUT = {"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t"]}
TOOL = {"name": "weather", "inputSchema": {"type": "object"}, "outputSchema": OUTPUT}
ODD = {"name": "odd", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object", "$dynamicRef": "#x"}}
PLAIN = {"name": "plain", "inputSchema": {"type": "object"}}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(list(argv))
    return status, capsys.readouterr().out


def write(tmp_path: Path, value: object) -> str:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    return str(path)


def test_check_has_an_output_schema_row_per_tool_that_declares_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _status, out = run(capsys, "check", "--tools-file", write(tmp_path, [TOOL, ODD, PLAIN]))
    rows = [line.split() for line in out.splitlines()]
    assert ["weather", "(outputSchema)", "supported"] in rows
    assert rows[4][:3] == ["odd", "(outputSchema)", "unsupported"] and "/$dynamicRef" in rows[4]
    assert not [r for r in rows if r[:2] == ["plain", "(outputSchema)"]]


def test_check_json_carries_the_output_verdict(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _status, out = run(capsys, "check", "--json", "--tools-file", write(tmp_path, [TOOL, ODD, PLAIN]))
    tools = {t["name"]: t for t in json.loads(out)["tools"]}
    assert tools["weather"]["output"] == {"status": "supported", "supported": True, "issues": []}
    assert tools["odd"]["output"]["supported"] is False
    assert [i["schema_path"] for i in tools["odd"]["output"]["issues"]] == ["/$dynamicRef"]
    assert "output" not in tools["plain"]


def test_schema_output_judges_a_tool_s_output_schema_and_a_result(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, TOOL)
    status, out = run(capsys, "schema", "--output", path, "--arguments", '{"t": "warm"}')
    assert status == 1 and "structuredContent: invalid; the guard would withhold this result" in out
    assert "type at /t" in out and "warm" not in out
    status, out = run(capsys, "schema", "--output", path, "--arguments", '{"t": 1}')
    assert status == 0 and "structuredContent: valid" in out
    status, out = run(capsys, "schema", "--output", path, "--arguments", "[1]")  # (red team 33: not "arguments")
    assert status == 1 and "type at the structured content" in out and "must be an object, not array" in out
    assert "arguments" not in out.split("withhold this result")[1]
    status, _out = run(capsys, "schema", "--output", write(tmp_path, ODD))
    assert status == 1


def test_schema_output_of_a_tool_without_one_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["schema", "--output", write(tmp_path, PLAIN)]) == 2
