"""The rules-per-caller example of docs/gateway.md loads and does what the page says (issue 27 item 2)."""

from __future__ import annotations

import re
from pathlib import Path

from mcp_guard.auth.principal import Principal
from mcp_guard.calls.principals import PrincipalPolicy
from mcp_guard.config import parse_config

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "gateway.md").read_text(encoding="utf-8")


def example() -> PrincipalPolicy:
    section = PAGE.split("## Rules per caller", 1)[1]
    block = re.findall(r"```json\n(.*?)```", section, flags=re.S)[0]
    return PrincipalPolicy(parse_config(block, environ={}).guard.principals)


def test_the_pages_example_gives_the_verdicts_the_page_describes() -> None:
    policy = example()
    agent = Principal("a", "https://id", groups=frozenset({"support"}))
    bot = Principal("b", "https://id", client_id="ci-runner")
    someone = Principal("c", "https://id")
    refund = policy.verdict(agent, "billing", "refund")
    assert (refund.access, refund.rule) == ("deny", "support-agents")
    assert policy.verdict(agent, "tickets", "create").access == "allow"
    assert policy.verdict(agent, "tickets", "create").calls_per_minute == 30
    assert policy.verdict(bot, "tickets", "read").calls_per_minute == 5  # the smaller of its rules'
    assert policy.verdict(bot, "tickets", "create").access == "deny"  # outside its allow list
    hidden = policy.verdict(someone, "billing", "invoice")
    assert (hidden.access, hidden.rule) == ("hide", "everyone-else")
    assert policy.verdict(None, "billing", "refund").access == "allow"  # no principal: no rule matches
