"""``wire.messages``: the reasons the guard gives for text it cannot parse, never quoting the text."""

from __future__ import annotations

import pytest

from mcp_guard.wire.jsonrpc import loads_client
from mcp_guard.wire.messages import GONE, parse_error_text, stopped_text, unreadable_answer_text, unreadable_reason

SECRET = "s3cret-value"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"jsonrpc":"2.0","id":1,"result":{"text":"' + SECRET.encode() + b'\xff\xfe"}}', "is not UTF-8 (at byte 54)"),
        (
            b'{"jsonrpc":"2.0","id":1,"result":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            "nests deeper than the guard parses",
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"result":{"a":' + SECRET.encode() + b"}}",
            "is not valid JSON (Expecting value at character 38)",
        ),
        (
            b'{"jsonrpc":"2.0","id":1,"result":' + b"7" * 5000 + b"}",
            "holds an integer literal of more than 4,300 digits",
        ),
    ],
    ids=["invalid-utf8", "too-deep", "not-json", "long-integer"],
)
def test_an_unreadable_upstream_answer_says_why(line: bytes, reason: str) -> None:
    """Issue 13 item 7: invalid UTF-8 was reported as "invalid JSON, or nested too deeply"."""
    assert unreadable_reason(line).startswith(reason)
    text = unreadable_answer_text(line)
    assert text.startswith("mcp-guard: the upstream's answer " + reason) and text.endswith("; it was dropped")
    assert SECRET not in text and "777" not in text


def test_the_client_parse_errors_keep_their_texts() -> None:
    """``parse_error_text`` now shares the reasons; its sentences are the ones clients saw before."""
    cases = {
        b"\xff": "Parse error: the line is not UTF-8 (at byte 0); nothing was forwarded",
        b"[" * 100_000: "Parse error: the line nests deeper than the guard parses; nothing was forwarded",
        b'{"a":}': "Parse error: the line is not valid JSON (Expecting value at character 5); nothing was forwarded",
    }
    for line, text in cases.items():
        with pytest.raises((ValueError, RecursionError)) as raised:
            loads_client(line)
        assert parse_error_text(raised.value, "line") == text


def test_a_request_cut_off_by_a_stop_signal_says_the_guard_was_stopped() -> None:
    """Red team 37 F1: not "the upstream server went away" (GONE): the guard was stopped, and stopped the server."""
    assert stopped_text("SIGTERM") == (
        "mcp-guard: the guard was stopped (SIGTERM) before the upstream server answered; "
        "the server was stopped with it, and whether it carried the request out is unknown"
    )
    assert stopped_text("SIGINT", "a").startswith(
        "mcp-guard: the guard was stopped (SIGINT) before the upstream server `a` "
    )
    assert "went away" not in stopped_text("SIGHUP") and "went away" in GONE
    assert stopped_text("SIGTERM", forwarded=False) == (
        "mcp-guard: the guard was stopped (SIGTERM) while it held the request; no server got it"
    )
