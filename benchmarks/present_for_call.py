"""What ``wrap --present-for HOST`` adds to a judged call (issue 24, item 6: at most 5%), on the relay's real hot path.

A judged call is what ``wrap`` does for one client ``tools/call`` it judges and forwards: the line
parsed, routed, (under a host) mapped back to the server's form (``calls.presenting.map_call``), checked
(``Pipeline.check`` with ``wrap``'s steps), re-serialized under the guard's upstream id and written to
the upstream's pipe. For a pipe upstream the relay does all of it in one function,
``sessions.hot_path.ClientHotPath.line`` (the relay's ``hot``), which this benchmark calls, in process, on real relays:

- each relay (one without a host, ``ToolTable()``, and one per host, ``ToolTable(host=host_profile(HOST))``)
  runs on this asyncio loop as ``wrap`` runs it: its client side and its upstream are
  ``streams.pipes.PipeLineStream`` over ``os.pipe()`` pairs (the hot path's condition), the upstream an
  in-process server that answers ``initialize``, ``tools/list`` (the corpus, each tool named ``t<i>``)
  and every call. The client initializes and lists through the pipes, so the tables and the host's
  presentation are the ones ``wrap`` builds;
- the calls: per host, every corpus tool shown to it whose small valid arguments (each required string
  member ``"x"``) the guard forwards; the plain relay gets the server's form, the host's relay the form
  the host's model sends (``Lowered.present``: OpenAI strict's optional members as ``null``, Gemini's
  renamed properties) under the shown name. A first pass checks that each call is forwarded and that
  the upstream receives the same name and arguments from both relays (those that are not are left out);
- timed: ``Relay.hot(line)`` for a chunk of those lines (the relay's reader waits in
  ``receive()``, as when the pipe offers a line), then, untimed, the upstream answers them and the
  client reads the answers (the relay's state back where it was: nothing in flight).

Times are this process's CPU time (``time.process_time``; the in-process server's and client's work is
outside the timed spans); the collector runs as it does in ``wrap`` for a small line (not paused), a
``gc.collect()`` before each round. The arms alternate chunk by chunk (:data:`CHUNK` calls; the one
that goes first swaps each chunk and round). Printed per host, for all its forwarded tools and for
those it reshapes (lowered or renamed): the ratio host/plain of each round's CPU time (median,
quartiles, min-max), each arm's CPU per call (per chunk the median over rounds, summed) and their
ratio, and the ratio of the chunks' fastest times (the least disturbed figure on a shared machine). A last
row, ``(control)``, times the plain lines through a second plain relay against the first: the comparison's
own floor (two identical relays differ by a few percent: memory layout, the order of the arms).
Usage::

    python benchmarks/present_for_call.py [--rounds 15] [--hosts openai-strict,gemini,...]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from mcp_guard.calls.tool_table import ToolTable
from mcp_guard.hosts import HOST_NAMES, HOSTS, host_profile, present_tools
from mcp_guard.sessions.relay import Relay, wrap_session
from mcp_guard.streams.pipes import PipeLineStream

clock = time.process_time
"""The timer: CPU time of this process (module docstring)."""

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "mcp-tool-corpus"
CHUNK = 64
"""Lines timed between two untimed drains (well inside a pipe's 64 KiB: the write never waits)."""

INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}


def corpus_tools(corpus: Path) -> list[dict[str, Any]]:
    """Every corpus tool once, named ``t<i>`` (distinct names across servers)."""
    found: list[dict[str, Any]] = []
    for path in sorted(corpus.glob("*.json")):
        found += json.loads(path.read_text(encoding="utf-8"))["tools"]
    if not found:
        raise SystemExit(f"no tools under {corpus}")
    return [{**tool, "name": f"t{i}"} for i, tool in enumerate(found)]


def pipe_pair() -> tuple[PipeLineStream, PipeLineStream]:
    """Two connected line streams over two ``os.pipe()`` (both owned: closed with the streams)."""
    a_read, a_write = os.pipe()
    b_read, b_write = os.pipe()
    return PipeLineStream(a_read, b_write, owned=True), PipeLineStream(b_read, a_write, owned=True)


class Upstream:
    """An in-process MCP server on pipes (a connector for the relay): answers ``initialize``, ``tools/list``
    (``tools``) and every ``tools/call`` (``"ok"``); records each call's ``(name, arguments)``."""

    def __init__(self, tools: list[dict[str, Any]]) -> None:
        self.tools = tools
        self.calls: list[tuple[str, Any]] = []

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[PipeLineStream]:
        guard_side, server_side = pipe_pair()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.serve, server_side)
            try:
                yield guard_side
            finally:
                tg.cancel_scope.cancel()
                await guard_side.aclose()
                await server_side.aclose()

    async def serve(self, link: PipeLineStream) -> None:
        while True:
            try:
                message = json.loads(await link.receive())
            except anyio.EndOfStream:
                return
            method = message.get("method")
            if "id" not in message or method is None:
                continue
            result: dict[str, Any] = {}
            if method == "initialize":
                result = {"protocolVersion": INIT["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {}}
            elif method == "tools/list":
                result = {"tools": self.tools}
            elif method == "tools/call":
                self.calls.append((message["params"]["name"], message["params"].get("arguments")))
                result = {"content": [{"type": "text", "text": "ok"}]}
            await link.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode())


class Rig:
    """One relay (``host``: None for plain ``wrap``) over an :class:`Upstream`, and the client's side of it."""

    def __init__(self, tools: list[dict[str, Any]], host: str | None) -> None:
        self.upstream = Upstream(tools)
        guard_side, self.client = pipe_pair()
        table = ToolTable(host=host_profile(host) if host is not None else None)
        self.session = wrap_session(guard_side, self.upstream.connect, table)
        self.relay = self.session.routing
        assert isinstance(self.relay, Relay)
        self.next_id = 0

    async def request(self, method: str, params: Any = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": f"r{self.next_id}", "method": method}
        if params is not None:
            message["params"] = params
        await self.client.send(json.dumps(message).encode())
        while True:
            answer: dict[str, Any] = json.loads(await self.client.receive())
            if answer.get("id") == message["id"] and "method" not in answer:
                return answer

    async def start(self) -> list[dict[str, Any]]:
        """Initialize and list through the relay; the tools as the client was shown them."""
        await self.request("initialize", INIT)
        await self.client.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        listed: list[dict[str, Any]] = (await self.request("tools/list", {}))["result"]["tools"]
        return listed

    async def answers(self, count: int) -> list[dict[str, Any]]:
        """The next ``count`` responses the client reads."""
        got = []
        while len(got) < count:
            message = json.loads(await self.client.receive())
            if "method" not in message:
                got.append(message)
        return got

    async def timed(self, chunk: list[bytes]) -> float:
        """CPU seconds of ``Relay.hot`` over ``chunk`` (at most :data:`CHUNK` lines), which the
        upstream then answers and the client reads (untimed).

        Raises:
            RuntimeError: the hot path declined a line, or a call was not forwarded.
        """
        now = self.relay.hot  # (the hot path: the benchmark's subject)
        assert now is not None
        await anyio.sleep(0)  # (the relay's reader back in receive())
        began = clock()
        taken = [now(line) for line in chunk]
        spent = clock() - began
        if not all(taken):
            raise RuntimeError("the hot path declined a line")
        for answer in await self.answers(len(chunk)):
            if "result" not in answer:
                raise RuntimeError("a call was not forwarded")
        return spent


def line(request_id: int, name: str, arguments: Any) -> bytes:
    params = {"name": name, "arguments": arguments}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()


async def cases(plain: Rig, hosted: Rig, tools: list[dict[str, Any]], host: str) -> tuple[list[Any], list[Any]]:
    """The calls of ``host``'s comparison, as ``(plain line, host line, reshaped)`` per tool; all of them, and
    those whose tool the host is shown reshaped. Each is sent once through both relays (untimed): kept when
    both forward it and the upstream receives the same name and arguments from both."""
    shown = present_tools(tools, HOSTS[host])  # type: ignore[index]
    found = []
    for i, tool in enumerate(tools):
        entry = shown.shown.get(tool["name"])
        if entry is None:
            continue
        schema = tool["inputSchema"]
        props = schema.get("properties", {}) if type(schema.get("properties")) is dict else {}
        args = {
            r: "x"
            for r in schema.get("required", [])
            if type(props.get(r)) is dict and props[r].get("type") == "string"
        }
        shown_args = args if entry.lowered is None else entry.lowered.present(args)
        reshaped = entry.lowered is not None or entry.shown_name != tool["name"]
        found.append((line(i, tool["name"], args), line(i, entry.shown_name, shown_args), reshaped, tool["name"], args))
    kept = []
    for plain_line, host_line, reshaped, name, args in found:
        ok = True
        for rig, sent in ((plain, plain_line), (hosted, host_line)):
            before = len(rig.upstream.calls)
            await anyio.sleep(0)
            if rig.relay.hot is None or not rig.relay.hot(sent):
                raise RuntimeError("the hot path declined a line (not the state measured)")
            answer = (await rig.answers(1))[0]
            ok = ok and "result" in answer and rig.upstream.calls[before:] == [(name, args)]
        if ok:
            kept.append((plain_line, host_line, reshaped))
    return kept, [c for c in kept if c[2]]


async def compare(plain: Rig, hosted: Rig, chosen: list[Any], rounds: int) -> tuple[float, float, float, list[float]]:
    """Each arm's CPU microseconds per call (per chunk, the median over rounds; summed), the ratio of the
    chunks' fastest times (per chunk, the minimum over rounds; summed: the least disturbed figure on a
    shared machine), and the ratios of the rounds. The arms alternate chunk by chunk (the same tools in
    both), the first of each pair swapped every round, so that a slow spell of the machine falls on both."""
    chunks = [chosen[i : i + CHUNK] for i in range(0, len(chosen), CHUNK)]
    times: dict[str, list[list[float]]] = {"plain": [[] for _ in chunks], "host": [[] for _ in chunks]}
    ratios = []
    for r in range(rounds):
        gc.collect()
        spent = {"plain": 0.0, "host": 0.0}
        for i, chunk in enumerate(chunks):
            pair = (("plain", plain, [c[0] for c in chunk]), ("host", hosted, [c[1] for c in chunk]))
            for arm, rig, lines in pair if (r + i) % 2 else pair[::-1]:
                took = await rig.timed(lines)
                times[arm][i].append(took)
                spent[arm] += took
        ratios.append(spent["host"] / spent["plain"])
    per_call = {arm: sum(statistics.median(t) for t in times[arm]) / len(chosen) * 1e6 for arm in times}
    fastest = sum(min(t) for t in times["host"]) / sum(min(t) for t in times["plain"])
    return per_call["plain"], per_call["host"], fastest, ratios


async def run(args: argparse.Namespace) -> None:
    tools = corpus_tools(args.corpus)
    hosts = args.hosts.split(",") if args.hosts else list(HOST_NAMES)
    async with anyio.create_task_group() as tg:
        plain = Rig(tools, None)
        control = Rig(tools, None)  # a second plain relay: the floor of the comparison (two identical relays)
        rigs = {h: Rig(tools, h) for h in hosts}
        for rig in [plain, control, *rigs.values()]:
            tg.start_soon(rig.session.run)
            await rig.start()
        print(f"{len(tools)} corpus tools; {args.rounds} rounds, the arms alternated chunk by chunk; CPU time")
        print(
            "host           tools   ratio host/plain: median [quartiles] (min-max)   plain us  host us"
            "  (ratio)  fastest"
        )
        floor: list[Any] = []
        for host in hosts:
            every, reshaped = await cases(plain, rigs[host], tools, host)
            floor = floor or [(c[0], c[0], c[2]) for c in every]
            for label, chosen in (("all", every), ("reshaped", reshaped)):
                if not chosen:
                    print(f"{host:14} {label:8}   0   -")
                    continue
                plain_us, host_us, fastest, ratios = await compare(plain, rigs[host], chosen, args.rounds)
                low, _, high = statistics.quantiles(ratios, n=4)
                print(
                    f"{host:14} {label:8} {len(chosen):3}  {statistics.median(ratios):.3f}x [{low:.3f}-{high:.3f}] "
                    f"({min(ratios):.3f}-{max(ratios):.3f})   {plain_us:6.2f}   {host_us:6.2f}   "
                    f"({host_us / plain_us:.3f}x)  {fastest:.3f}x"
                )
        if floor:  # the control: the plain lines through a second plain relay (no host)
            plain_us, host_us, fastest, ratios = await compare(plain, control, floor, args.rounds)
            low, _, high = statistics.quantiles(ratios, n=4)
            print(
                f"{'(control)':14} {'plain':8} {len(floor):3}  {statistics.median(ratios):.3f}x [{low:.3f}-{high:.3f}] "
                f"({min(ratios):.3f}-{max(ratios):.3f})   {plain_us:6.2f}   {host_us:6.2f}   "
                f"({host_us / plain_us:.3f}x)  {fastest:.3f}x"
            )
        for rig in [plain, control, *rigs.values()]:
            await rig.client.close_send()
        tg.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--hosts", default="", help="comma-separated (default: every host)")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
