"""The seconds options of every command: one argparse type each (``commands.arguments``), one wording."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from mcp_guard.cli import main
from mcp_guard.commands.arguments import positive_seconds, seconds_or_never

POSITIVE = "must be a positive number of seconds"
NOT_A_NUMBER = "not a number of seconds"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("-1", f"{POSITIVE}: '-1'"),
        ("0", f"{POSITIVE}: '0'"),
        ("nan", f"{POSITIVE}: 'nan'"),
        ("inf", f"{POSITIVE}: 'inf'"),
        ("soon", f"{NOT_A_NUMBER}: 'soon'"),
    ],
)
def test_positive_seconds_refuses_with_one_wording(text: str, words: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        positive_seconds(text)
    assert str(refused.value) == words


def test_positive_seconds_and_seconds_or_never_take_what_they_say() -> None:
    assert positive_seconds("0.5") == 0.5
    assert seconds_or_never("0") == 0.0
    assert seconds_or_never("12") == 12.0
    for text in ("-1", "nan", "inf"):
        with pytest.raises(argparse.ArgumentTypeError) as refused:
            seconds_or_never(text)
        assert str(refused.value) == f"{POSITIVE}, or 0 for never: {text!r}"
    with pytest.raises(argparse.ArgumentTypeError, match=f"^{NOT_A_NUMBER}: 'x'$"):
        seconds_or_never("x")


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["check", "--timeout", "{}", "--", "true"], "--timeout"),
        (["pin", "--config", "c.json", "--timeout", "{}"], "--timeout"),
        (["serve", "--config", "c.json", "--request-timeout", "{}"], "--request-timeout"),
        (["status", "--check", "--timeout", "{}"], "--timeout"),
        (["wrap", "--request-timeout", "{}", "--", "true"], "--request-timeout"),
        (["wrap", "--http", "0", "--http-body-timeout", "{}", "--", "true"], "--http-body-timeout"),
    ],
)
def test_every_command_words_a_bad_number_of_seconds_alike(
    capsys: pytest.CaptureFixture[str], argv: list[str], option: str
) -> None:
    """`check --timeout -1` once said "the timeout must be a positive number of seconds", unlike `pin` and `wrap`."""
    for text, words in (("-1", f"{POSITIVE}: '-1'"), ("soon", f"{NOT_A_NUMBER}: 'soon'")):
        with pytest.raises(SystemExit) as exited:
            main([a.replace("{}", text) for a in argv])
        assert exited.value.code == 2
        assert f"argument {option}: {words}\n" in capsys.readouterr().err


def test_the_idle_timeout_says_zero_is_never(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["wrap", "--http", "0", "--session-idle-timeout", "-1", "--", "true"])
    assert exited.value.code == 2
    assert f"argument --session-idle-timeout: {POSITIVE}, or 0 for never: '-1'\n" in capsys.readouterr().err


def test_one_copy_of_the_seconds_check() -> None:
    """cli, commands.reports and commands.gateway each had their own copy (and `check` its own words)."""
    package = Path(__file__).resolve().parents[2] / "mcp_guard"
    wording = [p.relative_to(package).as_posix() for p in package.rglob("*.py") if POSITIVE in p.read_text()]
    assert wording == ["commands/arguments.py"]
