"""The handshake the guard makes on the client's behalf (``peer.handshake``), one for ``wrap`` and ``serve``."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcp_guard.peer.handshake import handshake
from mcp_guard.peer.requests import RequestFailed

pytestmark = pytest.mark.anyio


class Upstream:
    def __init__(self, capabilities: dict[str, Any], refuse: frozenset[str] = frozenset()) -> None:
        self.capabilities = capabilities
        self.refuse = refuse
        self.seen: list[tuple[str, Any]] = []

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        self.seen.append((method, params))
        if method in self.refuse:
            raise RequestFailed(f"{method} refused")
        return {"protocolVersion": "2025-11-25", "capabilities": self.capabilities} if method == "initialize" else {}

    async def send(self, message: dict[str, Any]) -> None:
        self.seen.append((message["method"], None))


INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}


async def test_the_clients_initialize_then_initialized_level_and_subscriptions_in_order() -> None:
    upstream = Upstream({"logging": {}, "resources": {"subscribe": True}})
    subscriptions = [{"uri": "a://1"}, {"uri": "b://2"}]
    result = await handshake(
        upstream.request, upstream.send, INIT, log_level={"level": "debug"}, subscriptions=subscriptions
    )
    assert result["protocolVersion"] == "2025-11-25"
    assert upstream.seen == [
        ("initialize", INIT),
        ("notifications/initialized", None),
        ("logging/setLevel", {"level": "debug"}),
        ("resources/subscribe", {"uri": "a://1"}),
        ("resources/subscribe", {"uri": "b://2"}),
    ]


async def test_no_log_level_for_an_upstream_without_logging_and_refusals_are_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    upstream = Upstream({"resources": {}}, refuse=frozenset({"resources/subscribe"}))
    with caplog.at_level(logging.WARNING, logger="mcp_guard"):
        await handshake(
            upstream.request,
            upstream.send,
            INIT,
            log_level={"level": "info"},
            subscriptions=[{"uri": "x://"}],
            label="upstream s",
        )
    assert [m for m, _ in upstream.seen] == ["initialize", "notifications/initialized", "resources/subscribe"]
    assert "upstream s: could not restore a resource subscription: resources/subscribe refused" in caplog.text


async def test_a_refused_initialize_is_raised_and_nothing_follows() -> None:
    upstream = Upstream({}, refuse=frozenset({"initialize"}))
    with pytest.raises(RequestFailed):
        await handshake(upstream.request, upstream.send, INIT, log_level={"level": "info"})
    assert [m for m, _ in upstream.seen] == ["initialize"]
