"""``--allowed-origin`` and ``--allowed-host`` entries are checked when they are given, not when they never match.

An entry is matched as written, so ``http://*.example.com`` (a red team's try at a wildcard
subdomain) was accepted and then matched only that literal text: every real origin was refused
with nothing saying why. Each entry must be ``SCHEME://HOST[:PORT|:*]`` (an origin) or
``NAME[:PORT]`` (a host); a ``*`` anywhere but an origin's port is a usage error (exit 2)
naming the entry and the option, for ``wrap --http`` and ``serve --http`` alike.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcp_guard.fronts.http import HttpConfig
from mcp_guard.fronts.http.security import Security, host_entry_problem, parse_origin, read_host_origin

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "entry",
    [
        "http://*.example.com",
        "https://*",
        "http://app*.example.com",
        "*://app.example.com",
        "http://app.example.com:8*",
        "*",
        "http://app.example.com:*/",  # the tolerated trailing slash comes after the origin, not after :*
        "http://a,b.example.com",
        "http://a;b.example.com",
        "http://app.example.com:99999",
        "http://app.example.com/path",
        "app.example.com",
    ],
)
def test_an_entry_that_is_no_origin_is_refused(entry: str) -> None:
    assert parse_origin(entry, pattern=True) is None
    with pytest.raises(ValueError, match="is not an origin") as raised:
        HttpConfig(allowed_origins=(entry,))
    assert repr(entry) in str(raised.value)
    if "*" in entry.removesuffix(":*"):
        assert "a * stands only for the port" in str(raised.value)


@pytest.mark.parametrize(
    ("entry", "origin", "allowed"),
    [
        ("http://app.example.com", "http://app.example.com", True),
        ("https://App.Example.com/", "https://app.example.com:443", True),
        ("http://app.example.com:*", "http://app.example.com:5173", True),
        ("http://[::1]:*", "http://[::1]:8080", True),
        ("http://10.0.0.5:8080", "http://10.0.0.5:8080", True),
        ("http://xn--caf-dma.example", "http://xn--caf-dma.example", True),
        ("http://app.example.com", "http://other.example.com", False),
    ],
)
def test_an_origin_entry_still_matches_as_documented(entry: str, origin: str, allowed: bool) -> None:
    security = Security(HttpConfig(port=8080, allowed_origins=(entry,)))
    head = read_host_origin([(b"host", b"127.0.0.1:8080"), (b"origin", origin.encode())], b"/mcp")
    assert (security.refusal(head, None) is None) is allowed


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("*.example.com", "a * is not a pattern here"),
        ("app.example.com:*", "a * is not a pattern here"),
        ("*", "a * is not a pattern here"),
        ("app.example.com:99999", "port must be a number"),
        ("app.example.com:80x", "port must be a number"),
        ("app.example.com/mcp", "expected NAME or NAME:PORT"),
        ("http://app.example.com", "expected NAME or NAME:PORT"),
        ("a b", "expected NAME or NAME:PORT"),
        ("", "expected NAME or NAME:PORT"),
        ("[::1", "expected NAME or NAME:PORT"),
    ],
)
def test_an_entry_that_is_no_host_is_refused(entry: str, problem: str) -> None:
    found = host_entry_problem(entry)
    assert found is not None and problem in found
    with pytest.raises(ValueError, match="is not a host") as raised:
        HttpConfig(allowed_hosts=(entry,))
    assert repr(entry) in str(raised.value)


@pytest.mark.parametrize("entry", ["app.example.com", "App.Example.com:8080", "10.0.0.5", "[::1]:8080", "::1"])
def test_host_entries_that_are_hosts_pass(entry: str) -> None:
    assert host_entry_problem(entry) is None
    HttpConfig(allowed_hosts=(entry,))


@pytest.mark.parametrize(
    ("command", "option", "entry"),
    [
        ("wrap", "--allowed-origin", "http://*.example.com"),
        ("wrap", "--allowed-host", "*.example.com"),
        ("serve", "--allowed-origin", "https://*.example.com"),
        ("serve", "--allowed-host", "app.example.com:*"),
    ],
)
def test_a_wildcard_entry_is_a_usage_error_naming_it(command: str, option: str, entry: str, tmp_path: Path) -> None:
    argv = ["wrap", "--http", "0", option, entry, "--", sys.executable, "-c", "pass"]
    if command == "serve":
        config = tmp_path / "gateway.json"
        config.write_text('{"mcpServers": {}}')
        argv = ["serve", "--config", str(config), "--http", "0", option, entry]
    done = subprocess.run(
        [sys.executable, "-m", "mcp_guard", *argv], capture_output=True, text=True, timeout=60, cwd=ROOT, check=False
    )
    assert done.returncode == 2, done.stderr
    assert f"error: {option}: {entry!r} is not" in done.stderr
    assert "serving" not in done.stderr
