"""Spec decision E1 at the relay: an argument literal no double holds is judged by its exact value under
``extended`` and reaches the upstream as written; ``standard`` and ``strict`` refuse it (keyword ``json``).

Through both sessions (``wrap``'s relay, ``serve``'s gateway session) and both eras, with the in-memory
harness; the upstream records the raw lines it receives, so "as written" is checked byte for byte.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import rfc8785

from mcp_guard.sessions.session import Session
from tests.harness import TIMEOUT, Client, MemoryLink, ScriptedUpstream, name

pytestmark = pytest.mark.anyio

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "literal-test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
NUMBERS = {
    "name": "numbers",
    "inputSchema": {
        "type": "object",
        "properties": {"x": {"type": "number"}, "at_most_one": {"type": "number", "maximum": 1}},
        "additionalProperties": False,
    },
}


class RecordingLink:
    """A server-side link that keeps every raw line it receives."""

    def __init__(self, link: MemoryLink, lines: list[bytes]) -> None:
        self.link = link
        self.lines = lines

    async def receive(self) -> bytes:
        line = await self.link.receive()
        self.lines.append(line)
        return line

    async def send(self, line: bytes) -> None:
        await self.link.send(line)

    async def aclose(self) -> None:
        await self.link.aclose()


class RawUpstream(ScriptedUpstream):
    """The harness's scripted upstream, keeping the raw lines (``raw``) as well as the parsed ones."""

    def __init__(self) -> None:
        super().__init__(tools=[NUMBERS])
        self.raw: list[bytes] = []

    async def serve(self, link: MemoryLink) -> None:
        await super().serve(RecordingLink(link, self.raw))  # type: ignore[arg-type]

    def raw_calls(self) -> list[bytes]:
        return [line for line in self.raw if b'"tools/call"' in line]


@asynccontextmanager
async def guard(
    command: str, profile: str, upstream: ScriptedUpstream, *, journal: Path | None = None
) -> AsyncIterator[Client]:
    """``wrap`` or ``serve`` under ``profile`` over ``upstream``, initialized (the harness's, with a profile);
    ``journal``: serve appends its journal there."""
    from mcp_guard.calls.journal import Journal
    from mcp_guard.calls.tool_table import ToolTable
    from mcp_guard.config import parse_config
    from mcp_guard.sessions.gateway import serve_session
    from mcp_guard.sessions.relay import wrap_session

    client = Client()
    journaled = None if journal is None else Journal(journal)
    session: Session
    if command == "wrap":
        session = wrap_session(client.guard_link, upstream.connect, ToolTable(profile), drain_timeout=0.2)
    else:
        text = json.dumps({"mcpServers": {"s": {"command": "unused"}}, "guard": {"profile": profile}})
        session = serve_session(
            client.guard_link,
            parse_config(text, environ={}),
            connectors={"s": upstream.connect},
            drain_timeout=0.2,
            journal=journaled,
        )
    done = anyio.Event()

    async def run() -> None:
        await session.run()
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await client.initialize()
        yield client
        await client.link.close_send()
        with anyio.fail_after(TIMEOUT):
            await done.wait()
    if journaled is not None:
        journaled.close()


def call_line(request_id: str, tool: str, arguments: str, era: str) -> bytes:
    """A raw ``tools/call`` line whose ``arguments`` is the JSON text given, in ``era``."""
    meta = f',"_meta":{json.dumps(MODERN_META)}' if era == "modern" else ""
    return (
        f'{{"jsonrpc":"2.0","id":"{request_id}","method":"tools/call",'
        f'"params":{{"name":"{tool}","arguments":{arguments}{meta}}}}}'
    ).encode()


async def call(client: Client, command: str, request_id: str, arguments: str, era: str) -> dict[str, Any]:
    await client.send_raw(call_line(request_id, name(command, "numbers"), arguments, era))
    return await client.answer(request_id)


COMMANDS = pytest.mark.parametrize("command", ["wrap", "serve"])
ERAS = pytest.mark.parametrize("era", ["handshake", "modern"])


@COMMANDS
@ERAS
@pytest.mark.parametrize(
    "literal",
    [
        "0.1000000000000000000001",
        "123456789012345678901234.5",
        "-0.30000000000000000001",
        "2.00000000000000000001e-300",
    ],
)
async def test_extended_forwards_a_literal_no_double_holds_as_written(command: str, era: str, literal: str) -> None:
    upstream = RawUpstream()
    async with guard(command, "extended", upstream) as client:
        answer = await call(client, command, "lit", f'{{"x":{literal}}}', era)
        assert answer["result"]["content"][0]["text"] == "numbers ok", answer
        [line] = upstream.raw_calls()
    assert f'"arguments":{{"x":{literal}}}'.encode() in line


@COMMANDS
@ERAS
@pytest.mark.parametrize(
    ("literal", "forwarded"),
    [
        ("1.0000000000000000000001", False),
        ("1.00000000000000000001e300", False),
        ("-1.00000000000000000001e300", True),
        ("0.9999999999999999999999", True),
    ],
)
async def test_extended_judges_such_a_literal_by_its_exact_value(
    command: str, era: str, literal: str, forwarded: bool
) -> None:
    upstream = RawUpstream()
    async with guard(command, "extended", upstream) as client:
        answer = await call(client, command, "max", f'{{"at_most_one":{literal}}}', era)
        calls = upstream.raw_calls()
    if forwarded:
        assert answer["result"]["content"][0]["text"] == "numbers ok", answer
        assert len(calls) == 1 and f'"at_most_one":{literal}'.encode() in calls[0]
        return
    issues = answer["result"]["_meta"]["mcp-guard/rejection"]["issues"]
    assert [(i["keyword"], i["instance_path"]) for i in issues] == [("maximum", "/at_most_one")]
    assert calls == []
    assert literal not in json.dumps(answer)  # the refusal never echoes the value


@COMMANDS
@pytest.mark.parametrize("profile", ["standard", "strict"])
@pytest.mark.parametrize("literal", ["1e400", "0.1000000000000000000001", "1" + "0" * 400])
async def test_standard_and_strict_refuse_it(command: str, profile: str, literal: str) -> None:
    upstream = RawUpstream()
    tool = {**NUMBERS, "inputSchema": {"type": "object", "properties": {"x": {"type": "number"}}}}
    upstream.tools = [tool]
    async with guard(command, profile, upstream) as client:
        answer = await call(client, command, "std", f'{{"x":{literal}}}', "handshake")
        calls = upstream.raw_calls()
    issues = answer["result"]["_meta"]["mcp-guard/rejection"]["issues"]
    assert [(i["keyword"], i["instance_path"]) for i in issues] == [("json", "/x")]
    assert calls == []


@COMMANDS
@pytest.mark.parametrize(
    "literal",
    ["1e5000", "-1e-4400", "NaN", "1e400", "-1E+400", "1e-400", "-2.5e-330", "1" + "0" * 400, "-" + "2" * 309],
)
async def test_extended_refuses_what_has_no_exact_value_within_the_digit_limit(command: str, literal: str) -> None:
    """Past the digit limit, or beyond the range of a double (spec decision 12 names ``1e400``; red team 35: a
    server read ``1e-400`` as 0 past ``exclusiveMinimum: 0`` and ``1e400`` as inf for an "integer >= 1")."""
    upstream = RawUpstream()
    async with guard(command, "extended", upstream) as client:
        answer = await call(client, command, "far", f'{{"x":{literal}}}', "handshake")
        calls = upstream.raw_calls()
    issues = answer["result"]["_meta"]["mcp-guard/rejection"]["issues"]
    assert [(i["keyword"], i["instance_path"]) for i in issues] == [("json", "/x")]
    assert calls == []


@pytest.mark.parametrize(
    "literal", ["1e23", "1e308", "1e25", "5e-324", "0.1000000000000000000001", "0.30000000000000000001"]
)
async def test_serve_journals_such_a_literal_as_its_double_and_forwards_the_call(tmp_path: Path, literal: str) -> None:
    """Trial F6: with a journal, serve crashed in RFC 8785 (TypeError on an Inexact) and refused the call -32603.
    The digest is what any RFC 8785 implementation computes: the literal read as its nearest double."""
    journal = tmp_path / "journal.jsonl"
    upstream = RawUpstream()
    async with guard("serve", "extended", upstream, journal=journal) as client:
        answer = await call(client, "serve", "j", f'{{"x":{literal}}}', "handshake")
        calls = upstream.raw_calls()
    assert answer["result"]["content"][0]["text"] == "numbers ok", answer
    assert len(calls) == 1 and f'"x":{literal}'.encode() in calls[0]
    [intent] = [r for r in map(json.loads, journal.read_text().splitlines()) if r["event"] == "intent"]
    key = bytes.fromhex((tmp_path / "journal.jsonl.key").read_text())
    expected = hmac.new(key, rfc8785.dumps({"x": float(literal)}), hashlib.sha256).hexdigest()
    assert intent["arguments_sha256"] == expected


@COMMANDS
@pytest.mark.parametrize("profile", ["extended", "standard"])
async def test_an_integer_beyond_the_double_range_is_refused_as_1e400_is(command: str, profile: str) -> None:
    """Red team 38 F1: JSON does not tell ``1e400`` from a 401-digit integer (a JavaScript server reads both as
    Infinity, past "integer >= 1"); both are refused (keyword ``json``), in a big line as in a small one.
    The largest integer a double holds (309 digits) still goes through as written."""
    tool = {
        "name": "numbers",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}},
    }
    upstream = RawUpstream()
    upstream.tools = [tool]
    largest = str(int(sys.float_info.max))
    pad = " " * (1 << 16)  # a line of 64 KiB or more is parsed apart (jsonrpc.loads_as_received)
    async with guard(command, profile, upstream) as client:
        for request_id, arguments in (("small", f'{{"n":1{"0" * 400}}}'), ("big", f'{{"n":1{"0" * 400}{pad}}}')):
            answer = await call(client, command, request_id, arguments, "handshake")
            issues = answer["result"]["_meta"]["mcp-guard/rejection"]["issues"]
            assert [(i["keyword"], i["instance_path"]) for i in issues] == [("json", "/n")], request_id
        refused = upstream.raw_calls()
        answer = await call(client, command, "edge", f'{{"n":{largest}}}', "handshake")
        forwarded = upstream.raw_calls()
    assert refused == []
    if profile == "extended":
        assert answer["result"]["content"][0]["text"] == "numbers ok", answer
        assert len(forwarded) == 1 and f'"n":{largest}'.encode() in forwarded[0]


async def test_serve_with_a_journal_refuses_a_literal_beyond_the_double_range(tmp_path: Path) -> None:
    """A number JSON cannot carry (decision 12): refused before the journal, never forwarded."""
    journal = tmp_path / "journal.jsonl"
    upstream = RawUpstream()
    async with guard("serve", "extended", upstream, journal=journal) as client:
        answer = await call(client, "serve", "far", '{"x":1e400}', "handshake")
        calls = upstream.raw_calls()
    assert answer["result"]["isError"] is True
    assert answer["result"]["_meta"]["mcp-guard/rejection"]["kind"] == "validation"
    assert calls == []


@pytest.mark.parametrize("as_bytes", [True, False])
def test_only_a_line_with_a_long_digit_run_takes_the_integer_hook(as_bytes: bool) -> None:
    """The pre-test of ``loads_client`` (``_may_hold_long_integer``) never misses a run of 309 digits: many
    digits apart (a list of small numbers) is no such integer, and stays a plain ``int`` list."""
    from mcp_guard.core.json_values import Inexact
    from mcp_guard.wire.jsonrpc import loads_client

    def parsed(text: str) -> Any:
        return loads_client(text.encode() if as_bytes else text)

    many = parsed(json.dumps({"l": list(range(1000, 1400))}))
    assert all(type(x) is int for x in many["l"])
    edge = "2" + "0" * 308  # 309 digits, 2e308: beyond the range (the largest double is about 1.8e308)
    assert type(parsed(f'{{"s":"{"x" * 400}","n":{edge}}}')["n"]) is Inexact
    assert type(parsed(f'{{"n":-{edge},"m":[1,2,3]}}')["n"]) is Inexact
    assert parsed(f'{{"n":{"9" * 308}}}')["n"] == int("9" * 308)
