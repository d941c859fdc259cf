"""``serve`` on stdio that cannot start: the client's first requests answered with the cause, then exit.

A gateway that exits at start (a config error, an unreadable lock file, a journal that cannot
be opened, a metrics address that cannot be bound) would leave its client with nothing but
"connection closed", the cause only in the guard's stderr, which few clients show. So, as
``wrap`` does when its upstream cannot be started (``sessions.relay``, issue 13 item 3), every
request the client sends (its ``initialize`` first; each member of a batch) is answered with a
JSON-RPC error -32603 whose message names the cause (:func:`start_failure_text`) until the client
closes its side, or is silent for :data:`~mcp_guard.streams.refusal.START_FAILURE_GRACE` seconds
(counted again from each line it sends), and at the latest after
:data:`~mcp_guard.streams.refusal.START_FAILURE_BOUND` seconds (``streams.refusal``);
notifications and unparsable lines are dropped. The exit status is the caller's.
"""

from __future__ import annotations

import anyio

from ..streams.framing import FdReceiveStream, FdSendStream, LineStream, claim_stdio
from ..streams.refusal import START_FAILURE_GRACE, answer_every_request

__all__ = ["refuse_stdio_client", "refuse_stdio_client_now", "start_failure_text"]


def start_failure_text(cause: str) -> str:
    """The -32603 message for a request to a ``serve`` that could not start (``cause``: what went wrong, as logged)."""
    return f"mcp-guard: the gateway could not be started ({cause.strip()}); mcp-guard exits"


async def refuse_stdio_client(client: LineStream, cause: str, *, grace: float = START_FAILURE_GRACE) -> None:
    """Answer every request read from ``client`` with -32603 :func:`start_failure_text` until the client
    closes its side or stops reading, or is silent for ``grace`` seconds (see the module docstring)."""
    await answer_every_request(client, start_failure_text(cause), grace)


def refuse_stdio_client_now(cause: str, *, grace: float = START_FAILURE_GRACE) -> None:
    """:func:`refuse_stdio_client` on this process's stdin and stdout, from outside an event loop (the
    ``serve`` command's own start failures, before the gateway's loop runs)."""

    async def refuse() -> None:
        with claim_stdio() as (read_fd, write_fd):
            client = LineStream(FdReceiveStream(read_fd), FdSendStream(write_fd))
            try:
                await refuse_stdio_client(client, cause, grace=grace)
            finally:
                await client.aclose()

    anyio.run(refuse)
