"""server-everything's structured-content tool through ``wrap --outputs`` (issue 15), end to end.

``get-structured-content`` declares an ``outputSchema`` (zod: ``temperature``, ``conditions`` and
``humidity``, all required, no other property) and returns ``structuredContent`` that conforms to
it. Its real results must pass ``enforce`` unchanged (the same answers as the server gives
directly), in the profiles that can enforce its schema. The results are then spoiled on their way
to the guard by tests/npm/tampering_upstream.py (the tool list, and so the ``outputSchema``, stays
the server's): ``enforce`` withholds each spoiled result (a tool error of kind ``output_invalid``,
pointers and keywords, never the value), ``report`` passes it with its findings.

The server is pinned by tests/npm/package-lock.json (``npm ci`` in tests/npm, as .ci/run does);
the tests skip with that hint where it is absent.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_guard.wire.meta import OUTPUT_KEY, REJECTION_KEY, SCHEMA_KEY
from tests.e2e import npm_peers
from tests.e2e.npm_peers import SERVER_EVERYTHING

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        npm_peers.missing(SERVER_EVERYTHING) is not None, reason=npm_peers.missing(SERVER_EVERYTHING) or ""
    ),
]

TAMPERING = Path(__file__).with_name("tampering_upstream.py")
SECRET = "s3cr3t-tampered-value"  # tampering_upstream.SECRET
TOOL = "get-structured-content"
CITIES = ["New York", "Chicago", "Los Angeles"]
TIMEOUT = 90.0
"""Seconds one session may take (a hang guard: a session takes about three here)."""


def upstream() -> list[str]:
    """server-everything over stdio, behind the tampering relay."""
    return [sys.executable, str(TAMPERING), *npm_peers.command(SERVER_EVERYTHING, "stdio")]


def session(argv: list[str], calls: list[tuple[dict[str, Any], str | None]], log: Path) -> dict[int, Any]:
    """Run ``argv`` (a stdio server), list its tools (id 1), then make ``calls`` ((arguments, tamper mode)
    with ids 2, 3, ...); return each answer's ``result`` (or the answer itself) by id. ``log``: its stderr.
    The input is closed once every request is answered."""
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    first: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    ]
    then = []
    for i, (arguments, mode) in enumerate(calls, 2):
        params: dict[str, Any] = {"name": TOOL, "arguments": arguments}
        if mode is not None:
            params["_meta"] = {"x-tamper": mode}
        then.append({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
    lines: queue.Queue[bytes] = queue.Queue()
    by_id: dict[int, Any] = {}
    deadline = time.monotonic() + TIMEOUT
    with log.open("wb") as stderr:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        assert proc.stdin is not None and proc.stdout is not None
        out = proc.stdout

        def read() -> None:
            for line in out:
                lines.put(line)

        threading.Thread(target=read, daemon=True).start()

        def send_and_wait(messages: list[dict[str, Any]]) -> None:
            assert proc.stdin is not None
            proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
            proc.stdin.flush()
            wanted = {m["id"] for m in messages if "id" in m}
            while not wanted <= set(by_id):
                answer = json.loads(lines.get(timeout=max(0.1, deadline - time.monotonic())))
                if "id" in answer and "method" not in answer:
                    by_id[answer["id"]] = answer.get("result", answer)

        try:
            send_and_wait(first)
            send_and_wait(then)
        finally:
            proc.stdin.close()
            proc.wait(timeout=TIMEOUT)
    return by_id


def guarded(profile: str, outputs: str) -> list[str]:
    return [sys.executable, "-m", "mcp_guard", "wrap", "--profile", profile, "--outputs", outputs, "--", *upstream()]


def listed_tool(listing: dict[str, Any]) -> dict[str, Any]:
    (tool,) = [t for t in listing["tools"] if t["name"] == TOOL]
    assert type(tool) is dict
    return tool


@pytest.mark.parametrize("profile", ["standard", "extended"])
def test_its_real_results_pass_enforce_unchanged(tmp_path: Path, profile: str) -> None:
    calls: list[tuple[dict[str, Any], str | None]] = [({"location": city}, None) for city in CITIES]
    direct = session(upstream(), calls, tmp_path / "direct.log")
    through = session(guarded(profile, "enforce"), calls, tmp_path / "guard.log")
    verdict = listed_tool(through[1])["_meta"][SCHEMA_KEY]
    assert verdict["supported"] is True and verdict["output"] == {"supported": True, "issues": []}
    schema = listed_tool(direct[1])["outputSchema"]
    assert set(schema["required"]) == {"temperature", "conditions", "humidity"}
    assert schema.get("additionalProperties") is False
    for i in range(2, 2 + len(CITIES)):
        assert through[i] == direct[i], CITIES[i - 2]
        assert through[i].get("isError") is not True and set(through[i]["structuredContent"]) == set(schema["required"])


SPOILED = {
    "type": [("type", "/temperature")],
    "missing": [("required", "")],
    "extra": [("additionalProperties", "")],
    "drop": [("structuredContent", None)],
}
"""Each tamper mode, and the findings (keyword, instance pointer) the guard must give for it."""


def findings(issues: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return sorted((i["keyword"], i["instance_path"]) for i in issues)


def test_enforce_withholds_each_spoiled_result(tmp_path: Path) -> None:
    calls: list[tuple[dict[str, Any], str | None]] = [({"location": "Chicago"}, mode) for mode in SPOILED]
    calls.append(({"location": "Chicago"}, None))
    log = tmp_path / "guard.log"
    through = session(guarded("standard", "enforce"), calls, log)
    for i, (mode, expected) in enumerate(SPOILED.items(), 2):
        result = through[i]
        assert result["isError"] is True and "structuredContent" not in result, mode
        rejection = result["_meta"][REJECTION_KEY]
        assert rejection["kind"] == "output_invalid" and rejection["tool"] == TOOL, mode
        got = findings(rejection["issues"])
        if mode == "extra":  # the pointer of an extra key is the object's; the schema pointer names the keyword
            assert [k for k, _ in got] == ["additionalProperties"], got
        else:
            assert got == expected, mode
        assert "did not match the tool's declared output schema" in result["content"][0]["text"], mode
    assert through[2 + len(SPOILED)].get("isError") is not True  # the same call, unspoiled
    answers = json.dumps(through)
    text = log.read_text(encoding="utf-8")
    assert SECRET not in answers and SECRET not in text, "a result value reached the client or the log"
    assert text.count(f"the result of tools/call `{TOOL}` does not match its outputSchema (withheld)") == len(SPOILED)


def test_report_passes_each_spoiled_result_with_its_findings(tmp_path: Path) -> None:
    calls: list[tuple[dict[str, Any], str | None]] = [({"location": "Chicago"}, mode) for mode in SPOILED]
    calls.append(({"location": "Chicago"}, None))
    through = session(guarded("standard", "report"), calls, tmp_path / "guard.log")
    for i, mode in enumerate(SPOILED, 2):
        result = through[i]
        assert result.get("isError") is not True, mode
        note = result["_meta"][OUTPUT_KEY]
        assert note["checked"] is True and note["valid"] is False and note["issues"], mode
        assert ("structuredContent" in result) is (mode != "drop"), mode
    valid = through[2 + len(SPOILED)]
    assert valid["_meta"][OUTPUT_KEY] == {"checked": True, "valid": True, "issues": []}
