"""``printf ... | mcp-guard serve --config ...``: what the client sent before it closed is answered, never dropped.

As ``wrap`` (trial T4, ``tests/e2e/test_upstream_faults.py``): requests sent just before the client
closed its side get the server's answers when a slow server (an ``npx`` start, a loaded machine)
gives them within ``PENDING_DRAIN_SECONDS``, and an error saying why when it does not. Before, the
gateway waited 2 s and then ended with them unanswered (``initialize`` included).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_guard.peer.upstream import PENDING_DRAIN_SECONDS
from tests.e2e.test_upstream_faults import SLOW_TOOLS

INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
LINES = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "s__add", "arguments": {"a": 41}}},
]


def piped(tmp_path: Path, *server_args: str) -> dict[int, dict[str, object]]:
    """The answers, by id, of ``serve`` over ``python -c SERVER_ARGS...`` (its one server ``s``) to
    :data:`LINES` written at once, then EOF."""
    server = {"command": sys.executable, "args": ["-c", *server_args]}
    config = tmp_path / "gateway.json"
    config.write_text(json.dumps({"mcpServers": {"s": server}}))
    done = subprocess.run(
        [sys.executable, "-m", "mcp_guard", "serve", "--config", str(config)],
        input="".join(json.dumps(m) + "\n" for m in LINES).encode(),
        capture_output=True,
        timeout=PENDING_DRAIN_SECONDS + 30,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return {a["id"]: a for a in map(json.loads, done.stdout.splitlines()) if "id" in a}


@pytest.mark.e2e
def test_a_slow_servers_answers_reach_a_client_that_closed(tmp_path: Path) -> None:
    answers = piped(tmp_path, SLOW_TOOLS, "3")  # (past the 2 s drain timeout that used to apply)
    assert answers[1]["result"]["serverInfo"]["name"] == "mcp-guard-gateway"  # type: ignore[index]
    assert answers[2]["result"] == {"content": [{"type": "text", "text": "42"}]}


@pytest.mark.e2e
def test_requests_a_server_never_answers_get_an_error_not_silence(tmp_path: Path) -> None:
    answers = piped(tmp_path, SLOW_TOOLS, "60")
    assert sorted(answers) == [1, 2]
    for answer in answers.values():
        error = answer["error"]
        assert error["code"] == -32603  # type: ignore[index]
        assert "the client closed its side before the upstream server answered" in error["message"]  # type: ignore[index]


CRASHING = r"""
import json, sys
TOOL = {"name": "add", "inputSchema": {"type": "object"}}
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "tools/call":
        sys.exit(3)  # dies mid-call
    if "id" in m:
        info = {"name": "crash", "version": "1"}
        r = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": info}
        r = {"tools": [TOOL]} if m["method"] == "tools/list" else r
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"""


@pytest.mark.e2e
def test_a_call_a_server_died_on_names_the_server_and_how_it_ended(tmp_path: Path) -> None:
    """A new user's finding (stop 31): with several servers, the -32603 did not say which went away nor how,
    though docs/gateway.md says the unanswered requests' error says what the log says."""
    answers = piped(tmp_path, CRASHING)
    message = answers[2]["error"]["message"]
    assert message.startswith("mcp-guard: the upstream server `s` went away before answering (")
    assert "status 3" in message
