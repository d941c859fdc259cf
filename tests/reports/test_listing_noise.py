"""``check`` on a stdio server that prints lines that are not JSON-RPC: listed, each kind logged once, by size or
by what is wrong (never its content), then counted; by the relay's rule (``peer.triage``), as ``wrap`` skips them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcp_guard.cli import main

SERVER = Path(__file__).with_name("noisy_server.py")
NOISE = "Starting noisy server on stdio..."
SECRET = "sk-live-0123456789"

pytestmark = pytest.mark.e2e


def _skipped(size: int, where: str = "") -> str:
    return (
        f"mcp-guard WARNING: {where}skipped a line of {size} bytes from the upstream that is not JSON "
        "(or nests too deeply)"
    )


def _counted(n: int, where: str = "") -> str:
    return (
        f"mcp-guard WARNING: {where}skipped {n} lines that are not JSON (or nest too deeply) from the upstream so far "
        f"(counted again at {2 * n})"
    )


def test_check_lists_a_noisy_server_and_logs_each_kind_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--", sys.executable, str(SERVER)]) == 0
    out, err = capsys.readouterr()
    assert "a     supported" in out
    assert err.splitlines() == [_skipped(len(NOISE)), _counted(2)]
    assert "Traceback" not in err and SECRET not in err and NOISE not in err


def test_check_config_names_the_server_of_the_noise(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"noisy": {"command": sys.executable, "args": [str(SERVER)]}}}))
    assert main(["check", "--config", str(config)]) == 0
    out, err = capsys.readouterr()
    assert "noisy: reachable" in out
    assert err.splitlines() == [_skipped(len(NOISE), "server noisy: "), _counted(2, "server noisy: ")]


def test_stdout_bytes_that_are_not_utf8_are_a_line_skipped(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK's transport read nothing after such bytes (the listing ended at the time limit); the relay's
    rule skips the line, as ``wrap`` does, and the listing goes on."""
    monkeypatch.setenv("NOISY_BYTES", "1")
    assert main(["check", "--timeout", "10", "--", sys.executable, str(SERVER)]) == 0
    out, err = capsys.readouterr()
    assert "a     supported" in out
    assert err.splitlines()[0] == _skipped(1)
    assert "UnicodeDecodeError" not in err and "Traceback" not in err


def test_an_unreadable_answer_fails_the_listing_at_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``tools/list`` answer is not UTF-8: skipped, and the request its id names answered -32603 in its place
    (as the relay answers a forwarded request), so the listing fails now, not at the time limit."""
    monkeypatch.setenv("NOISY_BAD_LIST", "1")
    started = time.monotonic()
    assert main(["check", "--timeout", "30", "--", sys.executable, str(SERVER)]) == 2
    assert time.monotonic() - started < 15
    err = capsys.readouterr().err
    assert "the upstream's answer is not UTF-8" in err and "(code -32603)" in err, err
    assert "Traceback" not in err


SKIPPED_BY_THE_RELAY = [
    "a banner",
    '{"jsonrpc": "2.0"}',  # neither a method nor an id
    '{"jsonrpc": "1.0", "id": 5, "result": {}}',
    '{"jsonrpc": "2.0", "method": 5}',
    '{"jsonrpc": "2.0", "method": "notifications/x", "id": {"a": 1}}',
    "[1, 2]",  # a batch with no JSON-RPC element
    "[]",
    "42",
    '{"jsonrpc": "2.0", "result": {}}',
    "{not json",
]
"""Lines the relay (``peer.triage``) skips, each of its kinds at least once, some twice (then counted)."""


def _skip_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if " skipped " in line]


def test_a_line_the_relay_skips_is_skipped_by_check_the_same_way(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same server output through ``wrap`` (the relay) and through ``check``: the same skip lines, in order."""
    env = {**os.environ, "NOISY_LINES": json.dumps(SKIPPED_BY_THE_RELAY), "NOISY_BYTES": "1"}
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    wrap = subprocess.run(
        [sys.executable, "-m", "mcp_guard", "wrap", "--", sys.executable, str(SERVER)],
        input="".join(json.dumps(r) + "\n" for r in requests),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    answers = [json.loads(line) for line in wrap.stdout.splitlines()]
    assert [a.get("id") for a in answers] == [1, 2], wrap.stderr
    relayed = _skip_lines(wrap.stderr)
    kinds = ("that is not JSON (or nests", "JSON but not a JSON-RPC message", "batch that are not JSON-RPC")
    assert all(any(kind in line for line in relayed) for kind in kinds), wrap.stderr  # (each kind of line skip)

    monkeypatch.setenv("NOISY_LINES", env["NOISY_LINES"])
    monkeypatch.setenv("NOISY_BYTES", "1")
    assert main(["check", "--", sys.executable, str(SERVER)]) == 0
    out, err = capsys.readouterr()
    assert "a     supported" in out
    assert _skip_lines(err) == relayed
