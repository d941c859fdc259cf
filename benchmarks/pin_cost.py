"""What pinning costs the gateway's merged tool list: one ``Catalog.update`` of a long listing.

Sides, each a fresh :class:`~mcp_guard.sessions.catalog.Catalog` given the same listing of
``--tools`` tools (10 string properties each, a 200-character description):

- ``no lock`` — the reference: classification, names, routes, no digests;
- ``v1 lock`` — every tool pinned, digests only (a digest per tool: RFC 8785 and SHA-256);
- ``v2 lock`` — every tool pinned, with definitions (as ``mcp-guard pin`` writes now);
- ``v2 changed`` — every tool's description changed since the pin: each is listed with its
  pinned definition, so the pinned definitions are classified too and each is diffed.

Method: interleaved rounds (a burst of load on the shared machine falls on every side), the
cyclic collector collected before each timed call and paused during it, the best round
counts. Figures are ratios against ``no lock`` measured in the same run. Usage::

    .venv/bin/python benchmarks/pin_cost.py [--tools 500] [--rounds 15]
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from typing import Any

from mcp_guard.calls.pinning import LockFile
from mcp_guard.config import parse_config
from mcp_guard.sessions.catalog import Catalog


def listing(count: int) -> list[dict[str, Any]]:
    """``count`` distinct tools."""
    properties = {f"p{j}": {"type": "string", "maxLength": 10} for j in range(10)}
    return [
        {
            "name": f"t{i}",
            "description": f"{i} " + "d" * 200,
            "inputSchema": {"type": "object", "properties": properties},
        }
        for i in range(count)
    ]


def timed(config: Any, lock: LockFile | None, tools: list[dict[str, Any]]) -> float:
    """Seconds of one update of a fresh catalog."""
    catalog = Catalog(config, lock, quiet=True)
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        catalog.update("s", tools)
        return time.perf_counter() - start
    finally:
        gc.enable()


def main() -> None:
    """Print each side's best time and its ratio to ``no lock``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    config = parse_config(json.dumps({"mcpServers": {"s": {"command": "x"}}, "guard": {"profile": "standard"}}))
    tools = listing(args.tools)
    v2, problems = LockFile.from_listings([("s", tools)])
    assert not problems
    v1 = LockFile(dict(v2.tools))
    changed = [{**t, "description": "changed"} for t in tools]
    sides: dict[str, tuple[LockFile | None, list[dict[str, Any]]]] = {
        "no lock": (None, tools),
        "v1 lock": (v1, tools),
        "v2 lock": (v2, tools),
        "v2 changed": (v2, changed),
    }
    best = {name: float("inf") for name in sides}
    for _ in range(args.rounds):
        for name, (lock, listed) in sides.items():
            best[name] = min(best[name], timed(config, lock, listed))
    reference = best["no lock"]
    print(f"one Catalog.update of {args.tools} tools, best of {args.rounds} interleaved rounds")
    for name, seconds in best.items():
        print(f"  {name:<11} {seconds * 1000:8.1f} ms  {seconds / reference:5.2f}x")


if __name__ == "__main__":
    main()
