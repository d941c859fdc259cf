"""An upstream's stderr reaches the guard's stderr line by line: prefixed, escaped, capped, never blocking the child."""

from __future__ import annotations

import io
import logging
import os
import re
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest

from mcp_guard.peer.child_stderr import StderrRelay
from mcp_guard.peer.upstream import spawn_upstream

pytestmark = pytest.mark.anyio

FORGED = b"\x1b[2J\x1b[31mmcp-guard INFO: tools: 99 supported\n\xe2\x80\xaeevil\xff\rmore\nlast without newline"


def _relay(data: bytes, **kwargs: int) -> str:
    read_fd, write_fd = os.pipe()
    sink = io.StringIO()
    relay = StderrRelay(read_fd, "upstream stderr: ", sink=sink, **kwargs)
    os.write(write_fd, data)
    os.close(write_fd)
    assert relay.finish(5.0)
    return sink.getvalue()


def test_every_line_is_prefixed_and_escaped() -> None:
    assert _relay(FORGED).splitlines() == [
        "upstream stderr: \\x1b[2J\\x1b[31mmcp-guard INFO: tools: 99 supported",
        "upstream stderr: \\u202eevil\\xff\\x0dmore",
        "upstream stderr: last without newline",
    ]


def test_an_over_long_line_is_cut_and_says_so() -> None:
    out = _relay(b"a" * 100 + b"\nshort\n", max_line=10).splitlines()
    assert out == [
        "upstream stderr: aaaaaaaaaa [line cut at 10 bytes; the rest of it was not written]",
        "upstream stderr: short",
    ]


class _StuckSink(io.StringIO):
    """A guard stderr that does not take anything until released."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def write(self, text: str) -> int:
        self.release.wait(10)
        return super().write(text)


def test_a_stuck_guard_stderr_never_blocks_the_child_lines_are_dropped_and_counted() -> None:
    read_fd, write_fd = os.pipe()
    sink = _StuckSink()
    relay = StderrRelay(read_fd, "upstream stderr: ", sink=sink, queue_lines=8)
    done = threading.Event()

    def child() -> None:  # 2 MiB of stderr: far more than a pipe holds, so it would block if nobody read
        for _ in range(2048):
            os.write(write_fd, b"x" * 1023 + b"\n")
        os.close(write_fd)
        done.set()

    threading.Thread(target=child, daemon=True).start()
    assert done.wait(10), "the child's stderr writes blocked"
    sink.release.set()
    assert relay.finish(5.0)
    lines = sink.getvalue().splitlines()
    assert relay.dropped > 0
    counted = [
        re.fullmatch(r"upstream stderr: ([\d,]+) line\(s\) dropped: the guard's stderr did not keep up.*", x)
        for x in lines
    ]
    assert sum(int(m[1].replace(",", "")) for m in counted if m) == relay.dropped
    assert len(lines) - sum(1 for m in counted if m) + relay.dropped == 2048  # every line written or counted


SERVER = """
import sys
sys.stderr.write("\\x1b[31mmcp-guard INFO: forged\\nsecond\\n")
sys.stderr.flush()
sys.stdin.read()
sys.stderr.write("bye")
"""


@pytest.mark.parametrize(("name", "prefix"), [(None, "upstream stderr: "), ("ev\x1bil", "upstream ev\\x1bil stderr: ")])
async def test_the_spawned_upstreams_stderr_goes_through_the_relay(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], name: str | None, prefix: str
) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    with anyio.fail_after(20):
        async with spawn_upstream([sys.executable, str(script)], name=name):
            err = ""
            deadline = time.monotonic() + 10
            while "second" not in err and time.monotonic() < deadline:
                await anyio.sleep(0.05)
                err += capfd.readouterr().err
    err += capfd.readouterr().err
    assert f"{prefix}\\x1b[31mmcp-guard INFO: forged" in err.splitlines()
    assert f"{prefix}bye" in err.splitlines()  # what it wrote as it exited is flushed before the connection is left
    assert "\x1b" not in err


async def test_a_named_upstreams_exit_line_names_it(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    script = tmp_path / "server.py"
    script.write_text("import sys; sys.exit(3)\n")
    caplog.set_level(logging.INFO, logger="mcp_guard")
    with anyio.fail_after(20):
        async with spawn_upstream([sys.executable, str(script)], name="lab"):
            for _ in range(200):
                if "exited" in caplog.text:
                    break
                await anyio.sleep(0.05)
    assert "upstream lab: the upstream (pid " in caplog.text
