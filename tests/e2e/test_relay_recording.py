"""The guard end to end over real processes: ``python -m mcp_guard wrap`` in front of a raw server.

The client side is a small raw JSON-RPC client written here (lines on the guard's stdin and
stdout, no SDK), so every byte the guard writes is seen as it is. The upstream is
``recording_server.py``, which records every line it receives, byte for byte; what the
upstream got is read back from that record. ``forging_server.py`` plays the upstream where
the recording server cannot misbehave enough (forged result ``_meta``, noise on stdout,
a held ``tools/list``, exiting on a call).

Most call cases share one guard process (module scope); tests that need their own upstream
configuration or look at the process's life start their own.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from mcp_guard.core import compile

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SIGMA = ROOT / "fixtures" / "sigma"
RECORDING_SERVER = HERE / "recording_server.py"
FORGING_SERVER = HERE / "forging_server.py"

READ_TIMEOUT = 30.0
"""Seconds any single read from the guard may take: a hang guard, not a measurement (the answer to a call of a
million elements with a million issues took over 10 s with the machine at load 12 on 2 cores)."""
EXIT_TIMEOUT = 5.0
"""Seconds the guard may take to exit once it should."""

SECRET = "sk-live-SECRET-1234"
SECRET_NUMBER = 987654321987

SERVER_ENV_KEYS = (
    "RECORD_FILE",
    "TOOLS_FILE",
    "TOOLS_FILE_2",
    "WITH_TRIGGER",
    "PAGE_SIZE",
    "RESULT_META",
    "STDOUT_NOISE",
    "HOLD_LIST",
)
SCHEMA_KEY = "mcp-guard/schema"
REJECTION_KEY = "mcp-guard/rejection"
ISSUE_FIELDS = {"kind", "keyword", "schema_path", "instance_path", "message"}


def tool_files(folder: Path) -> list[dict[str, Any]]:
    """The tool objects of the ``*.json`` files of ``folder``, sorted by file name."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


SIGMA_TOOLS = tool_files(SIGMA)
FIXTURE_TOOLS = SIGMA_TOOLS + tool_files(SIGMA / "extra")
"""What the recording server lists by default, in its order."""
UNSUPPORTED_NAMES = ["broken_tool", "fetch_page", "lookup_user", "resize_image"]


def canon(value: Any) -> str:
    """JSON-exact form for comparisons: ``True`` and ``1`` differ, key order does not matter."""
    return json.dumps(value, sort_keys=True)


def unkeyed(message: Any) -> str:
    """:func:`canon` of a message without the id of a request: the guard forwards every request under an
    upstream id of its own (``mcp-guard-...``), so a request is the same whatever its id."""
    if type(message) is dict and "method" in message and "id" in message:
        message = {k: v for k, v in message.items() if k != "id"}
    return canon(message)


def annotated(tool: dict[str, Any], profile: str = "standard") -> dict[str, Any]:
    """``tool`` as the guard must show it: unchanged but for ``_meta["mcp-guard/schema"]``.

    Keys the upstream put under the ``mcp-guard/`` prefix are not the guard's and go.
    """
    compiled = compile(tool.get("inputSchema"), profile=profile)
    out = copy.deepcopy(tool)
    meta = {k: v for k, v in (tool.get("_meta") or {}).items() if not k.startswith("mcp-guard/")}
    meta[SCHEMA_KEY] = {"supported": compiled.supported, "issues": compiled.report.issues_json()}
    if "outputSchema" in tool:  # the outputSchema's own verdict (issue 15)
        output = compile(tool["outputSchema"], profile=profile)
        meta[SCHEMA_KEY]["output"] = {"supported": output.supported, "issues": output.report.issues_json()}
    out["_meta"] = meta
    return out


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` that fails on a repeated key."""
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), f"duplicate keys in {keys}"
    return dict(pairs)


def is_response_to(message: Any, request_id: Any) -> bool:
    """Whether ``message`` answers ``request_id`` (the id's JSON type must match too)."""
    return (
        type(message) is dict
        and "method" not in message
        and ("result" in message or "error" in message)
        and "id" in message
        and type(message["id"]) is type(request_id)
        and message["id"] == request_id
    )


def write_tools(path: Path, tools: list[Any]) -> Path:
    """Write a ``TOOLS_FILE`` and return its path."""
    path.write_text(json.dumps(tools), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------
# The raw client


class Guard:
    """A running ``mcp-guard wrap`` process and a raw JSON-RPC client on its stdio.

    Attributes:
        lines: every line the guard wrote on stdout, in order.
        backlog: messages read while waiting for something else, not yet taken.
    """

    def __init__(self, process: Process, record: Path, stderr: Path, marker: str) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.record_path = record
        self.stderr_path = stderr
        self.marker = marker
        self._stdout = BufferedByteReceiveStream(process.stdout)
        self.lines: list[bytes] = []
        self.backlog: list[Any] = []
        self.last_line = b""
        self._counter = 1000  # automatic ids; tests pick small ones of their own
        self.stdin_closed = False
        # The requests sent, by id (type-exact): the guard forwards each under an id of its own, so the
        # upstream's copy of a request is told by its method and params (see ``recorded_with_id``).
        self.sent: dict[tuple[type, Any], list[dict[str, Any]]] = {}

    # --- writing

    def next_id(self) -> int:
        """A fresh integer request id."""
        self._counter += 1
        return self._counter

    async def send_raw(self, line: bytes) -> None:
        """Write ``line`` (a newline is added) to the guard's stdin."""
        assert self.process.stdin is not None
        with suppress(ValueError, RecursionError):
            message = json.loads(line)  # (a repeated key: the last value, as the guard reads it)
            if type(message) is dict and "method" in message and type(message.get("id")) in (int, str):
                self.sent.setdefault((type(message["id"]), message["id"]), []).append(message)
        await self.process.stdin.send(line + b"\n")

    async def send(self, message: Any) -> None:
        """Write one message as one line."""
        await self.send_raw(json.dumps(message).encode())

    # --- reading

    async def receive(self) -> Any:
        """The next message on the guard's stdout (its raw line goes to ``lines``)."""
        with anyio.fail_after(READ_TIMEOUT):
            line = await self._stdout.receive_until(b"\n", 1 << 26)
        self.lines.append(line)
        return json.loads(line)

    async def response(self, request_id: Any) -> dict[str, Any]:
        """Wait for the response to ``request_id``; keep everything else in ``backlog``.

        The response's raw line is left in ``last_line``.
        """
        for index, message in enumerate(self.backlog):
            if is_response_to(message, request_id):
                del self.backlog[index]
                self.last_line = json.dumps(message).encode()
                return message  # type: ignore[no-any-return]
        while True:
            message = await self.receive()
            if is_response_to(message, request_id):
                self.last_line = self.lines[-1]
                return message  # type: ignore[no-any-return]
            self.backlog.append(message)

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, request_id: Any = None
    ) -> dict[str, Any]:
        """Send a request and return its response."""
        request_id = self.next_id() if request_id is None else request_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return await self.response(request_id)

    async def call(self, request_id: Any, name: str, arguments: str | None) -> dict[str, Any]:
        """Send a ``tools/call`` whose ``arguments`` is the raw JSON text given (None: absent)."""
        args = "" if arguments is None else f',"arguments":{arguments}'
        line = f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"method":"tools/call",'
        line += f'"params":{{"name":{json.dumps(name)}{args}}}}}'
        await self.send_raw(line.encode())
        return await self.response(request_id)

    async def initialize(self) -> dict[str, Any]:
        """The MCP handshake: ``initialize`` and ``notifications/initialized``."""
        params = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-test-client", "version": "1.0"},
        }
        response = await self.request("initialize", params)
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response

    async def sync(self) -> None:
        """A ``ping`` round trip through the upstream: what the guard forwarded before is recorded."""
        response = await self.request("ping")
        assert response.get("result") == {}, response

    # --- what the upstream received, what the guard logged

    def record(self) -> list[bytes]:
        """Every line the upstream received, without its newline."""
        if not self.record_path.exists():
            return []
        return self.record_path.read_bytes().splitlines()

    def recorded(self) -> list[Any]:
        """Every message the upstream received, parsed."""
        return [json.loads(line) for line in self.record()]

    def recorded_with_id(self, request_id: Any) -> list[Any]:
        """The requests the upstream received that are the client's requests sent under ``request_id``
        (type-exact): the guard forwards each under an upstream id of its own (``mcp-guard-...``), so
        they are told by their method and params (compared as :func:`canon` has them), and given back
        with the client's ``request_id`` in place of that id (the rest as the upstream got it)."""
        sent = {(m["method"], canon(m.get("params"))) for m in self.sent.get((type(request_id), request_id), [])}
        return [
            {**m, "id": request_id}
            for m in self.recorded()
            if type(m) is dict
            and type(m.get("id")) is str
            and m["id"].startswith("mcp-guard-")
            and (m.get("method"), canon(m.get("params"))) in sent
        ]

    def guard_listings(self) -> list[dict[str, Any]]:
        """The ``tools/list`` requests the guard itself sent the upstream (not one of the client's, forwarded)."""
        clients = {canon(m.get("params")) for ms in self.sent.values() for m in ms if m["method"] == "tools/list"}
        return [
            m
            for m in self.recorded()
            if m.get("method") == "tools/list"
            and type(m.get("id")) is str
            and m["id"].startswith("mcp-guard-")
            and canon(m.get("params")) not in clients
        ]

    def stderr(self) -> str:
        """What the guard (and the upstream) wrote on stderr so far."""
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def upstream_pids(self) -> list[int]:
        """Live processes whose environment carries this guard's marker, the guard aside: its upstream."""
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == self.process.pid:
                continue
            try:
                environ = Path("/proc", entry, "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if self.marker.encode() in environ:
                pids.append(int(entry))
        return pids

    async def drain(self) -> None:
        """Read whatever is left on stdout up to EOF into ``lines`` (a last partial line too)."""
        with anyio.fail_after(READ_TIMEOUT):
            while True:
                try:
                    line = await self._stdout.receive_until(b"\n", 1 << 26)
                except anyio.IncompleteRead:
                    rest = self._stdout.buffer
                    if rest:
                        self.lines.append(bytes(rest))
                    return
                self.lines.append(line)

    # --- ending

    async def close_stdin(self) -> None:
        """Close the guard's stdin (the client goes away)."""
        if not self.stdin_closed:
            self.stdin_closed = True
            assert self.process.stdin is not None
            await self.process.stdin.aclose()

    async def wait_exit(self, timeout: float = EXIT_TIMEOUT) -> int:
        """Wait for the guard to exit and return its status."""
        with anyio.fail_after(timeout):
            return await self.process.wait()


@asynccontextmanager
async def open_guard(
    directory: Path,
    *,
    env: dict[str, str] | None = None,
    args: Sequence[str] = (),
    server: Path = RECORDING_SERVER,
    initialize: bool = True,
) -> AsyncIterator[Guard]:
    """Start ``python -m mcp_guard wrap ARGS -- python SERVER`` with the server's env set."""
    directory.mkdir(parents=True, exist_ok=True)
    record = directory / "record.jsonl"
    stderr_path = directory / "guard-stderr.log"
    marker = f"MCP_GUARD_TEST_MARKER={uuid.uuid4().hex}"
    environment = {k: v for k, v in os.environ.items() if k not in SERVER_ENV_KEYS}
    environment["RECORD_FILE"] = str(record)
    environment.update(env or {})
    name, value = marker.split("=")
    environment[name] = value  # the guard passes its environment on: this finds the upstream's pid
    command = [
        sys.executable,
        "-m",
        "mcp_guard",
        "wrap",
        "--profile",
        "standard",
        *args,
        "--",
        sys.executable,
        str(server),
    ]
    with stderr_path.open("wb") as stderr:
        process = await anyio.open_process(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=environment, cwd=ROOT
        )
    guard = Guard(process, record, stderr_path, marker)
    try:
        if initialize:
            await guard.initialize()
        yield guard
    finally:
        with anyio.CancelScope(shield=True):
            with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError):
                await guard.close_stdin()
            with anyio.move_on_after(EXIT_TIMEOUT):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
            await process.aclose()


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module scope, so one guard process can serve many tests."""
    return "asyncio"


@pytest.fixture(scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Guard]:
    """One guard over the recording server with the fixture tools, initialized and listed once."""
    async with open_guard(tmp_path_factory.mktemp("shared")) as guard:
        response = await guard.request("tools/list")
        assert len(response["result"]["tools"]) == len(FIXTURE_TOOLS)
        yield guard


# ---------------------------------------------------------------------------------------------
# 1. What reaches the upstream


@dataclass(frozen=True)
class CallCase:
    """One ``tools/call``: ``arguments`` is raw JSON text (None: no ``arguments`` member).

    ``outcome``: ``"forward"``, ``"unknown"`` (JSON-RPC -32602), or the rejection's kind.
    ``issues``: (keyword, instance_path) of every issue, in order.
    """

    id: str
    tool: str
    arguments: str | None
    outcome: str
    issues: tuple[tuple[str, str | None], ...] = ()


V = "validation"
U = "unsupported_capability"
SCHEMA_ONLY_ISSUES = {
    "fetch_page": (("format", None), ("pattern", None)),
    "broken_tool": (("type", None), ("minimum", None)),
    "lookup_user": (("$defs", None), ("type", None), ("$ref", None)),
    "resize_image": (("maximum", None),),
}

CALL_CASES = [
    CallCase("valid", "read", '{"path":"a.txt","offset":1,"limit":10}', "forward"),
    CallCase("valid-integral-float", "read", '{"path":"a.txt","offset":2.0}', "forward"),
    CallCase("valid-oneOf", "AskUserQuestion", '{"question":"q","options":["a",{"label":"b"}]}', "forward"),
    CallCase(
        "valid-unicode",
        "write",
        '{"path":"\\u00e9t\\u00e9.txt","content":"\\ud83d\\ude00 \\u2028"}',
        "forward",
    ),
    CallCase("valid-empty-required", "ls", "{}", "forward"),
    CallCase("absent-arguments-ok", "ls", None, "forward"),
    CallCase("minimum", "read", '{"path":"a","offset":0}', V, (("minimum", "/offset"),)),
    CallCase("bool-for-integer", "read", '{"path":"a","offset":true}', V, (("type", "/offset"),)),
    CallCase("bool-for-integer-add", "add", '{"a":true,"b":1}', V, (("type", "/a"),)),
    CallCase("fraction-for-integer", "add", '{"a":1.5,"b":1}', V, (("type", "/a"),)),
    CallCase("required-missing", "read", '{"offset":3}', V, (("required", ""),)),
    CallCase("empty-arguments-required", "bash", "{}", V, (("required", ""),)),
    CallCase("absent-arguments-required", "bash", None, V, (("required", ""),)),
    CallCase("enum", "todo", '{"action":"destroy"}', V, (("enum", "/action"),)),
    CallCase("oneOf-none", "AskUserQuestion", '{"question":"q","options":[1]}', V, (("oneOf", "/options/0"),)),
    CallCase("additionalProperties", "add", '{"a":1,"b":2,"c":3}', V, (("additionalProperties", "/c"),)),
    CallCase("arguments-null", "read", "null", V, (("type", ""),)),
    CallCase("arguments-json-string", "read", '"{\\"path\\": \\"x\\"}"', V, (("type", ""),)),
    CallCase("arguments-list", "ls", "[]", V, (("type", ""),)),
    CallCase("arguments-number", "ls", "5", V, (("type", ""),)),
    CallCase("NaN", "read", '{"path":"a","offset":NaN}', V, (("json", "/offset"),)),
    CallCase("Infinity", "read", '{"path":"a","offset":Infinity}', V, (("json", "/offset"),)),
    CallCase("-Infinity", "read", '{"path":"a","limit":-Infinity}', V, (("json", "/limit"),)),
    CallCase("1e400", "read", '{"path":"a","offset":1e400}', V, (("json", "/offset"),)),
    CallCase(
        "1e400-in-oneOf",
        "AskUserQuestion",
        '{"question":"q","options":[{"label":"x","v":1e400}]}',
        V,
        (("json", "/options/0/v"), ("oneOf", "/options/0")),
    ),
    CallCase("unsupported-fetch_page", "fetch_page", '{"url":"https://example.com"}', U),
    CallCase("unsupported-lookup_user", "lookup_user", '{"user":{"id":1}}', U),
    CallCase("unsupported-resize_image", "resize_image", '{"path":"a.png","width":10}', U),
    CallCase("malformed-broken_tool", "broken_tool", '{"count":1}', V),
    CallCase("malformed-broken_tool-no-arguments", "broken_tool", None, V),
    CallCase("unknown-tool", "no_such_tool", '{"path":"a"}', "unknown"),
]


def expected_issues(case: CallCase) -> tuple[tuple[str, str | None], ...]:
    """The (keyword, instance_path) pairs a case expects."""
    if case.issues or case.outcome in ("forward", "unknown"):
        return case.issues
    return SCHEMA_ONLY_ISSUES[case.tool]


@pytest.mark.parametrize("case", CALL_CASES, ids=lambda c: c.id)
async def test_call_reaches_the_upstream_only_when_valid(shared: Guard, case: CallCase) -> None:
    """Accepted calls arrive once, as the very object sent; rejected ones never arrive."""
    request_id = f"call-{case.id}"
    response = await shared.call(request_id, case.tool, case.arguments)
    await shared.sync()
    arrived = shared.recorded_with_id(request_id)
    if case.outcome == "forward":
        assert response.get("result", {}).get("content") == [{"type": "text", "text": "ok"}], response
        assert len(arrived) == 1, arrived
        args = "" if case.arguments is None else f',"arguments":{case.arguments}'
        sent = json.loads(
            f'{{"jsonrpc":"2.0","id":"{request_id}","method":"tools/call","params":{{"name":"{case.tool}"{args}}}}}'
        )
        assert canon(arrived[0]) == canon(sent)
        if case.arguments is None:
            assert "arguments" not in arrived[0]["params"]  # nothing filled in
        return
    assert arrived == []
    if case.outcome == "unknown":
        assert "result" not in response
        assert response["error"]["code"] == -32602
        return
    result = response["result"]
    assert result["isError"] is True
    rejection = result["_meta"][REJECTION_KEY]
    assert rejection["kind"] == case.outcome
    assert rejection["tool"] == case.tool
    got = tuple((i["keyword"], i["instance_path"]) for i in rejection["issues"])
    assert got == expected_issues(case)
    assert all(i["kind"] in (V, U) for i in rejection["issues"])


async def test_params_without_a_tool_name_are_a_protocol_error(shared: Guard) -> None:
    """A ``tools/call`` whose ``params`` has no string ``name`` is -32602 and never forwarded."""
    for request_id, params in (
        ("noname-1", {"arguments": {}}),
        ("noname-2", {"name": 5}),
        ("noname-3", None),
    ):
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
        if params is not None:
            message["params"] = params
        await shared.send(message)
        response = await shared.response(request_id)
        assert response["error"]["code"] == -32602, response
        await shared.sync()
        assert shared.recorded_with_id(request_id) == []


# ---------------------------------------------------------------------------------------------
# 2. The rejection's shape, and no secret anywhere


SECRET_CASES = [
    ("minimum", "grep", {"pattern": SECRET, "context": -SECRET_NUMBER}, V),
    ("type-number", "read", {"path": SECRET_NUMBER}, V),
    ("type-string", "read", {"path": "x", "offset": SECRET}, V),
    ("required", "write", {"path": SECRET, "x": SECRET_NUMBER}, V),
    ("enum-string", "todo", {"action": SECRET}, V),
    ("enum-number", "todo", {"action": "add", "status": SECRET_NUMBER}, V),
    ("oneOf-number", "AskUserQuestion", {"question": SECRET, "options": [SECRET_NUMBER]}, V),
    ("oneOf-object", "AskUserQuestion", {"question": "q", "options": [{"value": SECRET}]}, V),
    ("additionalProperties", "add", {"a": 1, "b": SECRET_NUMBER, "extra": SECRET}, V),
    ("unsupported", "fetch_page", {"url": SECRET, "n": SECRET_NUMBER}, U),
    ("malformed", "broken_tool", {"count": SECRET, "n": SECRET_NUMBER}, V),
    ("arguments-string", "read", SECRET, V),
    ("arguments-list", "read", [SECRET, SECRET_NUMBER], V),
]


@pytest.mark.parametrize(("tool", "arguments", "kind"), [c[1:] for c in SECRET_CASES], ids=[c[0] for c in SECRET_CASES])
async def test_rejection_shape_and_no_value_leaks(shared: Guard, tool: str, arguments: Any, kind: str) -> None:
    """A rejection is a CallToolResult with isError, one text and the report; values never leak."""
    request_id = shared.next_id()
    response = await shared.request("tools/call", {"name": tool, "arguments": arguments}, request_id=request_id)
    line = shared.last_line.decode()
    result = response["result"]
    assert result["isError"] is True
    assert len(result["content"]) == 1
    assert result["content"][0]["type"] == "text"
    assert isinstance(result["content"][0]["text"], str) and result["content"][0]["text"]
    rejection = result["_meta"][REJECTION_KEY]
    assert set(rejection) == {"kind", "tool", "issues"}
    assert rejection["kind"] == kind
    assert rejection["tool"] == tool
    assert rejection["issues"]
    for issue in rejection["issues"]:
        assert ISSUE_FIELDS <= set(issue) <= ISSUE_FIELDS | {"expected", "did_you_mean"}  # hints: issue 24 item 5
        assert isinstance(issue["message"], str) and issue["message"]
        assert isinstance(issue["schema_path"], str)
    schema_broken = tool in SCHEMA_ONLY_ISSUES
    assert all((i["instance_path"] is None) == schema_broken for i in rejection["issues"])
    assert all(isinstance(i["instance_path"], str) for i in rejection["issues"]) or schema_broken
    for secret in (SECRET, str(SECRET_NUMBER), "SECRET"):
        assert secret not in line
    stderr = shared.stderr()
    assert f"rejected tools/call `{tool}`" in stderr  # the log is there, so its absence below means something
    for secret in (SECRET, str(SECRET_NUMBER), "SECRET"):
        assert secret not in stderr
    await shared.sync()
    assert shared.recorded_with_id(request_id) == []


@pytest.mark.parametrize(
    "raw",
    [
        f'{{"path":"{SECRET}","offset":NaN}}',
        f'{{"path":"x","offset":{SECRET_NUMBER}e400}}',
    ],
    ids=["NaN", "1e400"],
)
async def test_non_finite_rejection_leaks_nothing(shared: Guard, raw: str) -> None:
    """Values JSON cannot carry are rejected with keyword ``json``, and neither they nor neighbours leak."""
    request_id = f"nonfinite-{len(raw)}"
    response = await shared.call(request_id, "read", raw)
    issues = response["result"]["_meta"][REJECTION_KEY]["issues"]
    assert [i["keyword"] for i in issues] == ["json"]
    for text in (shared.last_line.decode(), shared.stderr()):
        assert SECRET not in text and str(SECRET_NUMBER) not in text
        assert "NaN" not in text.replace("NaN, Infinity", "")  # only the message's fixed wording


async def test_unknown_tool_error_leaks_no_argument(shared: Guard) -> None:
    """The -32602 for an unknown tool names the tool, not the arguments."""
    response = await shared.call("unknown-secret", "no_such_tool", json.dumps({"token": SECRET}))
    assert response["error"]["code"] == -32602
    assert "no_such_tool" in response["error"]["message"]
    assert SECRET not in shared.last_line.decode()
    assert SECRET not in shared.stderr()


# ---------------------------------------------------------------------------------------------
# 3. Duplicate keys


@pytest.mark.parametrize(
    ("raw", "forwarded"),
    [('{"path": 1, "path": "ok"}', True), ('{"path":"ok","path":1}', False)],
    ids=["last-valid", "last-invalid"],
)
async def test_duplicate_keys_validate_and_forward_the_last_value(shared: Guard, raw: str, forwarded: bool) -> None:
    """The guard judges what Python's json keeps (the last value) and forwards exactly that, once."""
    request_id = f"dup-{forwarded}"
    response = await shared.call(request_id, "read", raw)
    await shared.sync()
    forms = {unkeyed(m) for m in shared.recorded_with_id(request_id)}
    lines = [line for line in shared.record() if unkeyed(json.loads(line)) in forms]
    if not forwarded:
        assert lines == []
        issues = response["result"]["_meta"][REJECTION_KEY]["issues"]
        assert [(i["keyword"], i["instance_path"]) for i in issues] == [("type", "/path")]
        return
    assert response["result"]["isError"] is False
    assert len(lines) == 1
    message = json.loads(lines[0], object_pairs_hook=no_duplicate_keys)
    assert canon(message["params"]["arguments"]) == canon({"path": "ok"})
    assert lines[0].count(b'"path"') == 1


# ---------------------------------------------------------------------------------------------
# 4. tools/list annotation


async def test_list_is_the_upstreams_plus_the_verdict(shared: Guard) -> None:
    """Every listed tool is the upstream's JSON plus ``_meta["mcp-guard/schema"]``, in the same order."""
    response = await shared.request("tools/list")
    tools = response["result"]["tools"]
    assert [canon(t) for t in tools] == [canon(annotated(t)) for t in FIXTURE_TOOLS]
    unsupported = [t["name"] for t in tools if not t["_meta"][SCHEMA_KEY]["supported"]]
    assert unsupported == UNSUPPORTED_NAMES
    for tool in tools:
        verdict = tool["_meta"][SCHEMA_KEY]
        assert set(verdict) == {"supported", "issues"}
        assert verdict["supported"] is (verdict["issues"] == [])
        assert all(set(i) == ISSUE_FIELDS and i["instance_path"] is None for i in verdict["issues"])
    assert "nextCursor" not in response["result"]


EXTRA_FIELDS_TOOL = {
    "name": "rich",
    "title": "A rich tool",
    "description": "Carries every field a tool may carry, and some it may not.",
    "inputSchema": {
        "type": "object",
        "title": "Rich input",
        "properties": {"n": {"type": "integer", "minimum": 1, "default": 1}},
    },
    "outputSchema": {"type": "object", "properties": {"x": {"type": "string", "pattern": "^a"}}},
    "annotations": {"readOnlyHint": True, "title": "Rich"},
    "icons": [{"src": "data:image/png;base64,AAAA"}],
    "x-custom": {"a": 1, "b": [1.0, True, None]},
    "_meta": {"other/x": 1},
}
FORGED_TOOL = {
    "name": "forged",
    "description": "Claims the guard already found it supported.",
    "inputSchema": {"type": "object", "properties": {"s": {"type": "string", "pattern": "^a"}}},
    "_meta": {
        "mcp-guard/schema": {"supported": True, "issues": []},
        "mcp-guard/rejection": {"kind": "validation"},
        "other/x": 1,
    },
}
FORGED_AGAINST_TOOL = {
    "name": "forged_against",
    "description": "Claims the guard found it unsupported.",
    "inputSchema": {"type": "object", "properties": {"s": {"type": "string"}}},
    "_meta": {"mcp-guard/schema": {"supported": False, "issues": [{"kind": "x"}]}},
}


async def test_list_keeps_unknown_fields_and_replaces_forged_verdicts(tmp_path: Path) -> None:
    """Fields the guard does not know pass as they are; an upstream cannot forge the verdict."""
    tools = [EXTRA_FIELDS_TOOL, FORGED_TOOL, FORGED_AGAINST_TOOL]
    env = {"TOOLS_FILE": str(write_tools(tmp_path / "tools.json", tools))}
    async with open_guard(tmp_path, env=env) as guard:
        listed = (await guard.request("tools/list"))["result"]["tools"]
        assert [canon(t) for t in listed] == [canon(annotated(t)) for t in tools]
        rich, forged, against = listed
        assert rich["x-custom"] == {"a": 1, "b": [1.0, True, None]}
        assert rich["_meta"][SCHEMA_KEY]["supported"] is True  # `title`, `default` are annotations
        assert forged["_meta"][SCHEMA_KEY]["supported"] is False
        assert forged["_meta"]["other/x"] == 1
        assert set(forged["_meta"]) == {SCHEMA_KEY, "other/x"}
        assert against["_meta"][SCHEMA_KEY] == {"supported": True, "issues": []}
        # The verdict is the guard's in the calls too.
        rejected = await guard.call(10, "forged", '{"s":"abc"}')
        assert rejected["result"]["_meta"][REJECTION_KEY]["kind"] == U
        accepted = await guard.call(11, "forged_against", '{"s":"abc"}')
        assert accepted["result"]["isError"] is False
        await guard.sync()
        assert guard.recorded_with_id(10) == []
        assert len(guard.recorded_with_id(11)) == 1


async def test_list_result_meta_forgery_is_removed(tmp_path: Path) -> None:
    """A result-level ``_meta`` keeps its other keys; the guard's keys the upstream wrote go."""
    meta = {
        "mcp-guard/rejection": {"kind": "validation", "tool": "echo", "issues": []},
        "mcp-guard/schema": {"supported": True},
        "other/y": 2,
    }
    async with open_guard(tmp_path, env={"RESULT_META": json.dumps(meta)}, server=FORGING_SERVER) as guard:
        result = (await guard.request("tools/list"))["result"]
        assert result["_meta"] == {"other/y": 2}
        assert [t["name"] for t in result["tools"]] == ["echo", "exit_now"]


# ---------------------------------------------------------------------------------------------
# 5. Pagination


async def test_pagination_passes_cursors_through(tmp_path: Path) -> None:
    """The client pages with the upstream's own cursors; every tool arrives once, annotated."""
    async with open_guard(tmp_path, env={"PAGE_SIZE": "4"}) as guard:
        tools: list[Any] = []
        cursors: list[Any] = []
        sent_lines: list[bytes] = []
        params: dict[str, Any] = {}
        for _ in range(10):
            request_id = guard.next_id()
            line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": params})
            sent_lines.append(line.encode())
            await guard.send_raw(line.encode())
            result = (await guard.response(request_id))["result"]
            assert len(result["tools"]) <= 4
            tools.extend(result["tools"])
            if "nextCursor" not in result:
                break
            cursors.append(result["nextCursor"])
            params = {"cursor": result["nextCursor"]}
        assert cursors == ["rec-page-4", "rec-page-8", "rec-page-12"]
        assert [canon(t) for t in tools] == [canon(annotated(t)) for t in FIXTURE_TOOLS]
        record = guard.record()
        recorded = [unkeyed(json.loads(line)) for line in record]
        assert all(unkeyed(json.loads(line)) in recorded for line in sent_lines)  # the client's requests, as sent
        assert guard.guard_listings() == []
        # Every page was learnt: tools of later pages are judged without the guard listing itself.
        ok = await guard.call("p-ok", "add", '{"a":1,"b":2}')
        assert ok["result"]["isError"] is False
        bad = await guard.call("p-bad", "add", '{"a":1,"b":true}')
        assert bad["result"]["_meta"][REJECTION_KEY]["issues"][0]["instance_path"] == "/b"
        await guard.sync()
        assert guard.recorded_with_id("p-bad") == []


# ---------------------------------------------------------------------------------------------
# 6. Calling before listing


@pytest.mark.parametrize(
    ("tool", "arguments", "outcome"),
    [
        ("add", '{"a":1,"b":2}', "forward"),
        ("resize_image", '{"path":"a","width":5000}', U),
        ("read", '{"path":"a","offset":0}', V),
        ("no_such_tool", "{}", "unknown"),
    ],
    ids=["valid", "unsupported", "invalid", "unknown"],
)
async def test_call_before_any_listing(tmp_path: Path, tool: str, arguments: str, outcome: str) -> None:
    """The guard lists every upstream page itself, under its own ids, then judges.

    The client sees none of the guard's own traffic.
    """
    async with open_guard(tmp_path, env={"PAGE_SIZE": "4"}) as guard:
        response = await guard.call(2, tool, arguments)
        if outcome == "forward":
            assert response["result"]["isError"] is False
        elif outcome == "unknown":
            assert response["error"]["code"] == -32602
        else:
            assert response["result"]["_meta"][REJECTION_KEY]["kind"] == outcome
        listings = guard.guard_listings()
        assert [m.get("params", {}).get("cursor") for m in listings] == [
            None,
            "rec-page-4",
            "rec-page-8",
            "rec-page-12",
        ]
        assert len({m["id"] for m in listings}) == 4
        calls = [m for m in guard.recorded() if m.get("method") == "tools/call"]
        assert len(calls) == (1 if outcome == "forward" else 0)
        # A second call is judged from the table: no new listing.
        again = await guard.call(3, "add", '{"a":1,"b":"2"}')
        assert again["result"]["_meta"][REJECTION_KEY]["issues"][0]["instance_path"] == "/b"
        await guard.sync()
        assert len(guard.guard_listings()) == 4
        # Nothing but the answers to the client's own requests reached the client.
        assert guard.backlog == []
        ids = [json.loads(line).get("id") for line in guard.lines]
        assert ids == [1001, 2, 3, 1002]


# ---------------------------------------------------------------------------------------------
# 7. list_changed


async def test_list_changed_reaches_the_client_and_schemas_are_relisted(tmp_path: Path) -> None:
    """After ``list_changed`` the next call is judged against the new schema, without the client listing."""
    second = copy.deepcopy(FIXTURE_TOOLS)
    read = next(t for t in second if t["name"] == "read")
    assert read["inputSchema"]["properties"]["offset"]["minimum"] == 1
    read["inputSchema"]["properties"]["offset"]["minimum"] = 10
    env = {"WITH_TRIGGER": "1", "TOOLS_FILE_2": str(write_tools(tmp_path / "second.json", second))}
    async with open_guard(tmp_path, env=env) as guard:
        listed = (await guard.request("tools/list"))["result"]["tools"]
        assert listed[-1]["name"] == "trigger_list_changed"
        before = await guard.call(10, "read", '{"path":"a","offset":5}')
        assert before["result"]["isError"] is False
        trigger = await guard.call(11, "trigger_list_changed", "{}")
        assert trigger["result"]["isError"] is False
        notices = [m for m in guard.backlog if m.get("method") == "notifications/tools/list_changed"]
        assert len(notices) == 1
        after = await guard.call(12, "read", '{"path":"a","offset":5}')
        rejection = after["result"]["_meta"][REJECTION_KEY]
        assert [(i["keyword"], i["schema_path"], i["instance_path"]) for i in rejection["issues"]] == [
            ("minimum", "/properties/offset/minimum", "/offset")
        ]
        await guard.sync()
        assert len(guard.recorded_with_id(10)) == 1  # 10's alone: 12, the same call, was not sent
        assert len(guard.guard_listings()) == 1
        lists = [m for m in guard.recorded() if m.get("method") == "tools/list"]
        assert len(lists) == 2  # the client's and the guard's
        ok = await guard.call(13, "read", '{"path":"a","offset":10}')
        assert ok["result"]["isError"] is False
        # The client's next listing shows the new schema, annotated.
        relisted = (await guard.request("tools/list"))["result"]["tools"]
        new_read = next(t for t in relisted if t["name"] == "read")
        assert new_read["inputSchema"]["properties"]["offset"]["minimum"] == 10


# ---------------------------------------------------------------------------------------------
# 8. Transparency


async def test_unknown_methods_fields_and_notifications_pass_unchanged(shared: Guard) -> None:
    """What the guard need not touch arrives at the upstream as the same JSON value (re-serialized, compact)."""
    request = b'{"jsonrpc": "2.0",  "id": "u-1", "method": "x/unknown", "params": {"a": [1, 2.50, true]}, "x-trace": 1}'
    notification = b'{ "method":"notifications/x-custom", "jsonrpc":"2.0", "params":{"k":1.0,"s":"\\u00e9"} }'
    ping = b'{"jsonrpc":"2.0","id":"u-2","method":"ping","x-trace":{"span":7}}'
    await shared.send_raw(request)
    response = await shared.response("u-1")
    assert response["error"]["code"] == -32601  # the upstream's answer, passed back
    await shared.send_raw(notification)
    await shared.send_raw(ping)
    assert (await shared.response("u-2"))["result"] == {}
    recorded = [unkeyed(json.loads(line)) for line in shared.record()]
    for line in (request, notification, ping):
        assert recorded.count(unkeyed(json.loads(line))) == 1
    # Re-serialized: compact and ASCII-only, so every reader splits and decodes it alike.
    assert b'"params":{"k":1.0,"s":"\\u00e9"}' in b"\n".join(shared.record())
    # A tools/call is re-serialized (it is judged as parsed), but nothing in it is lost or added.
    call = (
        b'{"jsonrpc": "2.0", "id": "u-3", "method": "tools/call", "x-trace": {"span": 8}, '
        b'"params": {"name": "ls", "arguments": {"limit": 1.0}, "_meta": {"progressToken": "p"}, "x": null}}'
    )
    await shared.send_raw(call)
    assert (await shared.response("u-3"))["result"]["isError"] is False
    (arrived,) = shared.recorded_with_id("u-3")
    assert canon(arrived) == canon(json.loads(call))


async def test_upstream_unknown_result_fields_reach_the_client(shared: Guard) -> None:
    """A forwarded call's answer comes back as the upstream wrote it, unknown fields included."""
    response = await shared.call("x-extra", "ls", '{"path":"."}')
    assert response["result"]["x-extra"] == 1
    result = {"content": [{"type": "text", "text": "ok"}], "isError": False, "x-extra": 1}
    assert canon(json.loads(shared.last_line)) == canon({"jsonrpc": "2.0", "id": "x-extra", "result": result})


async def test_each_id_gets_its_own_response(shared: Guard) -> None:
    """``"7"``, ``7`` and ``2**60`` are three ids: pinged, forwarded and rejected, in flight at once."""
    ids: list[Any] = ["7", 7, 2**60]
    for request_id in ids:
        await shared.send({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
    pings = [await shared.response(i) for i in ids]
    assert all(p["result"] == {} for p in pings)
    # Forwarded calls, each with its own arguments; then rejected ones.
    for n, request_id in enumerate(ids, start=1):
        await shared.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "read", "arguments": {"path": f"f{n}"}},
            }
        )
    answers = [await shared.response(i) for i in ids]
    assert all(a["result"]["isError"] is False for a in answers)
    for n, request_id in enumerate(ids, start=1):
        arrived = [
            m for m in shared.recorded_with_id(request_id) if m.get("params", {}).get("arguments") == {"path": f"f{n}"}
        ]
        assert len(arrived) == 1
    for n, request_id in enumerate(ids, start=1):
        await shared.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "read", "arguments": {"path": "a", "offset": -n}},
            }
        )
    rejections = [await shared.response(i) for i in ids]
    assert all(r["result"]["isError"] is True for r in rejections)
    assert shared.backlog == []
    assert b'"id":1152921504606846976' in shared.last_line  # the large id kept exactly


async def test_a_line_that_is_not_json_gets_a_parse_error(shared: Guard) -> None:
    """-32700 for the request's id when it can be recovered (else null), echoing nothing; the session goes on."""
    await shared.send_raw(f'{{"jsonrpc":"2.0","id":"broken","method":"ping","params":{{"t":"{SECRET}"}}'.encode())
    message = await shared.receive()
    assert message["error"]["code"] == -32700
    assert message["id"] == "broken"  # JSON-RPC 2.0, section 5: the id when it can be determined
    assert SECRET not in shared.lines[-1].decode() and SECRET not in shared.stderr()
    await shared.send_raw(b"not json at all")
    message = await shared.receive()
    assert message["error"]["code"] == -32700 and message["id"] is None
    await shared.send_raw(b'{"jsonrpc":"2.0","method":"ping","params":{"x":[1,}, "id": 5}')  # broken before the id
    message = await shared.receive()
    assert message["error"]["code"] == -32700 and message["id"] is None
    await shared.sync()
    response = await shared.call("after-parse-error", "read", '{"path":"a"}')
    assert response["result"]["isError"] is False


# ---------------------------------------------------------------------------------------------
# 9. stdout carries only protocol


@pytest.mark.parametrize(
    "noise",
    ["text", "json"],
)
async def test_stdout_carries_only_json_rpc(tmp_path: Path, noise: str) -> None:
    """Every line on the guard's stdout is a JSON-RPC 2.0 message, even when the upstream prints noise."""
    tools = write_tools(tmp_path / "tools.json", [SIGMA_TOOLS[6], FORGED_TOOL])
    env = {"STDOUT_NOISE": noise, "TOOLS_FILE": str(tools)}
    async with open_guard(tmp_path, env=env, server=FORGING_SERVER) as guard:
        await guard.request("tools/list")
        assert (await guard.call(20, "read", '{"path":"a"}'))["result"]["isError"] is False
        await guard.call(21, "read", '{"path":"a","offset":0}')
        await guard.call(22, "forged", "{}")
        await guard.call(23, "nope", "{}")
        await guard.send_raw(b"{oops")
        await guard.request("x/unknown")
        await guard.sync()
        await guard.close_stdin()
        assert await guard.wait_exit() == 0
        await guard.drain()
        assert len(guard.lines) >= 9
        assert all(b"forging_server" not in line for line in guard.lines)
        for line in guard.lines:
            message = json.loads(line)
            assert type(message) is dict and message.get("jsonrpc") == "2.0", line
        stderr = guard.stderr()
        assert "mcp-guard INFO" in stderr  # the log went to stderr, and (above) none of it to stdout


# ---------------------------------------------------------------------------------------------
# 10. Profiles and hiding


async def test_strict_profile(tmp_path: Path) -> None:
    """``strict``: the Sigma tools (no annotations) stay supported; a schema with ``title`` does not."""
    titled = {
        "name": "titled",
        "description": "A schema with an annotation keyword.",
        "inputSchema": {"type": "object", "title": "Titled", "properties": {"n": {"type": "integer"}}},
    }
    env = {"TOOLS_FILE": str(write_tools(tmp_path / "tools.json", [*SIGMA_TOOLS, titled]))}
    async with open_guard(tmp_path, env=env, args=["--profile", "strict"]) as guard:
        tools = (await guard.request("tools/list"))["result"]["tools"]
        assert [canon(t) for t in tools] == [canon(annotated(t, "strict")) for t in [*SIGMA_TOOLS, titled]]
        verdicts = {t["name"]: t["_meta"][SCHEMA_KEY] for t in tools}
        assert all(verdicts[t["name"]]["supported"] for t in SIGMA_TOOLS)
        assert verdicts["titled"]["supported"] is False
        assert [(i["keyword"], i["schema_path"]) for i in verdicts["titled"]["issues"]] == [("title", "/title")]
        rejected = await guard.call(30, "titled", '{"n":1}')
        assert rejected["result"]["_meta"][REJECTION_KEY]["kind"] == U
        accepted = await guard.call(31, "read", '{"path":"a","offset":1}')
        assert accepted["result"]["isError"] is False
        await guard.sync()
        assert guard.recorded_with_id(30) == []
    async with open_guard(tmp_path / "standard", env=env) as guard:
        tools = (await guard.request("tools/list"))["result"]["tools"]
        assert tools[-1]["_meta"][SCHEMA_KEY] == {"supported": True, "issues": []}


async def test_hide_unsupported(tmp_path: Path) -> None:
    """Hidden tools are out of the list and unknown to calls (-32602), never forwarded."""
    async with open_guard(tmp_path, args=["--hide-unsupported"]) as guard:
        tools = (await guard.request("tools/list"))["result"]["tools"]
        shown = [t for t in FIXTURE_TOOLS if t["name"] not in UNSUPPORTED_NAMES]
        assert [canon(t) for t in tools] == [canon(annotated(t)) for t in shown]
        for n, name in enumerate(UNSUPPORTED_NAMES):
            response = await guard.call(40 + n, name, "{}")
            assert response["error"]["code"] == -32602, response
        ok = await guard.call(50, "add", '{"a":1,"b":2}')
        assert ok["result"]["isError"] is False
        await guard.sync()
        calls = [m for m in guard.recorded() if m.get("method") == "tools/call"]
        assert [unkeyed(m) for m in calls] == [unkeyed(m) for m in guard.recorded_with_id(50)]


async def test_hide_unsupported_before_listing(tmp_path: Path) -> None:
    """A hidden tool called before any listing is unknown too."""
    async with open_guard(tmp_path, args=["--hide-unsupported"]) as guard:
        response = await guard.call(2, "fetch_page", '{"url":"https://example.com"}')
        assert response["error"]["code"] == -32602
        await guard.sync()
        assert guard.recorded_with_id(2) == []


# ---------------------------------------------------------------------------------------------
# 11. Cancelling a call the guard holds


async def test_cancelled_while_the_guard_lists(tmp_path: Path) -> None:
    """A call held while the guard lists, then cancelled by the client, is never forwarded nor answered."""
    async with open_guard(tmp_path, env={"HOLD_LIST": "1"}, server=FORGING_SERVER) as guard:
        await guard.send_raw(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{}}}')
        with anyio.fail_after(READ_TIMEOUT):  # the guard's own listing is now held by the upstream
            while not guard.guard_listings():
                await anyio.sleep(0.01)
        cancel = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"user"}}'
        await guard.send_raw(cancel)
        await guard.send_raw(b'{"jsonrpc":"2.0","method":"test/release"}')
        await guard.sync()
        other = await guard.call(6, "echo", "{}")
        assert other["result"]["isError"] is False
        await guard.sync()
        assert len(guard.recorded_with_id(6)) == 1  # 6's alone: 5, the same call, was never sent
        assert not any(m.get("method") == "notifications/cancelled" for m in guard.recorded())  # nor its cancellation
        assert [m for m in guard.backlog if m.get("id") == 5] == []
        assert len(guard.guard_listings()) == 1


async def test_cancelling_an_answered_call_reaches_no_upstream(tmp_path: Path) -> None:
    """A cancellation naming a request no longer in flight (answered) is not passed on: the upstream knew it
    by the guard's id, never by the client's (a cancellation in flight names that id: tests/peer/test_answers)."""
    async with open_guard(tmp_path, server=FORGING_SERVER) as guard:
        await guard.request("tools/list")
        assert (await guard.call(5, "echo", "{}"))["result"]["isError"] is False
        cancel = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}'
        await guard.send_raw(cancel)
        await guard.sync()
        assert not any(m.get("method") == "notifications/cancelled" for m in guard.recorded())
        assert any(m.get("method") == "ping" for m in guard.recorded())  # (what came after it did arrive)


# ---------------------------------------------------------------------------------------------
# 12. Ending


@pytest.mark.parametrize("server", [RECORDING_SERVER, SIGMA / "server.py"], ids=["raw", "sdk"])
async def test_client_closing_stdin_ends_guard_and_upstream(tmp_path: Path, server: Path) -> None:
    """EOF on stdin: the upstream gets EOF on its own stdin and exits by itself (no signal); the guard exits 0."""
    async with open_guard(tmp_path, server=server) as guard:
        await guard.sync() if server == RECORDING_SERVER else await guard.request("tools/list")
        assert len(guard.upstream_pids()) == 1
        await guard.close_stdin()
        assert await guard.wait_exit() == 0
        assert guard.upstream_pids() == []
        assert "terminating it" not in guard.stderr()  # it was not killed: it saw EOF
        assert "WARNING" not in guard.stderr()


async def test_upstream_exiting_leaves_the_guard_running(tmp_path: Path) -> None:
    """The upstream exits on a call: the call gets an error, the guard stays, the next request restarts it."""
    async with open_guard(tmp_path, server=FORGING_SERVER) as guard:
        await guard.request("tools/list")
        (first,) = guard.upstream_pids()
        await guard.send_raw(b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"exit_now"}}')
        assert (await guard.response(9))["error"]["code"] == -32603
        assert guard.process.returncode is None
        await guard.sync()
        (second,) = guard.upstream_pids()
        assert second != first
        await guard.close_stdin()
        assert await guard.wait_exit() == 0
        assert guard.upstream_pids() == []


async def test_upstream_killed_leaves_the_guard_running(tmp_path: Path) -> None:
    """The upstream is killed: the guard stays; the next request is answered by a new upstream."""
    async with open_guard(tmp_path) as guard:
        await guard.sync()
        (pid,) = guard.upstream_pids()
        os.kill(pid, signal.SIGKILL)
        with anyio.fail_after(EXIT_TIMEOUT):
            while "the upstream went away" not in guard.stderr():
                await anyio.sleep(0.02)
        await guard.sync()
        assert guard.upstream_pids() not in ([], [pid])
        assert guard.process.returncode is None


async def test_answers_in_flight_when_the_client_hangs_up_still_arrive(tmp_path: Path) -> None:
    """Requests piped in, then EOF: like a server, the upstream answers what it holds before all exit (status 0)."""
    async with open_guard(tmp_path, server=SIGMA / "server.py", initialize=False) as guard:
        await guard.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        await guard.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await guard.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        await guard.send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
            }
        )
        await guard.close_stdin()
        listed = await guard.response(2)
        assert len(listed["result"]["tools"]) == 15
        added = await guard.response(3)
        assert "result" in added, added  # once under CI at load 8: an error answered instead (which one?)
        assert added["result"]["content"][0]["text"] == "3"
        assert await guard.wait_exit() == 0


async def test_a_tools_call_notification_is_dropped(shared: Guard) -> None:
    """A tools/call without an id cannot be judged and answered: it never reaches the upstream."""
    await shared.send({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "fetch_page", "arguments": {}}})
    await shared.send(
        {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "read", "arguments": {"path": "x"}}}
    )
    await shared.sync()
    assert not [m for m in shared.recorded() if m.get("method") == "tools/call" and "id" not in m]


async def test_large_messages_pass_both_ways(shared: Guard) -> None:
    """No 64 KiB line limit: a 1 MiB argument is judged and forwarded intact."""
    big = "x" * (1 << 20)
    response = await shared.call("big", "write", json.dumps({"path": "big.txt", "content": big}))
    assert response["result"]["isError"] is False
    (arrived,) = shared.recorded_with_id("big")
    assert arrived["params"]["arguments"]["content"] == big


# ---------------------------------------------------------------------------------------------
# 13. A tools/call hidden from the guard but not from the upstream
#
# The guard parses each line with Python's json; it forwards lines that are not a tools/call
# byte for byte. An upstream that reads the same bytes differently must not find a
# tools/call in them that the guard never judged.


def readings(line: bytes) -> list[Any]:
    """The messages other readers may take from one forwarded line.

    - Universal newlines (Python's text-mode stdin, which the MCP Python SDK's stdio server
      reads through): ``\\r`` ends a line too.
    - Parsers where the first of duplicate keys wins.
    """
    out: list[Any] = []
    for piece in line.splitlines():  # bytes.splitlines splits on \\n, \\r and \\r\\n
        try:
            out.append(json.loads(piece))
            out.append(json.loads(piece, object_pairs_hook=lambda pairs: dict(reversed(pairs))))
        except ValueError:
            continue
    return out


SMUGGLED_CALL = '{"jsonrpc":"2.0","id":"smuggled","method":"tools/call","params":{"name":"fetch_page","arguments":{}}}'
SMUGGLING_LINES = {
    "cr-inside-a-notification": (
        '{"jsonrpc":"2.0","method":"notifications/x","params":\r' + SMUGGLED_CALL + "\r}"
    ).encode(),
    "cr-inside-a-request": ('{"jsonrpc":"2.0","id":"s2","method":"ping","params":\r' + SMUGGLED_CALL + "\r}").encode(),
    "duplicate-method": (
        b'{"jsonrpc":"2.0","id":"smuggled","method":"tools/call",'
        b'"params":{"name":"fetch_page","arguments":{}},"method":"x/other"}'
    ),
}


@pytest.mark.parametrize("line", SMUGGLING_LINES.values(), ids=SMUGGLING_LINES.keys())
async def test_no_reader_finds_an_unjudged_call(tmp_path: Path, line: bytes) -> None:
    """Whatever reaches the upstream reads as a tools/call to no reader (fetch_page is unsupported)."""
    async with open_guard(tmp_path) as guard:
        await guard.request("tools/list")
        await guard.send_raw(line)
        await guard.sync()
        assert guard.record()  # something was recorded; the check below is not vacuous
        smuggled = [
            m
            for recorded in guard.record()
            for m in readings(recorded)
            if type(m) is dict and m.get("method") == "tools/call"
        ]
        assert smuggled == []


async def test_no_call_is_smuggled_into_an_sdk_server(tmp_path: Path) -> None:
    """Against the SDK's own stdio server (universal newlines), a call hidden behind \\r must not run."""
    async with open_guard(tmp_path, server=SIGMA / "server.py") as guard:
        await guard.request("tools/list")
        direct = await guard.call("direct", "fetch_page", '{"url":"https://example.com"}')
        assert direct["result"]["_meta"][REJECTION_KEY]["kind"] == U
        await guard.send_raw(SMUGGLING_LINES["cr-inside-a-notification"])
        await guard.sync()
        ran = [m for m in guard.backlog if type(m) is dict and m.get("id") == "smuggled"]
        assert ran == []


# ---------------------------------------------------------------------------------------------
# 14. A cancelled tools/list


async def test_a_cancelled_list_answered_late_is_still_the_guards(tmp_path: Path) -> None:
    """A listing answered after the client cancelled it carries the guard's verdicts, or is dropped."""
    env = {"HOLD_LIST": "1", "TOOLS_FILE": str(write_tools(tmp_path / "tools.json", [FORGED_TOOL]))}
    async with open_guard(tmp_path, env=env, server=FORGING_SERVER) as guard:
        await guard.send_raw(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
        await guard.send_raw(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}')
        await guard.send_raw(b'{"jsonrpc":"2.0","method":"test/release"}')
        await guard.sync()
        late = [m for m in guard.backlog if is_response_to(m, 2)]
        for message in late:
            forged = message["result"]["tools"][0]
            assert forged["_meta"][SCHEMA_KEY]["supported"] is False


# ---------------------------------------------------------------------------------------------
# 14. Numbers, nesting, envelopes and names that other relays get wrong (found by a new user)

NUMBER_TOOL = {
    "name": "n",
    "inputSchema": {
        "type": "object",
        "properties": {
            "count": {"type": "integer", "minimum": 1},
            "ratio": {"type": "number", "minimum": 0},
            "l": {"type": "array", "items": {"type": "integer", "minimum": 0}},
        },
        "additionalProperties": False,
    },
}


@pytest.mark.parametrize(
    ("arguments", "pointer"),
    [
        ('{"count":0.99999999999999999999}', "/count"),  # rounds to 1.0: would pass integer and minimum
        ('{"ratio":-1e-400}', "/ratio"),  # underflows to -0.0: would pass minimum 0
        ('{"count":1.0000000000000001}', "/count"),
        ('{"count":9007199254740993.0}', "/count"),  # more digits than a double holds
        ('{"l":[1,-1e-400]}', "/l/1"),
    ],
    ids=["near-integer", "underflow", "near-bound", "beyond-53-bits", "in-items"],
)
async def test_numbers_a_double_cannot_carry_exactly_are_refused(tmp_path: Path, arguments: str, pointer: str) -> None:
    """Rounding would silently change the client's value (and could pass a check it fails): refused, not forwarded."""
    tools = write_tools(tmp_path / "tools.json", [NUMBER_TOOL])
    async with open_guard(tmp_path, env={"TOOLS_FILE": str(tools)}) as guard:
        await guard.request("tools/list")
        response = await guard.call("num", "n", arguments)
        rejection = response["result"]["_meta"][REJECTION_KEY]
        assert (rejection["kind"], [(i["keyword"], i["instance_path"]) for i in rejection["issues"]]) == (
            V,
            [("json", pointer)],
        )
        assert guard.recorded_with_id("num") == []


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"ratio":0.1}', {"ratio": 0.1}),
        ('{"ratio":1e2,"count":1E0}', {"ratio": 100.0, "count": 1.0}),
        ('{"ratio":-0.0}', {"ratio": -0.0}),
        ('{"count":12345678901234567890123}', {"count": 12345678901234567890123}),  # integers stay exact
    ],
    ids=["0.1", "exponents", "negative-zero", "big-integer"],
)
async def test_numbers_that_round_trip_are_forwarded_with_the_same_value(
    tmp_path: Path, arguments: str, expected: dict[str, Any]
) -> None:
    tools = write_tools(tmp_path / "tools.json", [NUMBER_TOOL])
    async with open_guard(tmp_path, env={"TOOLS_FILE": str(tools)}) as guard:
        await guard.request("tools/list")
        response = await guard.call("num", "n", arguments)
        assert response["result"]["isError"] is False
        (arrived,) = guard.recorded_with_id("num")
        assert canon(arrived["params"]["arguments"]) == canon(expected)


async def test_doubles_of_2_53_and_up_reach_the_upstream_as_the_value_checked(tmp_path: Path) -> None:
    """-2**63 and 2**70 are doubles exactly; ``repr`` would write ``-9.223372036854776e+18``, another decimal."""
    tool = {
        "name": "big",
        "inputSchema": {
            "type": "object",
            "properties": {"x": {"type": "number"}, "l": {"type": "array", "items": {"type": "integer"}}},
        },
    }
    tools = write_tools(tmp_path / "tools.json", [tool])
    async with open_guard(tmp_path, env={"TOOLS_FILE": str(tools)}) as guard:
        await guard.request("tools/list")
        response = await guard.call("big", "big", '{"x":-9223372036854775808.0,"l":[1180591620717411303424.0]}')
        assert response["result"]["isError"] is False
        (line,) = [line for line in guard.record() if b'"big"' in line and b'"tools/call"' in line]
        arrived = json.loads(line, parse_float=Decimal)["params"]["arguments"]
        assert arrived == {"x": Decimal("-9223372036854775808"), "l": [Decimal("1180591620717411303424")]}


async def test_integers_are_exact_within_a_doubles_range_and_a_precise_parse_error_beyond_the_digit_limit(
    tmp_path: Path,
) -> None:
    """308 digits go through digit for digit; 4,300 are read but refused (beyond the range of a double, as
    ``1e4299``: red team 38 F1); 4,301 make the line a parse error that says so (no value echoed)."""
    tools = write_tools(tmp_path / "tools.json", [NUMBER_TOOL])
    async with open_guard(tmp_path, env={"TOOLS_FILE": str(tools)}) as guard:
        await guard.request("tools/list")
        within = "9" * 308
        response = await guard.call("exact", "n", f'{{"count":{within}}}')
        assert response["result"]["isError"] is False
        assert any(f'"count":{within}}}'.encode() in line for line in guard.record())
        longest = "9" * 4300
        response = await guard.call("beyond", "n", f'{{"count":{longest}}}')
        issues = response["result"]["_meta"]["mcp-guard/rejection"]["issues"]
        assert [(i["keyword"], i["instance_path"]) for i in issues] == [("json", "/count")]
        assert guard.recorded_with_id("beyond") == []
        too_long = "7" * 4301
        response = await guard.call("long", "n", f'{{"count":{too_long}}}')
        assert response["error"]["code"] == -32700
        message = response["error"]["message"]
        assert message.startswith("Parse error: the line holds an integer literal of more than 4,300 digits"), message
        assert "not valid JSON" not in message and "nests" not in message
        assert guard.recorded_with_id("long") == []
        assert "7777777777" not in message + guard.stderr()


async def test_nan_outside_arguments_is_never_written(shared: Guard) -> None:
    """NaN/Infinity are not JSON: a request holding one is answered -32602 and not forwarded, wherever it stands."""
    await shared.send_raw(b'{"jsonrpc":"2.0","id":"nan-ping","method":"ping","params":{"y":1e400,"z":NaN}}')
    response = await shared.response("nan-ping")
    assert response["error"]["code"] == -32602
    await shared.send_raw(
        b'{"jsonrpc":"2.0","id":"nan-meta","method":"tools/call",'
        b'"params":{"name":"read","arguments":{"path":"x"},"_meta":{"x":Infinity}}}'
    )
    assert (await shared.response("nan-meta"))["error"]["code"] == -32602
    await shared.sync()
    assert shared.recorded_with_id("nan-ping") == [] and shared.recorded_with_id("nan-meta") == []
    assert not any(b"NaN" in line or b"Infinity" in line for line in shared.record())


async def test_upstream_nan_or_over_deep_answers_become_errors_for_their_ids(tmp_path: Path) -> None:
    """The client gets an error for its id, never a hang, and stdout never carries NaN."""
    tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("nan_result", "deep_result")]
    env = {"TOOLS_FILE": str(write_tools(tmp_path / "tools.json", tools))}
    async with open_guard(tmp_path, env=env, server=FORGING_SERVER) as guard:
        await guard.request("tools/list")
        nan = await guard.call("nan", "nan_result", "{}")
        assert nan["error"]["code"] == -32603
        deep = await guard.call("deep", "deep_result", "{}")
        assert deep["error"]["code"] == -32603
        for line in guard.lines:  # strict JSON only: no NaN/Infinity token anywhere
            json.loads(line, parse_constant=lambda token: pytest.fail(f"non-JSON token {token} on stdout"))
        assert (await guard.request("ping"))["result"] == {}  # the session goes on


async def test_upstream_number_literals_pass_digit_for_digit_and_are_never_read_rounded(tmp_path: Path) -> None:
    """A literal no double holds (``1.00000000000000000001``, ``1e400``) reaches the client as written, and a
    schema holding one is not supported: the guard never enforces a rounded ``minimum`` or ``enum``."""
    raw = tmp_path / "tools-raw.json"
    raw.write_text(
        '[{"name":"low","inputSchema":{"type":"object","properties":{"x":{"type":"number",'
        '"minimum":1.00000000000000000001}}}},'
        '{"name":"pick","inputSchema":{"type":"object","properties":{"x":{"type":"number","enum":[1.00000000000000000001]}}}},'
        '{"name":"literal_result","inputSchema":{"type":"object"}}]'
    )
    env = {"TOOLS_RAW_FILE": str(raw)}
    async with open_guard(tmp_path, env=env, server=FORGING_SERVER) as guard:
        listed = await guard.request("tools/list")
        line = next(raw_line for raw_line in guard.lines if b'"low"' in raw_line)
        assert b'"minimum":1.00000000000000000001' in line and b'"enum":[1.00000000000000000001]' in line
        verdicts = {t["name"]: t["_meta"]["mcp-guard/schema"]["supported"] for t in listed["result"]["tools"]}
        assert verdicts["low"] is False and verdicts["pick"] is False and verdicts["literal_result"] is True
        for name in ("low", "pick"):
            refused = await guard.call(f"{name}-1", name, '{"x":1}')
            assert refused["result"]["isError"] is True
            assert refused["result"]["_meta"]["mcp-guard/rejection"]["kind"] == "validation"
        result_line_seen = len(guard.lines)
        answer = await guard.call("lit", "literal_result", "{}")
        assert answer["result"]["isError"] is False
        out = next(raw_line for raw_line in guard.lines[result_line_seen:] if b'"lit"' in raw_line)
        assert b'"a":0.12345678901234567890' in out and b'"c":1e400' in out
        assert b'"e":1.00000000000000000001' in out and b'"d":-0.0' in out
        result = json.loads(out, parse_float=Decimal)["result"]["structuredContent"]
        assert result["f"] == Decimal("-9223372036854775808")  # the upstream's value, not repr's -9.223372036854776e+18
        calls = [line for line in guard.record() if b'"tools/call"' in line]
        assert len(calls) == 1 and b'"literal_result"' in calls[0]  # the refused calls never reached the upstream


async def test_arguments_nested_beyond_the_parser_get_a_parse_error_for_their_id(shared: Guard) -> None:
    deep = "[" * 5000 + "]" * 5000
    line = '{"jsonrpc":"2.0","id":"deep-args","method":"tools/call","params":{"name":"read","arguments":{"x":'
    await shared.send_raw((line + deep + "}}}").encode())
    response = await shared.response("deep-args")
    assert response["error"]["code"] == -32700
    await shared.sync()
    assert shared.recorded_with_id("deep-args") == []


@pytest.mark.parametrize(
    ("envelope", "reply_id"),
    [
        ('"id":true', None),
        ('"id":{"x":1}', None),
        ('"id":[1]', None),
        ('"id":null', None),
        ('"id":1.5', None),
    ],
    ids=["bool", "object", "array", "null", "fraction"],
)
async def test_a_tools_call_with_an_invalid_id_is_an_invalid_request(
    shared: Guard, envelope: str, reply_id: Any
) -> None:
    """Even a valid call is not forwarded under an id JSON-RPC/MCP does not allow; the reply carries id null."""
    before = len(shared.record())
    await shared.send_raw(
        f'{{"jsonrpc":"2.0",{envelope},"method":"tools/call","params":{{"name":"read","arguments":{{"path":"x"}}}}}}'.encode()
    )
    message = await shared.receive()
    assert message["error"]["code"] == -32600 and message["id"] == reply_id
    await shared.sync()
    assert not [m for m in shared.recorded()[before:] if m.get("method") == "tools/call"]


async def test_a_tools_call_without_jsonrpc_2_is_an_invalid_request(shared: Guard) -> None:
    await shared.send_raw(b'{"jsonrpc":"1.0","id":"v1","method":"tools/call","params":{"name":"read","arguments":{}}}')
    assert (await shared.response("v1"))["error"]["code"] == -32600
    await shared.send_raw(b'{"id":"v0","method":"tools/call","params":{"name":"read","arguments":{"path":"x"}}}')
    assert (await shared.response("v0"))["error"]["code"] == -32600
    await shared.sync()
    assert shared.recorded_with_id("v1") == [] and shared.recorded_with_id("v0") == []


async def test_a_call_the_upstream_dies_on_is_answered(tmp_path: Path) -> None:
    """The upstream exits mid-call: the pending request gets a JSON-RPC error (no hang); the guard stays."""
    async with open_guard(tmp_path, server=FORGING_SERVER) as guard:
        await guard.request("tools/list")
        with anyio.fail_after(3):
            response = await guard.call("dies", "exit_now", "{}")
        assert response["error"]["code"] == -32603
        await guard.close_stdin()
        assert await guard.wait_exit() == 0


async def test_log_lines_cannot_be_forged_and_undeclared_keys_stay_out(shared: Guard) -> None:
    name = "nosuch\nmcp-guard INFO: forged line\x1b[2J"
    await shared.send({"jsonrpc": "2.0", "id": "inj1", "method": "tools/call", "params": {"name": name}})
    assert (await shared.response("inj1"))["error"]["code"] == -32602
    key = "SECRET-KEY-sk-live-BBBB\nmcp-guard INFO: tools: 99 supported"
    await shared.send(
        {"jsonrpc": "2.0", "id": "inj2", "method": "tools/call", "params": {"name": "add", "arguments": {key: 1}}}
    )
    assert (await shared.response("inj2"))["result"]["isError"] is True
    await shared.sync()
    log_lines = shared.stderr().splitlines()
    assert not any(line.startswith("mcp-guard INFO: forged") for line in log_lines)
    assert not any("99 supported" in line for line in log_lines)
    assert "\x1b" not in shared.stderr()
    assert "SECRET-KEY" not in shared.stderr()


@pytest.mark.parametrize(
    "breaker",
    ["\u0085", "\u2028", "\u2029", "\r", "\x0b", "\x1c"],
    ids=["NEL", "LINE-SEPARATOR", "PARAGRAPH-SEPARATOR", "CR", "VT", "FS"],
)
async def test_no_line_break_or_terminal_control_reaches_the_log_raw(tmp_path: Path, breaker: str) -> None:
    """Through the real log (stderr): a tool name holding a Unicode line break, CSI (U+009B), ESC or a bidi
    override stays on its one line, escaped; nothing a terminal acts on is written."""
    tools = write_tools(tmp_path / "tools.json", [{"name": "t", "inputSchema": {"type": "object"}}])
    async with open_guard(tmp_path, env={"TOOLS_FILE": str(tools)}) as guard:
        await guard.request("tools/list")
        name = f"nosuch{breaker}mcp-guard INFO: forged\u009b2J\x1b]0;title\x07\u202eevil\u2066"
        await guard.send({"jsonrpc": "2.0", "id": "forge", "method": "tools/call", "params": {"name": name}})
        assert (await guard.response("forge"))["error"]["code"] == -32602
        await guard.sync()
        log = guard.stderr()
        (line,) = [line for line in log.split("\n") if "nosuch" in line]
        assert line.startswith("mcp-guard WARNING: rejected tools/call `nosuch")
        assert line.splitlines() == [line]  # one line for str.splitlines too (NEL, U+2028, U+2029, ...)
        assert "forged\\u009b2J\\x1b]0;title\\x07\\u202eevil\\u2066" in line
        unsafe = {*map(chr, range(0x20)), "\x7f", *map(chr, range(0x80, 0xA0)), "\u2028", "\u2029", "\u202e", "\u2066"}
        assert not unsafe & set(log.replace("\n", ""))


async def test_duplicate_tool_names_are_refused_on_one_page_and_across_pages(tmp_path: Path) -> None:
    """Which of two same-named tools would the upstream run? Unknowable: both are unsupported (fail closed)."""
    strict_d = {"name": "d", "inputSchema": {"type": "object", "properties": {"b": {"type": "integer", "minimum": 0}}}}
    loose_d = {"name": "d", "inputSchema": {"type": "object"}}
    filler = [{"name": f"f{i}", "inputSchema": {"type": "object"}} for i in range(3)]
    for layout, page_size in (([strict_d, loose_d], "100"), ([strict_d, *filler, loose_d], "4")):
        directory = tmp_path / page_size
        directory.mkdir()
        tools = write_tools(directory / "tools.json", layout)
        async with open_guard(directory, env={"TOOLS_FILE": str(tools), "PAGE_SIZE": page_size}) as guard:
            listed: list[Any] = []
            params: dict[str, Any] = {}
            while True:
                result = (await guard.request("tools/list", params))["result"]
                listed += result["tools"]
                if "nextCursor" not in result:
                    break
                params = {"cursor": result["nextCursor"]}
            verdicts = [t["_meta"]["mcp-guard/schema"] for t in listed if t["name"] == "d"]
            assert verdicts[-1]["supported"] is False
            assert verdicts[-1]["issues"][0]["keyword"] == "name"
            response = await guard.call("dup", "d", '{"b":-1}')
            assert response["result"]["_meta"][REJECTION_KEY]["kind"] == U
            assert guard.recorded_with_id("dup") == []
            # Every account says why: the name is listed twice (not "features the guard cannot enforce").
            (issue,) = response["result"]["_meta"][REJECTION_KEY]["issues"]
            assert issue["message"].startswith("the tool's name is listed more than once by the server")
            assert verdicts[-1]["issues"][0]["message"] == issue["message"]
            text = response["result"]["content"][0]["text"]
            assert text.startswith("mcp-guard refused this call to `d`: the tool's name is listed more than once")
            assert "features the guard cannot enforce" not in text and "schema must change" not in text
            await guard.sync()
            assert (
                "rejected tools/call `d` (unsupported_capability): the tool's name is listed more than once by the "
                "server\n" in guard.stderr()
            )
            assert "name at schema (root)" not in guard.stderr()


async def test_tools_without_a_name_or_an_input_schema_get_a_verdict(tmp_path: Path) -> None:
    tools = write_tools(
        tmp_path / "tools.json",
        [{"name": 42, "inputSchema": {"type": "object"}}, {"name": "no_schema"}],
    )
    async with open_guard(tmp_path, env={"TOOLS_FILE": str(tools)}) as guard:
        listed = (await guard.request("tools/list"))["result"]["tools"]
        verdicts = {json.dumps(t["name"]): t["_meta"]["mcp-guard/schema"] for t in listed}
        assert verdicts["42"]["supported"] is False and verdicts["42"]["issues"][0]["keyword"] == "name"
        assert verdicts['"no_schema"']["issues"][0]["keyword"] == "inputSchema"
        response = await guard.call("ns", "no_schema", "{}")
        assert response["result"]["_meta"][REJECTION_KEY]["kind"] == V
        assert guard.recorded_with_id("ns") == []
        text = response["result"]["content"][0]["text"]
        assert text.startswith("mcp-guard refused this call to `no_schema`: the tool has no `inputSchema`.")
        assert "input schema itself is malformed" not in text


# ---------------------------------------------------------------------------------------------
# 15. Hostile sizes through the relay (the core's budget, seen by a client)

BIG_TOOL = {
    "name": "big",
    "inputSchema": {
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "n": {"type": "array", "items": {"type": "integer", "minimum": 0}},
            "rows": {
                "type": "array",
                "items": {"type": "object", "properties": {f"c{i}": {"type": "integer"} for i in range(9)}},
            },
        },
    },
}


async def test_sixteen_mib_and_a_million_elements_pass_and_over_budget_is_refused(tmp_path: Path) -> None:
    tools = write_tools(tmp_path / "tools.json", [BIG_TOOL])
    async with open_guard(tmp_path, env={"TOOLS_FILE": str(tools)}) as guard:
        await guard.request("tools/list")
        big = "x" * (16 << 20)
        response = await guard.call("s16", "big", json.dumps({"s": big, "n": list(range(1_000_000))}))
        assert response["result"]["isError"] is False
        (arrived,) = guard.recorded_with_id("s16")
        assert arrived["params"]["arguments"]["s"] == big and len(arrived["params"]["arguments"]["n"]) == 1_000_000
        rows = json.dumps({"rows": [{}] * 400_001})  # 400,001 x weight 10 > 4,000,000
        response = await guard.call("budget", "big", rows)
        rejection = response["result"]["_meta"][REJECTION_KEY]
        assert (rejection["kind"], [i["keyword"] for i in rejection["issues"]]) == (V, ["budget"])
        assert guard.recorded_with_id("budget") == []


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far (``/proc``), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="the guard's CPU time is read from /proc")
@pytest.mark.parametrize(
    "properties", [pytest.param(200_000, id="200k"), pytest.param(1_000_000, id="1M", marks=pytest.mark.slow)]
)
async def test_a_listing_far_past_the_schema_budget_costs_no_more_than_relaying_it(
    tmp_path: Path, properties: int
) -> None:
    """One tool of 1,000,000 properties (28 MB; the default run has 200,000, 5.6 MB, twenty times the budget:
    ``-m slow`` runs the million): the budget (10,000 subschemas) cuts classification off where
    it is hit. A ``ping`` sent behind each listing is answered (while it is judged, or after), and the
    guard spends about the CPU time on it that it spends on a second listing of the same bytes, whose schema
    is cached (not classified at all): parsing and writing 28 MB. It spent ~10 s more (a ping waited ~20 s)
    while the whole schema was walked and scanned. The bound is relative and generous, and counts the
    guard's own CPU time, not wall time (the machine is shared)."""
    props = ",".join(f'"p{i}":{{"type":"string"}}' for i in range(properties))
    raw = tmp_path / "tools-raw.json"
    raw.write_text('[{"name":"wide","inputSchema":{"type":"object","properties":{' + props + "}}}]")
    async with open_guard(tmp_path, env={"TOOLS_RAW_FILE": str(raw)}, server=FORGING_SERVER) as guard:
        spent: list[float] = []
        listed = b""
        for round_ in range(3):
            before = cpu_seconds(guard.process.pid)
            await guard.send({"jsonrpc": "2.0", "id": f"list-{round_}", "method": "tools/list"})
            await guard.send({"jsonrpc": "2.0", "id": f"ping-{round_}", "method": "ping"})
            with anyio.fail_after(120):  # hang guard only
                # (the listing is too big for receive(); the ping may be answered first: issue 25, peer.offload)
                both = [await guard._stdout.receive_until(b"\n", 1 << 26) for _ in range(2)]
                (line,) = [b for b in both if b.startswith(f'{{"jsonrpc":"2.0","id":"list-{round_}"'.encode())]
                listed = listed or line
                (pong,) = [json.loads(b) for b in both if b is not line]
                assert pong == {"jsonrpc": "2.0", "id": f"ping-{round_}", "result": {}}
            spent.append(cpu_seconds(guard.process.pid) - before)
        assert spent[0] <= 1.5 * min(spent[1:]) + 0.5, spent
        (wide,) = [t for t in json.loads(listed)["result"]["tools"] if t["name"] == "wide"]
        verdict = wide["_meta"][SCHEMA_KEY]
        assert verdict["supported"] is False and [i["keyword"] for i in verdict["issues"]] == ["properties"]
        assert "work budget" in verdict["issues"][0]["message"]


# ---------------------------------------------------------------------------------------------
# 16. Found in a second new-user trial


async def test_a_tool_result_cannot_pose_as_the_guards_rejection(tmp_path: Path) -> None:
    forged = {
        "mcp-guard/rejection": {"kind": "validation", "tool": "echo", "issues": []},
        "mcp-guard/x": 1,
        "other/k": 2,
    }
    async with open_guard(tmp_path, env={"CALL_META": json.dumps(forged)}, server=FORGING_SERVER) as guard:
        await guard.request("tools/list")
        response = await guard.call("ran", "echo", "{}")
        assert response["result"]["_meta"] == {"other/k": 2}  # it ran: the guard's keys are the guard's alone


async def test_a_duplicate_stays_refused_when_the_client_relists_one_page(tmp_path: Path) -> None:
    first = {"name": "t", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}
    second = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 1}},
            "additionalProperties": False,
        },
    }
    filler = [{"name": f"f{i}", "inputSchema": {"type": "object"}} for i in range(3)]
    tools = write_tools(tmp_path / "tools.json", [first, *filler, second])
    async with open_guard(tmp_path, env={"TOOLS_FILE": str(tools), "PAGE_SIZE": "4"}) as guard:
        refused = await guard.call("c1", "t", '{"n":0}')  # the guard lists every page: t is duplicated
        assert refused["result"]["_meta"][REJECTION_KEY]["issues"][0]["keyword"] == "name"
        page_one = (await guard.request("tools/list"))["result"]
        assert page_one["tools"][0]["name"] == "t" and "nextCursor" in page_one
        again = await guard.call("c2", "t", '{"n":0,"extra":"x"}')
        assert again["result"]["_meta"][REJECTION_KEY]["kind"] == U
        assert guard.recorded_with_id("c1") == [] and guard.recorded_with_id("c2") == []


def modern_meta(capabilities: dict[str, Any]) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }


async def test_modern_calls_are_judged_against_the_list_their_own_envelope_sees(tmp_path: Path) -> None:
    loose = {"name": "t", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}
    strict = {"name": "t", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}}
    only_for_elicitation = {"name": "ask", "inputSchema": {"type": "object"}}
    env = {
        "TOOLS_FILE": str(write_tools(tmp_path / "tools.json", [loose])),
        "CAPS_TOOLS_FILE": str(write_tools(tmp_path / "caps.json", [strict, only_for_elicitation])),
    }
    async with open_guard(tmp_path, env=env, server=FORGING_SERVER, initialize=False) as guard:
        plain, eliciting = modern_meta({}), modern_meta({"elicitation": {}})
        call = {"name": "t", "arguments": {"n": 0}}
        forwarded = await guard.request("tools/call", {**call, "_meta": plain})
        assert forwarded["result"]["isError"] is False  # minimum 1 is not in the list this envelope sees
        refused = await guard.request("tools/call", {**call, "_meta": eliciting})
        assert refused["result"]["_meta"][REJECTION_KEY]["issues"][0]["keyword"] == "minimum"
        asked = await guard.request("tools/call", {"name": "ask", "arguments": {}, "_meta": eliciting})
        assert asked["result"]["isError"] is False
        unknown = await guard.request("tools/call", {"name": "ask", "arguments": {}, "_meta": plain})
        assert unknown["error"]["code"] == -32602


async def test_a_refusal_with_a_million_issues_stays_small(tmp_path: Path) -> None:
    tools = write_tools(tmp_path / "tools.json", [BIG_TOOL])
    async with open_guard(tmp_path, env={"TOOLS_FILE": str(tools)}) as guard:
        await guard.request("tools/list")
        response = await guard.call("many", "big", json.dumps({"n": [-1] * 1_000_000}))
        rejection = response["result"]["_meta"][REJECTION_KEY]
        assert len(rejection["issues"]) == 100 and rejection["more_issues"] == 999_900
        assert len(guard.last_line) < 100_000
        assert "and 999980 more" in response["result"]["content"][0]["text"]


# --- 2026-07-28 era: a call is never judged against a schema the upstream has replaced ---------

LOOSE_T = {"name": "t", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}
STRICT_T = {"name": "t", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}}


def listings(guard: Guard) -> int:
    """How many tools/list requests reached the upstream."""
    return sum(b'"tools/list"' in line for line in guard.record())


@pytest.mark.parametrize("ttl", [None, "0"], ids=["no-ttl", "ttl-0"])
async def test_modern_listing_without_ttl_or_listen_is_renewed_before_each_call(tmp_path: Path, ttl: Any) -> None:
    """No listen stream and no lasting ttlMs: the upstream may replace a schema silently (no list_changed
    in this era), so each call is judged against a listing requested after it arrived."""
    env = {
        "TOOLS_FILE": str(write_tools(tmp_path / "tools.json", [LOOSE_T])),
        "FLIP_TOOLS_FILE": str(write_tools(tmp_path / "flip.json", [STRICT_T])),
        **({"TTL_MS": ttl} if ttl is not None else {}),
    }
    async with open_guard(tmp_path, env=env, server=FORGING_SERVER, initialize=False) as guard:
        meta = modern_meta({})
        first = await guard.request("tools/call", {"name": "t", "arguments": {"n": 0}, "_meta": meta})
        assert first["result"]["isError"] is False  # minimum 1 is not in the schema yet
        await guard.send({"jsonrpc": "2.0", "method": "test/flip"})
        second = await guard.request("tools/call", {"name": "t", "arguments": {"n": 0}, "_meta": meta})
        assert second["result"]["_meta"][REJECTION_KEY]["kind"] == "validation"
        assert listings(guard) >= 2


async def test_modern_listing_with_a_ttl_is_reused_until_it_expires(tmp_path: Path) -> None:
    env = {"TOOLS_FILE": str(write_tools(tmp_path / "tools.json", [LOOSE_T])), "TTL_MS": "600000"}
    async with open_guard(tmp_path, env=env, server=FORGING_SERVER, initialize=False) as guard:
        meta = modern_meta({})
        for i in range(5):
            answer = await guard.request("tools/call", {"name": "t", "arguments": {"n": i}, "_meta": meta})
            assert answer["result"]["isError"] is False
        assert listings(guard) == 1


async def test_modern_listen_stream_replaces_the_ttl_and_reports_changes(tmp_path: Path) -> None:
    """Where the upstream offers subscriptions/listen, the guard keeps its own stream: no listing per call
    once a listing made after its acknowledgement is in (the one before may have missed a change that came
    between the two: sessions.freshness), a change on the stream empties the table, and the stream's frames
    never reach the client."""
    env = {
        "TOOLS_FILE": str(write_tools(tmp_path / "tools.json", [LOOSE_T])),
        "FLIP_TOOLS_FILE": str(write_tools(tmp_path / "flip.json", [STRICT_T])),
        "TTL_MS": "0",
        "LISTEN": "1",
    }
    async with open_guard(tmp_path, env=env, server=FORGING_SERVER, initialize=False) as guard:
        meta = modern_meta({})
        await guard.request("tools/call", {"name": "t", "arguments": {"n": 0}, "_meta": meta})
        with anyio.fail_after(10):
            while not any(b'"subscriptions/listen"' in line for line in guard.record()):
                await anyio.sleep(0.02)
        await guard.request("ping", {"_meta": meta})  # the acknowledgement has been read by now
        before = listings(guard)
        for i in range(3):
            answer = await guard.request("tools/call", {"name": "t", "arguments": {"n": i}, "_meta": meta})
            assert answer["result"]["isError"] is False
        assert listings(guard) == before + 1  # one listing after the acknowledgement; then the stream stands for it
        await guard.send({"jsonrpc": "2.0", "method": "test/flip"})
        await guard.request("ping", {"_meta": meta})  # the stream's list_changed has been read by now
        refused = await guard.request("tools/call", {"name": "t", "arguments": {"n": 0}, "_meta": meta})
        assert refused["result"]["_meta"][REJECTION_KEY]["kind"] == "validation"
        assert not any(b"subscriptionId" in line for line in guard.lines)  # the guard's stream is its own


async def test_modern_retried_call_after_input_required_is_judged_again(tmp_path: Path) -> None:
    """A 2026-07-28 client retries a tools/call with inputResponses and requestState after an
    input_required result: the retry is a tools/call like any other, judged before it is forwarded."""
    env = {"TOOLS_FILE": str(write_tools(tmp_path / "tools.json", [STRICT_T])), "TTL_MS": "600000"}
    async with open_guard(tmp_path, env=env, server=FORGING_SERVER, initialize=False) as guard:
        meta = modern_meta({"elicitation": {}})
        retry = {"inputResponses": {"confirm": {"action": "accept"}}, "requestState": "opaque-state"}
        refused = await guard.request(
            "tools/call", {"name": "t", "arguments": {"n": 0}, **retry, "_meta": meta}, request_id="retry-bad"
        )
        assert refused["result"]["_meta"][REJECTION_KEY]["kind"] == "validation"
        accepted = await guard.request(
            "tools/call", {"name": "t", "arguments": {"n": 2}, **retry, "_meta": meta}, request_id="retry-ok"
        )
        assert accepted["result"]["isError"] is False
        assert guard.recorded_with_id("retry-bad") == []
        (forwarded,) = guard.recorded_with_id("retry-ok")
        assert forwarded["params"]["requestState"] == "opaque-state"  # passed on unchanged


async def test_messages_over_the_cap_are_answered_and_dropped_never_buffered(tmp_path: Path) -> None:
    """--max-message-bytes on stdio, both ways: an over-long request gets an error for its id and never
    reaches the upstream; an over-long answer becomes an error for its request; the session goes on."""
    tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("big_result", "echo")]
    env = {"TOOLS_FILE": str(write_tools(tmp_path / "tools.json", tools))}
    async with open_guard(tmp_path, env=env, server=FORGING_SERVER, args=["--max-message-bytes", "100000"]) as guard:
        await guard.request("tools/list")
        huge = "y" * 150_000
        refused = await guard.call("too-long", "echo", json.dumps({"blob": huge}))
        assert refused["error"]["code"] == -32600 and "100000 bytes" in refused["error"]["message"]
        answer = await guard.call("big", "big_result", "{}")
        assert answer["error"]["code"] == -32603 and "longer than 100000 bytes" in answer["error"]["message"]
        assert (await guard.call("after", "echo", "{}"))["result"]["isError"] is False
        assert not any(b"too-long" in line for line in guard.record())
