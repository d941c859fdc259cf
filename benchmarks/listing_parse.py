"""The cost of noting repeated keys while the upstream decoder parses a big ``tools/list`` response.

``wire.jsonrpc.loads_upstream`` parses a message that can carry tool schemas (it contains
``"inputSchema"``) with an ``object_pairs_hook`` (``wire.repeated``), so that a tool whose schema
repeats a key is refused; every other message keeps the C-speed parse. Measured here on one
response listing 10,000 tools (the MCP tool corpus at ``tests/data/mcp-tool-corpus``
repeated, each with a distinct description), against references in the same run:

- ``json.loads`` of the text (the floor);
- the upstream decoder without the hook (``literal_float`` only: what ``loads_upstream`` did before);
- ``loads_upstream`` (with the hook);
- the listing's whole handling as ``wrap`` does it: ``loads_upstream``, ``ToolTable.annotate``
  (classification, deferred), ``dumps``, on a warm table (the schemas' validators cached).

Rounds alternate the variants; medians are reported, and ratios against the references. The
machine may be shared: read the ratios, not the times.

``--end-to-end`` (issue 14 item 5: no more than 2x direct) lists the same 10,000 tools from a
tiny stdio upstream (written below: it answers ``tools/list`` with the prepared bytes) directly,
through a bare relay (``big_message.BARE_RELAY_CODE``: a Python process that parses and
re-serializes each message, the floor of any relay that must read a message before forwarding
it) and through ``python -m mcp_guard wrap``: the processes are started and initialized once, then
each round sends one ``tools/list`` to each in turn and times until the whole answer line is
read (the client's own ``json.loads`` of it included, alike). The first listing of each is
shown apart (``wrap``'s is cold: every schema is classified); the median of the later ones
(warm: the schemas are found by their cache key) is the figure. ``--before DIR`` (a checkout of
another revision: ``git archive REV | tar -x -C DIR``) lists through that revision's ``wrap`` too,
in the same alternated rounds.

``--cache-key`` times ``ToolTable.replace`` on the parsed listing, cold (a new table: every
schema classified) and warm (every schema found in the cache), with the table's key
(``tool_table.schema_key``, ``marshal`` format 2) and with the key it had before (the schema's
compact JSON text, written here for the comparison), best of the interleaved rounds, against
``json.loads`` of the text. Usage::

    python benchmarks/listing_parse.py [--rounds 7] [--tools 10000] [--corpus PATH]
        [--end-to-end [--before DIR] | --cache-key]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from big_message import BARE_RELAY_CODE  # this directory's script: the same bare relay as the big-message figures

from mcp_guard.calls.tool_table import ToolTable
from mcp_guard.core.json_values import literal_float
from mcp_guard.wire.jsonrpc import dumps, loads_upstream

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "mcp-tool-corpus"


def listing(corpus: Path, count: int) -> bytes:
    """One ``tools/list`` response of ``count`` tools drawn from the corpus, as compact JSON bytes."""
    tools: list[dict[str, Any]] = []
    for path in sorted(corpus.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        tools += [t for t in (data.get("tools") if type(data) is dict else None) or [] if type(t) is dict]
    if not tools:
        raise SystemExit(f"no tools under {corpus}")
    picked = [{**tools[i % len(tools)], "name": f"t{i}", "description": f"tool {i}"} for i in range(count)]
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": picked}}, separators=(",", ":")).encode()


UPSTREAM = """
import sys
listing = open(sys.argv[1], "rb").read()
head, tail = listing.split(b'"id":1,', 1)
import json
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m.get("method") == "initialize":
        out = json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": m["params"]["protocolVersion"],
                          "capabilities": {"tools": {}}, "serverInfo": {"name": "big", "version": "1"}}}).encode()
    elif m.get("method") == "tools/list":
        out = head + b'"id":' + json.dumps(m["id"]).encode() + b"," + tail
    else:
        out = json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {}}).encode()
    sys.stdout.buffer.write(out + b"\\n")
    sys.stdout.buffer.flush()
"""

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}


class Target:
    """One started, initialized process listing tools over stdio (the upstream itself, or ``wrap`` over it)."""

    def __init__(self, command: list[str], cwd: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd, env=env
        )
        self.next_id = 1
        self.ask(INITIALIZE)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdout is not None
        self.send(message)
        answer: dict[str, Any] = json.loads(self.process.stdout.readline())
        if answer.get("id") != message["id"] or "result" not in answer:
            raise RuntimeError(f"unexpected answer to {message['method']}")
        return answer

    def list_tools(self) -> float:
        """Seconds from sending ``tools/list`` to the parsed answer."""
        self.next_id += 1
        started = time.perf_counter()
        answer = self.ask({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/list"})
        elapsed = time.perf_counter() - started
        del answer
        return elapsed

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def end_to_end(line: bytes, rounds: int, tools: int, before: Path | None = None) -> None:
    """The listing through ``wrap`` vs directly from the same upstream (issue 14 item 5); with ``before``
    (a checkout of another revision), through that revision's ``wrap`` too, in the same rounds."""
    with tempfile.TemporaryDirectory() as scratch:
        Path(scratch, "listing.json").write_bytes(line)
        Path(scratch, "upstream.py").write_text(UPSTREAM)
        server = [sys.executable, str(Path(scratch, "upstream.py")), str(Path(scratch, "listing.json"))]
        wrap = [sys.executable, "-m", "mcp_guard", "wrap", "--log-level", "warning", "--", *server]
        here = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        bare = [sys.executable, "-c", BARE_RELAY_CODE, *server]  # the floor of a relay that reads messages
        targets = {
            "direct": Target(server, scratch),
            "bare": Target(bare, scratch),
            "wrap": Target(wrap, scratch, here),
        }
        if before is not None:
            targets["before"] = Target(wrap, scratch, {**os.environ, "PYTHONPATH": str(before.resolve())})
        try:
            first = {name: target.list_tools() for name, target in targets.items()}
            times: dict[str, list[float]] = {name: [] for name in targets}
            for _ in range(rounds):
                for name, target in targets.items():
                    times[name].append(target.list_tools())
        finally:
            for target in targets.values():
                target.close()
    medians = {name: statistics.median(v) for name, v in times.items()}
    print(f"\nend to end: {tools} tools over stdio, {len(line) / 1e6:.1f} MB, {rounds} alternated rounds:")
    for name in targets:
        print(
            f"  {name:8} first listing {first[name] * 1e3:8.1f} ms   "
            f"later listings (median) {medians[name] * 1e3:8.1f} ms"
        )
    for name in [n for n in targets if n != "direct"]:
        print(
            f"{name}/direct: first {first[name] / first['direct']:.2f}x, later {medians[name] / medians['direct']:.2f}x"
        )
    for name in [n for n in targets if n not in ("direct", "bare")]:
        print(
            f"{name}/bare relay: first {first[name] / first['bare']:.2f}x, later {medians[name] / medians['bare']:.2f}x"
        )


def cache_keys(line: bytes, rounds: int) -> None:
    """``ToolTable.replace`` cold and warm with ``tool_table.schema_key`` vs the former JSON-text key."""
    import gc
    from unittest import mock

    from mcp_guard.calls import tool_table

    text_of = json.JSONEncoder(separators=(",", ":"), allow_nan=False, sort_keys=False).encode

    def json_text_key(schema: Any) -> Any:
        try:
            return text_of(schema)
        except (TypeError, ValueError, RecursionError):
            return None

    # (key function, "the key proves the schema finite JSON") as tool_table.ToolTable._compiled calls them
    keys = {
        "JSON text (before)": (json_text_key, lambda key: True),
        "schema_key (marshal 2)": (tool_table.schema_key, vars(tool_table)["_finite_doubles_only"]),
    }
    tools = json.loads(line)["result"]["tools"]
    best: dict[str, float] = {}

    def timed(label: str, run: Callable[[], Any]) -> None:
        gc.collect()
        gc.disable()
        try:
            started = time.perf_counter()
            kept = run()
            best[label] = min(best.get(label, float("inf")), time.perf_counter() - started)
        finally:
            gc.enable()
        del kept

    for _ in range(rounds):
        timed("json.loads", lambda: json.loads(line))
        for name, (key, finite) in keys.items():
            with mock.patch.multiple(tool_table, schema_key=key, _finite_doubles_only=finite):
                timed(f"{name}, cold", lambda: ToolTable("extended", label=None).replace(tools))
                warm = ToolTable("extended", label=None)
                warm.replace(tools)
                timed(f"{name}, warm", partial(warm.replace, tools))
    print(f"ToolTable.replace of {len(tools)} tools, best of {rounds} interleaved rounds (collector paused):")
    for label, seconds in best.items():
        print(f"  {label:34} {seconds * 1e3:8.1f} ms   {seconds / best['json.loads']:5.2f}x json.loads")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--end-to-end", action="store_true", help="list through wrap vs directly (see above)")
    parser.add_argument("--before", type=Path, help="with --end-to-end: also time wrap from this checkout")
    parser.add_argument("--cache-key", action="store_true", help="the table's cache key vs the former one")
    args = parser.parse_args()
    line = listing(args.corpus, args.tools)
    if args.end_to_end:
        end_to_end(line, args.rounds, args.tools, args.before)
        return
    if args.cache_key:
        cache_keys(line, args.rounds)
        return
    plain = json.JSONDecoder(parse_float=literal_float)
    table = ToolTable("extended", label=None)

    def handle() -> None:
        message = loads_upstream(line)
        dumps({**message, "result": table.annotate(message["result"], cache=True, first_page=True)})

    handle()  # warm the table's schema cache
    variants: dict[str, Callable[[], Any]] = {
        "json.loads": lambda: json.loads(line),
        "decoder without the hook": lambda: plain.decode(line.decode("utf-8")),
        "loads_upstream": lambda: loads_upstream(line),
        "whole listing (parse, annotate, dumps)": handle,
    }
    times: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(args.rounds):
        for label, run in variants.items():
            started = time.perf_counter()
            run()
            times[label].append(time.perf_counter() - started)
    medians = {k: statistics.median(v) for k, v in times.items()}
    print(f"{args.tools} tools, {len(line) / 1e6:.1f} MB, {args.rounds} alternated rounds, medians:")
    for label, seconds in medians.items():
        print(f"  {label:42} {seconds * 1e3:8.1f} ms")
    hook, before = medians["loads_upstream"], medians["decoder without the hook"]
    print(f"loads_upstream / decoder without the hook: {hook / before:.2f}")
    print(f"loads_upstream / json.loads:               {hook / medians['json.loads']:.2f}")
    whole = medians["whole listing (parse, annotate, dumps)"]
    print(f"the hook's share of the whole listing:      {(hook - before) / whole:.0%}")


if __name__ == "__main__":
    main()
