"""``wrap --http`` over a server that exits at once: each session's ``initialize`` names the cause; the front lives on.

Trial 3 T1, the HTTP front's side of it: a first upstream process that ends before it answered any
request is no start (docs/wrap.md); with ``wrap --http`` that ends the session, not the guard. Before
the fix the relay's start failure, raised after its channel had started, ended the front's task group.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.e2e.http_guard import INIT, TIMEOUT, http_client, open_guard, post, request

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

NO_ENV_SERVER = """
import sys
sys.stderr.write("error: environment variable API_KEY is not set\\n")
sys.exit(2)
"""


async def test_a_server_that_exits_at_once_ends_each_session_with_the_cause_not_the_front(tmp_path: Path) -> None:
    server = tmp_path / "no_env_server.py"
    server.write_text(NO_ENV_SERVER)
    async with open_guard(tmp_path, upstream=server) as guard, http_client() as client:
        for n in range(2):  # a second session gets the same answer: the front outlived the first
            with anyio.fail_after(TIMEOUT):
                answer = await post(client, guard, request(n, "initialize", INIT))
            error = answer.json()["error"]
            assert error["code"] == -32603, error
            assert error["message"] == (
                "mcp-guard: the upstream server could not be started (the upstream ended before it answered any "
                "request: it exited with status 2; its stderr, relayed to the guard's stderr as `upstream stderr: "
                "...`, may say why); the session ends"
            )
            assert "mcp-session-id" not in answer.headers
        assert guard.process.returncode is None
        assert "upstream stderr: error: environment variable API_KEY is not set" in guard.log
        assert "Traceback" not in guard.log and "restarting" not in guard.log
