"""Spawning and stopping an upstream MCP server process (stdio).

The child gets the user's whole environment (the SDK's ``stdio_client`` would pass only
HOME, LOGNAME, PATH, SHELL, TERM and USER), its own process group, and the guard's stderr
as its stderr. Shutdown follows the MCP lifecycle: close its stdin, wait, then terminate
the whole process group with the SDK's ``terminate_posix_process_tree`` (SIGTERM, then
SIGKILL).

This module does not read or write messages; ``relay`` does.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
from collections.abc import AsyncIterator, Mapping, Sequence

import anyio
import anyio.abc
from mcp.os.posix.utilities import terminate_posix_process_tree

from .framing import FdReceiveStream, FdSendStream, LineStream

__all__ = ["Upstream", "UpstreamStartError", "spawn_upstream"]

log = logging.getLogger("mcp_guard")

EXIT_GRACE_SECONDS = 2.0
"""How long the upstream may take to exit after its stdin closes, before SIGTERM."""


class UpstreamStartError(Exception):
    """The upstream command could not be started (not found, not executable)."""


class Upstream:
    """A running upstream process and the line stream over its stdin/stdout.

    Attributes:
        process: the anyio process (pid, return code).
        stream: newline-delimited JSON-RPC to and from it.
    """

    def __init__(self, process: anyio.abc.Process, stream: LineStream) -> None:
        self.process = process
        self.stream = stream


@contextlib.asynccontextmanager
async def spawn_upstream(
    command: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | None = None
) -> AsyncIterator[Upstream]:
    """Run ``command`` as the upstream; stop it (and its process group) on exit.

    The pipes are the guard's own (plain fds read and written like the client side's),
    not anyio's process streams, whose every send costs an event-loop pass.

    Args:
        command: the executable and its arguments.
        env: extra variables, merged over ``os.environ``.
        cwd: working directory, default the guard's.

    Raises:
        UpstreamStartError: the command cannot be started.
    """
    if not command:
        raise UpstreamStartError("no upstream command given")
    environment = dict(os.environ)
    if env:
        environment.update(env)
    executable = command[0]
    if os.sep not in executable and shutil.which(executable, path=environment.get("PATH")) is None:
        raise UpstreamStartError(f"upstream command not found: {executable}")
    child_in, to_child = os.pipe()
    from_child, child_out = os.pipe()
    try:
        process = await anyio.open_process(
            list(command),
            stdin=child_in,
            stdout=child_out,
            stderr=sys.stderr.fileno() if _has_fileno(sys.stderr) else None,
            env=environment,
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        for fd in (to_child, from_child):
            os.close(fd)
        raise UpstreamStartError(f"cannot start upstream {executable}: {exc.strerror or exc}") from exc
    finally:
        os.close(child_in)
        os.close(child_out)
    stream = LineStream(FdReceiveStream(from_child, owned=True), FdSendStream(to_child, owned=True))
    try:
        yield Upstream(process, stream)
    finally:
        with anyio.CancelScope(shield=True):
            await stream.close_send()  # EOF on the upstream's stdin: the MCP way to ask it to exit
            await stop_upstream(process)
            await stream.aclose()


def _has_fileno(stream: object) -> bool:
    try:
        stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return False
    return True


async def stop_upstream(process: anyio.abc.Process) -> None:
    """Wait :data:`EXIT_GRACE_SECONDS` for the upstream to exit (its stdin is closed), then terminate its group."""
    with anyio.move_on_after(EXIT_GRACE_SECONDS):
        while process.returncode is None:
            await anyio.sleep(0.01)
    if process.returncode is None:
        log.info("upstream did not exit after its stdin closed; terminating it")
        await terminate_posix_process_tree(process, EXIT_GRACE_SECONDS)
    with anyio.move_on_after(EXIT_GRACE_SECONDS):
        await process.wait()
    with contextlib.suppress(Exception):
        await process.aclose()
