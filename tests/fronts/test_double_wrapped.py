"""A gateway server entry that runs ``mcp-guard wrap`` (or ``serve``) itself: double-wrapped (issue 13 item 3).

``serve`` warns at start, naming the server; ``check --config`` reports a line for it; and what
the warning says two guards do is shown happening: the inner guard (``--profile strict``)
refuses a call the outer one (``standard``) lets through, and the client gets a plain ``isError``
result, the inner guard's ``mcp-guard/`` keys removed by the outer one.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_guard.commands import gateway as commands
from mcp_guard.commands.clients_entries import guarded_upstream as install_recognition
from mcp_guard.config import load_config
from mcp_guard.fronts.serve import double_wrapped_servers
from mcp_guard.guarded import double_wrapped, guarded_upstream
from tests.fronts.test_serve import serve, write_config

UPSTREAM = """
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    method = m.get("method")
    if method == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "titled", "version": "1"}}
    elif method == "tools/list":
        r = {"tools": [{"name": "echo", "inputSchema": {"type": "object", "title": "Echo",
                        "properties": {"x": {"type": "string"}}}}]}
    elif method == "tools/call":
        r = {"content": [{"type": "text", "text": "reached the upstream"}], "isError": False}
    else:
        r = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\\n")
    sys.stdout.flush()
"""


def _servers(tmp_path: Path) -> dict[str, Any]:
    upstream = tmp_path / "titled_server.py"
    upstream.write_text(UPSTREAM)
    return {
        "plain": {"command": sys.executable, "args": [str(upstream)]},
        "inner": {
            "command": sys.executable,
            "args": ["-m", "mcp_guard", "wrap", "--profile", "strict", "--", sys.executable, str(upstream)],
        },
    }


def test_the_recognition_is_one_function_install_and_the_gateway_share() -> None:
    assert install_recognition is guarded_upstream
    assert guarded_upstream("uvx", ["mcp-guard@latest", "wrap", "--", "t"]) == ("wrap", ["t"])


@pytest.mark.parametrize(
    ("command", "args", "says"),
    [
        ("mcp-guard", ["wrap", "--", "npx", "-y", "srv", "--token", "s3cret"], "`npx ...`"),
        ("/opt/venv/bin/mcp-guard", ["wrap", "--upstream-url", "https://x/mcp?key=s3cret"], "as this entry's `url`"),
        ("pipx", ["run", "mcp-guard", "serve", "--config", "s3cret.json"], "a gateway behind the gateway"),
    ],
)
def test_the_phrase_says_what_to_do_and_echoes_no_argument(command: str, args: list[str], says: str) -> None:
    why = double_wrapped(command, args)
    assert why is not None and says in why
    assert "s3cret" not in why  # arguments, URLs and file names may hold secrets
    assert double_wrapped("npx", ["-y", "mcp-guard-lookalike", "wrap"]) is None


def test_only_enabled_stdio_servers_running_the_guard_are_double_wrapped(tmp_path: Path) -> None:
    servers = _servers(tmp_path)
    servers["off"] = {**servers["inner"], "disabled": True}
    servers["web"] = {"url": "https://example.com/mcp"}
    config = load_config(write_config(tmp_path / "gw.json", servers, {}))
    assert [name for name, _ in double_wrapped_servers(config)] == ["inner"]


def test_check_config_reports_a_line_per_double_wrapped_server(tmp_path: Path) -> None:
    config = write_config(tmp_path / "gw.json", _servers(tmp_path), {})
    out = io.StringIO()
    assert commands.run_check(str(config), out=out, timeout=30, fail_on="never") == 0
    lines = [line for line in out.getvalue().splitlines() if "double-wrapped" in line]
    assert len(lines) == 1 and lines[0].startswith("inner: double-wrapped: runs `mcp-guard wrap` itself"), lines
    assert "inner: reachable" in out.getvalue()  # reported, not refused: the entry still works
    data = io.StringIO()
    commands.run_check(str(config), out=data, as_json=True, timeout=30, fail_on="never")
    assert any(f.startswith("inner: double-wrapped:") for f in json.loads(data.getvalue())["findings"])


@pytest.mark.anyio
async def test_serve_warns_and_two_guards_do_what_the_warning_says(tmp_path: Path) -> None:
    config = write_config(tmp_path / "gw.json", _servers(tmp_path), {"profile": "standard"})
    async with serve(config) as client:
        await client.initialize()
        tools = {t["name"]: t for t in (await client.request("tools/list"))["result"]["tools"]}
        # The outer guard's verdict replaces the inner one's (which, under strict, said unsupported).
        assert tools["inner__echo"]["_meta"]["mcp-guard/schema"]["supported"] is True
        plain = await client.call("plain__echo", {"x": "a"})
        assert plain["result"]["content"][0]["text"] == "reached the upstream"
        inner = await client.call("inner__echo", {"x": "a"})
        result = inner["result"]
        assert result["isError"] is True  # refused by the inner guard (strict: `title` is outside it)
        assert "reached the upstream" not in str(result)
        assert not any(str(k).startswith("mcp-guard/") for k in result.get("_meta", {}))  # its rejection is gone
    stderr = (tmp_path / "guard.stderr").read_text()
    warnings = [line for line in stderr.splitlines() if "double-wrapped" in line]
    assert len(warnings) == 1 and "server inner runs `mcp-guard wrap` itself" in warnings[0], stderr
    assert "WARNING" in warnings[0]


def test_serve_warns_before_it_serves_even_an_idle_client(tmp_path: Path) -> None:
    config = write_config(tmp_path / "gw.json", _servers(tmp_path), {})
    done = subprocess.run(
        [sys.executable, "-m", "mcp_guard", "serve", "--config", str(config)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "gateway: server inner runs `mcp-guard wrap` itself" in done.stderr
    assert "server plain" not in done.stderr
