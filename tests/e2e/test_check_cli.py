"""End to end: ``python -m mcp_guard check`` against live servers, as a subprocess.

Upstreams: the Sigma fixture server (stdio, and over streamable HTTP with paged
``tools/list``), ``mcp-server-time`` and ``mcp-server-fetch`` from PyPI (skipped when not
installed; fetch only lists, behind a proxy on a closed port, so no network), and the raw
recording server (``recording_server.py``), which lists whatever ``TOOLS_FILE`` holds, pages
by ``PAGE_SIZE`` and records every line it receives: so these tests see what ``check`` sent
(the capabilities it declared, every page it asked for) and that the server got the user's
whole environment (``TOOLS_FILE`` would not reach it otherwise). Malformed tools that the
SDK's typed client would refuse as a whole list are reported one by one.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SIGMA = (sys.executable, str(ROOT / "fixtures" / "sigma" / "server.py"))
RECORDING = (sys.executable, str(HERE / "recording_server.py"))
HTTP_SERVER = (sys.executable, str(HERE / "sigma_http_server.py"))
TIME = (sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC")
HANG_GUARD = 120.0

needs_fetch = pytest.mark.skipif(
    importlib.util.find_spec("mcp_server_fetch") is None,
    reason="mcp-server-fetch is not installed (the test extras pin mcp-server-fetch==2026.10.24)",
)
needs_time = pytest.mark.skipif(
    importlib.util.find_spec("mcp_server_time") is None,
    reason="mcp-server-time is not installed (the test extras pin mcp-server-time==2026.10.19)",
)

SIGMA_STATUS = {
    **dict.fromkeys(
        ["AskUserQuestion", "bash", "edit", "glob", "grep", "ls", "read", "todo", "url_fetch", "write", "add"],
        "supported",
    ),
    "broken_tool": "malformed",
    "fetch_page": "unsupported",
    "lookup_user": "unsupported",
    "resize_image": "unsupported",
}
SIGMA_FINDINGS = {
    "broken_tool": {
        ("validation", "type", "/properties/count/type"),
        ("validation", "minimum", "/properties/count/minimum"),
    },
    "fetch_page": {
        ("unsupported_capability", "format", "/properties/url/format"),
        ("unsupported_capability", "pattern", "/properties/url/pattern"),
    },
    "lookup_user": {
        ("unsupported_capability", "$defs", "/$defs"),
        ("unsupported_capability", "$ref", "/properties/user/$ref"),
        ("unsupported_capability", "type", "/properties/user"),
    },
    "resize_image": {("unsupported_capability", "maximum", "/properties/width/maximum")},
}


async def check(
    *argv: str, env: dict[str, str] | None = None, profile: str | None = "standard"
) -> tuple[int, str, str]:
    """Run ``python -m mcp_guard check [--profile PROFILE] ARGV`` (the standard profile these tests were
    written for; ``None``: no ``--profile``, the default); return (exit status, stdout, stderr)."""
    with anyio.fail_after(HANG_GUARD):
        result = await anyio.run_process(
            [sys.executable, "-m", "mcp_guard", "check", *(["--profile", profile] if profile else []), *argv],
            check=False,
            env={**os.environ, **(env or {})},
            cwd=ROOT,
        )
    return result.returncode, result.stdout.decode(), result.stderr.decode()


async def check_json(*argv: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    status, out, err = await check("--json", *argv, env=env)
    assert out, err
    data: dict[str, Any] = json.loads(out)
    return status, data


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {t["name"]: t["status"] for t in report["tools"]}


def findings(report: dict[str, Any]) -> dict[str, set[tuple[str, str, str]]]:
    return {
        t["name"]: {(i["kind"], i["keyword"], i["schema_path"]) for i in t["issues"]}
        for t in report["tools"]
        if t["issues"]
    }


# --- the Sigma fixture server ------------------------------------------------------------------


async def test_sigma_table_and_default_threshold() -> None:
    status, out, _ = await check("--", *SIGMA)
    assert status == 1  # unsupported and malformed tools hit the default --fail-on unsupported
    lines = out.splitlines()
    assert lines[0] == "server: sigma-fixture 1.0.0"
    assert lines[2].split() == ["TOOL", "STATUS", "KEYWORD", "POINTER", "DETAIL"]
    assert any(
        line.split()[:4] == ["resize_image", "unsupported", "maximum", "/properties/width/maximum"] for line in lines
    )
    assert any(line.split()[:4] == ["broken_tool", "malformed", "type", "/properties/count/type"] for line in lines)
    assert lines[-1] == "15 tools: 11 supported, 3 unsupported, 1 malformed (profile standard)"


async def test_sigma_json() -> None:
    status, report = await check_json("--", *SIGMA)
    assert status == 1 and report["failed"] is True and report["fail_on"] == "unsupported"
    assert report["source"] == "command"
    assert report["server"] == {"name": "sigma-fixture", "version": "1.0.0"}
    assert report["protocol_version"] == "2025-11-25" and report["pages"] == 1
    assert statuses(report) == SIGMA_STATUS
    assert findings(report) == SIGMA_FINDINGS


async def test_sigma_fail_on_never() -> None:
    status, report = await check_json("--fail-on", "never", "--", *SIGMA)
    assert status == 0 and report["failed"] is False and report["summary"]["malformed"] == 1


async def test_sigma_only_supported_tools_exit_0() -> None:
    status, out, _ = await check("--", *SIGMA, "--only-sigma")
    assert status == 0
    assert out.splitlines()[-1] == "10 tools: 10 supported, 0 unsupported, 0 malformed (profile standard)"


# --- a real server -----------------------------------------------------------------------------


@needs_time
async def test_time_server_by_profile() -> None:
    status, report = await check_json("--", *TIME)
    assert statuses(report) == {"get_current_time": "supported", "convert_time": "supported"}
    # convert_time's outputSchema uses $ref/$defs, which standard cannot enforce: under the default
    # --outputs enforce its calls are refused, so --fail-on unsupported counts it (issue 15).
    outputs = {t["name"]: t["output"]["status"] for t in report["tools"]}
    assert outputs == {"get_current_time": "supported", "convert_time": "unsupported"}
    assert status == 1 and report["failed"] is True
    status, report = await check_json("--profile", "extended", "--", *TIME)
    assert status == 0 and {t["output"]["status"] for t in report["tools"]} == {"supported"}
    status, report = await check_json("--profile", "strict", "--", *TIME)
    assert status == 1 and report["profile"] == "strict"
    assert set(statuses(report).values()) == {"unsupported"}
    keywords = {keyword for found in findings(report).values() for _, keyword, _ in found}
    assert keywords == {"title"}


@needs_fetch
async def test_readme_check_example_is_true() -> None:
    """The README's ``mcp-guard check -- mcp-server-fetch`` block, run offline on the installed server."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("$ mcp-guard check -- mcp-server-fetch\n", 1)[1].split("```", 1)[0]
    argv = ("--", sys.executable, "-m", "mcp_server_fetch", "--proxy-url", "http://127.0.0.1:9")
    status, out, _ = await check(*argv, profile=None)  # as the README runs it: the default profile
    assert status == 0  # the README shows fetch supported under extended
    assert out == block


# --- what check sends: capabilities, pages, environment ----------------------------------------

ODD_TOOLS: list[Any] = [
    {"name": "fine", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}},
    {"name": "untyped_root", "inputSchema": {"properties": {"a": {"type": "string"}}}},
    {"name": "no_schema"},
    {"name": 5, "inputSchema": {"type": "object"}},
    {"name": "string_schema", "inputSchema": "object"},
    {"name": "bad_properties", "inputSchema": {"type": "object", "properties": 5}},
    {"name": "twice", "inputSchema": {"type": "object"}},
    {"name": "twice", "inputSchema": {"type": "object"}},
    {"name": "pattern", "inputSchema": {"type": "object", "properties": {"p": {"type": "string", "pattern": "^a"}}}},
]


async def test_recording_server_pages_capabilities_environment_and_odd_tools(tmp_path: Path) -> None:
    tools_file = tmp_path / "tools.json"
    tools_file.write_text(json.dumps(ODD_TOOLS), encoding="utf-8")
    record = tmp_path / "record.jsonl"
    env = {"TOOLS_FILE": str(tools_file), "PAGE_SIZE": "2", "RECORD_FILE": str(record)}
    status, report = await check_json("--", *RECORDING, env=env)
    assert status == 1
    assert report["pages"] == 5
    assert [t["name"] for t in report["tools"]] == [
        t.get("name") if type(t.get("name")) is str else None for t in ODD_TOOLS
    ]
    assert [t["status"] for t in report["tools"]] == [
        "supported",
        "supported",  # the SDK's typed client would refuse the whole list for this one
        "malformed",
        "malformed",
        "malformed",
        "malformed",
        "unsupported",
        "unsupported",
        "unsupported",
    ]
    assert report["tools"][2]["definition_errors"] == [{"path": "/inputSchema", "message": "is required"}]
    assert [n["note"] for n in report["tools"][6]["notes"]] == ["duplicate_name"]

    received = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    requests = [m for m in received if "id" in m]
    assert [m["method"] for m in requests] == ["initialize", *["tools/list"] * 5]
    capabilities = requests[0]["params"]["capabilities"]
    assert {"sampling", "elicitation", "roots"} <= set(capabilities)
    assert requests[0]["params"]["clientInfo"]["name"] == "mcp-guard-check"
    assert [m.get("params", {}).get("cursor") for m in requests[1:]] == [
        None,
        "rec-page-2",
        "rec-page-4",
        "rec-page-6",
        "rec-page-8",
    ]
    assert any(m.get("method") == "notifications/initialized" for m in received)


# --- over streamable HTTP ----------------------------------------------------------------------


@asynccontextmanager
async def http_server(*argv: str) -> AsyncIterator[str]:
    """The Sigma server over streamable HTTP; yields its URL, stops it afterwards."""
    with anyio.fail_after(HANG_GUARD):
        process = await anyio.open_process([*HTTP_SERVER, *argv], cwd=ROOT)
    try:
        assert process.stdout is not None
        with anyio.fail_after(HANG_GUARD):
            line = b""
            while not line.endswith(b"\n"):
                chunk = await process.stdout.receive(1)
                line += chunk
        yield line.decode().strip()
    finally:
        process.terminate()
        with anyio.fail_after(HANG_GUARD):
            await process.wait()
        await process.aclose()


async def test_upstream_url_lists_every_page() -> None:
    async with http_server("--pages", "4") as url:
        status, report = await check_json("--upstream-url", url, "--header", "X-Test: yes")
        table_status, out, _ = await check("--fail-on", "malformed", "--upstream-url", url)
    assert status == 1 and report["source"] == "url"
    assert report["pages"] == 4
    assert statuses(report) == SIGMA_STATUS
    assert findings(report) == SIGMA_FINDINGS
    assert table_status == 1 and out.splitlines()[-1].startswith("15 tools: 11 supported")


# --- an upstream that cannot be reached or listed: exit status 2 -------------------------------

NEVER_ANSWERS = "import sys, time\nsys.stdin.readline()\ntime.sleep(600)\n"
LOOPING_CURSOR = """
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        info = {"name": "loop", "version": "1"}
        r = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": info}
    else:
        r = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}], "nextCursor": "again"}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"""
LIST_ERROR = LOOPING_CURSOR.replace(
    'print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)',
    'print(json.dumps({"jsonrpc": "2.0", "id": m["id"], **({"result": r} if m["method"] == "initialize" '
    'else {"error": {"code": -32603, "message": "boom"}})}), flush=True)',
)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--", str(ROOT / "no-such-server")], "cannot start"),
        (["--", sys.executable, "-c", "pass"], "closed the connection"),
        (["--timeout", "2", "--", sys.executable, "-c", NEVER_ANSWERS], "did not list its tools within 2 s"),
        (["--", sys.executable, "-c", LOOPING_CURSOR], "cursors do not end"),
        (["--", sys.executable, "-c", LIST_ERROR], "boom (code -32603)"),
        (
            ["--upstream-url", "http://127.0.0.1:9/mcp"],
            "cannot reach the server at http://127.0.0.1:9/mcp: connection refused",
        ),
    ],
    ids=["missing-command", "exits", "never-answers", "looping-cursor", "list-error", "refused-url"],
)
async def test_unreachable_upstream_exits_2(argv: list[str], message: str) -> None:
    status, out, err = await check(*argv)
    assert status == 2, err
    assert out == ""
    assert message in err


async def test_unreachable_upstream_with_json_writes_an_error_document() -> None:
    status, data = await check_json("--", sys.executable, "-c", "pass")
    assert status == 2 and data == {"error": "the server closed the connection before it listed its tools"}


async def test_the_servers_stderr_reaches_ours_escaped_and_marked() -> None:
    """Trial 4 T1: ``check`` (and ``pin``, which lists the same way) relays the server's stderr as ``wrap``
    does: each line marked ``upstream stderr: `` and escaped, so it can neither forge a guard line nor
    drive the terminal (README: "a server's own stderr lines are relayed escaped and marked")."""
    noisy = (
        "import runpy, sys; "
        "sys.stderr.write('starting \\x1b[2J\\x1b]0;pwned\\x07\\rmcp-guard INFO: forged\\n'); sys.stderr.flush(); "
        f"sys.argv = [{SIGMA[1]!r}]; runpy.run_path({SIGMA[1]!r}, run_name='__main__')"
    )
    status, out, err = await check("--", sys.executable, "-c", noisy)
    assert status == 1 and "15 tools" in out, err
    assert "upstream stderr: starting \\x1b[2J\\x1b]0;pwned\\x07\\x0dmcp-guard INFO: forged" in err.splitlines(), err
    assert "\x1b" not in err and "\x07" not in err and "\r" not in err
    assert not any(line.startswith("mcp-guard INFO: forged") for line in err.splitlines())
