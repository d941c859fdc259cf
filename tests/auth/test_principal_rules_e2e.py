"""guard.principals end to end: the loopback issuer's tokens, serve --http as a resource server (issue 27).

The support agent (group ``support``) is denied ``r/bash`` by the rule ``support-agents``: the tool is
absent from her listing and her call is refused naming the rule, in both eras; another caller sees
and calls it. (Built in principal27's trial merge with auth27; the helpers are tests/auth's.)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_guard.config import GatewayConfig, parse_config
from tests.auth.issuer import Issuer, running_issuer
from tests.auth.test_front import (
    ENVELOPE,
    MODERN,
    RECORDING,
    RESOURCE,
    bearer,
    body,
    call,
    front,
    modern_headers,
    oauth,
    open_session,
    post,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    """The loopback authorization server (tests/auth/issuer.py) for this module."""
    with running_issuer() as running:
        yield running


def support_config() -> GatewayConfig:
    """One recording server ``r``; the rule ``support-agents`` denies ``r/bash`` to group ``support``."""
    servers = {"r": {"command": sys.executable, "args": [str(RECORDING)]}}
    rules = {"support-agents": {"match": {"groups": ["support"]}, "deny": ["r/bash"]}}
    return parse_config(json.dumps({"mcpServers": servers, "guard": {"profile": "standard", "principals": rules}}))


async def test_a_rule_per_caller_hides_and_refuses_in_the_handshake_era(issuer: Issuer) -> None:
    ann = issuer.token(RESOURCE, sub="ann", groups=["support"])
    bob = issuer.token(RESOURCE, sub="bob")
    async with front(oauth(issuer), support_config()) as client:
        s_ann = await open_session(client, ann)
        s_bob = await open_session(client, bob)
        listing = {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}}
        names_ann = [t["name"] for t in body(await post(client, listing, s_ann))["result"]["tools"]]
        names_bob = [t["name"] for t in body(await post(client, listing, s_bob))["result"]["tools"]]
        assert "r__bash" not in names_ann and "r__bash" in names_bob
        refused = body(await post(client, call(2, "r__bash", {"command": "ls"}), s_ann))
        assert refused["result"]["isError"] is True
        assert refused["result"]["_meta"]["mcp-guard/rejection"]["rule"] == "support-agents"
        assert "ann" not in json.dumps(refused)  # the rule's name, never the caller's claims
        answered = body(await post(client, call(2, "r__bash", {"command": "ls"}), s_bob))
        assert answered["result"]["isError"] is False


async def test_a_rule_per_caller_hides_and_refuses_in_the_2026_07_28_era(issuer: Issuer) -> None:
    ann = issuer.token(RESOURCE, sub="ann", groups=["support"])
    bob = issuer.token(RESOURCE, sub="bob")
    async with front(oauth(issuer), support_config()) as client:
        names: list[list[str]] = []
        for token in (ann, bob):
            headers = {**bearer(token), "mcp-protocol-version": MODERN, "mcp-method": "tools/list"}
            listing: dict[str, Any] = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": ENVELOPE}}
            names.append([t["name"] for t in body(await post(client, listing, headers))["result"]["tools"]])
        assert "r__bash" not in names[0] and "r__bash" in names[1]
        refused = body(
            await post(client, call(9, "r__bash", {"command": "ls"}, ENVELOPE), modern_headers(ann, "r__bash"))
        )
        assert refused["result"]["_meta"]["mcp-guard/rejection"]["rule"] == "support-agents"
