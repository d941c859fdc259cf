"""The ``check --tools-file``, ``schema`` and ``verify`` commands in process: output, JSON, exit statuses."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from mcp_guard.cli import main

OK_TOOL = {"name": "ok", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}}
FORMAT_TOOL = {
    "name": "fmt",
    "inputSchema": {"type": "object", "properties": {"u": {"type": "string", "format": "uri"}}},
}
BROKEN_TOOL = {"name": "bad", "inputSchema": {"type": "object", "properties": {"c": {"type": "strng"}}}}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run a command under the standard profile these tests were written for (a later ``--profile`` wins)."""
    if argv and argv[0] in ("check", "schema", "verify"):
        argv = (argv[0], "--profile", "standard", *argv[1:])
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def write(tmp_path: Path, name: str, value: Any) -> str:
    path = tmp_path / name
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return str(path)


# --- check --tools-file ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tools", "fail_on", "status"),
    [
        ([OK_TOOL], "unsupported", 0),
        ([OK_TOOL, FORMAT_TOOL], "unsupported", 1),
        ([OK_TOOL, FORMAT_TOOL], "malformed", 0),
        ([OK_TOOL, BROKEN_TOOL], "malformed", 1),
        ([OK_TOOL, BROKEN_TOOL], "unsupported", 1),
        ([FORMAT_TOOL, BROKEN_TOOL], "never", 0),
    ],
)
def test_check_exit_status_follows_fail_on(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, tools: list[Any], fail_on: str, status: int
) -> None:
    path = write(tmp_path, "tools.json", {"tools": tools, "nextCursor": None})
    got, out, _ = run(capsys, "check", "--fail-on", fail_on, "--tools-file", path)
    assert got == status
    assert out.rstrip().splitlines()[-1].startswith(f"{len(tools)} tool")


def test_check_default_fail_on_is_unsupported(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert run(capsys, "check", "--tools-file", write(tmp_path, "t.json", [FORMAT_TOOL]))[0] == 1


def test_check_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, "t.json", [OK_TOOL, FORMAT_TOOL, BROKEN_TOOL])
    status, out, _ = run(capsys, "check", "--json", "--profile", "strict", "--tools-file", path)
    data = json.loads(out)
    assert status == 1
    assert data["profile"] == "strict" and data["source"] == "file" and data["failed"] is True
    assert data["summary"] == {"total": 3, "supported": 1, "unsupported": 1, "malformed": 1}
    assert out.count("\n") == 1


def test_check_tools_file_with_comments_and_a_definition(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = """// one tool definition, with a json parameter
    {"name": "Store", "version": "abcdef12", /* hex */
     "input": {"parameters": [{"name": "blob", "required": true, "schema": {"type": "json"}},
                              {"name": "who", "required": true, "schema": {"type": "string"}, "inferrable": false}]},
     "output": {"available_modes": ["value"]}}"""
    status, out, _ = run(capsys, "check", "--tools-file", write(tmp_path, "def.jsonc", text))
    assert status == 1
    assert "Store" in out and "unsupported" in out and "/properties/blob" in out
    assert "note: Store: parameter `blob` has type json" in out
    assert "note: Store: parameter `who` is not inferrable" in out


def test_check_reads_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(json.dumps([OK_TOOL]).encode()))
    monkeypatch.setattr("sys.stdin", stdin)
    assert run(capsys, "check", "--tools-file", "-")[0] == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON"),
        ('{"tools": 3}', "`tools` must be an array"),
        ('{"type": "object"}', "expected a JSON object with a `tools` array"),
        ('{"tools": [], "tools": []}', "appears twice"),
    ],
)
def test_check_unreadable_file_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, message: str
) -> None:
    path = write(tmp_path, "x.json", content)
    status, out, err = run(capsys, "check", "--tools-file", path)
    assert status == 2 and out == ""
    assert message in err and "x.json" in err
    status, out, _ = run(capsys, "check", "--json", "--tools-file", path)
    assert status == 2 and message in json.loads(out)["error"]


def test_check_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, err = run(capsys, "check", "--tools-file", str(tmp_path / "nope.json"))
    assert status == 2 and "cannot read the file" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["check"],
        ["check", "--tools-file", "a.json", "--upstream-url", "http://x"],
        ["check", "--tools-file", "a.json", "--", "server"],
        ["check", "--tools-file", "a.json", "--header", "A: b"],
        ["check", "--fail-on", "sometimes", "--tools-file", "a.json"],
        ["check", "--timeout", "0", "--", "server"],
        ["check", "--profile", "lenient", "--tools-file", "a.json"],
        ["schema"],
        ["verify"],
        ["verify", "--profile", "loose", "x.json"],
    ],
)
def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "usage: mcp-guard" in capsys.readouterr().err


def test_bad_header_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "check", "--upstream-url", "http://127.0.0.1:9/mcp", "--header", "no separator")
    assert status == 2 and "--header takes NAME=VALUE or 'NAME: VALUE'" in err
    assert "no separator" not in err  # it may be a misplaced secret
    status, _, err = run(
        capsys, "check", "--upstream-url", "http://127.0.0.1:9/mcp", "--header-env", "Authorization=NO_SUCH_VAR_4711"
    )
    assert status == 2 and "the environment variable NO_SUCH_VAR_4711 (for the header Authorization) is not set" in err
    with pytest.raises(SystemExit) as exited:
        main(["check", "--header-env", "Authorization=X", "--", "true"])
    assert exited.value.code == 2
    assert "--header and --header-env apply only to --upstream-url" in capsys.readouterr().err


# --- schema ------------------------------------------------------------------------------------

SCHEMA_TEXT = """{
  // comment
  "type": "object",
  "properties": {"url": {"type": "string", "description": "a // b /* c */"},
                 "n": {"type": "integer", "minimum": 1}},
  "required": ["url"]
}"""


def test_schema_supported_and_arguments(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, "s.jsonc", SCHEMA_TEXT)
    status, out, _ = run(capsys, "schema", path)
    assert status == 0 and "s.jsonc  supported" in out
    status, out, _ = run(capsys, "schema", path, "--arguments", '{"url": "https://x", "n": 2.0}')
    assert status == 0 and "arguments: valid" in out
    status, out, _ = run(capsys, "schema", path, "--arguments", '{"n": 0}')
    assert status == 1
    assert "minimum at /n (schema /properties/n/minimum)" in out
    assert "required at the arguments object (schema /required)" in out


def test_schema_arguments_from_file_and_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, "s.json", SCHEMA_TEXT)
    arguments = write(tmp_path, "args.json", {"url": 5})
    status, out, _ = run(capsys, "schema", "--json", path, "--arguments", f"@{arguments}")
    data = json.loads(out)
    assert status == 1 and data["failed"] is True
    assert data["document"] == "schema"
    assert data["tool"]["status"] == "supported"
    assert data["arguments"]["checked"] is True and data["arguments"]["kind"] == "validation"
    assert [(i["keyword"], i["instance_path"]) for i in data["arguments"]["issues"]] == [("type", "/url")]


def test_schema_arguments_with_a_repeated_key_are_read_as_the_relay_reads_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Red team 36, item 8: a repeated key was a usage error (exit 2) while the relay judges and forwards the
    last value; now the verdict is the relay's, with a note on stderr (inline and @FILE alike)."""
    from mcp_guard.wire.jsonrpc import loads_client

    path = write(tmp_path, "s.json", SCHEMA_TEXT)
    text = '{"url": "https://x", "n": {"x": 1, "x": 2}, "n": 0}'
    relayed = loads_client(text)
    assert relayed["n"] == 0  # the relay keeps the last value
    arguments = write(tmp_path, "args.json", text)
    for given in (text, f"@{arguments}"):
        status, out, err = run(capsys, "schema", "--json", path, "--arguments", given)
        assert status == 1 and "repeats a key" in err and "last value" in err
        assert [(i["keyword"], i["instance_path"]) for i in json.loads(out)["arguments"]["issues"]] == [
            ("minimum", "/n")
        ]
    status, out, err = run(capsys, "schema", path, "--arguments", '{"url": 5, "url": "https://x", "n": 1}')
    assert status == 0 and "arguments: valid" in out and "repeats a key" in err
    status, _, err = run(capsys, "schema", path, "--arguments", '{"url": "https://x"}')
    assert status == 0 and "repeats" not in err


def test_schema_inexact_number_is_refused_as_the_guard_would(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "s.json", {"type": "object", "properties": {"x": {"type": "number"}}})
    status, out, _ = run(capsys, "schema", "--json", path, "--arguments", '{"x": 0.99999999999999999999}')
    assert status == 1
    assert [i["keyword"] for i in json.loads(out)["arguments"]["issues"]] == ["json"]


def test_schema_unsupported_does_not_check_arguments(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, "s.json", {"type": "object", "properties": {"x": {"type": "string", "maxLength": 3}}})
    status, out, _ = run(capsys, "schema", path, "--arguments", '{"x": "ab"}')
    assert status == 1
    assert "maxLength" in out and "/properties/x/maxLength" in out
    assert "arguments: not checked" in out
    status, out, _ = run(capsys, "schema", "--json", path, "--arguments", '{"x": "ab"}')
    assert json.loads(out)["arguments"]["checked"] is False


def test_schema_profiles(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, "s.json", {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"})
    assert run(capsys, "schema", path)[0] == 0
    status, out, _ = run(capsys, "schema", "--profile", "strict", path)
    assert status == 1 and "$schema" in out


def test_schema_accepts_a_tool_and_a_tool_definition(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, _ = run(capsys, "schema", write(tmp_path, "tool.json", FORMAT_TOOL))
    assert status == 1 and out.splitlines()[1].startswith("fmt ")
    definition = {
        "name": "Def",
        "version": "abcdef1",
        "input": {"parameters": [{"name": "x", "required": True, "schema": {"type": "float"}}]},
        "output": {"available_modes": ["value"]},
    }
    path = write(tmp_path, "def.json", definition)
    status, out, _ = run(capsys, "schema", "--json", path, "--arguments", '{"x": 1.5}')
    data = json.loads(out)
    assert status == 0 and data["document"] == "tool-definition" and data["arguments"]["ok"] is True
    broken = write(tmp_path, "broken.json", {**definition, "version": "nothex!"})
    status, out, _ = run(capsys, "schema", broken)
    assert status == 1 and "malformed" in out and "/version" in out


def test_schema_malformed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, "s.json", {"type": "object", "properties": {"a": {"type": "strng"}}})
    status, out, _ = run(capsys, "schema", path)
    assert status == 1 and "malformed" in out and "/properties/a/type" in out


@pytest.mark.parametrize(
    ("arguments", "message"),
    [("{bad", "--arguments: line 1 column 2: not JSON"), ("@/nonexistent/args.json", "cannot read the file")],
)
def test_schema_bad_arguments_are_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, arguments: str, message: str
) -> None:
    path = write(tmp_path, "s.json", {"type": "object"})
    status, _, err = run(capsys, "schema", path, "--arguments", arguments)
    assert status == 2 and message in err


def test_integers_beyond_the_parsers_digit_limit_are_usage_errors_not_crashes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """check, schema and verify: a clear error naming the limit (exit 2, or a malformed document), no traceback."""
    digits = "5" * 5000
    says = "an integer literal has more than 4,300 digits, the most the JSON parser reads"
    schema = write(tmp_path, "s.json", '{"type": "object", "properties": {"n": {"minimum": ' + digits + "}}}")
    arguments = write(tmp_path, "a.json", '{"n": ' + digits + "}")
    for argv in (
        ["schema", schema],
        ["schema", write(tmp_path, "ok.json", {"type": "object"}), "--arguments", "@" + arguments],
        ["check", "--tools-file", write(tmp_path, "t.json", '[{"name": "t", "inputSchema": ' + digits + "}]")],
    ):
        status, out, err = run(capsys, *argv)
        assert status == 2 and says in err and out == "", argv
        assert "5555555555" not in err
    status, out, _ = run(capsys, "verify", arguments)
    assert status == 1 and says in out and "malformed_document" in out


def test_schema_refuses_a_tools_list(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for document in ({"tools": [OK_TOOL]}, [OK_TOOL]):
        status, _, err = run(capsys, "schema", write(tmp_path, "l.json", document))
        assert status == 2 and "check --tools-file" in err


def test_schema_non_object_arguments_are_a_validation_finding(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, _ = run(capsys, "schema", write(tmp_path, "s.json", {"type": "object"}), "--arguments", "[]")
    assert status == 1 and "arguments: invalid" in out


# --- verify ------------------------------------------------------------------------------------


def verifier_document(call: Any) -> dict[str, Any]:
    return {
        "schema_version": "toolcall-verifier-input/v1",
        "user_request": "r",
        "workflow_state": {"required_steps": [], "completed_steps": [], "pending_steps": [], "terminal_tools": []},
        "available_tools": [{"name": "a", "description": "d", "parameters": {"type": "object"}}],
        "candidate_call": call,
    }


def test_verify_exit_statuses_and_jsonl(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = write(tmp_path, "good.json", verifier_document({"name": "a"}))
    status, out, _ = run(capsys, "verify", good)
    assert status == 0 and out.startswith("document 0 (line 1): valid")
    lines = [json.dumps(verifier_document({"name": "a"})), "nope", json.dumps(verifier_document({"name": "b"}))]
    mixed = write(tmp_path, "mixed.jsonl", "\n".join(lines))
    status, out, _ = run(capsys, "verify", "--json", mixed)
    rows = [json.loads(line) for line in out.splitlines()]
    assert status == 1
    assert [(r["index"], r["verdict"], r["reasons"]) for r in rows] == [
        (0, "valid", []),
        (1, "deterministic_invalid", ["malformed_document"]),
        (2, "deterministic_invalid", ["unknown_tool"]),
    ]
    for row in rows:
        assert {"index", "verdict", "checks", "warnings"} <= set(row)
        for check in row["checks"]:
            assert {"check", "ok", "detail"} <= set(check)


def test_verify_stdin_and_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(json.dumps(verifier_document({"name": "a"})).encode()))
    monkeypatch.setattr("sys.stdin", stdin)
    assert run(capsys, "verify", "-")[0] == 0
    status, _, err = run(capsys, "verify", str(tmp_path / "missing.jsonl"))
    assert status == 2 and "cannot read the file" in err
    status, out, err = run(capsys, "verify", "--json", write(tmp_path, "empty.jsonl", "\n\n"))
    assert status == 2 and "no documents" in err and "no documents" in json.loads(out)["error"]


def test_public_names_resolve_and_thresholds_agree() -> None:
    import mcp_guard.reports as reports
    from mcp_guard.commands import reports as commands
    from mcp_guard.reports import tools

    for name in reports.__all__:
        assert getattr(reports, name) is not None, name
    with pytest.raises(AttributeError):
        reports.no_such_name  # noqa: B018
    assert commands.FAIL_ON == tools.FAIL_ON
