"""The default profile is one constant (``core.DEFAULT_PROFILE``), used by every function, command and config."""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import mcp_guard
from mcp_guard import cli
from mcp_guard.core import DEFAULT_PROFILE, PROFILES, profiles
from mcp_guard.gateway.config import parse_config

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
        "mcp_guard.demo.run_demo",
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
