"""Rules per caller (issue 27 item 2): ``guard.principals`` through the pipeline, the listing and the budgets.

Unit level: a :class:`Principal` is set on the :class:`Call` (the HTTP front's token verification, which
sets it in use, has tests of its own).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_guard.auth.principal import Principal
from mcp_guard.calls.call import Call, Rejection
from mcp_guard.calls.journal import Journal, format_summary, read_records, summarize
from mcp_guard.calls.pipeline import Pipeline
from mcp_guard.calls.policy import Budget
from mcp_guard.calls.principals import PrincipalPolicy, principal_key
from mcp_guard.config import ConfigError, GatewayConfig, parse_config
from mcp_guard.sessions.catalog import Catalog
from mcp_guard.sessions.naming import CursorCodec, InvalidCursor
from tests.calls.test_pipeline import Clock

pytestmark = pytest.mark.anyio

OBJECT = {"type": "object", "properties": {"id": {"type": "string"}}}
LISTINGS = {
    "tickets": [{"name": n, "inputSchema": OBJECT} for n in ("create", "close", "read")],
    "billing": [{"name": n, "inputSchema": OBJECT} for n in ("refund", "invoice")],
}
SUPPORT = {"match": {"groups": ["support"]}, "allow": ["tickets/*"], "deny": ["billing/refund"]}

ANN = Principal(
    "auth0|ann", "https://id.example", client_id="desk", scopes=frozenset({"mcp"}), groups=frozenset({"support"})
)
BOB = Principal("auth0|bob", "https://id.example", client_id="cli", scopes=frozenset({"mcp", "billing"}))
EVE = Principal("auth0|ann", "https://other.example", groups=frozenset({"support"}))  # Ann's sub, another issuer


def config(principals: dict[str, Any], **guard: Any) -> GatewayConfig:
    data = {
        "mcpServers": {"tickets": {"command": "x"}, "billing": {"command": "y"}},
        "guard": {"profile": "standard", "principals": principals, **guard},
    }
    return parse_config(json.dumps(data), environ={})


def catalog(principals: dict[str, Any], **guard: Any) -> Catalog:
    cat = Catalog(config(principals, **guard), None, CursorCodec(b"k" * 32), quiet=True)
    for server, tools in LISTINGS.items():
        cat.update(server, tools)
    return cat


def pipeline(cat: Catalog, **options: Any) -> Pipeline:
    return Pipeline(principals=cat.principals or None, **options)


async def admit(pipe: Pipeline, cat: Catalog, exposed: str, who: Principal | None) -> Rejection | None:
    route = cat.route(exposed)
    assert route is not None
    return await pipe.admit(Call(route, {"id": "1"}, principal=who))


def names(cat: Catalog, who: Principal | None) -> list[str]:
    return [t["name"] for t in cat.page(None, who)["tools"]]


# --- the config ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        (
            {"r": {"allow": ["*"]}},
            "guard.principals.r.match: missing (required): expected an object (its keys: authenticated",
        ),
        ({"r": {"match": {}}}, "a rule must say whom it matches"),
        ({"r": {"match": {"authenticated": False, "groups": ["a"]}}}, "takes no other key"),
        ({"r": {"match": {"groups": []}}}, "an empty list matches nobody"),
        ({"no spaces": {"match": {"authenticated": True}}}, 'guard.principals["no spaces"]'),
        (
            {"r": {"match": {"group": ["a"]}}},
            "unknown key (the guard section accepts only its own settings) (did you mean `groups`?)",
        ),
        ({"r": {"match": {"subjects": "ann"}}}, "expected a list of non-empty strings, found a string"),
        ({"r": {"match": {"authenticated": True}, "callsPerMinute": 0}}, "greater than 0"),
    ],
)
def test_bad_rules_are_refused_with_their_path(rules: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        config(rules)
    assert message in str(info.value)


def test_rules_are_read_with_camel_case_keys() -> None:
    rule = config({"ci": {"match": {"clientIds": ["ci"], "issuers": ["https://id.example"]}, "callsPerMinute": 5}})
    parsed = rule.guard.principals["ci"]
    assert parsed.match.client_ids == ["ci"] and parsed.calls_per_minute == 5 and parsed.allow is None


# --- who matches ----------------------------------------------------------------------------------


def test_each_key_of_a_match_must_hold_and_a_list_needs_one_of_its_values() -> None:
    policy = PrincipalPolicy(
        config(
            {
                "support": {"match": {"groups": ["support", "sales"]}},
                "support-desk": {"match": {"groups": ["support"], "clientIds": ["desk"]}},
                "ann-here": {"match": {"subjects": ["auth0|ann"], "issuers": ["https://id.example"]}},
                "billing-scope": {"match": {"scopes": ["billing"]}},
                "anyone": {"match": {"authenticated": True}},
                "nobody-known": {"match": {"authenticated": False}},
            }
        ).guard.principals
    )
    assert policy.matching(ANN) == ("support", "support-desk", "ann-here", "anyone")
    assert policy.matching(BOB) == ("billing-scope", "anyone")
    assert policy.matching(EVE) == ("support", "anyone")  # the same subject at another issuer is someone else
    assert policy.matching(None) == ("nobody-known",)  # stdio, a shared token: no rule naming principals


# --- the example --------------------------------------------------------------------------


async def test_support_agents_may_call_tickets_but_not_refunds_and_the_refusal_names_the_rule(tmp_path: Path) -> None:
    cat = catalog({"support-agents": SUPPORT})
    journal = Journal(tmp_path / "j.jsonl", fsync=False)
    pipe = pipeline(cat, journal=journal)
    assert await admit(pipe, cat, "tickets__create", ANN) is None
    refused = await admit(pipe, cat, "billing__refund", ANN)
    assert refused is not None and refused.kind == "policy_denied" and refused.result is not None
    rejection = refused.result["_meta"]["mcp-guard/rejection"]
    assert rejection == {
        "kind": "policy_denied",
        "tool": "billing__refund",
        "issues": [],
        "reason": "principal_rule",
        "rule": "support-agents",
    }
    text = json.dumps(refused.result) + refused.reason
    for claim in ("auth0|ann", "id.example", "desk", 'support"', 'mcp"'):
        assert claim not in text  # the rule's name, never the caller's claims
    # Not in the allow list either: denied, by the rule whose allow list missed.
    invoice = await admit(pipe, cat, "billing__invoice", ANN)
    assert invoice is not None and invoice.result is not None
    assert invoice.result["_meta"]["mcp-guard/rejection"]["rule"] == "support-agents"
    # Bob is no support agent: the rule does not apply to him.
    assert await admit(pipe, cat, "billing__refund", BOB) is None
    # Nor to a call without a principal (stdio, a shared bearer token): no default deny.
    assert await admit(pipe, cat, "billing__refund", None) is None
    journal.close()
    records, _ = read_records(tmp_path / "j.jsonl")
    refusal = next(r for r in records if r.get("kind") == "policy_denied")
    assert refusal["principal"] == {"subject": "auth0|ann", "issuer": "https://id.example", "client_id": "desk"}


def test_a_caller_is_not_shown_what_its_rules_deny_or_hide_and_others_see_the_whole_list() -> None:
    cat = catalog({"support-agents": {**SUPPORT, "hide": ["tickets/close"]}})
    assert names(cat, ANN) == ["tickets__create", "tickets__read"]
    everything = ["tickets__create", "tickets__close", "tickets__read", "billing__refund", "billing__invoice"]
    assert names(cat, BOB) == everything
    assert names(cat, None) == everything


async def test_a_hidden_tool_is_answered_as_unknown_and_journaled_as_denied() -> None:
    cat = catalog({"support-agents": {**SUPPORT, "hide": ["tickets/close"]}})
    refused = await admit(pipeline(cat), cat, "tickets__close", ANN)
    assert refused is not None and refused.kind == "policy_denied"
    assert refused.error == (-32602, "Unknown tool: tickets__close")  # as a tool it was never shown
    assert "support-agents" in refused.reason  # (the log line says which rule)


async def test_a_rule_never_widens_the_tools_own_rules() -> None:
    cat = catalog({"refunders": {"match": {"scopes": ["billing"]}, "allow": ["billing/*"]}}, deny=["billing/refund"])
    refused = await admit(pipeline(cat), cat, "billing__refund", BOB)
    assert refused is not None and refused.error is not None and refused.error[0] == -32602  # guard.deny, as ever


async def test_allow_lists_of_the_matching_rules_add_up_and_a_deny_of_any_wins() -> None:
    rules = {
        "support-agents": SUPPORT,
        "billing-team": {"match": {"clientIds": ["desk"]}, "allow": ["billing/*"]},
    }
    cat = catalog(rules)
    pipe = pipeline(cat)
    assert await admit(pipe, cat, "billing__invoice", ANN) is None  # allowed by billing-team
    refused = await admit(pipe, cat, "billing__refund", ANN)  # allowed by billing-team, denied by support-agents
    assert refused is not None and refused.result is not None
    assert refused.result["_meta"]["mcp-guard/rejection"]["rule"] == "support-agents"


async def test_a_rule_for_everyone_with_an_empty_allow_list_is_a_default_deny() -> None:
    cat = catalog({"support-agents": SUPPORT, "default": {"match": {"authenticated": True}, "allow": []}})
    pipe = pipeline(cat)
    assert await admit(pipe, cat, "tickets__read", ANN) is None
    refused = await admit(pipe, cat, "tickets__read", BOB)
    assert refused is not None and refused.result is not None
    assert refused.result["_meta"]["mcp-guard/rejection"]["rule"] == "default"
    assert names(cat, BOB) == []
    assert await admit(pipe, cat, "tickets__read", None) is None  # a call without a principal is not "everyone"


async def test_calls_without_a_principal_have_rules_of_their_own() -> None:
    cat = catalog({"local": {"match": {"authenticated": False}, "deny": ["billing/*"]}})
    refused = await admit(pipeline(cat), cat, "billing__invoice", None)
    assert refused is not None and refused.result is not None
    assert refused.result["_meta"]["mcp-guard/rejection"]["rule"] == "local"
    assert await admit(pipeline(cat), cat, "billing__invoice", ANN) is None


rule_sets = st.dictionaries(
    st.sampled_from(["a", "b", "c", "d"]),
    st.fixed_dictionaries(
        {"match": st.sampled_from([{"authenticated": True}, {"groups": ["support"]}, {"scopes": ["billing"]}])},
        optional={
            "allow": st.lists(st.sampled_from(["tickets/*", "billing/*", "*/read", "billing/refund"]), max_size=2),
            "deny": st.lists(st.sampled_from(["billing/refund", "tickets/c*"]), max_size=2),
            "hide": st.lists(st.sampled_from(["tickets/read", "*"]), max_size=1),
            "callsPerMinute": st.integers(1, 9),
        },
    ),
    max_size=4,
)


@settings(max_examples=60, deadline=None)
@given(rules=rule_sets, seed=st.integers(0, 1000))
def test_verdicts_do_not_depend_on_the_order_rules_are_written_in(rules: dict[str, Any], seed: int) -> None:
    """The access and the limits for every caller and tool are those of the same rules in any order (the
    rule named in a refusal may differ only where several rules refuse alike)."""
    shuffled = list(rules.items())
    random.Random(seed).shuffle(shuffled)
    one = PrincipalPolicy(config(rules).guard.principals)
    other = PrincipalPolicy(config(dict(shuffled)).guard.principals)
    for who in (ANN, BOB, None):
        for server, tools in LISTINGS.items():
            for tool in tools:
                a, b = one.verdict(who, server, tool["name"]), other.verdict(who, server, tool["name"])
                assert (a.access, a.calls_per_minute, a.max_argument_bytes) == (
                    b.access,
                    b.calls_per_minute,
                    b.max_argument_bytes,
                )


# --- the listing per caller -----------------------------------------------------------------------


def test_a_cursor_of_one_callers_view_is_refused_by_another() -> None:
    cat = catalog({"support-agents": {**SUPPORT, "hide": ["tickets/close"]}}, pageSize=1)
    first = cat.page(None, ANN)
    assert first["tools"][0]["name"] == "tickets__create"
    assert cat.page(first["nextCursor"], ANN)["tools"][0]["name"] == "tickets__read"
    with pytest.raises(InvalidCursor):
        cat.page(first["nextCursor"], BOB)  # Bob's list is another list: its cursors are its own
    bobs = cat.page(None, BOB)
    with pytest.raises(InvalidCursor):
        cat.page(bobs["nextCursor"], ANN)


# --- limits and budgets per caller ------------------------------------------------------------------


async def test_each_caller_has_its_own_budget_per_tool_and_the_tools_budget_still_holds() -> None:
    rules = {"agents": {"match": {"authenticated": True}, "callsPerMinute": 2}}
    cat = catalog(rules, servers={"tickets": {"callsPerMinute": 3}})
    clock = Clock()
    pipe = pipeline(cat, budget=Budget(clock))
    assert [await admit(pipe, cat, "tickets__read", ANN) for _ in range(2)] == [None, None]
    refused = await admit(pipe, cat, "tickets__read", ANN)
    assert refused is not None and refused.kind == "budget_exceeded" and refused.result is not None
    rejection = refused.result["_meta"]["mcp-guard/rejection"]
    assert rejection["limit_per_minute"] == 2 and rejection["rule"] == "agents"
    assert "by each caller" in refused.result["content"][0]["text"]
    assert await admit(pipe, cat, "tickets__create", ANN) is None  # another tool: another budget
    assert await admit(pipe, cat, "tickets__read", BOB) is None  # another caller: another budget
    # The tool's own budget (3 for all callers together) is spent now: Bob's second call is refused...
    refused = await admit(pipe, cat, "tickets__read", BOB)
    assert refused is not None and refused.result is not None
    assert refused.result["_meta"]["mcp-guard/rejection"]["limit_per_minute"] == 3
    assert "rule" not in refused.result["_meta"]["mcp-guard/rejection"]
    # ...and took no slot of Bob's own budget: a minute later he has both of his calls again.
    clock.now = 60.0
    assert [await admit(pipe, cat, "tickets__read", BOB) for _ in range(2)] == [None, None]


async def test_a_call_refused_by_one_budget_takes_no_slot_of_the_other() -> None:
    budget = Budget(Clock())
    assert budget.take_all([("t", 1), ("t:principal:x", 5)]) is None
    assert budget.take_all([("t", 1), ("t:principal:x", 5)]) is not None
    assert budget.used("t:principal:x") == 1


async def test_a_rules_size_limit_applies_to_its_callers() -> None:
    cat = catalog({"small": {"match": {"groups": ["support"]}, "tools": {"tickets/*": {"maxArgumentBytes": 5}}}})
    refused = await admit(pipeline(cat), cat, "tickets__read", ANN)
    assert refused is not None and refused.kind == "too_large"
    assert await admit(pipeline(cat), cat, "tickets__read", BOB) is None


async def test_budget_keys_hold_a_pseudonym_of_issuer_and_subject_never_the_subject() -> None:
    assert principal_key(ANN) != principal_key(EVE)  # the same subject at two issuers: two callers
    assert principal_key(ANN) == principal_key(Principal("auth0|ann", "https://id.example"))  # groups play no part
    rules = {"agents": {"match": {"authenticated": True}, "callsPerMinute": 1}}
    cat = catalog(rules)
    budget = Budget(Clock())
    await admit(pipeline(cat, budget=budget), cat, "tickets__read", ANN)
    assert budget.used(f"tickets__read:principal:{principal_key(ANN)}") == 1
    assert not any("ann" in key for key in budget._calls)


# --- the journal per caller ------------------------------------------------------------------------


async def test_every_intent_and_outcome_names_its_principal_and_the_summary_is_per_principal(tmp_path: Path) -> None:
    cat = catalog({"support-agents": SUPPORT})
    journal = Journal(tmp_path / "j.jsonl", fsync=False)
    pipe = pipeline(cat, journal=journal)
    for who, exposed in [
        (ANN, "tickets__read"),
        (ANN, "billing__refund"),
        (BOB, "billing__refund"),
        (None, "tickets__read"),
    ]:
        route = cat.route(exposed)
        assert route is not None
        call = Call(route, {"id": "1"}, principal=who)
        if await pipe.admit(call) is None:
            await pipe.finish(call, {"jsonrpc": "2.0", "id": 1, "result": {"content": []}})
    journal.close()
    records, damaged = read_records(tmp_path / "j.jsonl")
    assert damaged == 0
    who = [(r["event"], r["tool"], (r.get("principal") or {}).get("subject")) for r in records]
    assert who == [
        ("intent", "read", "auth0|ann"),
        ("outcome", "read", "auth0|ann"),
        ("outcome", "refund", "auth0|ann"),
        ("intent", "refund", "auth0|bob"),
        ("outcome", "refund", "auth0|bob"),
        ("intent", "read", None),
        ("outcome", "read", None),
    ]
    summary = summarize(records)
    by_subject = {(p["subject"], p["issuer"]): p for p in summary.to_json()["principals"]}
    ann = by_subject[("auth0|ann", "https://id.example")]
    assert (ann["calls"], ann["ok"], ann["rejections"], ann["client_ids"]) == (2, 1, {"policy_denied": 1}, ["desk"])
    assert by_subject[(None, None)]["calls"] == 1
    table = format_summary(summary)
    assert "auth0|ann" in table and "(no principal)" in table and "policy_denied 1" in table


def test_a_journal_without_principals_is_summarized_as_before() -> None:
    records = [{"event": "outcome", "call_id": "c", "server": "s", "tool": "t", "result": "ok"}]
    summary = summarize(records)
    assert summary.principals == {} and summary.to_json()["principals"] == []
    assert "subject" not in format_summary(summary)


def test_a_subject_is_escaped_in_the_summary_table() -> None:
    records = [
        {
            "event": "outcome",
            "call_id": "c",
            "server": "s",
            "tool": "t",
            "result": "ok",
            "principal": {"subject": "evil\x1b[2J\n", "issuer": "i", "client_id": None},
        },
    ]
    table = format_summary(summarize(records))
    assert "\x1b" not in table and "evil\\x1b[2J\\x0a" in table


def test_a_rules_pattern_that_matches_nothing_is_reported() -> None:
    rules = {"r": {**SUPPORT, "deny": ["biling/refund", "billing/refnud"], "hide": ["refund"]}}
    cat = catalog(rules)
    assert [line for line in cat.report.patterns if "principals" in line] == [
        'guard.principals.r.deny "biling/refund" names no server of the config: biling',
        'guard.principals.r.deny "billing/refnud" matches no listed tool',
        'guard.principals.r.hide "refund" matches no listed tool (patterns of a rule match server/tool)',
    ]
    assert not [line for line in catalog({"support-agents": SUPPORT}).report.patterns if "principals" in line]


async def test_calls_without_a_principal_share_one_budget_of_their_rule() -> None:
    cat = catalog({"local": {"match": {"authenticated": False}, "callsPerMinute": 1}})
    pipe = pipeline(cat, budget=Budget(Clock()))
    assert await admit(pipe, cat, "tickets__read", None) is None
    refused = await admit(pipe, cat, "tickets__read", None)
    assert refused is not None and refused.kind == "budget_exceeded" and refused.result is not None
    assert refused.result["_meta"]["mcp-guard/rejection"]["rule"] == "local"
    assert await admit(pipe, cat, "tickets__read", ANN) is None  # the rule is not Ann's


def test_the_callers_matching_rules_are_remembered_within_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_guard.calls import principals

    monkeypatch.setattr(principals, "MATCHED_CACHE", 8)
    policy = PrincipalPolicy(config({"support-agents": SUPPORT}).guard.principals)
    for i in range(50):
        who = Principal(f"s{i}", "https://id.example", groups=frozenset({"support"} if i % 2 else set()))
        assert policy.matching(who) == (("support-agents",) if i % 2 else ())
        assert len(policy._matched) <= 8
    assert policy.matching(ANN) == ("support-agents",)
