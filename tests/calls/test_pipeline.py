"""The call pipeline over a merged catalog: order of steps, answers, journal records, fail closed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_guard.calls.call import Call, Rejection
from mcp_guard.calls.jcs import canonical_sha256
from mcp_guard.calls.journal import Journal, read_records
from mcp_guard.calls.journal_key import argument_digest, key_path
from mcp_guard.calls.pinning import LockFile
from mcp_guard.calls.pipeline import STEP_NAMES, WRAP_STEPS, Pipeline
from mcp_guard.calls.policy import Budget
from mcp_guard.calls.recording import outcome_of
from mcp_guard.config import GatewayConfig, parse_config
from mcp_guard.sessions.catalog import ORIGIN_KEY, Catalog
from mcp_guard.sessions.merged_lists import MergedLists, expose_prompts
from mcp_guard.sessions.naming import CursorCodec, InvalidCursor, Origin

pytestmark = pytest.mark.anyio

READ = {
    "name": "read",
    "description": "Read a file",
    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}
WRITE = {"name": "write", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
PATTERN = {"name": "grep", "inputSchema": {"type": "object", "properties": {"re": {"type": "string", "pattern": "x"}}}}
GET = {"name": "get", "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}}}
LISTINGS = {"fs": [READ, WRITE, PATTERN], "web": [GET]}


def config(guard: dict[str, Any] | None = None) -> GatewayConfig:
    data = {
        "mcpServers": {"fs": {"command": "x"}, "web": {"url": "http://127.0.0.1:1/mcp"}},
        "guard": {"profile": "standard", **(guard or {})},
    }
    return parse_config(json.dumps(data), environ={})


def catalog(
    guard: dict[str, Any] | None = None, lock: LockFile | None = None, listings: dict[str, Any] | None = None
) -> Catalog:
    cat = Catalog(config(guard), lock, CursorCodec(b"k" * 32))
    for server, tools in (listings or LISTINGS).items():
        cat.update(server, tools)
    return cat


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


async def admit(
    cat: Catalog, exposed: str, arguments: Any, *, journal: Journal | None = None, pipeline: Pipeline | None = None
) -> Rejection | None:
    route = cat.route(exposed)
    assert route is not None
    pipe = pipeline or Pipeline(journal=journal, new_tools=cat.config.guard.new_tools)
    return await pipe.admit(Call(route, arguments))


# --- the merged list ----------------------------------------------------------------------------


def test_merged_list_is_namespaced_and_annotated() -> None:
    cat = catalog()
    assert [t["name"] for t in cat.tools] == ["fs__read", "fs__write", "fs__grep", "web__get"]
    read = cat.tools[0]
    assert read["description"] == "Read a file" and read["inputSchema"] == READ["inputSchema"]
    assert read["_meta"][ORIGIN_KEY] == {"server": "fs", "tool": "read"}
    assert read["_meta"]["mcp-guard/schema"] == {"supported": True, "issues": []}
    assert cat.tools[2]["_meta"]["mcp-guard/schema"]["supported"] is False
    assert READ.get("_meta") is None  # the upstream's objects are not modified


def test_forged_guard_meta_from_an_upstream_is_replaced() -> None:
    forged = {
        **GET,
        "_meta": {"mcp-guard/origin": {"server": "fs", "tool": "rm"}, "mcp-guard/schema": {"supported": True}, "ok": 1},
    }
    cat = catalog(listings={"web": [forged]})
    meta = cat.tools[0]["_meta"]
    assert meta[ORIGIN_KEY] == {"server": "web", "tool": "get"} and meta["ok"] == 1


def test_hidden_denied_and_collided_tools_are_not_listed() -> None:
    cat = catalog(
        {"nameFormat": "{tool}", "unsupported": "hide", "servers": {"fs": {"deny": ["write"]}}},
        listings={"fs": [READ, WRITE, PATTERN], "web": [GET, {**READ, "description": "other"}]},
    )
    assert [t["name"] for t in cat.tools] == ["get"]
    assert cat.route("read") is None  # withheld by the collision: unknown
    assert [c.exposed for c in cat.report.collisions] == ["read"]
    assert cat.report.denied == ["write"] and cat.report.hidden == ["grep"] and cat.report.unsupported == ["grep"]
    assert cat.route("write") is not None  # known to the guard, answered as unknown


def test_upstream_gone_and_back() -> None:
    cat = catalog()
    generation = cat.generation
    cat.update("web", None)
    assert [t["name"] for t in cat.tools] == ["fs__read", "fs__write", "fs__grep"]
    assert cat.route("web__get") is None and cat.generation == generation + 1
    cat.update("web", [GET])
    assert [t["name"] for t in cat.tools][-1] == "web__get"


def test_paging_the_merged_list() -> None:
    cat = catalog({"pageSize": 3})
    first = cat.page()
    assert [t["name"] for t in first["tools"]] == ["fs__read", "fs__write", "fs__grep"]
    second = cat.page(first["nextCursor"])
    assert [t["name"] for t in second["tools"]] == ["web__get"] and "nextCursor" not in second
    assert cat.update("web", [GET]) is False  # listed again, unchanged: the cursors stay good
    assert cat.page(first["nextCursor"]) == second
    assert cat.update("web", [{**GET, "description": "new"}]) is True  # changed: old cursors are refused (-32602)
    with pytest.raises(InvalidCursor, match="changed"):
        cat.page(first["nextCursor"])
    other = catalog({"pageSize": 3})  # another list's cursor is refused too (generations are never reused)
    with pytest.raises(InvalidCursor, match="changed"):
        other.page(first["nextCursor"])


# --- the steps ---------------------------------------------------------------------------------------


def test_the_steps_are_in_the_issue_order() -> None:
    assert STEP_NAMES == ("visibility", "size", "schema", "pinning", "policy", "budget", "journal")
    assert list(Pipeline().steps) == list(STEP_NAMES)
    assert Pipeline(enabled=WRAP_STEPS).steps == ("visibility", "schema")
    with pytest.raises(ValueError, match="unknown pipeline steps"):
        Pipeline(enabled={"visibility", "vibes"})


def _lock(changed: bool = False, drop: str | None = None) -> LockFile:
    listings = {k: [dict(t) for t in v] for k, v in LISTINGS.items()}
    if changed:
        listings["fs"][0]["description"] = "the pinned, older description"
    lock, _ = LockFile.from_listings((k, [t for t in v if t["name"] != drop]) for k, v in listings.items())
    return lock


CASES: list[tuple[str, dict[str, Any], LockFile | None, str, Any, str | None, str]] = [
    # id, guard settings, lock, exposed tool, arguments, expected kind (None: forwarded), answer
    ("valid call", {}, None, "fs__read", {"path": "/a"}, None, "forward"),
    (
        "denied tool is unknown",
        {"servers": {"fs": {"deny": ["read"]}}},
        None,
        "fs__read",
        {"path": "/a"},
        "policy_denied",
        "-32602",
    ),
    ("hidden tool is unknown", {"hide": ["fs/read"]}, None, "fs__read", {"path": "/a"}, "policy_denied", "-32602"),
    (
        "hidden tool with bad args is still unknown",
        {"hide": ["fs/read"]},
        None,
        "fs__read",
        {},
        "policy_denied",
        "-32602",
    ),
    (
        "unsupported hidden is unknown",
        {"unsupported": "hide"},
        None,
        "fs__grep",
        {"re": "x"},
        "unsupported_capability",
        "-32602",
    ),
    ("unsupported rejected", {}, None, "fs__grep", {"re": "x"}, "unsupported_capability", "isError"),
    ("bad arguments", {}, None, "fs__read", {"path": 1}, "validation", "isError"),
    ("absent arguments checked as {}", {}, None, "fs__read", {}, "validation", "isError"),
    (
        "too large before validation",
        {"maxArgumentBytes": 10},
        None,
        "fs__read",
        {"path": 12345678},
        "too_large",
        "isError",
    ),
    ("at the size limit", {"maxArgumentBytes": 15}, None, "fs__read", {"path": "/abc"}, None, "forward"),
    ("one byte over", {"maxArgumentBytes": 14}, None, "fs__read", {"path": "/abc"}, "too_large", "isError"),
    ("schema before pinning", {}, _lock(changed=True), "fs__read", {"path": 1}, "validation", "isError"),
    ("changed since pinned", {}, _lock(changed=True), "fs__read", {"path": "/a"}, "pinned_schema_changed", "isError"),
    ("pinned and unchanged", {}, _lock(), "fs__read", {"path": "/a"}, None, "forward"),
    ("new tool allowed by default", {}, _lock(drop="get"), "web__get", {}, None, "forward"),
    (
        "new tool rejected by setting",
        {"newTools": "reject"},
        _lock(drop="get"),
        "web__get",
        {},
        "policy_denied",
        "isError",
    ),
    ("no lock: every tool is new", {"newTools": "reject"}, None, "web__get", {}, "policy_denied", "isError"),
    ("no lock file, newTools allow", {}, None, "web__get", {}, None, "forward"),
    ("no canonical form", {}, None, "fs__read", {"path": "/a", "n": 10**400}, "no_canonical_form", "isError"),
    (
        "pinning before policy",
        {"newTools": "reject"},
        _lock(changed=True),
        "fs__read",
        {"path": "/a"},
        "pinned_schema_changed",
        "isError",
    ),
]


def test_patterns_matching_nothing_are_findings_once_every_server_listed() -> None:
    line = (
        'policy pattern that matches nothing: guard.deny "fs__read" matches no listed tool (`fs__read` is an '
        "exposed name; patterns match server/tool: fs/read)"
    )
    assert line in catalog({"deny": ["fs__read"]}).report.lines()
    partial = catalog({"deny": ["fs__read"]}, listings={"fs": LISTINGS["fs"]})  # web is not listed yet
    assert not any("matches nothing" in x for x in partial.report.lines())
    route = catalog({"deny": ["fs/[x]"]}, listings={"fs": [{**READ, "name": "[x]"}], "web": []}).route("fs___x_")
    assert route is not None and route.policy.access == "deny"  # the literal name, though a glob reads it as x


def test_new_tools_reject_without_a_lock_is_reported() -> None:
    assert any("there is no lock file" in line for line in catalog({"newTools": "reject"}).report.lines())
    assert not any("no lock file" in line for line in catalog({"newTools": "reject"}, _lock()).report.lines())
    assert not any("no lock file" in line for line in catalog().report.lines())


@pytest.mark.parametrize(
    ("guard", "lock", "exposed", "arguments", "kind", "answer"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
async def test_pipeline_decisions(
    tmp_path: Path,
    guard: dict[str, Any],
    lock: LockFile | None,
    exposed: str,
    arguments: Any,
    kind: str | None,
    answer: str,
) -> None:
    cat = catalog(guard, lock)
    path = tmp_path / "j.jsonl"
    with Journal(path) as journal:
        rejection = await admit(cat, exposed, arguments, journal=journal)
    records, _ = read_records(path)
    route = cat.route(exposed)
    assert route is not None
    if kind is None:
        assert rejection is None
        assert [r["event"] for r in records] == ["intent"]
        key = bytes.fromhex(key_path(path).read_text())
        assert records[0]["arguments_sha256"] == argument_digest(key, arguments) != canonical_sha256(arguments)
        assert (records[0]["server"], records[0]["tool"]) == (route.server, route.tool)
        return
    assert rejection is not None and rejection.kind == kind
    response = rejection.response(7)
    assert response["id"] == 7
    if answer == "-32602":
        assert response["error"] == {"code": -32602, "message": f"Unknown tool: {exposed}"}
    else:
        result = response["result"]
        assert result["isError"] is True
        assert result["_meta"]["mcp-guard/rejection"]["kind"] == kind
        assert result["_meta"]["mcp-guard/rejection"]["tool"] == exposed
        assert "resultType" not in result
    assert [(r["event"], r["result"], r["kind"]) for r in records] == [("outcome", "rejected", kind)]
    assert "arguments_sha256" not in records[0]


async def test_wording_of_allow_list_denials_and_small_budgets(caplog: pytest.LogCaptureFixture) -> None:
    cat = catalog({"callsPerMinute": 1, "servers": {"web": {"allow": ["nothing"]}}})
    denied = await admit(cat, "web__get", {})
    assert denied is not None and denied.reason == "denied: not matched by guard.servers.web.allow"
    clock = Clock()
    pipe = Pipeline(budget=Budget(clock))
    assert await admit(cat, "fs__read", {"path": "a"}, pipeline=pipe) is None
    clock.now = 59.5
    spent = await admit(cat, "fs__read", {"path": "b"}, pipeline=pipe)
    assert spent is not None and spent.reason == "1 call per minute" and spent.result is not None
    text = spent.result["content"][0]["text"]
    assert "may be called once per minute" in text and "Try again in 1 second." in text


async def test_rejection_texts_never_hold_argument_values() -> None:
    secret = "hunter2-secret"
    cat = catalog({"maxArgumentBytes": 20})
    for exposed, arguments in [
        ("fs__read", {"path": secret * 3}),
        ("fs__read", {"path": 5, "x": secret}),
        ("fs__write", {"text": 1}),
    ]:
        rejection = await admit(cat, exposed, arguments)
        assert rejection is not None
        assert secret not in json.dumps(rejection.response(1)) and secret not in rejection.reason


async def test_modern_era_results_carry_result_type() -> None:
    cat = catalog({"maxArgumentBytes": 1})
    route = cat.route("fs__read")
    assert route is not None
    rejection = await Pipeline().admit(Call(route, {"path": "/a"}, modern=True))
    assert rejection is not None and rejection.result is not None and rejection.result["resultType"] == "complete"


async def test_budget_counts_only_calls_that_pass_the_earlier_steps() -> None:
    clock = Clock()
    cat = catalog({"callsPerMinute": 2})
    pipe = Pipeline(budget=Budget(clock))
    assert await admit(cat, "fs__read", {}, pipeline=pipe) is not None  # invalid: takes no slot
    assert await admit(cat, "fs__read", {"path": "a"}, pipeline=pipe) is None
    assert await admit(cat, "fs__read", {"path": "b"}, pipeline=pipe) is None
    assert await admit(cat, "web__get", {}, pipeline=pipe) is None  # per exposed tool
    clock.now = 15.2
    third = await admit(cat, "fs__read", {"path": "c"}, pipeline=pipe)
    assert third is not None and third.kind == "budget_exceeded" and third.result is not None
    meta = third.result["_meta"]["mcp-guard/rejection"]
    assert (meta["limit_per_minute"], meta["retry_after_seconds"]) == (2, 45)
    assert "Try again in 45 seconds" in third.result["content"][0]["text"]
    clock.now = 60.0
    assert await admit(cat, "fs__read", {"path": "d"}, pipeline=pipe) is None


async def test_a_step_that_raises_refuses_the_call(tmp_path: Path) -> None:
    cat = catalog()
    route = cat.route("fs__read")
    assert route is not None
    path = tmp_path / "j.jsonl"
    with Journal(path) as journal:
        pipe = Pipeline(journal=journal)

        def broken(call: Call) -> Rejection | None:
            raise RuntimeError("boom")

        pipe.checks = tuple((name, broken if name == "pinning" else check) for name, check in pipe.checks)
        rejection = await pipe.admit(Call(route, {"path": "/a"}))
    assert rejection is not None and rejection.kind == "internal_error"
    assert rejection.response(1)["error"]["code"] == -32603
    assert [(r["result"], r["kind"]) for r in read_records(path)[0]] == [("rejected", "internal_error")]


async def test_no_intent_no_forward(tmp_path: Path) -> None:
    """An intent that cannot be written (the journal is closed, the disk full) refuses the call."""
    cat = catalog()
    journal = Journal(tmp_path / "j.jsonl")
    journal.close()
    rejection = await admit(cat, "fs__read", {"path": "/a"}, journal=journal)
    assert rejection is not None and rejection.kind == "internal_error"


async def test_arguments_without_canonical_form_refuse_the_call_when_journaling(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An integer beyond the double range passes the schema but has no RFC 8785 form: refused, no traceback."""
    cat = catalog(
        listings={"fs": [{"name": "n", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}]}
    )
    with Journal(tmp_path / "j.jsonl") as journal:
        rejection = await admit(cat, "fs__n", {"n": -(10**400)}, journal=journal)
    assert rejection is not None and rejection.kind == "no_canonical_form" and rejection.result is not None
    assert rejection.result["isError"] is True and "RFC 8785" in rejection.result["content"][0]["text"]
    assert not [r for r in caplog.records if r.exc_info]  # a decision, not an internal error
    assert await admit(cat, "fs__n", {"n": 10**400}) is None  # without a journal there is nothing to record


@pytest.mark.parametrize(
    ("response", "result"),
    [
        ({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}, "ok"),
        ({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": True}}, "is_error"),
        ({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": "yes"}}, "ok"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "x"}}, "protocol_error"),
        (None, "upstream_died"),
    ],
    ids=["ok", "is_error", "isError not true", "protocol error", "no answer"],
)
async def test_outcomes(tmp_path: Path, response: Any, result: str) -> None:
    assert outcome_of(response) == result
    cat = catalog()
    route = cat.route("fs__read")
    assert route is not None
    path = tmp_path / "j.jsonl"
    with Journal(path) as journal:
        pipe = Pipeline(journal=journal)
        call = Call(route, {"path": "/a"})
        assert await pipe.admit(call) is None
        assert await pipe.finish(call, response) == result
    intent, outcome = read_records(path)[0]
    assert intent["call_id"] == outcome["call_id"] == call.call_id
    assert (outcome["event"], outcome["result"], "kind" in outcome) == ("outcome", result, False)


def test_prompts_are_namespaced_like_tools() -> None:
    names, listed = expose_prompts(
        {
            "web": [{"name": "summarize", "_meta": {"mcp-guard/origin": "forged", "k": 1}}],
            "fs": [
                {"name": "summarize", "arguments": [{"name": "path"}]},
                {"name": "summarize"},
                {"title": "nameless"},
            ],
        },
        "{server}__{tool}",
        order=["fs", "web"],
    )
    assert [p["name"] for p in listed] == ["web__summarize"]  # fs lists its name twice: withheld
    assert listed[0]["_meta"] == {"k": 1, ORIGIN_KEY: {"server": "web", "prompt": "summarize"}}
    assert names.origin("web__summarize") == Origin("web", "summarize")
    assert [c.exposed for c in names.collisions] == ["fs__summarize"] and len(names.nameless) == 1


def test_merged_lists_say_which_lists_changed_and_page_each() -> None:
    """One view's lists: a listing that repeats the last changes nothing (cursors stay good); a URI that
    two servers list is withheld; a server that goes away leaves every list."""
    view = MergedLists(config({"pageSize": 1}), None, CursorCodec(b"k" * 32))
    assert view.set_tools("fs", [READ]) == {"tools"}
    assert view.set_tools("fs", [READ]) == set()
    assert view.set_prompts("fs", [{"name": "summarize"}]) == {"prompts"}
    assert view.set_prompts("web", [{"name": "fetch"}]) == {"prompts"}
    first = view.page("prompts", None)
    assert [p["name"] for p in first["prompts"]] == ["fs__summarize"]
    assert view.set_prompts("web", [{"name": "fetch"}]) == set()  # listed again, unchanged
    assert [p["name"] for p in view.page("prompts", first["nextCursor"])["prompts"]] == ["web__fetch"]

    shared = {"uri": "file:///shared", "name": "shared"}
    assert view.set_resources(
        "fs", [{"uri": "file:///a", "name": "a"}, shared], [{"uriTemplate": "file:///t/{x}"}]
    ) == {"resources"}
    assert view.set_resources("web", [shared], None) == {"resources"}
    assert [r["uri"] for _, r in view.resources.resources] == ["file:///a"]
    assert view.resources.route("file:///shared").server is None
    assert view.resources.route("file:///t/1").server == "fs"
    templates = view.page("resourceTemplates", None)
    assert templates == {"resourceTemplates": [{"uriTemplate": "file:///t/{x}"}]}
    resources_cursor = view.page("resources", None).get("nextCursor")
    assert resources_cursor is None  # one resource left to list

    assert view.remove("fs") == {"tools", "prompts", "resources"}
    assert view.catalog.tools == [] and [p["name"] for p in view.prompts] == ["web__fetch"]
    assert view.resources.route("file:///shared").server == "web"  # no longer listed twice
    with pytest.raises(InvalidCursor):
        view.page("prompts", first["nextCursor"])  # the prompts changed since
    assert view.remove("fs") == set()
