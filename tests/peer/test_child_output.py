"""The upstream's stdout pipe ends when the child exits, even while another process holds it open."""

from __future__ import annotations

import asyncio
import os

import anyio
import pytest

from mcp_guard.peer import upstream
from mcp_guard.peer.upstream import _ChildOutput

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("path", ["asyncio", "other-backends"])
async def test_a_blocked_read_ends_once_the_child_has_exited(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if path == "other-backends":  # the cancel-scope path taken when no asyncio loop runs (trio)

        def no_loop() -> asyncio.AbstractEventLoop:
            raise RuntimeError("no running event loop")

        monkeypatch.setattr(upstream, "_asyncio_loop", no_loop)
    read_fd, write_fd = os.pipe()  # write_fd plays a grandchild that keeps the pipe open
    output = _ChildOutput(read_fd)
    try:
        os.write(write_fd, b"before\n")
        assert await output.receive() == b"before\n"
        chunks: list[bytes] = []

        async def reader() -> None:
            with anyio.fail_after(10):
                while True:
                    try:
                        chunks.append(await output.receive())
                    except anyio.EndOfStream:
                        return

        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            os.write(write_fd, b"last words\n")
            with anyio.fail_after(10):
                while not chunks:
                    await anyio.sleep(0.01)
            await anyio.sleep(0.05)  # the reader is blocked again: nothing to read, the pipe still open
            output.child_exited()  # ... until the child's exit is known
        assert chunks == [b"last words\n"]
        os.write(write_fd, b"after the exit\n")
        assert await output.receive() == b"after the exit\n"  # (what is in the pipe is still read)
        with pytest.raises(anyio.EndOfStream):
            await output.receive()
    finally:
        os.close(write_fd)
        await output.aclose()
