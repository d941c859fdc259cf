"""The cost of noting repeated keys while the upstream decoder parses a big ``tools/list`` response.

``wire.jsonrpc.loads_upstream`` parses a message that can carry tool schemas (it contains
``"inputSchema"``) with an ``object_pairs_hook`` (``wire.repeated``), so that a tool whose schema
repeats a key is refused; every other message keeps the C-speed parse. Measured here on one
response listing 10,000 tools (the MCP tool corpus at ``../shared/data/mcp-tool-corpus``
repeated, each with a distinct description), against references in the same run:

- ``json.loads`` of the text (the floor);
- the upstream decoder without the hook (``literal_float`` only: what ``loads_upstream`` did before);
- ``loads_upstream`` (with the hook);
- the listing's whole handling as ``wrap`` does it: ``loads_upstream``, ``ToolTable.annotate``
  (classification, deferred), ``dumps``, on a warm table (the schemas' validators cached).

Rounds alternate the variants; medians are reported, and ratios against the references. The
machine may be shared: read the ratios, not the times. Usage::

    python benchmarks/listing_parse.py [--rounds 7] [--tools 10000] [--corpus PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp_guard.core.json_values import literal_float
from mcp_guard.relay.guard import ToolTable
from mcp_guard.wire.jsonrpc import dumps, loads_upstream

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mcp-tool-corpus"


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()
    line = listing(args.corpus, args.tools)
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
