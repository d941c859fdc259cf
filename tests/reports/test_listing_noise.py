"""``check`` on a stdio server that prints lines that are not JSON-RPC: listed, each line logged by size only."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcp_guard.cli import main

SERVER = Path(__file__).with_name("noisy_server.py")
NOISE = "Starting noisy server on stdio..."
SECRET = "sk-live-0123456789"

pytestmark = pytest.mark.e2e


def _skipped(size: int, where: str = "") -> str:
    return (
        f"mcp-guard WARNING: {where}skipped a line of {size} bytes from the server's stdout "
        "that is not a JSON-RPC message"
    )


def test_check_lists_a_noisy_server_and_logs_each_line_by_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--", sys.executable, str(SERVER)]) == 0
    out, err = capsys.readouterr()
    assert "a     supported" in out
    assert err.splitlines() == [_skipped(len(NOISE)), _skipped(len("debug: token=" + SECRET))]
    assert "Traceback" not in err and SECRET not in err and NOISE not in err


def test_check_config_names_the_server_of_the_noise(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"noisy": {"command": sys.executable, "args": [str(SERVER)]}}}))
    assert main(["check", "--config", str(config)]) == 0
    out, err = capsys.readouterr()
    assert "noisy: reachable" in out
    assert err.splitlines() == [_skipped(len(NOISE), "server noisy: "), _skipped(31, "server noisy: ")]


def test_stdout_bytes_that_are_not_utf8_are_named_as_such(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOISY_BYTES", "1")
    # The SDK reads nothing after such bytes (it drains the pipe until the server exits): the listing
    # ends at the time limit, and says why.
    assert main(["check", "--timeout", "3", "--", sys.executable, str(SERVER)]) == 2
    err = capsys.readouterr().err
    assert "the server wrote bytes that are not UTF-8 text to its stdout" in err
    assert "UnicodeDecodeError" not in err and "Traceback" not in err
