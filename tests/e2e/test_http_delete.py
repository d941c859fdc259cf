"""``DELETE`` of a session cancels its requests in flight, then stops its upstream.

A red team's ``DELETE`` was answered 200 while a 5 s ``tools/call`` was in flight; the call
then finished and was journaled ``ok`` before the upstream stopped (the session's end only
closed the upstream's input and let it drain). What must happen instead (docs/http-front.md,
"Sessions and upstream processes"): the request is answered -32800 at once, the upstream gets
``notifications/cancelled`` naming its own id of the request (MCP cancellation) with the
reason, the call is journaled ``cancelled`` (``serve``), and the upstream process is gone.

Upstream: ``faulty_server.py``, whose ``slow`` tool answers after ``arguments.seconds`` (here
far longer than any step may take, so a call that is not cancelled never finishes in time)
and which records every line it receives and its pid.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.e2e.http_guard import alive, eventually, guard_process

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[2]
FAULTY = ROOT / "tests" / "e2e" / "faulty_server.py"
TIMEOUT = 60.0
"""Hang guard for one step (generous: the machine is shared); the slow call would take longer still."""
SLOW_SECONDS = 600
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "delete-test", "version": "0"}}
DELETED = "the client ended the session (HTTP DELETE)"


@asynccontextmanager
async def guard(tmp: Path, argv: list[str], record: Path) -> AsyncIterator[str]:
    """Run ``argv`` (a guard with ``--http 127.0.0.1:0``, the faulty server recording to ``record``); yield its URL."""
    async with guard_process(argv, tmp / "guard.log", env={"RECORD_FILE": str(record)}) as (_process, url):
        yield url


def lines_of(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of ``path`` so far (none when it does not exist yet)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _wrap(tmp: Path, *options: str) -> list[str]:
    argv = [sys.executable, "-m", "mcp_guard", "wrap", "--http", "127.0.0.1:0", *options]
    return [*argv, "--", sys.executable, str(FAULTY)]


def _serve(tmp: Path, journal: Path) -> list[str]:
    config = tmp / "gateway.json"
    servers = {"faulty": {"command": sys.executable, "args": [str(FAULTY)]}}
    config.write_text(json.dumps({"mcpServers": servers, "guard": {"profile": "standard", "journal": str(journal)}}))
    return [sys.executable, "-m", "mcp_guard", "serve", "--config", str(config), "--http", "127.0.0.1:0"]


@pytest.mark.parametrize("front", ["wrap", "wrap --shared-upstream", "serve"])
async def test_delete_cancels_the_calls_in_flight_and_stops_the_upstream(front: str, tmp_path: Path) -> None:
    record = tmp_path / "faulty.record"
    journal = tmp_path / "calls.jsonl"
    argv = _serve(tmp_path, journal) if front == "serve" else _wrap(tmp_path, *front.split()[1:])
    tool = "faulty__slow" if front == "serve" else "slow"
    async with guard(tmp_path, argv, record) as url, httpx.AsyncClient(timeout=TIMEOUT) as client:
        opened = await client.post(
            url, headers=HEADERS, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}
        )
        assert opened.status_code == 200, opened.text
        session = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
        note = await client.post(url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert note.status_code == 202
        started = [r["faulty_server_started"] for r in lines_of(record) if "faulty_server_started" in r]
        assert len(started) == 1
        pid = started[0]

        answers: list[httpx.Response] = []
        call = {"jsonrpc": "2.0", "id": "c-1", "method": "tools/call"}
        call["params"] = {"name": tool, "arguments": {"seconds": SLOW_SECONDS}}

        async with anyio.create_task_group() as tg:

            async def post_call() -> None:
                answers.append(await client.post(url, headers=session, json=call))

            tg.start_soon(post_call)
            # The call reached the upstream (and, with serve, its intent is journaled) before the DELETE.
            await eventually(
                lambda: any(r.get("method") == "tools/call" for r in lines_of(record)), "the call upstream"
            )
            deleted = await client.delete(url, headers=session)
            assert deleted.status_code == 200

        (answer,) = answers
        assert answer.status_code == 200
        body = answer.text
        message = json.loads(body[body.index("{") :].splitlines()[0]) if "data:" in body else answer.json()
        assert message["id"] == "c-1" and message["error"]["code"] == -32800, message

        upstream_call = next(r for r in lines_of(record) if r.get("method") == "tools/call")
        await eventually(
            lambda: any(r.get("method") == "notifications/cancelled" for r in lines_of(record)), "the cancellation"
        )
        (cancel,) = [r for r in lines_of(record) if r.get("method") == "notifications/cancelled"]
        assert cancel["params"]["requestId"] == upstream_call["id"]  # the upstream's own id of the request
        assert cancel["params"].get("reason") == DELETED
        await eventually(lambda: not alive(pid), "the upstream stopped")
        assert (
            await client.post(url, headers=session, json={"jsonrpc": "2.0", "id": 2, "method": "ping"})
        ).status_code == 404

    if front == "serve":
        slow = [r for r in lines_of(journal) if r["tool"] == "slow"]
        assert [r["event"] for r in slow] == ["intent", "outcome"]
        assert slow[1]["result"] == "cancelled"
