"""End to end over real processes: ``python -m mcp_guard wrap`` in front of real MCP servers.

Every test drives the guard with the ``mcp`` SDK's own client (``mcp.Client`` over stdio),
in both protocol eras: ``mode="legacy"`` (the initialize handshake, 2025-11-25) and
``mode="auto"`` (which lands in 2026-07-28 against a 2.x server). Results are read raw
(``session.send_request`` with a ``TypeAdapter(dict[str, Any])``), so the guard's ``_meta``
keys and every other field are seen as they came over the wire, and ``mcp.Client.call_tool``
cannot list tools or validate output behind the test's back.

Upstreams:

- the Sigma fixture server (``fixtures/sigma/server.py``, an SDK low-level server that never
  validates arguments: a call that reaches it is echoed, so a guard rejection proves the
  guard stopped the call);
- ``mcp-server-time`` and ``mcp-server-fetch`` from PyPI (pinned in the ``test`` extras),
  skipped when not installed. The fetch server gets a proxy on a closed loopback port, so
  even a call that slipped through could not leave the machine: the tests pass offline.

Also ``mcp-guard demo`` in every profile and without ``--profile``, as a subprocess.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION
from pydantic import TypeAdapter

from mcp_guard.commands.demo import DEMO_CALLS
from mcp_guard.core import DEFAULT_PROFILE, PROFILES, classify
from mcp_guard.wire.meta import REJECTION_KEY, SCHEMA_KEY

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

Mode = Literal["legacy", "auto"]
MODES: list[Mode] = ["legacy", "auto"]
NEGOTIATED: dict[Mode, str] = {"legacy": LATEST_HANDSHAKE_VERSION, "auto": LATEST_MODERN_VERSION}
"""The protocol version each client mode must land in (auto: 2026-07-28 against any 2.x server)."""

ROOT = Path(__file__).resolve().parents[2]
SIGMA_SERVER = ROOT / "fixtures" / "sigma" / "server.py"
TIMEOUT = 30.0
RAW = TypeAdapter(dict[str, Any])

ANNOTATIONS = {"title", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"}
"""The annotation keywords that the standard profile accepts and the strict one refuses (spec)."""
TABLE = {"type", "properties", "required", "additionalProperties", "description", "enum", "minimum"}
TABLE.update(("items", "oneOf"))
"""The supported keyword table (spec)."""

U = "unsupported_capability"
V = "validation"
Finding = tuple[str, str, str, str | None]
"""(kind, keyword, schema_path, instance_path) of one issue."""
Outcome = dict[str, Any] | Exception
"""A raw result, or the exception a request raised (kept, so a failure shows every call's outcome)."""

SIGMA = (sys.executable, str(SIGMA_SERVER))
TIME = (sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC")
FETCH = (sys.executable, "-m", "mcp_server_fetch", "--proxy-url", "http://127.0.0.1:9")

needs_time = pytest.mark.skipif(
    importlib.util.find_spec("mcp_server_time") is None,
    reason="mcp-server-time is not installed (the test extras pin mcp-server-time==2026.10.19)",
)
needs_fetch = pytest.mark.skipif(
    importlib.util.find_spec("mcp_server_fetch") is None,
    reason="mcp-server-fetch is not installed (the test extras pin mcp-server-fetch==2026.10.24)",
)

# ---------------------------------------------------------------------------------------------
# Helpers

HINT_FIELDS = {"expected", "did_you_mean"}
"""What a refusal's issue may add: the hints a model repairs by (issue 24 item 5)."""


def guard_params(*upstream: str, profile: str = "standard", outputs: str = "enforce") -> StdioServerParameters:
    """Parameters that launch ``mcp-guard wrap --profile PROFILE --outputs OUTPUTS -- UPSTREAM...``."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_guard", "wrap", "--profile", profile, "--outputs", outputs, "--", *upstream],
    )


def direct_params(*upstream: str) -> StdioServerParameters:
    """Parameters that launch the upstream alone, without the guard."""
    return StdioServerParameters(command=upstream[0], args=list(upstream[1:]))


@asynccontextmanager
async def connect(params: StdioServerParameters, mode: Mode) -> AsyncIterator[Client]:
    """An ``mcp.Client`` on ``params`` in ``mode``, checked to have landed in that mode's era."""
    async with Client(params, mode=mode) as client:
        assert client.protocol_version == NEGOTIATED[mode]
        yield client


async def concurrently(*jobs: Callable[[], Awaitable[Any]]) -> list[Any]:
    """Run ``jobs`` at once (each opens and closes its own client); return their results in order."""
    results: list[Any] = [None] * len(jobs)

    async def run(index: int) -> None:
        results[index] = await jobs[index]()

    async with anyio.create_task_group() as tg:
        for index in range(len(jobs)):
            tg.start_soon(run, index)
    return results


async def list_raw(client: Client) -> dict[str, Any]:
    """The raw ``tools/list`` result (one page: none of these servers paginates)."""
    result: dict[str, Any] = await client.session.send_request(  # type: ignore[type-var]
        types.ListToolsRequest(), RAW
    )
    assert "nextCursor" not in result
    return result


async def listing(params: StdioServerParameters, mode: Mode) -> dict[str, Any]:
    """The raw ``tools/list`` result of a fresh session."""
    async with connect(params, mode) as client:
        return await list_raw(client)


async def call_raw(client: Client, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """The raw ``tools/call`` result; ``arguments=None`` sends no ``arguments`` at all."""
    request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
    result: dict[str, Any] = await client.session.send_request(request, RAW)  # type: ignore[type-var]
    return result


async def attempt(client: Client, name: str, arguments: dict[str, Any] | None) -> Outcome:
    """``call_raw``, with an exception returned instead of raised."""
    try:
        return await call_raw(client, name, arguments)
    except Exception as exc:
        return exc


def all_results(labels: list[str], outcomes: list[Outcome]) -> list[dict[str, Any]]:
    """Check every outcome is a result (not an exception), naming every one that is not."""
    pairs = zip(labels, outcomes, strict=True)
    failures = "".join(f"\n{label}: {o!r}" for label, o in pairs if isinstance(o, Exception))
    assert not failures, f"call(s) raised instead of returning a result:{failures}"
    return [o for o in outcomes if isinstance(o, dict)]


def without(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    """``mapping`` less ``key``."""
    return {k: v for k, v in mapping.items() if k != key}


def verdicts_of(guarded: dict[str, Any], direct: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Check ``guarded`` equals ``direct`` but for each tool's ``_meta[SCHEMA_KEY]``; return the verdicts."""
    assert without(guarded, "tools") == without(direct, "tools")
    assert [t["name"] for t in guarded["tools"]] == [t["name"] for t in direct["tools"]]
    verdicts: dict[str, dict[str, Any]] = {}
    for through, plain in zip(guarded["tools"], direct["tools"], strict=True):
        assert without(through, "_meta") == without(plain, "_meta")
        meta = dict(through["_meta"])
        verdict = meta.pop(SCHEMA_KEY)
        assert meta == plain.get("_meta", {})
        # "output": the outputSchema's verdict, for a tool that declares one (issue 15).
        assert set(verdict) == {"supported", "issues"} | ({"output"} if "outputSchema" in plain else set())
        assert type(verdict["supported"]) is bool
        assert verdict["supported"] == (verdict["issues"] == [])
        verdicts[through["name"]] = verdict
    return verdicts


def findings(issues: list[dict[str, Any]]) -> list[Finding]:
    """The issues as sorted tuples (their order is the guard's business)."""
    for issue in issues:
        assert (
            {"kind", "keyword", "schema_path", "instance_path", "message"}
            <= set(issue)
            <= {"kind", "keyword", "schema_path", "instance_path", "message"} | HINT_FIELDS
        )
        assert isinstance(issue["message"], str) and issue["message"]
    return sorted(((i["kind"], i["keyword"], i["schema_path"], i["instance_path"]) for i in issues), key=repr)


def rejection_of(result: dict[str, Any], tool: str) -> dict[str, Any]:
    """Check ``result`` is the guard's refusal of a call to ``tool``; return its ``_meta`` rejection."""
    assert result["isError"] is True
    assert len(result["content"]) == 1
    content = result["content"][0]
    assert content["type"] == "text"
    assert content["text"].startswith(f"mcp-guard refused this call to `{tool}`")
    rejection: dict[str, Any] = result["_meta"][REJECTION_KEY]
    assert set(rejection) == {"kind", "tool", "issues"}
    assert rejection["tool"] == tool
    assert rejection["issues"]
    return rejection


def forwarded(result: dict[str, Any]) -> dict[str, Any]:
    """Check ``result`` came from the upstream: none of the guard's refusal marks."""
    assert REJECTION_KEY not in (result.get("_meta") or {})
    assert not any(str(c.get("text", "")).startswith("mcp-guard refused") for c in result.get("content", []))
    return result


def text_of(result: dict[str, Any]) -> str:
    """The text of a result made of one text item."""
    assert len(result["content"]) == 1 and result["content"][0]["type"] == "text"
    text: str = result["content"][0]["text"]
    return text


# ---------------------------------------------------------------------------------------------
# The Sigma fixture server

SIGMA_SUPPORTED = {
    "AskUserQuestion",
    "bash",
    "edit",
    "glob",
    "grep",
    "ls",
    "read",
    "todo",
    "url_fetch",
    "write",
    "add",
}
SIGMA_UNSUPPORTED: dict[str, list[Finding]] = {
    "broken_tool": [
        (V, "minimum", "/properties/count/minimum", None),
        (V, "type", "/properties/count/type", None),
    ],
    "fetch_page": [
        (U, "format", "/properties/url/format", None),
        (U, "pattern", "/properties/url/pattern", None),
    ],
    "lookup_user": [
        (U, "$defs", "/$defs", None),
        (U, "$ref", "/properties/user/$ref", None),
        (U, "type", "/properties/user", None),
    ],
    "resize_image": [(U, "maximum", "/properties/width/maximum", None)],
}

SIGMA_VALID_CALLS: list[tuple[str, dict[str, Any] | None]] = [
    ("add", {"a": 2, "b": 3.0}),
    ("read", {"path": "README.md", "offset": 1, "limit": 20}),
    ("todo", {"action": "add", "content": "write tests"}),
    ("AskUserQuestion", {"question": "Deploy?", "options": ["yes", {"label": "no"}]}),
    ("ls", None),
]

SIGMA_INVALID_CALLS: list[tuple[str, dict[str, Any] | None, str, list[Finding]]] = [
    ("add", {"a": 2, "b": 3, "c": 4}, V, [(V, "additionalProperties", "/additionalProperties", "/c")]),
    ("add", {"a": True, "b": 1}, V, [(V, "type", "/properties/a/type", "/a")]),
    (
        "read",
        {"offset": True},
        V,
        [(V, "required", "/required", ""), (V, "type", "/properties/offset/type", "/offset")],
    ),
    ("bash", None, V, [(V, "required", "/required", "")]),
    (
        "AskUserQuestion",
        {"question": "Deploy?", "options": [{"value": "y"}]},
        V,
        [(V, "oneOf", "/properties/options/items/oneOf", "/options/0")],
    ),
    # Arguments that would be fine are refused all the same: these schemas cannot be enforced.
    ("fetch_page", {"url": "https://example.com"}, U, SIGMA_UNSUPPORTED["fetch_page"]),
    ("resize_image", {"path": "a.png", "width": 100}, U, SIGMA_UNSUPPORTED["resize_image"]),
    ("lookup_user", {"user": {"id": 1}}, U, SIGMA_UNSUPPORTED["lookup_user"]),
    ("broken_tool", {"count": 1}, V, SIGMA_UNSUPPORTED["broken_tool"]),
]


@pytest.mark.parametrize("mode", MODES)
async def test_sigma_through_the_guard_matches_direct(mode: Mode) -> None:
    """tools/list equals the direct one but for the verdicts; valid calls, unknown tools answer as direct."""

    async def session(params: StdioServerParameters) -> tuple[dict[str, Any], list[dict[str, Any]], MCPError]:
        async with connect(params, mode) as client:
            listed = await list_raw(client)
            results = [await call_raw(client, name, arguments) for name, arguments in SIGMA_VALID_CALLS]
            with pytest.raises(MCPError) as unknown:
                await call_raw(client, "no_such_tool", {})
        return listed, results, unknown.value

    with anyio.fail_after(TIMEOUT):
        direct, guard = await concurrently(
            lambda: session(direct_params(*SIGMA)), lambda: session(guard_params(*SIGMA))
        )
    direct_list, direct_results, direct_unknown = direct
    guard_list, guard_results, guard_unknown = guard

    verdicts = verdicts_of(guard_list, direct_list)
    assert len(verdicts) == 15
    assert {name for name, v in verdicts.items() if v["supported"]} == SIGMA_SUPPORTED
    for name, expected in SIGMA_UNSUPPORTED.items():
        assert verdicts[name]["supported"] is False
        assert findings(verdicts[name]["issues"]) == sorted(expected, key=repr), name

    assert guard_results == direct_results
    for result in guard_results:
        assert not forwarded(result).get("isError")
    assert text_of(guard_results[0]) == "5"

    assert direct_unknown.error.code == -32602
    assert guard_unknown.error.code == -32602
    assert "no_such_tool" in guard_unknown.error.message


@pytest.mark.parametrize("mode", MODES)
async def test_sigma_invalid_calls_are_refused(mode: Mode) -> None:
    """Each invalid or unenforceable call is a tool error carrying the guard's rejection, never sent on."""
    with anyio.fail_after(TIMEOUT):
        async with connect(guard_params(*SIGMA), mode) as guard:
            await list_raw(guard)
            outcomes = [await attempt(guard, name, arguments) for name, arguments, *_ in SIGMA_INVALID_CALLS]
            # The session still works after the refusals: a valid call is forwarded.
            after = await call_raw(guard, "add", {"a": 40, "b": 2})

    results = all_results([f"{c[0]} {c[1]}" for c in SIGMA_INVALID_CALLS], outcomes)
    for (name, _arguments, kind, expected), result in zip(SIGMA_INVALID_CALLS, results, strict=True):
        rejection = rejection_of(result, name)
        assert rejection["kind"] == kind, name
        assert findings(rejection["issues"]) == sorted(expected, key=repr), name
    assert text_of(forwarded(after)) == "42"


@pytest.mark.parametrize("mode", MODES)
async def test_sigma_calls_without_listing_first(mode: Mode) -> None:
    """A fresh session goes straight to tools/call, four calls at once: the guard lists the upstream."""
    calls: dict[str, tuple[str, dict[str, Any] | None]] = {
        "valid": ("add", {"a": 2, "b": 3}),
        "invalid": ("add", {"a": 2}),
        "unsupported": ("fetch_page", {"url": "https://example.com"}),
        "unknown": ("no_such_tool", {}),
    }
    with anyio.fail_after(TIMEOUT):
        async with connect(guard_params(*SIGMA), mode) as guard:
            outcomes = await concurrently(*(lambda c=call: attempt(guard, *c) for call in calls.values()))
    valid, invalid, unsupported, unknown = outcomes

    assert isinstance(unknown, MCPError), repr(unknown)
    assert unknown.error.code == -32602
    assert isinstance(valid, dict), repr(valid)
    assert text_of(forwarded(valid)) == "5"
    refused = all_results(["invalid", "unsupported"], [invalid, unsupported])
    rejection = rejection_of(refused[0], "add")
    assert rejection["kind"] == V
    assert findings(rejection["issues"]) == [(V, "required", "/required", "")]
    rejection = rejection_of(refused[1], "fetch_page")
    assert rejection["kind"] == U
    assert findings(rejection["issues"]) == sorted(SIGMA_UNSUPPORTED["fetch_page"], key=repr)


# ---------------------------------------------------------------------------------------------
# mcp-server-time (PyPI)


def annotation_findings(schema: dict[str, Any], path: str = "") -> list[Finding]:
    """What the strict profile must report for a schema whose only extras are annotation keywords.

    Also checks that premise: every key is in the keyword table or is an annotation.
    """
    assert set(schema) <= TABLE | ANNOTATIONS, sorted(set(schema) - TABLE - ANNOTATIONS)
    found: list[Finding] = [(U, key, f"{path}/{key}", None) for key in schema if key in ANNOTATIONS]
    for name, sub in schema.get("properties", {}).items():
        escaped = name.replace("~", "~0").replace("/", "~1")
        found += annotation_findings(sub, f"{path}/properties/{escaped}")
    if "items" in schema:
        found += annotation_findings(schema["items"], f"{path}/items")
    for index, sub in enumerate(schema.get("oneOf", [])):
        found += annotation_findings(sub, f"{path}/oneOf/{index}")
    return sorted(found, key=repr)


@needs_time
@pytest.mark.parametrize("mode", MODES)
async def test_time_lists_through_the_guard_as_direct(mode: Mode) -> None:
    """Both profiles list exactly what the server lists, plus verdicts: standard supported, strict not."""
    with anyio.fail_after(TIMEOUT):
        direct_list, standard_list, strict_list = await concurrently(
            lambda: listing(direct_params(*TIME), mode),
            lambda: listing(guard_params(*TIME, profile="standard"), mode),
            lambda: listing(guard_params(*TIME, profile="strict"), mode),
        )

    schemas = {t["name"]: t["inputSchema"] for t in direct_list["tools"]}
    assert set(schemas) == {"get_current_time", "convert_time"}
    standard = verdicts_of(standard_list, direct_list)
    inputs = {name: {k: v for k, v in verdict.items() if k != "output"} for name, verdict in standard.items()}
    assert inputs == {name: {"supported": True, "issues": []} for name in schemas}
    # The outputSchema verdicts (issue 15): convert_time's nested model uses $ref/$defs, beyond standard.
    outputs = {name: verdict["output"]["supported"] for name, verdict in standard.items()}
    assert outputs == {"get_current_time": True, "convert_time": False}
    strict = verdicts_of(strict_list, direct_list)
    for name, schema in schemas.items():
        expected = annotation_findings(schema)
        assert (U, "title", "/title", None) in expected  # the SDK titles every argument model
        assert strict[name]["supported"] is False
        assert findings(strict[name]["issues"]) == expected, name


@needs_time
@pytest.mark.parametrize("mode", MODES)
async def test_time_standard_forwards_valid_calls(mode: Mode) -> None:
    """Valid calls reach the server, and its answers (its own tool errors too) come back untouched."""
    conversion = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
    with anyio.fail_after(TIMEOUT):
        # convert_time's outputSchema uses $defs, which `standard` cannot enforce: its results are reported.
        async with connect(guard_params(*TIME, outputs="report"), mode) as guard:
            now = await call_raw(guard, "get_current_time", {"timezone": "UTC"})
            converted = await call_raw(guard, "convert_time", conversion)
            # Valid for the schema, wrong for the server: forwarded, and the server's isError comes back.
            unknown_zone = await call_raw(guard, "get_current_time", {"timezone": "Mars/Olympus_Mons"})

    assert forwarded(now)["isError"] is False
    answer = now["structuredContent"]
    assert set(answer) == {"timezone", "datetime", "day_of_week", "is_dst"}
    assert answer["timezone"] == "UTC"
    moment = datetime.fromisoformat(answer["datetime"])
    assert moment.utcoffset() == timedelta(0)
    assert abs(moment - datetime.now(UTC)) < timedelta(minutes=5)
    assert json.loads(text_of(now)) == answer

    assert forwarded(converted)["isError"] is False
    assert converted["structuredContent"]["time_difference"] == "+9.0h"  # Japan keeps no summer time
    assert converted["structuredContent"]["target"]["datetime"][11:16] == "21:00"

    assert forwarded(unknown_zone)["isError"] is True
    assert "Invalid timezone" in text_of(unknown_zone)


@needs_time
@pytest.mark.parametrize("mode", MODES)
async def test_time_standard_refuses_invalid_calls(mode: Mode) -> None:
    """A wrong type or a missing required argument is refused as validation, with the right pointers."""
    cases: list[tuple[str, dict[str, Any], list[Finding]]] = [
        ("get_current_time", {"timezone": 5}, [(V, "type", "/properties/timezone/type", "/timezone")]),
        ("get_current_time", {}, [(V, "required", "/required", "")]),
        (
            "convert_time",
            {"source_timezone": "UTC", "time": 1200, "target_timezone": "UTC"},
            [(V, "type", "/properties/time/type", "/time")],
        ),
    ]
    with anyio.fail_after(TIMEOUT):
        async with connect(guard_params(*TIME), mode) as guard:
            await list_raw(guard)
            outcomes = [await attempt(guard, name, arguments) for name, arguments, _ in cases]
            with pytest.raises(MCPError) as unknown:
                await call_raw(guard, "get_time", {"timezone": "UTC"})

    assert unknown.value.error.code == -32602
    results = all_results([f"{c[0]} {c[1]}" for c in cases], outcomes)
    for (name, _arguments, expected), result in zip(cases, results, strict=True):
        rejection = rejection_of(result, name)
        assert rejection["kind"] == V
        assert findings(rejection["issues"]) == sorted(expected, key=repr)


@needs_time
@pytest.mark.parametrize("mode", MODES)
async def test_time_strict_refuses_every_call(mode: Mode) -> None:
    """In strict the annotations make the tools unsupported: valid or not, every call is refused."""
    cases: list[tuple[str, dict[str, Any] | None]] = [
        ("get_current_time", {"timezone": "UTC"}),
        ("get_current_time", {"timezone": 5}),
        ("get_current_time", None),
        ("convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "UTC"}),
    ]
    with anyio.fail_after(TIMEOUT):
        async with connect(guard_params(*TIME, profile="strict"), mode) as guard:
            listed = await list_raw(guard)
            outcomes = [await attempt(guard, name, arguments) for name, arguments in cases]

    verdicts = {t["name"]: t["_meta"][SCHEMA_KEY] for t in listed["tools"]}
    results = all_results([f"{c[0]} {c[1]}" for c in cases], outcomes)
    for (name, _arguments), result in zip(cases, results, strict=True):
        rejection = rejection_of(result, name)
        assert rejection["kind"] == U
        assert rejection["issues"] == verdicts[name]["issues"]
        assert {i["keyword"] for i in rejection["issues"]} <= ANNOTATIONS


# ---------------------------------------------------------------------------------------------
# mcp-server-fetch (PyPI)

FETCH_FINDINGS: list[Finding] = [
    (U, "format", "/properties/url/format", None),
    (U, "maximum", "/properties/max_length/maximum", None),
    (U, "minLength", "/properties/url/minLength", None),
]


@needs_fetch
@pytest.mark.parametrize("mode", MODES)
async def test_fetch_is_unsupported_and_never_forwarded(mode: Mode) -> None:
    """``fetch`` uses format, minLength and maximum: listed unsupported, its calls refused, offline."""

    async def through_guard() -> tuple[dict[str, Any], Outcome]:
        async with connect(guard_params(*FETCH), mode) as guard:
            listed = await list_raw(guard)
            return listed, await attempt(guard, "fetch", {"url": "https://example.com/", "max_length": 100})

    with anyio.fail_after(TIMEOUT):
        direct_list, (guard_list, outcome) = await concurrently(
            lambda: listing(direct_params(*FETCH), mode), through_guard
        )

    verdicts = verdicts_of(guard_list, direct_list)
    assert list(verdicts) == ["fetch"]
    assert verdicts["fetch"]["supported"] is False
    assert findings(verdicts["fetch"]["issues"]) == sorted(FETCH_FINDINGS, key=repr)
    # A forwarded call would have gone to the (closed, loopback) proxy and come back as the
    # server's own error; the guard's rejection shows the guard answered it instead.
    (result,) = all_results(["fetch"], [outcome])
    rejection = rejection_of(result, "fetch")
    assert rejection["kind"] == U
    assert findings(rejection["issues"]) == sorted(FETCH_FINDINGS, key=repr)


# ---------------------------------------------------------------------------------------------
# mcp-guard demo


def _demo_outcomes(profile: str) -> Counter[str]:
    """What the demo's calls must come to under ``profile``: a row's outcome (written for the
    default profile), except that every call to a tool the profile does not support is refused."""
    folder = SIGMA_SERVER.parent
    files = [*folder.glob("*.json"), *(folder / "extra").glob("*.json"), *(folder / "beyond").glob("*.json")]
    schemas = {t["name"]: t["inputSchema"] for t in (json.loads(f.read_text(encoding="utf-8")) for f in files)}
    outcomes: Counter[str] = Counter()
    for name, _, expected, _ in DEMO_CALLS:
        if expected in ("forward", "refuse") and not classify(schemas[name], profile=profile).ok:
            expected = "unsupported"
        outcomes[expected] += 1
    return outcomes


@pytest.mark.parametrize("profile", [None, *PROFILES])
async def test_demo_runs_clean(profile: str | None) -> None:
    """``mcp-guard demo`` exits 0 and shows every outcome under every profile (Sigma has no
    annotations, so strict too); without ``--profile`` it runs under the default."""
    flag = [] if profile is None else ["--profile", profile]
    with anyio.fail_after(TIMEOUT):
        done = await anyio.run_process([sys.executable, "-m", "mcp_guard", "demo", *flag], check=False)
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    profile = profile or DEFAULT_PROFILE
    assert f"mcp-guard demo — profile {profile};" in out
    outcomes = _demo_outcomes(profile)
    assert out.count("✔ forwarded") == outcomes["forward"] >= 4
    assert out.count("✘ refused (") == outcomes["refuse"] + outcomes["unsupported"]
    assert out.count("✘ refused (validation)") >= outcomes["refuse"] >= 5
    assert "refused (unsupported_capability)" in out
    assert out.count("✘ JSON-RPC error -32602") == outcomes["error"] == 1
    assert "did not turn out as expected" not in out


async def test_wrap_without_profile_enforces_extended() -> None:
    """``mcp-guard wrap -- SERVER`` (no ``--profile``) enforces the default profile, extended:
    ``maximum``, ``pattern`` and a local ``$ref`` are enforced, not refused as unsupported."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_guard", "wrap", "--", *SIGMA])
    with anyio.fail_after(TIMEOUT):
        async with connect(params, "auto") as client:
            verdicts = {t["name"]: t["_meta"][SCHEMA_KEY]["supported"] for t in (await list_raw(client))["tools"]}
            refused = await call_raw(client, "resize_image", {"path": "cat.png", "width": 8192})
            forwarded = await call_raw(client, "fetch_page", {"url": "https://example.com"})
    assert DEFAULT_PROFILE == "extended"
    assert verdicts["resize_image"] and verdicts["fetch_page"] and verdicts["lookup_user"]
    assert not verdicts["broken_tool"]
    rejection = refused["_meta"][REJECTION_KEY]
    assert rejection["kind"] == V
    assert [(i["keyword"], i["instance_path"]) for i in rejection["issues"]] == [("maximum", "/width")]
    assert REJECTION_KEY not in (forwarded.get("_meta") or {})
