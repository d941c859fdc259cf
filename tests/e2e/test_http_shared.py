"""``wrap --http --shared-upstream``: one upstream process behind every handshake-era session.

Guards are real processes (``open_guard`` of test_http_front.py); the upstreams are the Sigma
fixture server (SDK clients) and ``shared_peer_server.py``, which records every line it gets,
so the tests see what the one upstream was sent: fresh ids, one ``initialize``, mapped
cancellations, reference-counted subscriptions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client

from tests.e2e.http_guard import (
    ACCEPT,
    INIT,
    TIMEOUT,
    Guard,
    alive,
    call,
    children,
    eventually,
    http_client,
    messages_of,
    needs_proc,
    open_guard,
    post,
    request,
    sse_events,
    text_of,
)

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

HERE = Path(__file__).resolve().parent
SHARED_SERVER = HERE / "shared_peer_server.py"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module scope, as in test_http_front.py."""
    return "asyncio"


def recorded(record: Path) -> list[dict[str, Any]]:
    """What the upstream(s) received so far, in order."""
    return [json.loads(line) for line in record.read_bytes().splitlines()] if record.exists() else []


async def initialize(client: httpx.AsyncClient, guard: Guard, version: str = "2025-11-25") -> tuple[str, Any]:
    """Open a session (initialize, then notifications/initialized); its id and the initialize result."""
    answer = await post(client, guard, request(0, "initialize", {**INIT, "protocolVersion": version}))
    assert answer.status_code == 200, answer.text
    session = answer.headers["mcp-session-id"]
    done = await post(client, guard, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    assert done.status_code == 202
    return session, answer.json()["result"]


def shared_guard(tmp: Path, *options: str) -> Any:
    """A guard with ``--shared-upstream`` over ``shared_peer_server.py`` recording to ``tmp/record.jsonl``."""
    env = {"RECORD_FILE": str(tmp / "record.jsonl")}
    return open_guard(tmp, "--shared-upstream", *options, upstream=SHARED_SERVER, env=env)


@needs_proc
async def test_sdk_sessions_share_one_upstream_and_keep_their_verdicts(tmp_path: Path) -> None:
    """Two SDK sessions: one upstream process; each lists with verdicts and gets refusals; one leaving
    (DELETE) leaves the upstream running for the other; the last leaving stops it."""
    async with open_guard(tmp_path, "--shared-upstream") as guard:
        with anyio.fail_after(TIMEOUT):
            async with Client(guard.url, mode="legacy") as first:
                (upstream,) = children(guard.process.pid)
                async with Client(guard.url, mode="legacy") as second:
                    assert children(guard.process.pid) == {upstream}
                    for client in (first, second):
                        listed = await client.list_tools()
                        verdicts = {t.name: (t.meta or {})["mcp-guard/schema"]["supported"] for t in listed.tools}
                        assert verdicts["add"] is True and verdicts["fetch_page"] is False
                    a, b = (
                        await first.call_tool("add", {"a": 1, "b": 2}),
                        await second.call_tool("add", {"a": 3, "b": 4}),
                    )
                    assert isinstance(a.content[0], types.TextContent) and a.content[0].text == "3"
                    assert isinstance(b.content[0], types.TextContent) and b.content[0].text == "7"
                    refused = await second.call_tool("add", {"a": "3", "b": 4})
                    assert refused.is_error
                    assert (refused.meta or {})["mcp-guard/rejection"]["kind"] == "validation"
                    unsupported = await first.call_tool("fetch_page", {"url": "https://example.com"})
                    assert (unsupported.meta or {})["mcp-guard/rejection"]["kind"] == "unsupported_capability"
                # The second client sent DELETE on leaving: the upstream runs on for the first.
                await anyio.sleep(0.3)
                assert alive(upstream) and children(guard.process.pid) == {upstream}
                again = await first.call_tool("add", {"a": 5, "b": 5})
                assert isinstance(again.content[0], types.TextContent) and again.content[0].text == "10"
            await eventually(lambda: not alive(upstream), "the shared upstream to stop after the last session")
        assert "the last session ended; stopping the upstream" in guard.log


@needs_proc
async def test_one_handshake_and_colliding_ids_stay_apart(tmp_path: Path) -> None:
    """The upstream sees one initialize (the first session's) and one notifications/initialized; a later
    session asking another version gets the same result; the same ids in two sessions at once reach the
    upstream as distinct ids and come back each to its own request."""
    record = tmp_path / "record.jsonl"
    async with shared_guard(tmp_path) as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            first, result = await initialize(client, guard)
            second, again = await initialize(client, guard, version="2025-06-18")
            assert first != second
            assert again == result and result["serverInfo"]["version"] == "init-1"
            assert again["protocolVersion"] == "2025-11-25"
            sessions = [first, second]
            answers: dict[tuple[int, int], dict[str, Any]] = {}

            async def one(s: int, i: int) -> None:
                response = await post(client, guard, call(i, "echo", {"s": s, "i": i}), sessions[s])
                (answers[s, i],) = messages_of(response)

            async with anyio.create_task_group() as tg:
                for i in range(10):
                    for s in range(2):
                        tg.start_soon(one, s, i)
            assert len(children(guard.process.pid)) == 1
    for (s, i), message in answers.items():
        assert message["id"] == i and json.loads(text_of(message)) == {"s": s, "i": i}
    assert len(answers) == 20
    lines = recorded(record)
    assert [m.get("method") for m in lines].count("initialize") == 1
    assert [m.get("method") for m in lines].count("notifications/initialized") == 1
    calls = [m for m in lines if m.get("method") == "tools/call"]
    assert len(calls) == 20 and len({json.dumps(m["id"]) for m in calls}) == 20


async def test_progress_tokens_collide_across_sessions(tmp_path: Path) -> None:
    """Two sessions use the same request id and progress token at once: each stream carries its own progress,
    with the client's token restored."""
    record = tmp_path / "record.jsonl"
    streams: dict[int, list[dict[str, Any]]] = {}
    async with shared_guard(tmp_path) as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            sessions = [(await initialize(client, guard))[0] for _ in range(2)]

            async def one(s: int) -> None:
                message = call(1, "progress", {"tag": f"s{s}"}, meta={"progressToken": "tok"})
                streams[s] = messages_of(await post(client, guard, message, sessions[s]))

            async with anyio.create_task_group() as tg:
                for s in range(2):
                    tg.start_soon(one, s)
    for s in range(2):
        *progress, answer = streams[s]
        assert answer["id"] == 1 and text_of(answer) == f"s{s}"
        assert [m["params"]["message"] for m in progress] == [f"s{s}"] * 3
        assert {m["params"]["progressToken"] for m in progress} == {"tok"}
    tokens = [m["params"]["_meta"]["progressToken"] for m in recorded(record) if m.get("method") == "tools/call"]
    assert len(set(tokens)) == 2 and "tok" not in tokens


async def test_cancellation_is_mapped_to_the_sessions_own_request(tmp_path: Path) -> None:
    """Session A cancels id 1 while session B has an id 1 in flight too: A's stream ends -32800, the upstream
    is told A's upstream id only, B's call is answered; a cancellation naming no request of A is dropped."""
    record = tmp_path / "record.jsonl"
    async with shared_guard(tmp_path) as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            a, _ = await initialize(client, guard)
            b, _ = await initialize(client, guard)
            answers: dict[str, list[dict[str, Any]]] = {}

            async def one(session: str, name: str, seconds: float) -> None:
                message = call(1, "slow", {"seconds": seconds, "marker": name})
                answers[name] = messages_of(await post(client, guard, message, session))

            def forwarded(marker: str) -> dict[str, Any] | None:
                for m in recorded(record):
                    if m.get("method") == "tools/call" and m["params"]["arguments"].get("marker") == marker:
                        return m
                return None

            async with anyio.create_task_group() as tg:
                tg.start_soon(one, a, "a", 30)
                tg.start_soon(one, b, "b", 1.5)
                await eventually(lambda: forwarded("a") is not None and forwarded("b") is not None, "both calls")
                stray = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}
                assert (await post(client, guard, stray, a)).status_code == 202
                cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
                assert (await post(client, guard, cancel, a)).status_code == 202
    (ended,) = answers["a"]
    assert ended["id"] == 1 and ended["error"]["code"] == -32800
    (done,) = answers["b"]
    assert done["id"] == 1 and text_of(done) == "slow done"
    upstream_a = forwarded("a")
    assert upstream_a is not None
    cancels = [m["params"]["requestId"] for m in recorded(record) if m.get("method") == "notifications/cancelled"]
    assert cancels == [upstream_a["id"]]


async def test_server_requests_go_to_the_one_session_in_flight_or_are_refused(tmp_path: Path) -> None:
    """A server-to-client request while only session A has a request in flight goes to A; B's answer to it is
    dropped, A's reaches the upstream. While both have requests in flight it is answered by the guard: -32603
    (a ``ping``: ``{}``)."""
    async with shared_guard(tmp_path) as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            a, _ = await initialize(client, guard)
            b, _ = await initialize(client, guard)
            body = json.dumps(call(5, "ask", {})).encode()
            async with client.stream("POST", guard.url, content=body, headers={**ACCEPT, "mcp-session-id": a}) as s:
                events = sse_events(s)
                asked = await anext(events)
                assert asked["method"] == "ping"
                wrong = {"jsonrpc": "2.0", "id": asked["id"], "result": {"from": "b"}}
                assert (await post(client, guard, wrong, b)).status_code == 202
                right = {"jsonrpc": "2.0", "id": asked["id"], "result": {"from": "a"}}
                assert (await post(client, guard, right, a)).status_code == 202
                answer = await anext(events)
                assert answer["id"] == 5 and text_of(answer) == 'asked: {"from":"a"}'

            async with anyio.create_task_group() as tg:
                tg.start_soon(post, client, guard, call(1, "slow", {"seconds": 2}), b)
                await anyio.sleep(0.5)
                (refused,) = messages_of(await post(client, guard, call(6, "sample", {}), a))
                (pinged,) = messages_of(await post(client, guard, call(7, "ask", {}), a))
            assert refused["id"] == 6
            assert text_of(refused).startswith('asked: {"code":-32603')
            assert "cannot tell which client session" in text_of(refused)
            assert pinged["id"] == 7 and text_of(pinged) == "asked: {}"


async def test_subscriptions_are_counted_per_session(tmp_path: Path) -> None:
    """Two sessions subscribe to one URI: one subscribe upstream; an update reaches both; A's unsubscribe stays
    with the guard, and B's DELETE sends the upstream the unsubscribe. Unsubscribed sessions get no updates."""
    record = tmp_path / "record.jsonl"
    async with shared_guard(tmp_path) as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            a, _ = await initialize(client, guard)
            b, _ = await initialize(client, guard)
            c, _ = await initialize(client, guard)
            for n, session in enumerate((a, b)):
                (ok,) = messages_of(
                    await post(client, guard, request(n, "resources/subscribe", {"uri": "x:/1"}), session)
                )
                assert ok == {"jsonrpc": "2.0", "id": n, "result": {}}
            get = {"accept": "text/event-stream", "mcp-session-id": b}
            async with client.stream("GET", guard.url, headers=get) as stream:
                *notes, sent = messages_of(await post(client, guard, call(3, "updated", {"uri": "x:/1"}), a))
                assert text_of(sent) == "sent"
                note = await anext(sse_events(stream))
            # A's copy came on A's call stream, B's on B's GET stream; C (not subscribed) gets none.
            assert notes == [note]
            assert note["method"] == "notifications/resources/updated" and note["params"]["uri"] == "x:/1"
            (unsub,) = messages_of(await post(client, guard, request(4, "resources/unsubscribe", {"uri": "x:/1"}), a))
            assert unsub["result"] == {}

            def methods() -> list[str]:
                return [m.get("method", "") for m in recorded(record)]

            assert methods().count("resources/subscribe") == 1
            # logging/setLevel is shared: each session's goes to the upstream (the last one wins).
            for n, (session, level) in enumerate(((a, "debug"), (c, "error"))):
                level_set = request(20 + n, "logging/setLevel", {"level": level})
                (ok,) = messages_of(await post(client, guard, level_set, session))
                assert ok == {"jsonrpc": "2.0", "id": 20 + n, "result": {}}
            levels = [m["params"]["level"] for m in recorded(record) if m.get("method") == "logging/setLevel"]
            assert levels == ["debug", "error"]
            assert methods().count("resources/unsubscribe") == 0
            assert (await client.delete(guard.url, headers={"mcp-session-id": b})).status_code == 200
            await eventually(lambda: methods().count("resources/unsubscribe") == 1, "the guard's unsubscribe")
            get = {"accept": "text/event-stream", "mcp-session-id": c}
            async with client.stream("GET", guard.url, headers=get) as stream:
                (ping,) = messages_of(await post(client, guard, request(5, "ping"), c))
                assert ping["result"] == {}
                with anyio.move_on_after(0.5) as quiet:
                    await anext(sse_events(stream))
                assert quiet.cancelled_caught


@needs_proc
async def test_delete_cancels_the_sessions_requests_and_keeps_the_upstream(tmp_path: Path) -> None:
    """DELETE of one session: its call in flight is cancelled upstream and its id answers 404; the upstream
    (one process) serves the other session on; the last DELETE stops it."""
    record = tmp_path / "record.jsonl"
    async with shared_guard(tmp_path) as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            a, _ = await initialize(client, guard)
            b, _ = await initialize(client, guard)
            (upstream,) = children(guard.process.pid)
            async with anyio.create_task_group() as tg:
                tg.start_soon(post, client, guard, call(1, "slow", {"seconds": 30, "marker": "gone"}), a)
                await eventually(
                    lambda: any(m.get("method") == "tools/call" for m in recorded(record)), "the call upstream"
                )
                assert (await client.delete(guard.url, headers={"mcp-session-id": a})).status_code == 200
            (forwarded,) = [m for m in recorded(record) if m.get("method") == "tools/call"]
            await eventually(
                lambda: any(
                    m.get("method") == "notifications/cancelled" and m["params"]["requestId"] == forwarded["id"]
                    for m in recorded(record)
                ),
                "the cancellation upstream",
            )
            assert (await post(client, guard, request(2, "ping"), a)).status_code == 404
            (echo,) = messages_of(await post(client, guard, call(2, "echo", {"n": 1}), b))
            assert text_of(echo) == '{"n":1}'
            assert children(guard.process.pid) == {upstream}
            assert (await client.delete(guard.url, headers={"mcp-session-id": b})).status_code == 200
            await eventually(lambda: not alive(upstream), "the upstream to stop with the last session")
            _session, result = await initialize(client, guard)
            assert result["serverInfo"]["version"] == "init-1"  # a new process: its first initialize
            assert len(children(guard.process.pid)) == 1


@needs_proc
async def test_upstream_crash_answers_every_session_and_restarts_once(tmp_path: Path) -> None:
    """The upstream exits while both sessions have calls in flight: both get -32603; the relay starts it again
    (one process, the handshake replayed once), and both sessions go on."""
    record = tmp_path / "record.jsonl"
    async with shared_guard(tmp_path) as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            a, _ = await initialize(client, guard)
            b, _ = await initialize(client, guard)
            answers: dict[str, dict[str, Any]] = {}

            async def one(name: str, session: str, message: dict[str, Any]) -> None:
                for m in messages_of(await post(client, guard, message, session)):
                    if m.get("id") == 1:
                        answers[name] = m

            async with anyio.create_task_group() as tg:
                tg.start_soon(one, "b", b, call(1, "slow", {"seconds": 30}))
                await eventually(lambda: any(m.get("method") == "tools/call" for m in recorded(record)), "b's call")
                tg.start_soon(one, "a", a, call(1, "exit_now", {}))
            assert answers["a"]["error"]["code"] == -32603 and answers["b"]["error"]["code"] == -32603
            for n, session in enumerate((a, b)):
                (echo,) = [
                    m for m in messages_of(await post(client, guard, call(10 + n, "echo", {}), session)) if "id" in m
                ]
                assert echo["id"] == 10 + n and text_of(echo) == "{}"
            assert len(children(guard.process.pid)) == 1
            await eventually(lambda: "upstream restarted (restart 1)" in guard.log, "the restart to be logged")
    assert [m.get("method") for m in recorded(record)].count("initialize") == 2


@needs_proc
async def test_a_refused_first_initialize_opens_no_session_and_the_next_one_is_tried(tmp_path: Path) -> None:
    """The upstream refuses the first initialize (the SDK server needs clientInfo): that answer carries no session
    id and the upstream stops with it; the next initialize starts one again and opens a session."""
    async with open_guard(tmp_path, "--shared-upstream") as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            refused = await post(client, guard, request(1, "initialize", {"protocolVersion": "2025-11-25"}))
            (answer,) = messages_of(refused)
            assert "error" in answer and answer["id"] == 1 and "mcp-session-id" not in refused.headers
            await eventually(lambda: not children(guard.process.pid), "the upstream to stop")
            session, result = await initialize(client, guard)
            assert result["protocolVersion"] == "2025-11-25"
            (listed,) = messages_of(await post(client, guard, request(2, "tools/list"), session))
            assert len(listed["result"]["tools"]) == 15
        assert "initialize was answered with an error; ending the session" in guard.log


@needs_proc
async def test_an_idle_session_ends_alone(tmp_path: Path) -> None:
    """--session-idle-timeout ends each idle session by itself (404 afterwards); a session kept busy stays, and
    so does the upstream; once every session is idle and ended, the upstream stops."""
    async with shared_guard(tmp_path, "--session-idle-timeout", "2") as guard, http_client() as client:
        with anyio.fail_after(TIMEOUT):
            idle, _ = await initialize(client, guard)
            busy, _ = await initialize(client, guard)
            (upstream,) = children(guard.process.pid)
            for n in range(8):
                (echo,) = messages_of(await post(client, guard, call(n, "echo", {}), busy))
                assert text_of(echo) == "{}"
                await anyio.sleep(0.5)
            assert (await post(client, guard, request(1, "ping"), idle)).status_code == 404
            assert (await post(client, guard, request(9, "ping"), busy)).status_code == 200
            assert alive(upstream)
            await eventually(lambda: not alive(upstream), "the upstream to stop once every session ended")
            assert (await post(client, guard, request(10, "ping"), busy)).status_code == 404
        assert "idle for 2 s; ending it" in guard.log


def test_shared_upstream_needs_http() -> None:
    """``--shared-upstream`` without ``--http`` is a usage error."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "mcp_guard", "wrap", "--shared-upstream", "--", sys.executable, "-c", "pass"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 2 and "--shared-upstream only applies with --http" in done.stderr
