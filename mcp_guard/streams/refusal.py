"""A guard that cannot start answers its client's requests with the cause, while the client is talking.

``wrap`` whose upstream cannot be started at all (``sessions.relay``) and ``serve`` whose gateway cannot
start (``fronts.start_refusal``) would leave their client with nothing but "connection closed", the cause
only in the guard's stderr, which few clients show (issue 13 item 3). So every request the client sends
(its ``initialize`` first; each member of a batch) is answered with a JSON-RPC error -32603 whose message
names the cause; notifications, over-long and unparsable lines are dropped. Then the guard exits (the
caller's status).

How long it stays (fault 37 A): until the client closes its side; or once the client has been silent for
:data:`START_FAILURE_GRACE` seconds, counted from the failure and again from each line it sends; and at
the latest :data:`START_FAILURE_BOUND` seconds after the failure. The grace used to be one window of 2 s
from the failure: a client that sends its requests one after another, each when the last was answered
(as MCP clients do), lost the guard between two of them on a busy machine (its third request met
"connection closed" in ``tests/e2e/test_upstream_faults.py``). A window that starts again with each answer
cuts off no client that is still talking, and a client that stays silent with its side open still sees
the guard exit :data:`START_FAILURE_GRACE` seconds after its last answer.
"""

from __future__ import annotations

from typing import Final

import anyio

from ..wire.framing import LineTooLong
from ..wire.jsonrpc import INTERNAL_ERROR, dumps, error_response, loads_client, valid_id
from .framing import MessageStream

__all__ = ["START_FAILURE_BOUND", "START_FAILURE_GRACE", "answer_every_request"]

START_FAILURE_GRACE: Final = 2.0
"""Seconds of the client's silence (no line read) after which a guard that cannot start exits: counted
from the failure, and again from each line the client sends (its answers written)."""

START_FAILURE_BOUND: Final = 30.0
"""Seconds after the failure at which a guard that cannot start exits however much the client still sends
(or when it stopped reading its answers)."""


async def answer_every_request(
    client: MessageStream,
    text: str,
    grace: float = START_FAILURE_GRACE,
    bound: float = START_FAILURE_BOUND,
) -> None:
    """Answer every request read from ``client`` with -32603 ``text`` (see the module docstring).

    Args:
        client: the client's messages (``receive()`` one line without framing; ``send(line)``).
        text: the error message, the cause included (no argument values: it is sent as it is).
        grace: seconds of silence (no line read, or an answer that could not be written) that end it,
            counted from the call and again from each line read.
        bound: seconds from the call that end it in any case.

    Returns when the client closes its side (``anyio.EndOfStream``), stops taking answers
    (``BrokenResourceError``/``ClosedResourceError`` on send), is silent for ``grace`` seconds, or
    ``bound`` seconds have passed. Raises nothing of the client's doing.
    """
    with anyio.move_on_after(bound):
        while True:
            with anyio.move_on_after(grace) as silent:
                if not await _answer_next(client, text):
                    return
            if silent.cancelled_caught:
                return


async def _answer_next(client: MessageStream, text: str) -> bool:
    """Read one line from ``client`` and answer each request in it; False when the client is gone."""
    try:
        line = await client.receive()
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        return False
    except LineTooLong:
        return True
    try:
        message = loads_client(line)
    except (ValueError, RecursionError):
        return True
    for m in message if type(message) is list else [message]:
        if type(m) is dict and "id" in m and "method" in m:
            answer = error_response(m["id"] if valid_id(m["id"]) else None, INTERNAL_ERROR, text)
            try:
                await client.send(dumps(answer))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return False
    return True
