"""The default profile is one constant (``core.DEFAULT_PROFILE``), used by every function, command and config."""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import pkgutil
from pathlib import Path

import pytest

import mcp_guard
from mcp_guard import cli
from mcp_guard.config import parse_config
from mcp_guard.core import DEFAULT_PROFILE, PROFILES, profiles

PACKAGE = Path(mcp_guard.__file__).parent
COMMANDS_WITH_PROFILE = ("wrap", "demo", "check", "schema", "verify")


def _modules() -> list[str]:
    return sorted(
        m.name for m in pkgutil.walk_packages(mcp_guard.__path__, "mcp_guard.") if m.name != "mcp_guard.__main__"
    )


def test_the_names_are_one_ordered_tuple_and_the_default_is_among_them() -> None:
    assert isinstance(PROFILES, tuple)
    assert len(set(PROFILES)) == len(PROFILES)
    assert DEFAULT_PROFILE in PROFILES
    assert PROFILES == profiles.PROFILES
    assert (mcp_guard.DEFAULT_PROFILE, mcp_guard.PROFILES) == (DEFAULT_PROFILE, PROFILES)
    assert "|".join(PROFILES) == profiles.PROFILE_CHOICES
    assert set(profiles.SUMMARIES) == set(PROFILES)


def test_no_profile_parameter_of_the_package_spells_its_default() -> None:
    """A ``profile`` parameter's default is the name ``DEFAULT_PROFILE``, never a string literal."""
    literal_defaults = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            args = node.args
            positional = args.posonlyargs + args.args
            pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
            literal_defaults += [
                f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"
                for a, d in pairs
                if a.arg == "profile" and isinstance(d, ast.Constant)
            ]
    assert literal_defaults == []


def test_every_function_taking_a_profile_defaults_to_the_constant() -> None:
    seen = []
    for name in _modules():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            candidates = [value]
            if inspect.isclass(value):
                candidates = [value.__init__, *(v for v in vars(value).values() if inspect.isfunction(v))]
            for fn in candidates:
                if not callable(fn) or getattr(fn, "__module__", None) != name:
                    continue
                try:
                    parameter = inspect.signature(fn).parameters.get("profile")
                except (TypeError, ValueError):
                    continue
                if parameter is not None and parameter.default is not inspect.Parameter.empty:
                    seen.append(f"{name}.{attr}")
                    assert parameter.default == DEFAULT_PROFILE, f"{name}.{attr}"
    # The API, the relay's entry points and the reports all take one.
    for expected in (
        "mcp_guard.core.compiler.compile",
        "mcp_guard.core.compiler.classify",
        "mcp_guard.core.compiler.check",
        "mcp_guard.commands.demo.run_demo",
        "mcp_guard.reports.tools.judge_tool",
        "mcp_guard.reports.verifier.verify_text",
    ):
        assert expected in seen


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = cli._parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("command", COMMANDS_WITH_PROFILE)
def test_each_command_offers_every_profile_and_defaults_to_the_constant(command: str) -> None:
    sub = _subparsers()[command]
    option = next(a for a in sub._actions if "--profile" in a.option_strings)
    assert tuple(option.choices or ()) == PROFILES
    assert option.default == DEFAULT_PROFILE
    assert f"{DEFAULT_PROFILE} (default)" in (option.help or "")
    usage = sub.format_usage()  # written by hand (``wrap``, ``check``, ...) or by argparse (``demo``)
    assert f"[--profile {'|'.join(PROFILES)}]" in usage or f"[--profile {{{','.join(PROFILES)}}}]" in usage


def test_help_names_the_default_once() -> None:
    assert cli.profile_help().count("(default)") == 1
    for name in PROFILES:
        assert name in cli.profile_help()


def test_serve_config_without_guard_profile_uses_the_default() -> None:
    assert parse_config('{"mcpServers": {}}').guard.profile == DEFAULT_PROFILE
    assert parse_config('{"mcpServers": {}, "guard": {}}').guard.profile == DEFAULT_PROFILE
    for name in PROFILES:
        assert parse_config(f'{{"mcpServers": {{}}, "guard": {{"profile": "{name}"}}}}').guard.profile == name


# --- the default is extended (issue 11, item 8) ----------------------------------------------------

EXTENDED_ONLY = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "pattern": "^https?://"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
    },
    "required": ["url"],
}
"""A schema ``extended`` enforces and ``standard`` and ``strict`` refuse (``pattern``, ``maximum``)."""


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = cli.main(list(argv))
    return status, capsys.readouterr().out


def test_the_default_is_extended() -> None:
    assert DEFAULT_PROFILE == "extended"
    assert PROFILES == ("extended", "standard", "strict")


def test_the_api_defaults_to_extended() -> None:
    assert mcp_guard.classify(EXTENDED_ONLY).ok
    assert not mcp_guard.classify(EXTENDED_ONLY, profile="standard").ok
    assert mcp_guard.compile(EXTENDED_ONLY).profile == "extended"
    issues = mcp_guard.check(EXTENDED_ONLY, {"url": "ftp://x", "limit": 101}).issues
    assert {(i.keyword, i.instance_path) for i in issues} == {("pattern", "/url"), ("maximum", "/limit")}


def test_check_judges_under_extended_and_says_so(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"tools": [{"name": "fetch", "inputSchema": EXTENDED_ONLY}]}), encoding="utf-8")
    status, out = _run(capsys, "check", "--tools-file", str(tools))
    assert (status, out.splitlines()[-1]) == (0, "1 tool: 1 supported, 0 unsupported, 0 malformed (profile extended)")
    status, out = _run(capsys, "check", "--json", "--tools-file", str(tools))
    assert (status, json.loads(out)["profile"]) == (0, "extended")
    status, out = _run(capsys, "check", "--profile", "standard", "--tools-file", str(tools))
    assert (status, out.splitlines()[-1]) == (1, "1 tool: 0 supported, 1 unsupported, 0 malformed (profile standard)")


def test_schema_judges_under_extended(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(EXTENDED_ONLY), encoding="utf-8")
    status, out = _run(capsys, "schema", str(schema), "--arguments", '{"url": "https://a", "limit": 500}')
    assert status == 1
    assert "(profile extended)" in out
    assert "maximum at /limit (schema /properties/limit/maximum)" in out
    status, out = _run(capsys, "schema", str(schema), "--arguments", '{"url": "https://a", "limit": 5}')
    assert status == 0


def test_verify_judges_under_extended(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    document = {
        "schema_version": "toolcall-verifier-input/v1",
        "user_request": "Fetch the page.",
        "workflow_state": {
            "required_steps": ["fetch"],
            "completed_steps": [],
            "pending_steps": ["fetch"],
            "terminal_tools": [],
        },
        "available_tools": [{"name": "fetch", "description": "Fetch a page.", "parameters": EXTENDED_ONLY}],
        "candidate_call": {"name": "fetch", "arguments": {"url": "https://example.com", "limit": 10}},
    }
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    status, out = _run(capsys, "verify", "--json", str(path))
    assert (status, json.loads(out)["verdict"]) == (0, "valid")
    status, out = _run(capsys, "verify", "--json", "--profile", "standard", str(path))
    assert (status, json.loads(out)["reasons"]) == (1, ["unsupported_capability"])


def test_the_tool_table_of_wrap_and_serve_defaults_to_extended() -> None:
    from mcp_guard.calls.tool_table import ToolTable

    assert ToolTable().profile == "extended"
    assert parse_config('{"mcpServers": {}}').guard.profile == "extended"


def test_check_config_without_guard_profile_judges_under_extended(tmp_path: Path) -> None:
    import io
    import sys

    from mcp_guard.commands import gateway as commands

    sigma = PACKAGE.parent / "fixtures" / "sigma" / "server.py"
    config = tmp_path / "gateway.json"
    config.write_text(json.dumps({"mcpServers": {"sigma": {"command": sys.executable, "args": [str(sigma)]}}}))
    out = io.StringIO()
    assert commands.run_check(str(config), out=out, fail_on="unsupported") == 1  # broken_tool is malformed
    assert "15 tools: 14 supported, 0 unsupported, 1 malformed (profile extended)" in out.getvalue()
