"""The handshake the guard makes with an upstream on the client's behalf, for ``wrap`` and ``serve``.

In the handshake era (MCP 2025-11-25 and before) a connection is set up by ``initialize``, then
``notifications/initialized`` ("Lifecycle": the client "MUST send an initialized notification" before
anything but pings). An upstream the guard starts again after it went away (``wrap``), or one ``serve``
starts for a client that initialized, gets the client's own ``initialize`` params, then what the client
had set up since: its last ``logging/setLevel`` (only where the upstream offers ``logging``: a server
without the capability need not know the method) and its resource subscriptions. Nothing the client
asked of the gone connection is re-sent (a ``tools/call`` may have had effects).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from .requests import RequestFailed

__all__ = ["handshake"]

log = logging.getLogger("mcp_guard")


async def handshake(
    request: Callable[[str, Any], Awaitable[dict[str, Any]]],
    send: Callable[[dict[str, Any]], Awaitable[None]],
    init_params: Any,
    *,
    log_level: Any = None,
    subscriptions: Iterable[Any] = (),
    label: str = "upstream",
) -> dict[str, Any]:
    """Initialize one upstream connection as the client did, and tell it what the client set up since.

    Args:
        request: sends a request of the guard's own and returns its ``result`` (raises ``RequestFailed``).
        send: sends a message of the guard's own (raises ``RequestFailed``).
        init_params: the client's ``initialize`` params.
        log_level: the params of the client's last ``logging/setLevel``, or None.
        subscriptions: the params of each ``resources/subscribe`` the client holds.
        label: how log lines name the upstream (``upstream`` or ``upstream NAME``, escaped by the caller).

    Returns:
        The upstream's ``initialize`` result.

    Raises:
        RequestFailed: the upstream did not accept ``initialize`` (or could not be sent
            ``notifications/initialized``). A refused log level or subscription is logged, not raised.
    """
    result = await request("initialize", init_params)
    await send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    capabilities = result.get("capabilities")
    if log_level is not None and type(capabilities) is dict and "logging" in capabilities:
        try:
            await request("logging/setLevel", log_level)
        except RequestFailed as exc:
            log.warning("%s: could not set the log level: %s", label, exc)
    for params in subscriptions:
        try:
            await request("resources/subscribe", params)
        except RequestFailed as exc:
            log.warning("%s: could not restore a resource subscription: %s", label, exc)
    return result
