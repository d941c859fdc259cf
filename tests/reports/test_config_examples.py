"""Every file of ``config/`` is loaded and does what the README and docs/ say it does."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from mcp_guard.cli import _parser, main
from mcp_guard.config import parse_config
from mcp_guard.reports.documents import loads
from mcp_guard.reports.tool_definitions import ToolDefinition, definition_notes, parse_tool_definition, to_mcp_tool
from mcp_guard.reports.verifier import verify_text

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config"
README = (ROOT / "README.md").read_text(encoding="utf-8")
# The README and every page of docs/: their examples are held to the same checks.
DOCS = "\n".join([README, *(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")))])


def test_every_config_file_is_covered() -> None:
    assert sorted(p.name for p in CONFIG.iterdir()) == [
        "claude_desktop_config.json",
        "compose.yaml",  # checked against haproxy.cfg by tests/state/test_state_config.py
        "gateway.example.jsonc",  # loaded by tests/config/test_config.py
        "gateway.scale-out.json",  # loaded by tests/state/test_state_config.py
        "haproxy.cfg",  # run by tests/state/test_scale_out.py
        "schema.jsonc",
        "tool-definition.jsonc",
        "toolcall-verifier-v1.json",
        "toolcall-verifier-v2.jsonl",
    ]


def test_client_config_snippet_parses_as_wrap_commands() -> None:
    config = json.loads((CONFIG / "claude_desktop_config.json").read_text(encoding="utf-8"))
    assert set(config) == {"mcpServers"} and config["mcpServers"]
    for server in config["mcpServers"].values():
        assert server["command"] == "mcp-guard"
        args = _parser().parse_args(server["args"])
        assert args.command == "wrap"
        upstream = [a for a in args.upstream if a != "--"]
        assert upstream and upstream[0] in ("uvx", "npx")


def test_docs_show_the_client_config_snippet_as_it_is() -> None:
    blocks = re.findall(r"```json\n(.*?)```", DOCS, flags=re.S)
    snippet = json.loads((CONFIG / "claude_desktop_config.json").read_text(encoding="utf-8"))
    assert snippet in [json.loads(b) for b in blocks if '"mcpServers"' in b]


def test_the_gateway_page_config_example_loads() -> None:
    """docs/gateway.md opens with a config that the gateway accepts as it is."""
    page = (ROOT / "docs" / "gateway.md").read_text(encoding="utf-8")
    first = re.findall(r"```json\n(.*?)```", page, flags=re.S)[0]
    config = parse_config(first, path=ROOT / "gw.json", environ={})
    assert [server.name for server in config.servers] == ["time"] and not config.warnings
    assert config.guard.deny == ["time/convert_time"] and config.guard.calls_per_minute == 60


def test_every_client_config_snippet_runs_wrap_or_serve() -> None:
    """Each ``mcpServers`` entry of README/docs that starts the guard parses as its command line."""
    entries = 0
    for block in re.findall(r"```json\n(.*?)```", DOCS, flags=re.S):
        if '"mcpServers"' not in block:
            continue
        for server in json.loads(block)["mcpServers"].values():
            if not str(server.get("command", "")).endswith("mcp-guard"):
                continue  # a gateway config's own server entries
            args = _parser().parse_args(server["args"])
            assert args.command in ("wrap", "serve"), server["args"]
            if args.command == "wrap":
                assert [a for a in args.upstream if a != "--"] or args.upstream_url, server["args"]
            entries += 1
    assert entries >= 4  # README's, docs/wrap.md's two and its remote one


def test_tool_definition_example(capsys: pytest.CaptureFixture[str]) -> None:
    path = CONFIG / "tool-definition.jsonc"
    definition = parse_tool_definition(loads(path.read_text(encoding="utf-8"), comments=True))
    assert isinstance(definition, ToolDefinition)
    schema = to_mcp_tool(definition)["inputSchema"]
    assert schema["properties"]["estimate_days"]["type"] == "number"
    assert schema["properties"]["priority"]["enum"] == ["low", "normal", "high"]
    assert schema["required"] == ["owner", "repo", "title"]
    assert [(n.note, n.parameter) for n in definition_notes(definition)] == [("not_inferrable", "owner")]
    assert main(["check", "--tools-file", str(path)]) == 0
    out = capsys.readouterr().out
    assert "CreateIssue  supported" in out and "parameter `owner` is not inferrable" in out
    arguments = '{"owner": "me", "repo": "mcp-guard", "title": "Crash"}'
    assert main(["schema", str(path), "--arguments", arguments]) == 0
    assert "arguments: valid" in capsys.readouterr().out


def test_schema_example(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(CONFIG / "schema.jsonc")
    assert main(["schema", path]) == 0
    capsys.readouterr()
    assert main(["schema", path, "--arguments", '{"path": "README.md", "offset": 0}']) == 1
    assert "minimum at /offset" in capsys.readouterr().out
    assert main(["schema", "--profile", "strict", path]) == 1  # its `default` is an annotation
    assert "default" in capsys.readouterr().out


def test_verifier_examples(capsys: pytest.CaptureFixture[str]) -> None:
    v1 = CONFIG / "toolcall-verifier-v1.json"
    verdicts = verify_text(v1.read_text(encoding="utf-8"))
    assert [(v.schema_version, v.verdict) for v in verdicts] == [("toolcall-verifier-input/v1", "valid")]
    assert main(["verify", str(v1)]) == 0
    v2 = CONFIG / "toolcall-verifier-v2.jsonl"
    verdicts = verify_text(v2.read_text(encoding="utf-8"), name=v2.name)
    assert [(v.schema_version, v.verdict, v.reasons) for v in verdicts] == [
        ("toolcall-verifier-input/v2", "valid", []),
        ("toolcall-verifier-input/v2", "deterministic_invalid", ["steps_pending"]),
        ("toolcall-verifier-input/v2", "deterministic_invalid", ["invalid_arguments"]),
    ]
    assert [w.warning for w in verdicts[2].warnings] == ["repeated_step"]
    capsys.readouterr()
    assert main(["verify", "--json", str(v2)]) == 1
    assert len(capsys.readouterr().out.splitlines()) == 3


def console_blocks() -> list[tuple[str, str]]:
    """(command, output) of every ``console`` block of the README and docs/ that shows one command."""
    blocks = []
    for body in re.findall(r"```console\n(.*?)```", DOCS, flags=re.S):
        first, _, rest = body.partition("\n")
        assert first.startswith("$ mcp-guard ")
        blocks.append((first[2:], rest))
    return blocks


def test_console_examples_on_config_files_are_true(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    ran = 0
    for command, shown in console_blocks():
        argv = shlex.split(command)[1:]
        if "config/" not in command:
            continue  # needs a live server: see tests/e2e/test_check_cli.py
        main(argv)
        out = capsys.readouterr().out
        ran += 1
        if "--json" not in argv:
            assert out == shown, command
            continue
        # JSONL shown abridged: compare each line's index, verdict and reasons
        for got, line in zip(out.splitlines(), shown.splitlines(), strict=True):
            row = json.loads(got)
            assert f'"index": {row["index"]},' in line
            assert f'"verdict": "{row["verdict"]}"' in line
            assert f'"reasons": {json.dumps(row["reasons"])}' in line
    assert ran >= 4  # check-and-schema.md's schema and tool definition, verify.md's, profiles.md's


def test_the_tool_definitions_page_shows_what_check_prints(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/tool-definitions.md: each `$ mcp-guard check --tools-file F` block is that command's output."""
    page = (ROOT / "docs" / "tool-definitions.md").read_text(encoding="utf-8")
    store = re.findall(r"```json\n(.*?)```", page, flags=re.S)
    (tmp_path / "store.json").write_text(store[0], encoding="utf-8")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "tool-definition.jsonc").write_bytes((CONFIG / "tool-definition.jsonc").read_bytes())
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```console\n\$ mcp-guard (.*?)\n(.*?)```", page, flags=re.S)
    assert [argv for argv, _ in blocks] == [
        "check --tools-file config/tool-definition.jsonc",
        "check --tools-file store.json",
    ]
    for argv, shown in blocks:
        status = main(shlex.split(argv))
        assert capsys.readouterr().out == shown
        assert status == (0 if "config/" in argv else 1)
