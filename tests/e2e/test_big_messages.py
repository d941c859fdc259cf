"""Big messages through ``mcp-guard wrap`` on stdio: forwarded as received when nothing can misread them.

The guard forwards what it parsed, re-serialized (``wire.jsonrpc.dumps``): every peer reads what
the guard read. A big line (at least ``AS_RECEIVED_MIN`` bytes) that the guard passes on
unchanged goes as the peer wrote it instead, sparing its re-serialization and a copy of it,
only when no reader could take it for something else (``wire.jsonrpc.loads_as_received``).
These tests see the bytes on both sides: the recording server's record of what reached it,
and the guard's stdout.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mcp_guard.wire.jsonrpc import AS_RECEIVED_MIN
from tests.e2e.test_relay_recording import SMUGGLING_LINES, Guard, open_guard, readings

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
BIG_ANSWER_SERVER = HERE / "big_answer_server.py"
PAD = "p" * AS_RECEIVED_MIN


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module scope, so one guard process can serve many tests."""
    return "asyncio"


@pytest.fixture(scope="module")
async def recording(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Guard]:
    """One guard over the recording server (the fixture tools), listed once."""
    async with open_guard(tmp_path_factory.mktemp("recording")) as guard:
        await guard.request("tools/list")
        yield guard


@pytest.fixture(scope="module")
async def answering(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Guard]:
    """One guard over ``big_answer_server.py``, listed once."""
    async with open_guard(tmp_path_factory.mktemp("answering"), server=BIG_ANSWER_SERVER) as guard:
        await guard.request("tools/list")
        yield guard


def write_call(request_id: str, arguments: str) -> bytes:
    """A ``tools/call`` of ``write`` with ``arguments`` (raw JSON text), written with spaces (not compact)."""
    return (
        f'{{"jsonrpc": "2.0", "id": "{request_id}", "method": "tools/call", '
        f'"params": {{"name": "write", "arguments": {arguments}}}}}'
    ).encode()


def compact(line: bytes) -> bytes:
    """What the guard writes for a parsed line: compact, ASCII-only (``dumps``)."""
    return json.dumps(json.loads(line), separators=(",", ":")).encode()


SENT_AFTER: dict[str, int] = {}
"""Request id → how many lines the upstream had received when the test sent it."""


async def send_and_answer(guard: Guard, line: bytes, request_id: str) -> dict[str, Any]:
    SENT_AFTER[request_id] = len(guard.record())
    await guard.send_raw(line)
    return await guard.response(request_id)


def arrived(guard: Guard, request_id: str) -> list[bytes]:
    """The ``tools/call`` lines the upstream received since the test sent ``request_id`` (one call at a
    time), each under an upstream id of the guard's own, given back with ``request_id`` in its place (the
    rest byte for byte)."""
    lines = []
    for line in guard.record()[SENT_AFTER[request_id] :]:
        message = json.loads(line)
        if message.get("method") == "tools/call":
            assert message["id"].startswith("mcp-guard-"), message["id"]
            lines.append(line.replace(json.dumps(message["id"]).encode(), json.dumps(request_id).encode(), 1))
    return lines


async def test_a_big_valid_call_reaches_the_upstream_as_the_client_wrote_it(recording: Guard) -> None:
    line = write_call("big-as-written", f'{{"path": "a.txt", "content": "{PAD}"}}')
    response = await send_and_answer(recording, line, "big-as-written")
    assert response["result"]["isError"] is False
    assert arrived(recording, "big-as-written") == [line]


async def test_a_small_valid_call_reaches_the_upstream_re_serialized(recording: Guard) -> None:
    line = write_call("small", '{"path": "a.txt", "content": "short"}')
    await send_and_answer(recording, line, "small")
    assert arrived(recording, "small") == [compact(line)]


async def test_a_big_invalid_call_does_not_reach_the_upstream(recording: Guard) -> None:
    line = write_call("big-invalid", f'{{"path": 1, "content": "{PAD}"}}')
    response = await send_and_answer(recording, line, "big-invalid")
    assert response["result"]["isError"] is True
    await recording.sync()
    assert arrived(recording, "big-invalid") == []


MISREAD = {
    "crlf": write_call("big-crlf", f'{{"path": "a", "content": "{PAD}"}}') + b"\r",
    "cr-as-white-space": write_call("big-cr", f'{{"path": "a",\r"content": "{PAD}"}}'),
    "repeated-key": write_call("big-repeated", f'{{"path": "/etc/passwd", "path": "a", "content": "{PAD}"}}'),
    "line-separator": write_call("big-u2028", f'{{"path": "\u2028", "content": "{PAD}"}}'),
    "leading-space": b" " + write_call("big-space", f'{{"path": "a", "content": "{PAD}"}}'),
}


@pytest.mark.parametrize("line", MISREAD.values(), ids=MISREAD.keys())
async def test_a_big_call_a_reader_could_misread_reaches_the_upstream_re_serialized(
    recording: Guard, line: bytes
) -> None:
    request_id = json.loads(line)["id"]
    response = await send_and_answer(recording, line, request_id)
    assert response["result"]["isError"] is False
    (forwarded,) = arrived(recording, request_id)
    assert forwarded == compact(line) and forwarded.isascii() and b"\r" not in forwarded
    assert [m["params"]["arguments"]["path"] for m in readings(forwarded)] == [
        json.loads(line)["params"]["arguments"]["path"]
    ] * 2


@pytest.mark.parametrize("name", SMUGGLING_LINES)
async def test_big_lines_hide_no_call_from_the_guard(tmp_path: Path, name: str) -> None:
    """The smuggling lines of ``test_relay_recording``, grown past ``AS_RECEIVED_MIN``: still no reader
    finds a tools/call the guard did not judge (fetch_page is unsupported)."""
    line = SMUGGLING_LINES[name]
    big = line[:1] + f'"pad":"{PAD}",'.encode() + line[1:]
    async with open_guard(tmp_path) as guard:
        await guard.request("tools/list")
        await guard.send_raw(big)
        # A big line is parsed off the loop and a ping may pass it (peer.offload): sync until it is forwarded.
        for _ in range(200):
            await guard.sync()
            if any(len(recorded) > AS_RECEIVED_MIN for recorded in guard.record()):
                break
        assert any(len(recorded) > AS_RECEIVED_MIN for recorded in guard.record())  # (not vacuous)
        smuggled = [m for recorded in guard.record() for m in readings(recorded) if m.get("method") == "tools/call"]
        assert smuggled == []


def answer_call(request_id: str, **arguments: Any) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "answer", "arguments": arguments},
        }
    ).encode()


async def test_a_big_answer_reaches_the_client_as_the_upstream_wrote_it(answering: Guard) -> None:
    response = await send_and_answer(answering, answer_call("big-answer", text=PAD), "big-answer")
    assert response["result"]["content"][0]["text"] == PAD
    written = json.dumps({"jsonrpc": "2.0", "id": "big-answer", "result": {"content": [{"type": "text", "text": PAD}]}})
    assert answering.last_line == written.encode()


async def test_a_small_answer_reaches_the_client_re_serialized(answering: Guard) -> None:
    await send_and_answer(answering, answer_call("small-answer", text="short"), "small-answer")
    assert (
        answering.last_line
        == b'{"jsonrpc":"2.0","id":"small-answer","result":{"content":[{"type":"text","text":"short"}]}}'
    )


@pytest.mark.parametrize("case", ["forged", "crlf", "repeat"])
async def test_a_big_answer_the_guard_changes_or_a_reader_could_misread_is_re_serialized(
    answering: Guard, case: str
) -> None:
    request_id = f"big-answer-{case}"
    response = await send_and_answer(answering, answer_call(request_id, text=PAD, **{case: True}), request_id)
    assert response["result"]["content"][0]["text"] == PAD
    line = answering.last_line
    assert line == compact(line) and b"\r" not in line
    assert "mcp-guard/schema" not in response["result"].get("_meta", {})  # the forged key is removed
    if case == "repeat":
        assert line.count(b'"isError"') == 1 and response["result"]["isError"] is False
