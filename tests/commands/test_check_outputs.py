"""``check`` and ``outputSchema`` (issue 15): ``--fail-on`` counts a tool's output verdict as its input
verdict; and what ``check`` prints stays safe on a terminal (``--json`` included, and ``--config``'s
NOT reachable line)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_guard.cli import main
from mcp_guard.commands import gateway as commands

ROOT = Path(__file__).resolve().parents[2]
STRUCTURED = ROOT / "tests" / "e2e" / "structured_server.py"

INPUT = {"type": "object", "properties": {"n": {"type": "integer"}}}
OK = {"name": "ok", "inputSchema": INPUT, "outputSchema": {"type": "object", "properties": {"v": {"type": "number"}}}}
# `format: uri` is outside the standard profile: such an outputSchema is unsupported there.
ODD_OUTPUT = {
    "name": "odd",
    "inputSchema": INPUT,
    "outputSchema": {"type": "object", "properties": {"u": {"type": "string", "format": "uri"}}},
}
BROKEN_OUTPUT = {"name": "broken", "inputSchema": INPUT, "outputSchema": {"type": "object", "required": 3}}


def check(capsys: pytest.CaptureFixture[str], tmp_path: Path, tools: list[Any], *options: str) -> tuple[int, str]:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": tools}), encoding="utf-8")
    status = main(["check", "--profile", "standard", *options, "--tools-file", str(path)])
    return status, capsys.readouterr().out


@pytest.mark.parametrize(
    ("tools", "fail_on", "status"),
    [
        ([OK], "unsupported", 0),
        ([OK, ODD_OUTPUT], "unsupported", 1),
        ([OK, ODD_OUTPUT], "malformed", 0),
        ([OK, BROKEN_OUTPUT], "malformed", 1),
        ([OK, BROKEN_OUTPUT], "unsupported", 1),
        ([ODD_OUTPUT, BROKEN_OUTPUT], "never", 0),
    ],
)
def test_fail_on_counts_the_output_schema_s_verdict(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, tools: list[Any], fail_on: str, status: int
) -> None:
    got, text = check(capsys, tmp_path, tools, "--fail-on", fail_on)
    assert got == status
    got, out = check(capsys, tmp_path, tools, "--fail-on", fail_on, "--json")
    assert got == status and json.loads(out)["failed"] is bool(status)
    # The summary counts what fails: a tool whose outputSchema enforce refuses is not "supported" (trial3 T2).
    counts = json.loads(out)["summary"]
    expected = {
        "supported": sum(t is OK for t in tools),
        "unsupported": sum(t is ODD_OUTPUT for t in tools),
        "malformed": sum(t is BROKEN_OUTPUT for t in tools),
    }
    assert {k: counts[k] for k in expected} == expected
    assert (
        f"{len(tools)} tool{'s' if len(tools) > 1 else ''}: {expected['supported']} supported, "
        f"{expected['unsupported']} unsupported, {expected['malformed']} malformed"
    ) in text


def test_json_escapes_what_would_drive_or_reorder_a_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    name = "evil\u202etxt.exe\u0085\u009b31m\u2028\x7fé"
    _, out = check(capsys, tmp_path, [{"name": name, "inputSchema": INPUT}], "--json")
    assert not any(ch in out for ch in "\u202e\u0085\u009b\u2028\x7f"), ascii(out)
    assert "é" in out  # other non-ASCII text stays readable
    assert json.loads(out)["tools"][0]["name"] == name  # the same JSON value


def write_config(tmp_path: Path, servers: dict[str, Any], guard: dict[str, Any]) -> Path:
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps({"mcpServers": servers, "guard": {"profile": "standard", **guard}}), encoding="utf-8")
    return path


@pytest.mark.e2e
def test_check_config_fails_on_an_output_schema_only_where_enforce_refuses_it(tmp_path: Path) -> None:
    """The SDK's MCPServer lists ``reading`` with an ``outputSchema`` that uses ``$ref`` (unsupported under
    standard): under ``guard.outputs: enforce`` its calls are refused, so check fails; under ``report``, not."""
    servers = {"s": {"command": sys.executable, "args": [str(STRUCTURED)]}}
    out = io.StringIO()
    enforce = write_config(tmp_path, servers, {"outputs": "enforce"})
    assert commands.run_check(str(enforce), out=out, as_json=True, timeout=30) == 1
    data = json.loads(out.getvalue())
    # The inputSchemas are all supported, but enforce refuses `reading`: counted unsupported, as wrap's
    # `tools:` line counts it (trial3 T2).
    assert data["failed"] is True and data["summary"]["unsupported"] == 1
    assert data["servers"][0]["summary"]["unsupported"] == 1
    assert any(f.startswith("s/reading (outputSchema): unsupported: ") for f in data["findings"]), data["findings"]
    out = io.StringIO()
    assert commands.run_check(str(enforce), out=out, timeout=30) == 1
    (row,) = [line for line in out.getvalue().splitlines() if line.startswith("  reading → ")]
    assert row == "  reading → s__reading [unsupported outputSchema, calls refused]", row  # trial T1
    report = write_config(tmp_path, servers, {"outputs": "report"})
    out = io.StringIO()
    assert commands.run_check(str(report), out=out, as_json=True, timeout=30) == 0
    assert not any("(outputSchema)" in f for f in json.loads(out.getvalue())["findings"])
    assert json.loads(out.getvalue())["summary"]["unsupported"] == 0  # report refuses nothing


RAW = "boom\nmcp-guard: all clear\u0085x\u009b31m\u202ey"
"""A failure's text as a printer might get it, unescaped (``ListingError`` escapes its own message; the
printers escape again, so a text from elsewhere cannot reach the terminal raw either)."""


@pytest.mark.parametrize("command", ["check", "pin"])
def test_a_failure_s_text_is_escaped_where_check_config_and_pin_print_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    async def failing(config: Any, **_: Any) -> list[commands.UpstreamListing]:
        return [commands.UpstreamListing("b", "stdio", "failed", error=RAW)]

    monkeypatch.setattr(commands, "list_servers", failing)
    config = write_config(tmp_path, {"b": {"command": "unused"}}, {})
    out = io.StringIO()
    if command == "check":
        assert commands.run_check(str(config), out=out) == 2
    else:
        assert commands.run_pin(str(config), out=out) == 2  # as check --config for the same cause (trial T10)
    text = out.getvalue() + capsys.readouterr().err
    (line,) = [line for line in text.splitlines() if "boom" in line]
    assert "boom\\x0amcp-guard: all clear\\u0085x\\u009b31m\\u202ey" in line, line
    assert "all clear" not in text.replace(line, "") and not any(ch in text for ch in "\u0085\u009b\u202e")


EVIL = "ev\x1b[31mil\nINFO fake"
"""A server name from a config (install copies client configs): it must not colour the terminal or forge a line."""


@pytest.mark.parametrize("command", ["check", "pin"])
@pytest.mark.parametrize("status", ["failed", "disabled"])
def test_a_server_s_name_is_escaped_in_every_line_check_config_and_pin_print(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str, status: str
) -> None:
    """Trial T3: the server's header line printed its name raw while the rows under it escaped it."""

    async def listing(config: Any, **_: Any) -> list[commands.UpstreamListing]:
        return [commands.UpstreamListing(EVIL, "stdio", status, error="down")]

    monkeypatch.setattr(commands, "list_servers", listing)
    config = write_config(tmp_path, {"b": {"command": "unused"}}, {})
    out = io.StringIO()
    if command == "check":
        commands.run_check(str(config), out=out)
    else:
        commands.run_pin(str(config), out=out, lock=str(tmp_path / "lock.json"))
    text = out.getvalue() + capsys.readouterr().err
    assert "\x1b" not in text and "INFO fake" not in text.replace("ev\\x1b[31mil\\x0aINFO fake", ""), ascii(text)
    assert "ev\\x1b[31mil\\x0aINFO fake" in text, ascii(text)
