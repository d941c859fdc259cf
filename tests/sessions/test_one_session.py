"""``wrap`` and ``serve`` run one ``Session`` class (issue 23 item 1): the client's side is decided in one place.

Each test spies on one of the session's methods and drives both commands through the in-memory harness: a
second path for admission, cancellation or the tools/call prelude in either routing makes it fail."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_guard.sessions.session import Session
from mcp_guard.wire.messages import DUPLICATE_ID
from tests.harness import MemoryLink, ScriptedUpstream, name, running_guard

pytestmark = pytest.mark.anyio

COMMANDS = ("wrap", "serve")


def spy(monkeypatch: pytest.MonkeyPatch, method: str) -> list[Any]:
    """Record the first argument of every call of ``Session.<method>`` (then run the real one)."""
    seen: list[Any] = []
    real = getattr(Session, method)

    def spying(self: Session, first: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(first)
        return real(self, first, *args, **kwargs)

    monkeypatch.setattr(Session, method, spying)
    return seen


@pytest.mark.parametrize("command", COMMANDS)
async def test_both_commands_run_a_session(command: str) -> None:
    async with running_guard(command, ScriptedUpstream()) as client:
        assert type(client.guard) is Session
        assert client.guard.routing is not None


@pytest.mark.parametrize("command", COMMANDS)
async def test_a_duplicate_id_is_refused_by_the_sessions_admission(
    command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    admitted = spy(monkeypatch, "admit")
    release = anyio.Event()

    async def slow(upstream: ScriptedUpstream, link: MemoryLink, message: dict[str, Any]) -> None:
        await release.wait()
        await upstream.answer_call(link, message)

    async with running_guard(command, ScriptedUpstream(on_call=slow)) as client:
        call = {"name": name(command, "echo"), "arguments": {"text": "a"}}
        await client.send({"jsonrpc": "2.0", "id": "dup", "method": "tools/call", "params": call})
        with anyio.fail_after(5):
            while not any(type(m) is dict and m.get("id") == "dup" for m in admitted):
                await anyio.sleep(0.01)
        await client.send({"jsonrpc": "2.0", "id": "dup", "method": "ping"})
        refused = await client.answer("dup")
        assert refused["error"]["message"] == DUPLICATE_ID
        release.set()
        answered = await client.answer("dup")
        assert answered["result"]["content"][0]["text"] == "echo ok"
    assert [m.get("method") for m in admitted if m.get("id") == "dup"][-2:] == ["tools/call", "ping"]


@pytest.mark.parametrize("command", COMMANDS)
async def test_a_cancellation_is_withdrawn_by_the_session(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    withdrawn = spy(monkeypatch, "withdraw")
    started = anyio.Event()

    async def hang(upstream: ScriptedUpstream, link: MemoryLink, message: dict[str, Any]) -> None:
        started.set()  # (never answered; the upstream reads on)

    upstream = ScriptedUpstream(on_call=hang)
    async with running_guard(command, upstream) as client:
        call = {"name": name(command, "echo"), "arguments": {"text": "a"}}
        await client.send({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": call})
        with anyio.fail_after(5):
            await started.wait()
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}
        await client.send(cancel)
        with anyio.fail_after(5):
            while not any(m.get("method") == "notifications/cancelled" for m in upstream.received):
                await anyio.sleep(0.01)
    notice = next(m for m in upstream.received if m.get("method") == "notifications/cancelled")
    sent = next(m for m in upstream.received if m.get("method") == "tools/call")
    assert withdrawn == [cancel]
    assert notice["params"]["requestId"] == sent["id"] != 9  # named by the guard's own upstream id
    assert client.answers_to(9) == []  # a cancelled request is not answered


@pytest.mark.parametrize("command", COMMANDS)
async def test_every_call_is_made_by_the_sessions_prelude(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    made = spy(monkeypatch, "call_of")
    unlisted = spy(monkeypatch, "unlisted")
    async with running_guard(command, ScriptedUpstream()) as client:
        assert "result" in await client.call(name(command, "echo"), {"text": "hi"}, "ok")
        assert (await client.call(name(command, "nope"), {}, "unknown"))["error"]["code"] == -32602
    assert [m["id"] for m in made] == ["ok"] and [m["id"] for m in unlisted] == ["unknown"]
