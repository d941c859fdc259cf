"""The seconds options of every command: one argparse type each (``commands.arguments``), one wording."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from mcp_guard.cli import main
from mcp_guard.commands.arguments import port, positive_int, positive_seconds, seconds_or_never

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


WHOLE = "must be a positive whole number"
NOT_WHOLE = "not a whole number"
NOT_A_PORT = "not a port number (0-65535)"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("0", f"{WHOLE}: '0'"),
        ("-1", f"{WHOLE}: '-1'"),
        ("x", f"{NOT_WHOLE}: 'x'"),
        ("1.5", f"{NOT_WHOLE}: '1.5'"),
        ("1e6", f"{NOT_WHOLE}: '1e6'"),
        ("+5", f"{NOT_WHOLE}: '+5'"),
        (" 5", f"{NOT_WHOLE}: ' 5'"),
        ("5_000", f"{NOT_WHOLE}: '5_000'"),
        ("²", f"{NOT_WHOLE}: '²'"),
        ("٣", f"{NOT_WHOLE}: '٣'"),
        ("", f"{NOT_WHOLE}: ''"),
        ("9" * 5000, "too many digits: '99999999999999999999'..."),
    ],
)
def test_positive_int_refuses_with_one_wording(text: str, words: str) -> None:
    """`--max-message-bytes x` once said `invalid _positive_int value: 'x'`, and 0 `must be a positive number`
    without the text."""
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        positive_int(text)
    assert str(refused.value) == words


def test_positive_int_and_port_take_their_bounds() -> None:
    assert positive_int("1") == 1
    assert positive_int("007") == 7
    assert positive_int("33554432") == 32 * 1024 * 1024
    assert port("0") == 0
    assert port("65535") == 65535
    assert port("08080") == 8080


@pytest.mark.parametrize("text", ["65536", "-1", "x", "80.0", "²", "٣", "+80", " 80", "", "9" * 5000, "000000080"])
def test_port_refuses_with_one_wording(text: str) -> None:
    """`--metrics-port ²` once said `invalid _port value` (str.isdigit takes it, int refuses it)."""
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        port(text)
    assert str(refused.value) == f"{NOT_A_PORT}: {text!r}"


@pytest.mark.parametrize(
    ("argv", "option", "text", "words"),
    [
        (["wrap", "--max-message-bytes", "{}", "--", "true"], "--max-message-bytes", "0", f"{WHOLE}: '0'"),
        (["wrap", "--max-message-bytes", "{}", "--", "true"], "--max-message-bytes", "x", f"{NOT_WHOLE}: 'x'"),
        (["serve", "--config", "c.json", "--max-message-bytes", "{}"], "--max-message-bytes", "-1", f"{WHOLE}: '-1'"),
        (["serve", "--config", "c.json", "--metrics-port", "{}"], "--metrics-port", "70000", f"{NOT_A_PORT}: '70000'"),
        (["serve", "--config", "c.json", "--metrics-port", "{}"], "--metrics-port", "²", f"{NOT_A_PORT}: '²'"),
        (["wrap", "--http", "0", "--max-sessions", "{}", "--", "true"], "--max-sessions", "0", f"{WHOLE}: '0'"),
        (["wrap", "--http", "0", "--max-sessions", "{}", "--", "true"], "--max-sessions", "x", f"{NOT_WHOLE}: 'x'"),
        (
            ["serve", "--config", "c.json", "--http", "0", "--max-sessions", "{}"],
            "--max-sessions",
            "+5",
            f"{NOT_WHOLE}: '+5'",
        ),
    ],
)
def test_the_whole_number_options_say_what_is_wrong(
    capsys: pytest.CaptureFixture[str], argv: list[str], option: str, text: str, words: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([a.replace("{}", text) for a in argv])
    assert exited.value.code == 2
    assert f"argument {option}: {words}\n" in capsys.readouterr().err


def test_one_copy_of_each_whole_number_check() -> None:
    package = Path(__file__).resolve().parents[2] / "mcp_guard"
    for words in (WHOLE, "not a port number"):
        wording = [p.relative_to(package).as_posix() for p in package.rglob("*.py") if words in p.read_text()]
        assert wording == ["commands/arguments.py"], words
