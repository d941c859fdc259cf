"""Stopping the guard with signals leaves nothing of the upstream's process group behind.

Each test runs one front as a real process (``wrap`` on stdio, ``serve`` on stdio, ``wrap
--http``, ``serve --http``; ``serve`` with two servers) in front of ``stubborn_server.py``, a
server that starts ``sleep 600`` in its process group and, with ``IGNORE_TERM=1``, ignores
SIGTERM (the child inherits that: only SIGKILL ends either). The tests then stop the guard the
way supervisors and users do and assert, by pid, that no process of any server's group is
alive once the guard has exited (a zombie waiting for PID 1 to reap it counts as gone),
within a generous deadline; the documented stop is stdin closed, SIGTERM to the whole group 0.1 s later and
SIGKILL 1 s after that (``peer.upstream``).

Proven here (new-user trial F2, F3):

- a second SIGTERM, or a second SIGINT (double Ctrl-C), while the guard stops, does not kill the
  guard before it has stopped the upstream: the guard exits with its own status (0 after
  SIGTERM, 130 after SIGINT) and logs the further signal; the server and its child are gone;
- signals keep coming until the guard has exited (F3b): its status is still its own, 0;
- SIGKILL reaches the whole group, also when the server itself has exited and only a child
  that ignores SIGTERM is left in its group;
- a signal says so (red team 37 F1): the log names it as the reason the upstream is terminated
  (not "did not exit after its stdin closed"), the call left open is answered "the guard was
  stopped (SIGTERM)" (not "the upstream server went away"), ``serve`` journals it ``stopped`` (not
  ``upstream_died``) and announces no list change while it stops.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from anyio.abc import Process

from mcp_guard.fronts.http.config import STOP_GRACE_SECONDS

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to tell live processes from zombies"),
]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
STUBBORN_SERVER = HERE / "stubborn_server.py"

DEADLINE = 20.0
"""Hang guard for one step (the guard's start, its exit, the group's end): generous, the machine is shared."""

FRONTS = ["wrap", "serve", "wrap-http", "serve-http"]
SERVE_SERVERS = ("s", "t")
"""``serve`` runs two stubborn servers: each one's group must be gone."""
STUBBORN = {"IGNORE_TERM": "1", "LINGER": "1"}
"""The server ignores SIGTERM and keeps running after its stdin closes; so does its child."""
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "signals-test", "version": "1"}}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@dataclass
class Guard:
    """A running guard process with its upstream group started.

    Attributes:
        process: the guard.
        log_path: its stderr.
        pids_path: where each server wrote ``SERVER_PID CHILD_PID`` at its start.
        marker: an environment entry every process of this test carries (``NAME=VALUE``).
    """

    process: Process
    log_path: Path
    pids_path: Path
    marker: str
    http: tuple[str, dict[str, str]] | None = None
    """Over HTTP: the endpoint and the headers of the session opened (``mcp-session-id``)."""

    @property
    def log(self) -> str:
        """What the guard wrote on stderr so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def group(self) -> list[int]:
        """The pids of every server started so far and of their children."""
        if not self.pids_path.exists():
            return []
        return [int(pid) for pid in self.pids_path.read_text().split()]

    def alive(self, pid: int) -> bool:
        """Whether ``pid`` is a process of this test and not a zombie (PID 1 here may reap late)."""
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            return False
        return stat.rsplit(")", 1)[1].split()[0] != "Z" and self.marker.encode() in environ

    def survivors(self) -> list[int]:
        """The processes of the upstream's group still alive."""
        return [pid for pid in self.group() if self.alive(pid)]

    def send(self, signum: signal.Signals) -> None:
        """Send the guard ``signum`` unless it has been seen to exit (``os.kill``: ``Popen.send_signal``
        polls first, which reaps the guard behind asyncio's child watcher and turns its status into 255)."""
        if self.process.returncode is None:
            with suppress(ProcessLookupError):
                os.kill(self.process.pid, signum)

    async def logged(self, text: str) -> None:
        """Wait until the guard's stderr holds ``text``."""
        with anyio.fail_after(DEADLINE):
            while text not in self.log:
                assert self.process.returncode is None, f"the guard exited before logging {text!r}:\n{self.log}"
                await anyio.sleep(0.02)

    async def exit_status(self) -> int:
        """Wait for the guard to exit; its status (negative: killed by that signal)."""
        with anyio.fail_after(DEADLINE):
            return await self.process.wait()

    async def group_gone(self) -> None:
        """Wait (bounded) until no process of the group is alive; fail naming the survivors."""
        with anyio.move_on_after(DEADLINE):
            while self.survivors():
                await anyio.sleep(0.05)
        assert self.survivors() == [], f"left behind: {self.survivors()}\n{self.log}"


def _guard_argv(front: str, directory: Path) -> list[str]:
    upstream = [sys.executable, str(STUBBORN_SERVER)]
    http = ["--http", "127.0.0.1:0"] if front.endswith("-http") else []
    if front.startswith("serve"):
        config = directory / "gateway.json"
        server = {"command": upstream[0], "args": upstream[1:]}
        servers = {name: server for name in SERVE_SERVERS}
        journal = str(directory / "calls.jsonl")
        config.write_text(json.dumps({"mcpServers": servers, "guard": {"profile": "standard", "journal": journal}}))
        return [sys.executable, "-m", "mcp_guard", "serve", "--config", str(config), *http]
    return [sys.executable, "-m", "mcp_guard", "wrap", "--profile", "standard", *http, "--", *upstream]


async def _start_session_on_stdio(process: Process, tool: str) -> None:
    assert process.stdin is not None
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": tool, "arguments": {}}},
    ]
    await process.stdin.send(b"".join(json.dumps(line).encode() + b"\n" for line in lines))


async def _start_session_over_http(guard: Guard) -> None:
    await guard.logged("serving MCP streamable HTTP at ")
    url = re.findall(r"serving MCP streamable HTTP at (\S+)", guard.log)[0]
    async with httpx.AsyncClient(timeout=DEADLINE) as client:
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
        answer = await client.post(url, json=body, headers=ACCEPT)
        assert answer.status_code == 200, answer.text
        session = {**ACCEPT, "mcp-session-id": answer.headers["mcp-session-id"]}
        note = await client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        assert note.status_code == 202, note.text
        listed = await client.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=session)
        assert listed.status_code == 200, listed.text
    guard.http = (url, session)


@asynccontextmanager
async def running_guard(directory: Path, front: str, server_env: dict[str, str]) -> AsyncIterator[Guard]:
    """Start ``front`` in front of the stubborn server(s) (``server_env`` set), open a session, wait until
    every server and its child run; on exit SIGKILL whatever of the test is left (even when the test failed)."""
    name, value = "MCP_GUARD_SIGNALS_MARKER", uuid.uuid4().hex
    environment = {k: v for k, v in os.environ.items() if k not in ("IGNORE_TERM", "LINGER", "NO_LIST")}
    environment.update(server_env, STUBBORN_PIDS=str(directory / "pids"), **{name: value})
    log_path = directory / "guard-stderr.log"
    with log_path.open("wb") as stderr:
        process = await anyio.open_process(
            _guard_argv(front, directory),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL if front.endswith("-http") else subprocess.PIPE,
            stderr=stderr,
            env=environment,
            cwd=ROOT,
        )
    guard = Guard(process, log_path, directory / "pids", f"{name}={value}")
    try:
        if front.endswith("-http"):
            await _start_session_over_http(guard)
        else:
            await _start_session_on_stdio(process, "s__hang" if front == "serve" else "hang")
        with anyio.fail_after(DEADLINE):
            processes = 2 * (len(SERVE_SERVERS) if front.startswith("serve") else 1)
            while len(guard.group()) < processes or len(guard.survivors()) < processes:
                await anyio.sleep(0.02)
        yield guard
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
                await process.wait()
            await process.aclose()
            for pid in guard.group():
                if guard.alive(pid):
                    with suppress(OSError):
                        os.kill(pid, signal.SIGKILL)


async def _signals(guard: Guard, signums: Sequence[signal.Signals]) -> None:
    """Send the first signal; once the guard says it is stopping, send the others, one by one."""
    first, *others = signums
    guard.send(first)
    await guard.logged(f"received signal {first.value}; stopping")
    for signum in others:
        guard.send(signum)
        await anyio.sleep(0.05)


@pytest.mark.parametrize("front", FRONTS)
@pytest.mark.parametrize(
    ("signums", "status"),
    [
        ((signal.SIGTERM, signal.SIGTERM), 0),
        ((signal.SIGINT, signal.SIGINT, signal.SIGINT), 130),
        ((signal.SIGHUP, signal.SIGTERM, signal.SIGINT), 0),
    ],
    ids=["sigterm-twice", "sigint-thrice", "sighup-then-others"],
)
async def test_further_signals_do_not_cut_the_upstreams_stop_short(
    tmp_path: Path, front: str, signums: Sequence[signal.Signals], status: int
) -> None:
    """F3: signals after the first (a supervisor's repeated SIGTERM, a double Ctrl-C) are logged and
    the stop goes on: the server that ignores SIGTERM and its child are killed with their group, and
    the guard exits with its own status instead of dying of the signal with the group orphaned."""
    async with running_guard(tmp_path, front, STUBBORN) as guard:
        await _signals(guard, signums)
        assert await guard.exit_status() == status, guard.log
        await guard.group_gone()
        assert f"received signal {signums[1].value} while stopping" in guard.log
        assert "Traceback" not in guard.log


@pytest.mark.parametrize("front", FRONTS)
async def test_one_signal_kills_the_whole_group(tmp_path: Path, front: str) -> None:
    """SIGTERM to the guard: the server ignoring SIGTERM, and its child, are gone by SIGKILL."""
    async with running_guard(tmp_path, front, STUBBORN) as guard:
        await _signals(guard, [signal.SIGTERM])
        assert await guard.exit_status() == 0, guard.log
        await guard.group_gone()


@pytest.mark.parametrize("front", ["wrap", "serve"])
async def test_a_child_left_in_the_group_of_a_server_that_exited_is_killed(tmp_path: Path, front: str) -> None:
    """F2: the server exits when its stdin closes, but its child, which ignores SIGTERM, stays in its
    group: SIGKILL goes to the group (its recorded id), not only to the server's pid."""
    async with running_guard(tmp_path, front, {"IGNORE_TERM": "1"}) as guard:
        assert guard.process.stdin is not None
        await guard.process.stdin.aclose()  # the client goes away
        assert await guard.exit_status() == 0, guard.log
        await guard.group_gone()
        assert "left processes behind in its process group" in guard.log


@pytest.mark.parametrize("front", ["wrap-http", "serve-http"])
async def test_over_http_a_child_left_in_the_group_of_a_server_that_exited_is_killed(
    tmp_path: Path, front: str
) -> None:
    """F2 over HTTP: SIGTERM ends the sessions, the server exits when its stdin closes, and its child
    (ignoring SIGTERM) is killed with the group."""
    async with running_guard(tmp_path, front, {"IGNORE_TERM": "1"}) as guard:
        await _signals(guard, [signal.SIGTERM])
        assert await guard.exit_status() == 0, guard.log
        await guard.group_gone()
        assert "left processes behind in its process group" in guard.log


@pytest.mark.parametrize("front", FRONTS)
async def test_signals_until_the_very_end_change_nothing(tmp_path: Path, front: str) -> None:
    """F3b: the SDKs close stdin, then signal, and a supervisor may keep signalling: whenever SIGTERM
    comes, up to the process's last moment (the interpreter's finalization included, after the
    upstreams have stopped), the guard exits with its own status, 0, and leaves nothing behind."""
    async with running_guard(tmp_path, front, STUBBORN) as guard:
        if guard.process.stdin is not None and not front.endswith("-http"):
            await guard.process.stdin.aclose()  # the client goes away first (the stdio fronts)
        with anyio.fail_after(DEADLINE):
            while guard.process.returncode is None:
                guard.send(signal.SIGTERM)
                await anyio.sleep(0.05)
        assert guard.process.returncode == 0, guard.log
        await guard.group_gone()


class _ClientOutput:
    """The messages the guard writes on its stdout, read as they come."""

    def __init__(self, guard: Guard) -> None:
        assert guard.process.stdout is not None
        self.stdout = guard.process.stdout
        self.data = b""

    @property
    def messages(self) -> list[dict[str, object]]:
        """Every whole line read so far, parsed."""
        return [json.loads(line) for line in self.data.split(b"\n")[:-1] if line.strip()]

    async def answered(self, request_id: int) -> None:
        """Read until the answer to ``request_id`` has come."""
        with anyio.fail_after(DEADLINE):
            while not [m for m in self.messages if m.get("id") == request_id]:
                self.data += await self.stdout.receive()

    async def rest(self) -> list[dict[str, object]]:
        """Read to the end (the guard exited); every message."""
        with anyio.fail_after(DEADLINE), suppress(anyio.EndOfStream, anyio.ClosedResourceError):
            while True:
                self.data += await self.stdout.receive()
        return self.messages


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
@pytest.mark.parametrize("front", ["wrap", "serve"])
async def test_the_log_names_the_stop_signal_as_why_the_upstream_is_terminated(
    tmp_path: Path, front: str, signum: signal.Signals
) -> None:
    """Red team 37 F1: the server, left running 0.1 s after its stdin closed, is terminated because the
    guard was stopped; the log says that, not the client-close line "did not exit after its stdin closed"."""
    async with running_guard(tmp_path, front, STUBBORN) as guard:
        await _signals(guard, [signum])
        assert await guard.exit_status() == (130 if signum == signal.SIGINT else 0), guard.log
        await guard.group_gone()
        assert f"the guard was stopped ({signum.name}); terminating the upstream" in guard.log
        assert "did not exit after its stdin closed" not in guard.log


@pytest.mark.parametrize("front", ["wrap", "serve"])
async def test_a_call_cut_off_by_a_stop_signal_is_answered_and_journaled_as_such(tmp_path: Path, front: str) -> None:
    """Red team 37 F1: the call the server never answered gets -32603 saying the guard was stopped (SIGTERM),
    not that the server went away; ``serve`` journals it ``stopped`` and sends no ``list_changed`` as it stops."""
    async with running_guard(tmp_path, front, STUBBORN) as guard:
        output = _ClientOutput(guard)
        await output.answered(2)  # (the tools/list: the call, sent after it, is forwarded at once)
        await anyio.sleep(0.3)
        await _signals(guard, [signal.SIGTERM])
        assert await guard.exit_status() == 0, guard.log
        await guard.group_gone()
        out = await output.rest()
    answers = [m for m in out if m.get("id") == 3]
    assert len(answers) == 1, out
    error = answers[0]["error"]
    assert isinstance(error, dict) and error["code"] == -32603
    which = " `s`" if front == "serve" else ""
    assert error["message"].startswith(
        f"mcp-guard: the guard was stopped (SIGTERM) before the upstream server{which} answered"
    )
    assert not [m for m in out if str(m.get("method", "")).endswith("/list_changed")], out
    if front == "serve":
        records = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
        assert [r["result"] for r in records if r["event"] == "outcome"] == ["stopped"]


@pytest.mark.parametrize("front", ["wrap", "serve"])
async def test_a_call_the_guard_held_when_a_stop_signal_came_is_answered(tmp_path: Path, front: str) -> None:
    """Red team 37 F1: a call held for a listing the server never gives (``wrap``: its own; ``serve``: the first) was
    never answered when a signal stopped the guard; it gets -32603 saying the guard was stopped while it held it."""
    async with running_guard(tmp_path, front, {**STUBBORN, "NO_LIST": "1"}) as guard:
        output = _ClientOutput(guard)
        await anyio.sleep(0.5)  # (the call reached the guard, and waits)
        await _signals(guard, [signal.SIGTERM])
        assert await guard.exit_status() == 0, guard.log
        await guard.group_gone()
        out = await output.rest()
    answers = [m for m in out if m.get("id") == 3]
    assert len(answers) == 1, out
    assert answers[0]["error"] == {
        "code": -32603,
        "message": "mcp-guard: the guard was stopped (SIGTERM) while it held the request; no server got it",
    }


def _messages(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an HTTP answer: its JSON body, or the ``data:`` lines of its event stream."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]
    return [response.json()]


@pytest.mark.parametrize("front", ["wrap-http", "serve-http"])
async def test_over_http_a_stop_signal_stops_a_busy_upstream_at_once(tmp_path: Path, front: str) -> None:
    """Red team 37 F9: over HTTP a stop signal ended each session as a client's close does (the relay drains
    for up to STOP_GRACE_SECONDS while the upstream runs on, longer than ``docker stop`` waits), and the
    pending call was told the client had closed. Now the upstreams stop as stdio's do (stdin closed, SIGTERM
    0.1 s later, SIGKILL 1 s after that: this server ignores SIGTERM), well within the drain, and the call
    is answered saying the guard was stopped."""
    async with running_guard(tmp_path, front, STUBBORN) as guard:
        assert guard.http is not None
        url, headers = guard.http
        tool = "s__hang" if front.startswith("serve") else "hang"
        call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": tool, "arguments": {}}}
        responses: list[httpx.Response] = []

        async def pending_call() -> None:
            async with httpx.AsyncClient(timeout=DEADLINE) as client:
                responses.append(await client.post(url, json=call, headers=headers))

        async with anyio.create_task_group() as tg:
            tg.start_soon(pending_call)
            await anyio.sleep(0.5)  # (the call reached the server, which never answers it)
            started = time.monotonic()
            await _signals(guard, [signal.SIGTERM])
            await guard.group_gone()
            took = time.monotonic() - started
            assert await guard.exit_status() == 0, guard.log
    assert took < STOP_GRACE_SECONDS - 2, f"the upstreams were stopped {took:.1f} s after SIGTERM\n{guard.log}"
    answers = [m for m in _messages(responses[0]) if m.get("id") == 3]
    assert len(answers) == 1, responses[0].text
    assert "the guard was stopped (SIGTERM)" in answers[0]["error"]["message"], answers
