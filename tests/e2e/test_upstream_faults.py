"""Upstream faults end to end: ``python -m mcp_guard wrap -- python faulty_server.py`` driven by a raw client.

The upstream is ``faulty_server.py``, which crashes, hangs, closes its output, prints noise or
spawns a grandchild on demand, and records every line it receives (with a marker line at
each start, so the processes of one guard can be told apart). The client is a raw JSON-RPC
client on the guard's stdio, so every byte the guard writes is seen.

What is proven: requests the upstream leaves unanswered are answered (-32603) at once, not
by a timeout (the guard's own timeout is 30 s; the hang guards here are 5 s); the guard
outlives its upstream; the next request restarts it, replays the handshake, log level and
subscriptions, and tells the client to re-list; a call is never re-sent; request timeouts;
noise and stderr; no process outlives the guard.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from mcp_guard.cli import main as cli_main
from mcp_guard.peer.upstream import PENDING_DRAIN_SECONDS
from mcp_guard.sessions.upstream_side import STOPPED_AFTER_CLIENT

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FAULTY_SERVER = HERE / "faulty_server.py"

READ_TIMEOUT = 10.0
"""Seconds any single read from the guard may take (a hang guard)."""
PROMPT = 5.0
"""Hang guard for answers that must come at once: far below the guard's own 30 s request timeout."""
EXIT_TIMEOUT = 20.0
"""Seconds the guard may take to exit (a hang guard: drain 2 s, then 1 s to stop a stubborn upstream)."""

SECRET = "sk-live-SECRET-1234"
SERVER_ENV_KEYS = ("RECORD_FILE", "FAIL_FILE", "STDERR_LINE", "IGNORE_EOF", "HOLD_LIST", "EXIT_ON_LIST")
INIT_PARAMS = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"roots": {"listChanged": True}, "sampling": {}},
    "clientInfo": {"name": "fault-test-client", "version": "7.1"},
}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "fault-test-client", "version": "7.1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def is_response_to(message: Any, request_id: Any) -> bool:
    """Whether ``message`` answers ``request_id`` (the id's JSON type must match too)."""
    return (
        type(message) is dict
        and "method" not in message
        and ("result" in message or "error" in message)
        and type(message.get("id")) is type(request_id)
        and message["id"] == request_id
    )


def pid_alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie (PID 1 here may not reap orphans)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


class Client:
    """A running ``mcp-guard wrap`` process and a raw JSON-RPC client on its stdio.

    Attributes:
        received: every message the guard wrote on stdout, in order.
        lines: the raw lines of ``received``.
    """

    def __init__(self, process: Process, record: Path, stderr: Path, marker: str) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.record_path = record
        self.stderr_path = stderr
        self.marker = marker
        self._stdout = BufferedByteReceiveStream(process.stdout)
        self.received: list[Any] = []
        self.lines: list[bytes] = []
        self._taken = 0
        self._counter = 0

    async def send_raw(self, data: bytes) -> None:
        """Write bytes to the guard's stdin."""
        assert self.process.stdin is not None
        await self.process.stdin.send(data)

    async def send(self, message: Any) -> None:
        """Write one message as one line."""
        await self.send_raw(json.dumps(message).encode() + b"\n")

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def _read(self) -> Any:
        with anyio.fail_after(READ_TIMEOUT):
            line = await self._stdout.receive_until(b"\n", 1 << 26)
        self.lines.append(line)
        self.received.append(json.loads(line))
        return self.received[-1]

    async def response(self, request_id: Any) -> dict[str, Any]:
        """Wait for the response to ``request_id`` (already received or coming)."""
        for message in self.received:
            if is_response_to(message, request_id):
                return message  # type: ignore[no-any-return]
        while True:
            message = await self._read()
            if is_response_to(message, request_id):
                return message  # type: ignore[no-any-return]

    async def request(self, method: str, params: dict[str, Any] | None = None, request_id: Any = None) -> Any:
        """Send a request and return its response."""
        if request_id is None:
            self._counter += 1
            request_id = f"auto-{self._counter}"
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return await self.response(request_id)

    async def call(self, request_id: Any, name: str, arguments: dict[str, Any] | None = None, **params: Any) -> Any:
        """Send a ``tools/call`` and return its response."""
        return await self.request("tools/call", {"name": name, "arguments": arguments or {}, **params}, request_id)

    async def notification(self, method: str) -> dict[str, Any]:
        """Wait for a notification ``method`` from the guard (already received or coming)."""
        for message in self.received:
            if type(message) is dict and message.get("method") == method and "id" not in message:
                return message
        while True:
            message = await self._read()
            if type(message) is dict and message.get("method") == method and "id" not in message:
                return message

    def answers_to(self, request_id: Any) -> list[Any]:
        """Every response received for ``request_id``."""
        return [m for m in self.received if is_response_to(m, request_id)]

    # --- the upstream's side

    def starts(self) -> list[int]:
        """The pid of every upstream process started so far, in order."""
        return [pid for pid, _ in self.sessions()]

    def sessions(self) -> list[tuple[int, list[Any]]]:
        """Per upstream process: its pid and the messages it received, in order."""
        out: list[tuple[int, list[Any]]] = []
        if not self.record_path.exists():
            return out
        for line in self.record_path.read_bytes().splitlines():
            message = json.loads(line)
            if type(message) is dict and "faulty_server_started" in message:
                out.append((message["faulty_server_started"], []))
            else:
                out[-1][1].append(message)
        return out

    async def wait_recorded(self, predicate: Any) -> None:
        """Wait until some message the upstream received satisfies ``predicate``."""
        with anyio.fail_after(READ_TIMEOUT):
            while not any(predicate(m) for _, messages in self.sessions() for m in messages):
                await anyio.sleep(0.02)

    def stderr(self) -> str:
        """What the guard (and the upstream) wrote on stderr so far."""
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def live_pids(self) -> list[int]:
        """Live processes carrying this guard's marker, the guard aside: its upstreams and their children."""
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == self.process.pid:
                continue
            try:
                environ = Path("/proc", entry, "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if self.marker.encode() in environ and pid_alive(int(entry)):
                pids.append(int(entry))
        return pids

    async def close_stdin(self) -> None:
        """The client goes away."""
        assert self.process.stdin is not None
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError):
            await self.process.stdin.aclose()

    async def wait_exit(self, timeout: float = EXIT_TIMEOUT) -> int:
        """Wait for the guard to exit; return its status."""
        with anyio.fail_after(timeout):
            return await self.process.wait()


@asynccontextmanager
async def open_guard(
    directory: Path,
    *,
    env: dict[str, str] | None = None,
    args: Sequence[str] = (),
    command: Sequence[str] | None = None,
    initialize: bool = True,
    serve: bool = False,
) -> AsyncIterator[Client]:
    """Start ``python -m mcp_guard wrap ARGS -- COMMAND`` (default: the faulty server) and connect.

    With ``serve``: ``python -m mcp_guard serve --config FILE ARGS``, the file naming COMMAND as
    its one server ``f`` (tools ``f__NAME``)."""
    directory.mkdir(parents=True, exist_ok=True)
    record = directory / "record.jsonl"
    stderr_path = directory / "guard-stderr.log"
    marker = f"MCP_GUARD_FAULT_MARKER={uuid.uuid4().hex}"
    environment = {k: v for k, v in os.environ.items() if k not in SERVER_ENV_KEYS}
    environment["RECORD_FILE"] = str(record)
    environment.update(env or {})
    name, value = marker.split("=")
    environment[name] = value  # the guard passes its environment on: this finds its upstreams
    upstream = list(command) if command is not None else [sys.executable, str(FAULTY_SERVER)]
    argv = [sys.executable, "-m", "mcp_guard", "wrap", "--profile", "standard", *args, "--", *upstream]
    if serve:
        config = directory / "gateway.json"
        config.write_text(
            json.dumps(
                {"mcpServers": {"f": {"command": upstream[0], "args": upstream[1:]}}, "guard": {"profile": "standard"}}
            )
        )
        argv = [sys.executable, "-m", "mcp_guard", "serve", "--config", str(config), *args]
    with stderr_path.open("wb") as stderr:
        process = await anyio.open_process(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=environment, cwd=ROOT
        )
    client = Client(process, record, stderr_path, marker)
    try:
        if initialize:
            response = await client.request("initialize", INIT_PARAMS, "init")
            assert "result" in response, response
            await client.notify("notifications/initialized")
        yield client
    finally:
        with anyio.CancelScope(shield=True):
            await client.close_stdin()
            with anyio.move_on_after(EXIT_TIMEOUT):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
            await process.aclose()
            for pid in client.live_pids():  # never leave a process behind, even when a test failed
                with suppress(OSError):
                    os.kill(pid, signal.SIGKILL)


def assert_gone_error(response: dict[str, Any]) -> None:
    """A JSON-RPC -32603 error saying the upstream went away."""
    assert "result" not in response, response
    assert response["error"]["code"] == -32603, response
    assert "went away" in response["error"]["message"], response


# ---------------------------------------------------------------------------------------------
# 1. Everything pending is answered when the upstream goes away


async def _kill_by_signal(client: Client) -> None:
    (pid,) = client.starts()
    os.kill(pid, signal.SIGKILL)


async def _crash(client: Client) -> None:
    await client.notify("test/crash")


async def _close_stdout(client: Client) -> None:
    await client.notify("test/close_stdout")


async def _spawn_grandchild(client: Client) -> None:
    # The grandchild (sleep 600) inherits the upstream's stdout: the pipe stays open after the crash.
    response = await client.request("test/spawn_grandchild", {})
    assert pid_alive(response["result"]["pid"])


async def _crash_leaving_a_grandchild(client: Client) -> None:
    await client.notify("test/crash")  # (the grandchild was spawned first: _spawn_grandchild)


def gone_with(cause: str) -> str:
    """The -32603 text for a request the upstream left unanswered, naming how it ended (``streams.ends``)."""
    return f"mcp-guard: the upstream server went away before answering ({cause}); the request was not re-sent"


@pytest.mark.parametrize(
    ("how", "cause"),
    [
        (_crash, "it exited with status 3; it wrote nothing to its stderr"),
        (_kill_by_signal, "it was ended by signal 9; it wrote nothing to its stderr"),
        (_close_stdout, "it closed its output but is still running; it wrote nothing to its stderr"),
        (_crash_leaving_a_grandchild, "it exited with status 3; it wrote nothing to its stderr"),
    ],
    ids=["exits", "sigkill", "closes-stdout", "exits-grandchild-holds-stdout"],
)
async def test_every_pending_request_is_answered_when_the_upstream_goes_away(
    tmp_path: Path, how: Any, cause: str
) -> None:
    """A forwarded request and a call the guard holds (its own listing unanswered) both get -32603 at once;
    the forwarded one's text says how the upstream ended (trial 3 T1), and so does the log."""
    async with open_guard(tmp_path, env={"HOLD_LIST": "1"}) as client:
        if how is _crash_leaving_a_grandchild:  # (a request: sent before the held call, which it would wait behind)
            await _spawn_grandchild(client)
        await client.send({"jsonrpc": "2.0", "id": 1, "method": "test/hang", "params": {"token": SECRET}})
        await client.send(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"k": SECRET}}}
        )
        await client.wait_recorded(lambda m: m.get("method") == "tools/list" and str(m.get("id")).startswith("mcp-"))
        await client.wait_recorded(lambda m: m.get("method") == "test/hang")
        await how(client)
        with anyio.fail_after(PROMPT):
            forwarded = await client.response(1)
            held = await client.response(2)
        assert forwarded["error"] == {"code": -32603, "message": gone_with(cause)}
        assert_gone_error(held)
        assert "could not list the upstream's tools" in held["error"]["message"]
        assert f"the upstream went away ({cause})" in client.stderr()
        assert all(SECRET.encode() not in line for line in client.lines)
        assert SECRET not in client.stderr()
        assert "the upstream went away" in client.stderr()
        assert client.process.returncode is None  # the guard outlives its upstream
        # ... and answers the next request from a new upstream process.
        assert "result" in await client.request("ping")
        assert len(client.starts()) == 2


# ---------------------------------------------------------------------------------------------
# 2. The next request restarts the upstream and restores the session


async def test_restart_replays_the_handshake_log_level_and_subscriptions(tmp_path: Path) -> None:
    """A call the upstream dies on gets an error and is never re-sent; the next request finds the session restored."""
    async with open_guard(tmp_path) as client:
        for level in ("debug", "warning"):
            assert "result" in await client.request("logging/setLevel", {"level": level})
        for method, uri in [
            ("resources/subscribe", "file:///a"),
            ("resources/subscribe", "file:///b"),
            ("resources/unsubscribe", "file:///a"),
        ]:
            assert "result" in await client.request(method, {"uri": uri})
        listed = await client.request("tools/list")
        assert len(listed["result"]["tools"]) == 10
        with anyio.fail_after(PROMPT):
            died = await client.call("c1", "crash", {"k": SECRET})
        assert died["error"] == {
            "code": -32603,
            "message": gone_with("it exited with status 3; it wrote nothing to its stderr"),
        }

        answered = await client.call("e1", "echo")
        assert answered["result"]["content"] == [{"type": "text", "text": "ok"}]
        (first, _), (second, replayed) = client.sessions()
        assert first != second and client.live_pids() == [second]
        # The new upstream was told what the client told the first, by the guard (its own ids).
        assert [m.get("method") for m in replayed] == [
            "initialize",
            "notifications/initialized",
            "logging/setLevel",
            "resources/subscribe",
            "tools/list",  # the guard's own: the tool table was emptied
            "tools/call",
        ]
        assert replayed[0]["params"] == INIT_PARAMS and replayed[0]["id"].startswith("mcp-guard-")
        assert replayed[2]["params"] == {"level": "warning"}
        assert replayed[3]["params"] == {"uri": "file:///b"}
        assert replayed[5]["params"]["name"] == "echo" and replayed[5]["id"].startswith("mcp-guard-")
        # Its answer to the guard's initialize stayed with the guard; the client was told to re-list.
        assert [m for m in client.received if "result" in m and "serverInfo" in m["result"]] == [
            client.answers_to("init")[0]
        ]
        notice = client.received.index({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        assert notice < client.received.index(answered)
        # Never re-sent: the call the upstream died on reached it once.
        crashes = [m for _, ms in client.sessions() for m in ms if m.get("params", {}).get("name") == "crash"]
        assert len(crashes) == 1
        assert "restarting the upstream in" in client.stderr() and "(restart 1;" in client.stderr()
        assert "upstream restarted (restart 1)" in client.stderr()


async def test_modern_era_restart_has_no_handshake(tmp_path: Path) -> None:
    """2026-07-28 era (no initialize): the upstream is just started again; each call is judged on a fresh list."""
    async with open_guard(tmp_path, initialize=False) as client:
        listed = await client.request("tools/list", {"_meta": MODERN_META})
        assert len(listed["result"]["tools"]) == 10
        with anyio.fail_after(PROMPT):
            assert_gone_error(await client.call("c1", "crash", _meta=MODERN_META))
        answered = await client.call("e1", "echo", _meta=MODERN_META)
        assert answered["result"]["content"] == [{"type": "text", "text": "ok"}]
        (_, replayed) = client.sessions()[1]
        # (the guard may also open its own subscriptions/listen stream after listing: see relay, 2026-07-28 era)
        replayed = [m for m in replayed if m.get("method") != "subscriptions/listen"]
        assert [m.get("method") for m in replayed] == ["tools/list", "tools/call"]
        assert replayed[0]["params"]["_meta"] == MODERN_META  # the guard's own listing carries the envelope
        assert not any(m.get("method") == "notifications/tools/list_changed" for m in client.received)


async def test_a_failed_restart_is_an_error_and_the_next_request_tries_again(tmp_path: Path) -> None:
    """The restarted upstream dies at once: the waiting request gets an error; after backoff the next one works."""
    fail = tmp_path / "fail-now"
    async with open_guard(tmp_path, env={"FAIL_FILE": str(fail)}) as client:
        await client.request("tools/list")
        fail.touch()
        with anyio.fail_after(PROMPT):
            assert_gone_error(await client.call("c1", "crash"))
        failed = await client.call("r1", "echo", {"k": SECRET})
        assert failed["error"]["code"] == -32603
        assert failed["error"]["message"].startswith("mcp-guard: the upstream server went away and could not be")
        assert SECRET not in failed["error"]["message"]
        fail.unlink()
        answered = await client.call("r2", "echo")
        assert answered["result"]["content"] == [{"type": "text", "text": "ok"}]
        log = client.stderr()
        assert "upstream stderr: faulty_server: failing on purpose" in log  # relayed, marked as the server's
        assert "could not restart the upstream" in log
        assert "(restart 2;" in log  # the second attempt waited (backoff), and was counted
        assert len(client.starts()) == 2
        assert client.answers_to("r1") == [failed]


async def test_an_upstream_command_that_cannot_start_again_is_an_error_until_it_can(tmp_path: Path) -> None:
    """The command itself is gone at restart time: an error for the request; once back, the next request works."""
    script = tmp_path / "upstream.sh"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAULTY_SERVER}"\n')
    script.chmod(0o755)
    away = tmp_path / "moved.sh"
    async with open_guard(tmp_path, command=[str(script)]) as client:
        await client.request("tools/list")
        script.rename(away)
        with anyio.fail_after(PROMPT):
            assert_gone_error(await client.call("c1", "crash"))
        failed = await client.call("r1", "echo")
        assert failed["error"]["code"] == -32603 and "could not be restarted" in failed["error"]["message"]
        away.rename(script)
        answered = await client.call("r2", "echo")
        assert answered["result"]["content"] == [{"type": "text", "text": "ok"}]
        assert "could not restart the upstream: cannot start upstream" in client.stderr()


async def test_an_upstream_that_cannot_start_at_all_ends_the_guard_with_status_1(tmp_path: Path) -> None:
    async with open_guard(tmp_path, command=["no-such-mcp-server-command"], initialize=False) as client:
        assert await client.wait_exit() == 1
        assert "upstream command not found: no-such-mcp-server-command" in client.stderr()


async def test_an_upstream_that_cannot_start_answers_initialize_with_the_cause(tmp_path: Path) -> None:
    """issue 13 item 3: the client sees why (not just "connection closed"), then the guard exits with 1."""
    async with open_guard(tmp_path, command=["no-such-mcp-server-command"], initialize=False) as client:
        # (the guard's own start-up counts here, unlike the other tests' waits: 3 x PROMPT for a loaded machine)
        with anyio.fail_after(3 * PROMPT):
            answer = await client.request("initialize", INIT_PARAMS, request_id="init")
        assert answer["error"]["code"] == -32603
        assert "upstream command not found: no-such-mcp-server-command" in answer["error"]["message"]
        assert await client.wait_exit() == 1


async def test_a_request_waiting_for_the_restart_can_be_cancelled(tmp_path: Path) -> None:
    """A request cancelled before the restarted upstream took it is neither sent nor answered."""
    async with open_guard(tmp_path) as client:
        await client.request("tools/list")
        with anyio.fail_after(PROMPT):
            assert_gone_error(await client.call("c1", "crash"))
        # The upstream lived under 10 s: its restart waits 0.5 s, while all three lines arrive.
        waiting = {"jsonrpc": "2.0", "id": "wa", "method": "tools/call", "params": {"name": "echo"}}
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "wa"}}
        after = {"jsonrpc": "2.0", "id": "wb", "method": "tools/call", "params": {"name": "echo"}}
        await client.send_raw(b"".join(json.dumps(m).encode() + b"\n" for m in (waiting, cancel, after)))
        assert "result" in await client.response("wb")
        assert "result" in await client.request("ping")
        assert client.answers_to("wa") == []
        calls = [m for m in client.sessions()[1][1] if m.get("method") == "tools/call"]
        assert len(calls) == 1  # "wb" alone: "wa" was never sent


async def test_requests_an_upstream_sent_the_client_are_cancelled_when_it_goes_away(tmp_path: Path) -> None:
    """The client is told the gone upstream's request is cancelled; its late answer reaches no new upstream."""
    async with open_guard(tmp_path) as client:
        await client.request("tools/list")
        assert "result" in await client.call("s1", "sample")
        with anyio.fail_after(PROMPT):
            assert_gone_error(await client.call("c1", "crash"))
            cancelled = await client.notification("notifications/cancelled")
        # The client knows the upstream's request under an id of the guard's own (sessions.server_requests).
        asked = next(m for m in client.received if type(m) is dict and m.get("method") == "sampling/createMessage")
        assert asked["id"] != "server-req-1"
        assert cancelled["params"]["requestId"] == asked["id"]
        await client.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"role": "assistant", "content": []}})
        assert "result" in await client.call("e1", "echo")
        assert "result" in await client.request("ping")
        assert not any("method" not in m for m in client.sessions()[1][1])  # no answer reached the new upstream
        assert "dropped the client's answer to a request of an upstream that went away" in client.stderr()


# ---------------------------------------------------------------------------------------------
# 3. Request timeouts


async def test_request_timeout_answers_cancels_and_drops_the_late_answer(tmp_path: Path) -> None:
    async with open_guard(tmp_path, args=["--request-timeout", "2"]) as client:
        await client.request("tools/list")
        # Open by design: a listen stream is never timed out (checked at the end, seconds later).
        await client.send({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": {}})
        # Never answered: an error after 2 s, and the upstream is told to stop.
        hung = await client.call("h1", "hang", {"k": SECRET})
        assert hung["error"]["code"] == -32603
        assert "did not answer within 2 s" in hung["error"]["message"] and SECRET not in hung["error"]["message"]
        sent = [m for _, messages in client.sessions() for m in messages if m.get("method") == "tools/call"]
        hang_id = sent[-1]["id"]  # the upstream id the guard gave it (its own, not the client's)
        assert hang_id != "h1" and sent[-1]["params"]["name"] == "hang"
        await client.wait_recorded(
            lambda m: m.get("method") == "notifications/cancelled" and m["params"]["requestId"] == hang_id
        )
        # Slow but alive: progress every 0.25 s restarts the clock, so 3.5 s in all is fine.
        progress = {"seconds": 3.5, "progress_every": 0.25}
        slow = await client.call("p1", "slow", progress, _meta={"progressToken": "tok-1"})
        assert slow["result"]["content"] == [{"type": "text", "text": "slow ok"}]
        # Too slow without progress: an error at 2 s; the answer at 3.5 s is dropped.
        late = await client.call("l1", "slow", {"seconds": 3.5})
        assert "did not answer within 2 s" in late["error"]["message"]
        assert "result" in await client.request("test/barrier")  # answered after the late answer was written
        assert client.answers_to("l1") == [late]
        assert "dropped the upstream's late answer to a request that had timed out" in client.stderr()
        assert client.process.returncode is None
        assert client.answers_to("listen-1") == []


async def test_the_late_answer_of_a_timed_out_call_never_reaches_the_next_call_under_its_id(tmp_path: Path) -> None:
    """Issue 25 item 5, as found: with ``--request-timeout 1`` call 9 timed out and was answered -32603;
    the client's next call, also id 9, got the first call's late answer, and its own was dropped. Each
    forwarded request now goes upstream under an id of the guard's own."""
    async with open_guard(tmp_path, args=["--request-timeout", "1"]) as client:
        await client.request("tools/list")
        first = await client.call(9, "slow", {"seconds": 1.8, "text": "first"})
        assert first["error"]["code"] == -32603 and "did not answer within 1 s" in first["error"]["message"]
        # Answered after the first's late answer (at 1.8 s): the late one must not be taken for it.
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "tools/call",
                "params": {"name": "slow", "arguments": {"seconds": 0.9, "text": "second"}},
            }
        )
        assert "result" in await client.request("test/barrier")  # every slow answer has been written
        assert "result" in await client.request("ping")
        answers = client.answers_to(9)
        assert len(answers) == 2 and answers[0] == first, answers
        assert answers[1].get("result", {}).get("content") == [{"type": "text", "text": "second"}], answers
        calls = [m for _, messages in client.sessions() for m in messages if m.get("method") == "tools/call"]
        assert len(calls) == 2 and calls[0]["id"] != calls[1]["id"] and 9 not in (calls[0]["id"], calls[1]["id"])


@pytest.mark.parametrize("args", [[], ["--request-timeout", "30"]], ids=["untimed", "timed"])
async def test_methods_that_are_not_strings_pass_without_harm(tmp_path: Path, args: list[str]) -> None:
    """A method (or a cancelled requestId) that is a list or an object is passed on as before, harmlessly."""
    async with open_guard(tmp_path, args=args) as client:
        await client.send({"jsonrpc": "2.0", "id": 5, "method": ["logging/setLevel"], "params": {}})
        await client.send({"jsonrpc": "2.0", "id": 6, "method": {"m": "tasks/result"}, "params": {}})
        # (an object requestId once crashed the guard: a client could end it with one notification)
        await client.notify("notifications/cancelled", {"requestId": {"a": 1}})
        assert "result" in await client.request("ping")
        await client.wait_recorded(lambda m: m.get("method") == {"m": "tasks/result"})
        assert client.process.returncode is None


async def test_an_upstream_response_with_an_object_id_is_dropped_without_harm(tmp_path: Path) -> None:
    """An answer to an id the guard never sent (an object, here) never reaches the client (issue 12:
    exactly one answer per request, its own); it is logged, and the guard goes on. An object is no JSON-RPC id
    at all: skipped as output that is no JSON-RPC message (red team 37 F4)."""
    async with open_guard(tmp_path) as client:
        await client.request("tools/list")
        assert "result" in await client.call("o1", "object_id")
        assert "result" in await client.request("ping")
        assert all(type(m) is not dict or type(m.get("id")) is not dict for m in client.received)
        assert (
            "skipped output from the upstream that is JSON but not a JSON-RPC message "
            "(its id is not a string, a number or null)"
        ) in client.stderr()


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_request_timeout_must_be_a_positive_number(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli_main(["wrap", "--request-timeout", value, "--", "true"])
    assert exited.value.code == 2
    assert "--request-timeout" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# 4. Noise, stderr


async def test_noise_is_skipped_and_logged_and_the_upstreams_stderr_is_passed_on(tmp_path: Path) -> None:
    async with open_guard(tmp_path, env={"STDERR_LINE": "faulty_server: hello on stderr"}) as client:
        await client.request("tools/list")
        noisy = await client.call("n1", "noise")
        assert noisy["result"]["content"] == [{"type": "text", "text": "ok"}]
        assert all(json.loads(line).get("jsonrpc") == "2.0" for line in client.lines)
        # The server's stderr reaches the guard's on its own pipe: it may trail the answer (a loaded machine).
        with anyio.fail_after(READ_TIMEOUT):
            while "faulty_server: noise on stderr" not in client.stderr():
                await anyio.sleep(0.05)
        log = client.stderr()
        assert "faulty_server: hello on stderr" in log and "faulty_server: noise on stderr" in log
        # ... line by line, marked as the server's (trial T7)
        assert "upstream stderr: faulty_server: hello on stderr" in log.splitlines()
        assert "upstream stderr: faulty_server: noise on stderr" in log.splitlines()
        length = len("faulty_server: this line is not JSON")
        assert f"skipped a line of {length} bytes from the upstream that is not JSON" in log
        assert "this line is not JSON" not in log  # logged by size, not content


# ---------------------------------------------------------------------------------------------
# 5. No orphans


@pytest.mark.parametrize("end", ["stdin-closed", "sigterm"])
async def test_no_process_outlives_the_guard(tmp_path: Path, end: str) -> None:
    """The upstream, and a grandchild it started, are gone once the guard has exited (status 0)."""
    async with open_guard(tmp_path) as client:
        spawned = await client.request("test/spawn_grandchild", {})
        grandchild = spawned["result"]["pid"]
        (upstream,) = client.starts()
        with anyio.fail_after(READ_TIMEOUT):  # (/proc may lag behind a process just started)
            while sorted(client.live_pids()) != sorted([upstream, grandchild]):
                await anyio.sleep(0.05)
        if end == "sigterm":
            client.process.send_signal(signal.SIGTERM)
        else:
            await client.close_stdin()
        assert await client.wait_exit() == 0
        assert not pid_alive(upstream) and not pid_alive(grandchild)
        assert client.live_pids() == []


async def test_an_upstream_ignoring_eof_and_sigterm_is_killed(tmp_path: Path) -> None:
    async with open_guard(tmp_path, env={"IGNORE_EOF": "1"}) as client:
        await client.request("ping")
        (upstream,) = client.starts()
        await client.close_stdin()
        assert await client.wait_exit() == 0
        assert not pid_alive(upstream)
        assert "upstream did not exit after its stdin closed; terminating it" in client.stderr()


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_an_mcp_clients_shutdown_leaves_no_upstream_behind(tmp_path: Path, command: str) -> None:
    """The SDKs' shutdown (close stdin, 2 s, SIGTERM, 2 s, SIGKILL) against an upstream that ignores
    EOF and SIGTERM: the upstream is gone before the guard is killed (it used to be signalled
    4.3 s after EOF, and lived on with parent 1)."""
    async with open_guard(tmp_path, env={"IGNORE_EOF": "1"}, serve=command == "serve") as client:
        await client.request("ping")
        with anyio.fail_after(READ_TIMEOUT):  # (serve starts its upstream on the first request)
            while not client.starts():
                await anyio.sleep(0.02)
        (upstream,) = client.starts()
        await client.close_stdin()
        await anyio.sleep(2.0)
        if client.process.returncode is None:
            client.process.send_signal(signal.SIGTERM)
        await anyio.sleep(1.8)  # (the client's SIGKILL comes at 4 s; a little margin for a loaded machine)
        assert not pid_alive(upstream), "the upstream outlived the client's patience"
        assert await client.wait_exit(5.0) == 0


@pytest.mark.parametrize("command", ["wrap", "serve"])
async def test_sigterm_stops_the_upstream_at_once(tmp_path: Path, command: str) -> None:
    """SIGTERM with the client still connected: the upstream (ignoring EOF and SIGTERM) is killed
    within about a second (SIGTERM to its group at once, SIGKILL 1 s later), and the guard exits 0."""
    async with open_guard(tmp_path, env={"IGNORE_EOF": "1"}, serve=command == "serve") as client:
        await client.request("ping")
        with anyio.fail_after(READ_TIMEOUT):
            while not client.starts():
                await anyio.sleep(0.02)
        (upstream,) = client.starts()
        client.process.send_signal(signal.SIGTERM)
        # The guard's SIGKILL comes 1 s after its SIGTERM. An idle machine sees the upstream gone by 1.1 s; the
        # bound leaves room for a loaded one (at load 10 on 2 cores it once took more than 1.8 s: stop 35).
        with anyio.move_on_after(3.0):
            while pid_alive(upstream):
                await anyio.sleep(0.02)
        assert not pid_alive(upstream), "the upstream outlived the guard's SIGKILL by seconds"
        assert await client.wait_exit(5.0) == 0


async def test_restarted_upstreams_leave_nothing_behind(tmp_path: Path) -> None:
    """Each upstream that went away was stopped with its group; the last one goes with the guard."""
    async with open_guard(tmp_path) as client:
        first = (await client.request("test/spawn_grandchild", {}))["result"]["pid"]
        await client.notify("test/crash")
        with anyio.fail_after(READ_TIMEOUT):
            while "the upstream went away" not in client.stderr():
                await anyio.sleep(0.02)
        second = (await client.request("test/spawn_grandchild", {}))["result"]["pid"]
        with anyio.fail_after(READ_TIMEOUT):
            while pid_alive(first):  # the first upstream's group is terminated once it went away
                await anyio.sleep(0.05)
        assert pid_alive(second)
        starts = client.starts()
        await client.close_stdin()
        assert await client.wait_exit() == 0
        assert not any(pid_alive(pid) for pid in [*starts, first, second])


async def test_a_client_that_stops_reading_ends_the_guard_cleanly(tmp_path: Path) -> None:
    """The read end of the guard's stdout closes (the client crashed): exit 0, no traceback, no orphans."""
    marker = f"MCP_GUARD_FAULT_MARKER={uuid.uuid4().hex}"
    environment = {k: v for k, v in os.environ.items() if k not in SERVER_ENV_KEYS}
    environment[marker.split("=")[0]] = marker.split("=")[1]
    stderr_path = tmp_path / "guard-stderr.log"
    read_end, write_end = os.pipe()  # the guard's stdout, whose read end the test closes for real
    argv = [sys.executable, "-m", "mcp_guard", "wrap", "--", sys.executable, str(FAULTY_SERVER)]
    with stderr_path.open("wb") as stderr:
        process = await anyio.open_process(
            argv, stdin=subprocess.PIPE, stdout=write_end, stderr=stderr, env=environment, cwd=ROOT
        )
    os.close(write_end)
    client = Client.__new__(Client)  # only the process-finding helpers are used
    client.process, client.marker = process, marker
    try:
        assert process.stdin is not None
        await process.stdin.send(b'{"jsonrpc":"2.0","id":1,"method":"test/spawn_grandchild"}\n')
        with anyio.fail_after(READ_TIMEOUT):
            line = await anyio.to_thread.run_sync(os.read, read_end, 65536)
        grandchild = json.loads(line)["result"]["pid"]
        os.close(read_end)
        read_end = -1
        await process.stdin.send(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')  # its answer finds no reader
        with anyio.fail_after(EXIT_TIMEOUT):
            assert await process.wait() == 0
        assert client.live_pids() == [] and not pid_alive(grandchild)
        log = stderr_path.read_text()
        assert "the client stopped reading; stopping" in log
        assert "Traceback" not in log
    finally:
        if read_end >= 0:
            os.close(read_end)
        if process.returncode is None:
            process.kill()
        await process.aclose()
        for pid in client.live_pids():
            with suppress(OSError):
                os.kill(pid, signal.SIGKILL)


# ---------------------------------------------------------------------------------------------
# 6. Found in a new user's trial: every request answered promptly when the upstream cannot stay up


async def test_calls_held_for_a_listing_the_upstream_dies_on_are_answered_with_the_reason(tmp_path: Path) -> None:
    """The upstream answers initialize and exits on tools/list: both held calls get -32603 saying why, at once."""
    async with open_guard(tmp_path, env={"EXIT_ON_LIST": "1"}) as client:
        for request_id in (2, 3):
            await client.send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {}},
                }
            )
        with anyio.fail_after(PROMPT):
            answers = [await client.response(2), await client.response(3)]
            assert "result" in await client.request("ping")  # a restarted upstream answers what needs no listing
        for answer in answers:
            assert answer["error"]["code"] == -32603, answer
            assert answer["error"]["message"] == (
                "mcp-guard could not list the upstream's tools: the upstream server went away"
                " (it exited with status 4; it wrote nothing to its stderr)"
            ), answer


NEVER_STARTED = (
    "mcp-guard: the upstream server could not be started (the upstream ended before it answered any request: "
)
"""The start of the -32603 text for a request to an upstream that ended before it answered any request."""


async def test_an_upstream_that_exits_at_once_gets_every_request_answered_with_the_cause_then_exit_1(
    tmp_path: Path,
) -> None:
    """``wrap -- sh -c 'exit 0'`` (docs/wrap.md): a server that exits at once is no start. Every request,
    calls included, is answered promptly with -32603 naming its exit status, for up to 2 s; then the
    guard exits with status 1, and the server is not started again (trial 3 T1)."""
    async with open_guard(tmp_path, command=["sh", "-c", "exit 0"], initialize=False) as client:
        requests: list[tuple[str, dict[str, Any]]] = [
            ("initialize", INIT_PARAMS),
            ("ping", {}),
            ("tools/call", {"name": "echo", "arguments": {"k": SECRET}}),
        ]
        texts = []
        for number, (method, params) in enumerate(requests):
            with anyio.fail_after(3 * PROMPT):  # (the guard's own start-up counts for the first)
                answer = await client.request(method, params, request_id=number)
            assert answer["error"]["code"] == -32603, answer
            texts.append(answer["error"]["message"])
        cause = "it exited with status 0; it wrote nothing to its stderr"
        assert texts == [f"{NEVER_STARTED}{cause}); mcp-guard exits"] * 3, texts
        assert await client.wait_exit() == 1
        assert f"the upstream ended before it answered any request: {cause}" in client.stderr()
        assert "restarting" not in client.stderr() and SECRET not in client.stderr()


async def test_an_upstream_that_exits_at_once_answers_a_client_that_keeps_talking_past_the_grace(
    tmp_path: Path,
) -> None:
    """Fault 37 A: the 2 s of answers were one window from the failure, so a client sending its requests
    one after another lost the guard between two of them on a busy machine (the test above met
    EndOfStream at its third request). The window starts again with each line the client sends
    (``streams.refusal``): four requests a second apart are all answered, then the guard exits 1."""
    async with open_guard(tmp_path, command=["sh", "-c", "exit 0"], initialize=False) as client:
        for number in range(4):
            if number:
                await anyio.sleep(1.0)
            with anyio.fail_after(3 * PROMPT):
                method, params = ("ping", {}) if number else ("initialize", INIT_PARAMS)
                answer = await client.request(method, params, request_id=number)
            assert answer["error"]["message"].startswith(NEVER_STARTED), answer
        assert await client.wait_exit() == 1


@pytest.mark.parametrize(
    ("command", "cause"),
    [
        (
            ["sh", "-c", "echo 'error: environment variable API_KEY is not set' >&2; exit 2"],
            "it exited with status 2; its stderr, relayed to the guard's stderr as `upstream stderr: ...`, may say why",
        ),
        (["sh", "-c", "kill -9 $$"], "it was ended by signal 9; it wrote nothing to its stderr"),
        (
            ["sh", "-c", "exec 1>&-; sleep 30"],
            "it closed its output but is still running; it wrote nothing to its stderr",
        ),
        (
            [
                "sh",
                "-c",
                'read line; echo \'{"jsonrpc":"2.0","id":"init","error":'
                '{"code":-32602,"message":"bad version"}}\'; exit 1',
            ],
            "it exited with status 1; it wrote nothing to its stderr",
        ),
    ],
    ids=["stderr-then-status-2", "signal", "closes-stdout-stays-alive", "initialize-error-then-exit"],
)
async def test_every_way_an_upstream_fails_at_start_names_the_cause_and_ends_the_guard(
    tmp_path: Path, command: list[str], cause: str
) -> None:
    """Each way an upstream can fail at start (before it answered any request with a result) answers the
    client's ``initialize`` with the cause, and exits 1: exits with a status after printing why on
    stderr (a missing environment variable), killed by a signal, closes stdout but stays alive,
    answers ``initialize`` with an error and exits (that error reaches the client as it is)."""
    async with open_guard(tmp_path, command=command, initialize=False) as client:
        with anyio.fail_after(3 * PROMPT):
            answer = await client.request("initialize", INIT_PARAMS, request_id="init")
        assert answer["error"]["code"] in (-32603, -32602), answer
        if answer["error"]["code"] == -32602:  # the server's own error answer, relayed as it is; then it exits
            assert answer["error"]["message"] == "bad version"
        else:
            assert answer["error"]["message"] == f"{NEVER_STARTED}{cause}); mcp-guard exits", answer
        assert await client.wait_exit() == 1
        assert f"the upstream ended before it answered any request: {cause}" in client.stderr()
        assert "restarting" not in client.stderr()
        if "API_KEY" in command[2]:
            assert "upstream stderr: error: environment variable API_KEY is not set" in client.stderr()


def test_an_upstream_that_cannot_start_is_named_when_the_client_closed_first() -> None:
    """Red team 33: ``echo INITIALIZE | mcp-guard wrap -- CMD`` (the client's input ends before the upstream
    fails) was answered "not running (the client closed the connection)" and exited 0: the start failure is
    the cause, and the guard exits 1, as with a client that stays. (An upstream that ends after the guard
    closed its input, the client having gone, is not a start failure: its answer names its exit status.)"""
    script = "exit 2"
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS})
    done = subprocess.run(
        [sys.executable, "-m", "mcp_guard", "wrap", "--", "sh", "-c", script],
        input=(line + "\n").encode(),
        capture_output=True,
        timeout=60,
    )
    answers = [json.loads(out) for out in done.stdout.splitlines()]
    cause = "it exited with status 2; it wrote nothing to its stderr"
    assert answers == [
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": f"{NEVER_STARTED}{cause}); mcp-guard exits"}}
    ]
    assert done.returncode == 1


async def test_a_server_that_worked_and_then_exits_at_once_is_restarted_with_backoff(tmp_path: Path) -> None:
    """The start-failure rule is the first start's: once a server answered, its crash (and a restart
    that fails) is restarted with backoff, and the answers say the exit status."""
    async with open_guard(tmp_path) as client:
        assert "result" in await client.request("ping")
        with anyio.fail_after(PROMPT):
            died = await client.call("c1", "crash")
        assert died["error"]["message"] == gone_with("it exited with status 3; it wrote nothing to its stderr")
        assert "result" in await client.request("ping")
        assert client.process.returncode is None and len(client.starts()) == 2


# ---------------------------------------------------------------------------------------------
# 7. Backpressure: a client that writes and does not read is not read without bound


async def test_a_client_that_does_not_read_its_answers_is_stopped_by_full_pipes(tmp_path: Path) -> None:
    """Calls and their answers pile up in the pipes, not in the guard's memory: once the client's
    output pipe is full, the guard stops reading the upstream, the upstream stops reading, and the
    guard stops reading the client. Then every call is still answered, in order."""
    limit = 40_000  # ~4 MB of calls: ten times what the pipes on the way hold
    async with open_guard(tmp_path) as client:
        assert "result" in await client.request("tools/list")
        sent = 0
        with anyio.fail_after(120):  # (a hang guard; a guard reading without bound fails on the count)
            while sent < limit:
                call = {"jsonrpc": "2.0", "id": f"c{sent}", "method": "tools/call", "params": {"name": "echo"}}
                with anyio.move_on_after(1.0) as waited:  # the guard stopped reading (liveness only)
                    await client.send(call)
                sent += 1  # (a send that waited has its line in the transport's buffer all the same)
                if waited.cancelled_caught:
                    break
        assert sent < limit, f"the guard read {sent} calls while none of their answers was read"
        for number in range(sent):
            answer = await client.response(f"c{number}")
            assert answer["result"]["content"][0]["text"] == "ok", answer
        assert [m["id"] for m in client.received if "id" in m][-sent:] == [f"c{n}" for n in range(sent)]


SLOW_START = r"""
import json, sys, time
time.sleep(float(sys.argv[1]))  # a slow start: the input is read late
for line in sys.stdin:
    m = json.loads(line)
    if "id" in m:
        r = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "slow", "version": "1"}}
        r = r if m["method"] == "initialize" else {}
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"""


async def test_requests_sent_before_the_client_closed_are_still_answered(tmp_path: Path) -> None:
    """Trial T4: ``printf ... | mcp-guard wrap -- slow-server`` gets the answers the server gives directly:
    the client's EOF closes the upstream's input, and the upstream may answer what it holds, then exit."""
    command = [sys.executable, "-c", SLOW_START, "2"]
    async with open_guard(tmp_path, command=command, initialize=False) as client:
        await client.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": INIT_PARAMS})
        await client.close_stdin()
        with anyio.fail_after(3 * PROMPT):
            answer = await client.response("init")
        assert answer["result"]["serverInfo"]["name"] == "slow"
        assert await client.wait_exit() == 0


SLOW_TOOLS = r"""
import json, sys, time
time.sleep(float(sys.argv[1]))  # a slow start (an npx server, a loaded machine): the input is read late
TOOL = {"name": "add", "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}}}}
for line in sys.stdin:
    m = json.loads(line)
    if "id" in m:
        info = {"name": "slow", "version": "1"}
        r = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": info}
        if m["method"] == "tools/list":
            r = {"tools": [TOOL]}
        elif m["method"] == "tools/call":
            r = {"content": [{"type": "text", "text": str(m["params"]["arguments"]["a"] + 1)}]}
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"""


async def test_a_call_held_for_the_listing_when_the_client_closed_is_still_answered(tmp_path: Path) -> None:
    """``printf 'initialize, initialized, tools/call' | mcp-guard wrap -- slow-server``: the call waits for the
    guard's own listing, which the slow server answers after the drain timeout (2 s); it is judged and
    answered as the forwarded requests of trial T4 are, not failed (it once was: under load, a test's
    SDK server took that long to start)."""
    command = [sys.executable, "-c", SLOW_TOOLS, "3"]
    async with open_guard(tmp_path, command=command, initialize=False) as client:
        await client.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": INIT_PARAMS})
        await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {"name": "add", "arguments": {"a": 41}}
        await client.send({"jsonrpc": "2.0", "id": "call", "method": "tools/call", "params": call})
        await client.close_stdin()
        assert await client.wait_exit(PENDING_DRAIN_SECONDS + 3 * PROMPT) == 0
        answer = await client.response("call")
        assert answer.get("result", {}).get("content") == [{"type": "text", "text": "42"}], answer


async def test_a_request_still_open_when_the_guard_stops_the_upstream_says_so(tmp_path: Path) -> None:
    """Past the shutdown wait the upstream is stopped; the answer says the client closed first (not "went away")."""
    command = [sys.executable, "-c", SLOW_START, "60"]
    async with open_guard(tmp_path, command=command, initialize=False) as client:
        await client.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": INIT_PARAMS})
        await client.close_stdin()
        assert await client.wait_exit(PENDING_DRAIN_SECONDS + 3 * PROMPT) == 0  # (the answer waits in the pipe)
        answer = await client.response("init")
        assert answer["error"]["code"] == -32603
        assert answer["error"]["message"] == STOPPED_AFTER_CLIENT
