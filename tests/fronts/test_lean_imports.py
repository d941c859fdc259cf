"""``wrap`` over stdio loads nothing of HTTP, the SDK, pydantic or metrics (issue 14 item 1).

One ``wrap`` process runs per wrapped server: what it imports is paid in start-up time and idle
memory by every server of every client. The test runs the real command line (``cli.main``) in a
subprocess over a tiny stdio upstream, makes ``initialize``, ``tools/list`` and a valid and an
invalid ``tools/call``, closes stdin, and reads the module list the process prints to stderr after
``main`` returned. ``benchmarks/startup.py`` measures what this buys.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

FORBIDDEN = (
    "mcp",
    "mcp_types",
    "httpx",
    "httpx2",
    "starlette",
    "uvicorn",
    "pydantic",
    "prometheus_client",
    "redis",
    "psycopg",
    "psycopg_pool",
    "joserfc",  # the auth extra: only a front with an OAuth issuer loads it
    "cryptography",
    "opentelemetry",  # the otel extra: only --otel or guard.otel loads it (issue 27 item 3)
)

UPSTREAM = """
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    method = m.get("method")
    if method == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "tiny", "version": "1"}}
    elif method == "tools/list":
        r = {"tools": [{"name": "echo", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}},
                        "required": ["x"], "additionalProperties": False}}]}
    elif method == "tools/call":
        r = {"content": [{"type": "text", "text": "ok"}], "isError": False}
    else:
        r = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\\n")
    sys.stdout.flush()
"""

RUN_WRAP = """
import json, sys
from mcp_guard.cli import main
try:
    status = main(sys.argv[1:])
except SystemExit as exc:
    status = exc.code
sys.stderr.write("LOADED-MODULES " + json.dumps(sorted(sys.modules)) + "\\n")
sys.exit(status)
"""


def _wrap_session(tmp_path: Path, *wrap_args: str, requests_sent: int = 5) -> tuple[list[dict[str, object]], list[str]]:
    """Run ``wrap`` over the tiny upstream, sending the first ``requests_sent`` messages of the session
    (initialize, initialized, tools/list, a valid and an invalid call); (the responses, the modules loaded at exit)."""
    server = tmp_path / "tiny_server.py"
    server.write_text(UPSTREAM)
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"x": "hi"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "echo", "arguments": {"x": 1}}},
    ]
    process = subprocess.Popen(
        [sys.executable, "-c", RUN_WRAP, "wrap", *wrap_args, "--", sys.executable, str(server)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    responses: list[dict[str, object]] = []
    try:
        for request in requests[:requests_sent]:  # one at a time: the listing is in before the calls are judged
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            if "id" in request:
                responses.append(json.loads(process.stdout.readline()))
        _, stderr = process.communicate(timeout=60)  # closes stdin: the client is gone, wrap exits 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("LOADED-MODULES ")]
    assert len(lines) == 1, stderr
    return responses, json.loads(lines[0].removeprefix("LOADED-MODULES "))


def _heavy(modules: list[str]) -> list[str]:
    return sorted({m.split(".")[0] for m in modules} & set(FORBIDDEN))


@pytest.mark.parametrize("profile", ["extended", "strict"])
def test_wrap_over_stdio_loads_no_http_sdk_or_pydantic(tmp_path: Path, profile: str) -> None:
    responses, modules = _wrap_session(tmp_path, "--profile", profile, "--log-level", "warning")
    assert [r["id"] for r in responses] == [1, 2, 3, 4]
    assert responses[2].get("result") == {"content": [{"type": "text", "text": "ok"}], "isError": False}
    refused = responses[3]["result"]
    assert isinstance(refused, dict) and refused["isError"] is True  # the guard judged the call itself
    assert "mcp_guard.sessions.relay" in modules  # the session ran in this process (the check is not vacuous)
    assert _heavy(modules) == []
    assert [m for m in modules if m.startswith(("mcp_guard.auth.verifier", "mcp_guard.auth.keys"))] == []


CLASSIFIER = (
    "mcp_guard.core.compiler",
    "mcp_guard.core.extended",
    "mcp_guard.core.formats",
    "mcp_guard.core.ecma_regex",
)
"""The schema core's classifier and validators: most of the core's import time, loaded at the first ``tools/list``."""


def test_wrap_answers_initialize_without_loading_the_classifier(tmp_path: Path) -> None:
    """Until the first ``tools/list`` nothing is classified: ``initialize`` (and a session that never lists
    tools) costs none of the classifier's import time or memory; the listing loads it."""
    responses, modules = _wrap_session(tmp_path, "--log-level", "warning", requests_sent=2)
    assert [r["id"] for r in responses] == [1]
    assert "mcp_guard.sessions.relay" in modules and "mcp_guard.core" in modules  # the light core names are in
    assert [m for m in CLASSIFIER if m in modules] == []
    _, listed = _wrap_session(tmp_path, "--log-level", "warning", requests_sent=3)
    assert [m for m in CLASSIFIER if m in listed] == list(CLASSIFIER)


def test_the_check_sees_a_heavy_import(tmp_path: Path) -> None:
    """The module list is the process's own: ``wrap --upstream-url`` (nothing listens) loads httpx2 and the SDK."""
    run = subprocess.run(
        [sys.executable, "-c", RUN_WRAP, "wrap", "--upstream-url", "http://127.0.0.1:9/mcp"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = next(x for x in run.stderr.splitlines() if x.startswith("LOADED-MODULES "))
    assert {"httpx2", "mcp"} <= set(_heavy(json.loads(line.removeprefix("LOADED-MODULES "))))


@pytest.mark.parametrize(
    "argv",
    [
        ["wrap", "--", "uvx", "mcp-server-time"],
        ["wrap", "--profile", "strict", "--hide-unsupported", "--request-timeout", "5", "--", "srv", "--flag"],
        ["wrap", "--http", "8080", "--allowed-host", "h", "--max-message-bytes", "9", "--", "srv"],
        ["wrap", "--upstream-url", "https://x/mcp", "--header", "A=b", "--header-env", "Authorization=T"],
    ],
)
def test_the_wrap_only_parser_reads_wrap_as_the_full_parser_does(argv: list[str]) -> None:
    """``cli`` builds only ``wrap``'s parser for ``wrap`` (the other commands' modules stay unloaded):
    the arguments it reads are the same as the full parser's."""
    from mcp_guard.cli import _parser

    full = vars(_parser().parse_args(argv))
    lean = vars(_parser(only_wrap=True).parse_args(argv))
    full.pop("command_parser"), lean.pop("command_parser")
    assert lean == full
    with pytest.raises(SystemExit):  # and it has no other command
        _parser(only_wrap=True).parse_args(["serve", "--config", "gw.json"])


DEFERRED = (
    "secrets",  # wire.jsonrpc's and peer.requests' nonces come from os.urandom
    "hashlib",  # (secrets, and calls.jcs: OpenSSL's _hashlib)
    "datetime",  # calls.journal: only a journal's records
    "pathlib",  # calls.journal: only a journal's file
    "mcp_guard.calls.jcs",  # calls.pipeline: only a journal's digests
    "mcp_guard.calls.journal",  # calls.recording: only a configured journal (~87 KiB of an idle guard)
    "mcp_guard.calls.principals",  # calls.pipeline: only guard.principals rules (~47 KiB)
    "anyio.from_thread",  # sessions.client_lines: only a big call judged off the loop (~75 KiB)
)
"""Modules ``wrap`` over stdio loaded before the ``initialize`` answer and never used there (issue 14
item 1: each was milliseconds of start-up; issue 23 item 4: the last three were idle memory, measured
with tracemalloc of each module's own import); now imported where they are used."""


@pytest.mark.parametrize("requests_sent", [2, 5])
def test_wrap_over_stdio_defers_what_only_other_paths_use(tmp_path: Path, requests_sent: int) -> None:
    """Neither the ``initialize`` answer nor listings and calls (valid and refused) load them."""
    responses, modules = _wrap_session(tmp_path, "--log-level", "warning", requests_sent=requests_sent)
    assert responses[0]["id"] == 1 and "result" in responses[0]
    assert "mcp_guard.calls.pipeline" in modules  # the modules that used to import them are in
    assert [m for m in DEFERRED if m in modules] == []
    # difflib: a policy usage error's "did you mean", and a refusal's spelling hints (core.hints): only
    # a session with a refused call (the fifth request) may load it.
    assert ("difflib" in modules) <= (requests_sent >= 5)


RUN_WRAP_NOTING_THE_START = """
import json, sys
import mcp_guard.peer.spawn as spawn
early = spawn.start_early

def noted(command):
    sys.stderr.write("LOADED-AT-START " + json.dumps(sorted(sys.modules)) + "\\n")
    return early(command)

spawn.start_early = noted
from mcp_guard.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_wrap_starts_the_upstream_before_it_loads_the_relay(tmp_path: Path) -> None:
    """The server's own start-up (often most of the time to the ``initialize`` answer) overlaps the
    guard's: the upstream is started once the command line is read, before the event loop's backend,
    the relay and the call pipeline are imported; the session then runs over that process."""
    server = tmp_path / "tiny_server.py"
    server.write_text(UPSTREAM)
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    wrap = ["wrap", "--log-level", "debug", "--", sys.executable, str(server)]
    run = subprocess.run(
        [sys.executable, "-c", RUN_WRAP_NOTING_THE_START, *wrap],
        input=json.dumps(initialize) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "tiny"
    lines = [x for x in run.stderr.splitlines() if x.startswith("LOADED-AT-START ")]
    assert len(lines) == 1, run.stderr  # one start: the session used it (no second spawn)
    assert run.stderr.count("started the upstream (pid") == 1
    loaded = set(json.loads(lines[0].removeprefix("LOADED-AT-START ")))
    assert "mcp_guard.cli" in loaded
    assert {"anyio._backends._asyncio", "mcp_guard.sessions.relay", "mcp_guard.calls.pipeline"} & loaded == set()
