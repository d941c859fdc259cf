"""``check --config``: each server's stderr lines say which server wrote them, as ``serve``'s do
(``upstream NAME stderr: ``); a new user (stop 31) could not tell whose traceback they read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

NOISY = r"""
import json, sys
print("hello-from-" + sys.argv[1], file=sys.stderr, flush=True)
for line in sys.stdin:
    m = json.loads(line)
    if "id" in m:
        info = {"name": "noisy", "version": "1"}
        r = {"protocolVersion": m["params"].get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
             "serverInfo": info} if m["method"] == "initialize" else {"tools": []}
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"""


@pytest.mark.e2e
def test_each_servers_stderr_names_the_server(tmp_path: Path) -> None:
    servers = {name: {"command": sys.executable, "args": ["-c", NOISY, name]} for name in ("alpha", "beta")}
    config = tmp_path / "gateway.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    done = subprocess.run(
        [sys.executable, "-m", "mcp_guard", "check", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "upstream alpha stderr: hello-from-alpha" in done.stderr, done.stderr[-2000:]
    assert "upstream beta stderr: hello-from-beta" in done.stderr, done.stderr[-2000:]
