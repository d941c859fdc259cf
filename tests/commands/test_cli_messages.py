"""The CLI's own usage messages: grammar that follows the options named (red team 34, item 3)."""

from __future__ import annotations

import pytest

from mcp_guard.cli import main


def usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["wrap", "--shared-upstream", "--", "x"], "--shared-upstream only applies with --http"),
        (["wrap", "--allowed-host", "a.example", "--", "x"], "--allowed-host only applies with --http"),
        (
            ["wrap", "--allowed-host", "a.example", "--shared-upstream", "--", "x"],
            "--allowed-host, --shared-upstream only apply with --http",
        ),
        (["serve", "--config", "x.json", "--allowed-origin", "https://a.example"], "--allowed-origin only applies"),
    ],
    ids=["one", "one-more", "two", "serve"],
)
def test_an_option_that_needs_http_is_named_with_its_verb_agreeing(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert message in usage_error(argv, capsys)
