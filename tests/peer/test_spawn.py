"""Starting the upstream before the event loop (``peer.spawn``) and the process the relay then holds.

``wrap`` starts its upstream as soon as its command line is read (issue 14 item 1); the first
connection of ``stdio_connector`` takes that process over, or raises the error its start raised;
later connections (restarts) start their own. ``upstream.ChildProcess`` is the anyio process
over a ``subprocess.Popen``: its exit is awaited on a pidfd in the asyncio loop, or polled.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import anyio
import pytest

from mcp_guard.peer import upstream
from mcp_guard.peer.spawn import STOP_SIGNALS, StartedProcess, UpstreamStartError, start_early, start_process
from mcp_guard.peer.upstream import ChildProcess, spawn_upstream, stdio_connector

pytestmark = pytest.mark.anyio

ECHO = [sys.executable, "-c", "import sys\nfor line in sys.stdin: sys.stdout.write(line); sys.stdout.flush()"]


def _no_loop() -> asyncio.AbstractEventLoop:
    raise RuntimeError("no running event loop")


def _close(started: StartedProcess) -> None:
    for fd in (started.to_child, started.from_child, started.errors_from_child):
        os.close(fd)


def test_start_early_returns_the_error_instead_of_raising() -> None:
    error = start_early(["no-such-command-mcp-guard-test"])
    assert isinstance(error, UpstreamStartError)
    assert str(error) == "upstream command not found: no-such-command-mcp-guard-test"
    with pytest.raises(UpstreamStartError, match="no upstream command given"):
        start_process([])


def test_a_failed_start_leaves_no_pipe_open(tmp_path: Path) -> None:
    not_executable = tmp_path / "server.sh"
    not_executable.write_text("#!/bin/sh\n")
    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(UpstreamStartError, match=r"^cannot start upstream .*server\.sh: Permission denied$"):
        start_process([str(not_executable)])
    assert set(os.listdir("/proc/self/fd")) <= before


@pytest.mark.parametrize("path", ["pidfd", "polled"])
async def test_the_child_process_waits_reaps_and_signals(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if path == "polled":  # no asyncio loop (or no pidfd_open): wait() polls
        monkeypatch.setattr(upstream, "_asyncio_loop", _no_loop)
    started = start_process([sys.executable, "-c", "import sys; sys.stdin.read(); sys.exit(3)"])
    process = ChildProcess(started.popen)
    try:
        assert process.pid == started.popen.pid and os.getpgid(process.pid) == process.pid  # its own group
        assert process.returncode is None and (process.stdin, process.stdout, process.stderr) == (None, None, None)
        async with anyio.create_task_group() as tg:  # two waiters at once
            results: list[int] = []

            async def waiter() -> None:
                results.append(await process.wait())

            tg.start_soon(waiter)
            tg.start_soon(waiter)
            await anyio.sleep(0.1)
            assert results == []
            os.close(started.to_child)  # EOF: it exits with status 3
            started.to_child = -1
            with anyio.fail_after(10):
                while len(results) < 2:
                    await anyio.sleep(0.01)
        assert results == [3, 3] and process.returncode == 3
        await process.aclose()
    finally:
        for fd in (started.to_child, started.from_child, started.errors_from_child):
            if fd >= 0:
                os.close(fd)

    started = start_process([sys.executable, "-c", "import time; time.sleep(60)"])
    process = ChildProcess(started.popen)
    try:
        process.terminate()
        with anyio.fail_after(10):
            assert await process.wait() == -signal.SIGTERM
        process.kill()  # (an exited process is not signalled again)
    finally:
        _close(started)


async def test_cancelling_aclose_kills_the_process() -> None:
    started = start_process([sys.executable, "-c", "import time; time.sleep(60)"])
    process = ChildProcess(started.popen)
    try:
        with anyio.move_on_after(0.2):
            await process.aclose()
        assert process.returncode == -signal.SIGKILL
    finally:
        _close(started)


async def test_the_first_connection_takes_over_the_process_started_early() -> None:
    started = start_process(ECHO)
    connect = stdio_connector(ECHO, started=started)
    async with connect() as link:
        await link.send(b'{"n":1}')
        with anyio.fail_after(10):
            assert await link.receive() == b'{"n":1}'
    assert started.popen.poll() == 0  # stopped when the connection was left (stdin closed)
    async with connect() as link:  # a restart starts its own process
        await link.send(b'{"n":2}')
        with anyio.fail_after(10):
            assert await link.receive() == b'{"n":2}'


async def test_the_first_connection_raises_what_the_early_start_raised() -> None:
    connect = stdio_connector(ECHO, started=UpstreamStartError("upstream command not found: x"))
    with pytest.raises(UpstreamStartError, match="upstream command not found: x"):
        async with connect():
            pass  # pragma: no cover
    async with connect() as link:  # the next connection starts the command
        await link.send(b"[]")
        with anyio.fail_after(10):
            assert await link.receive() == b"[]"


async def test_spawn_upstream_stops_the_process_it_took_over() -> None:
    started = start_process([sys.executable, "-c", "import time; time.sleep(60)"])
    with anyio.fail_after(20):
        async with spawn_upstream(["unused"], started=started) as running:
            assert running.process.pid == started.popen.pid
    assert started.popen.poll() is not None  # did not exit on EOF: terminated with its group


def test_start_early_holds_the_stop_signals_until_released() -> None:
    """A stop signal while the guard still loads is recorded, not fatal; a failed start restores the handlers."""
    before = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    try:
        started = start_early([sys.executable, "-c", "import sys; sys.stdin.read()"])
        assert isinstance(started, StartedProcess)
        try:
            os.kill(os.getpid(), signal.SIGHUP)  # (its default action would end this process)
            assert started.held == [signal.SIGHUP]
        finally:
            for signum, handler in before.items():
                signal.signal(signum, handler)
            _close(started)
            assert started.popen.wait(timeout=10) == 0
        assert isinstance(start_early(["no-such-command-mcp-guard-test"]), UpstreamStartError)
        assert {signum: signal.getsignal(signum) for signum in STOP_SIGNALS} == before
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
