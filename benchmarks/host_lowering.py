"""The cost of showing a listing to a model host (issue 24, item 6), against the guard's own work in the same run.

A ``tools/list`` of 10,000 tools (the MCP tool corpus at ``../shared/data/mcp-tool-corpus`` repeated,
each with a distinct name) is

- classified as ``wrap`` classifies a listing it has not seen: ``core.compile(schema, defer=True,
  known_json=True)`` per tool (the reference: the listing's classification time);
- shown to each host: ``hosts.present_tools(tools, host)`` (the checker, the lowering, the names),
  on the same parsed tools.

The goal is a lowering no slower than 1.5x the classification. Then the mapping back of a call
(``Presentation.call``) is timed against the judged call it precedes (``Compiled.check`` of the
server-side arguments): the goal is at most 5% more. Rounds alternate the variants; medians are
reported, and ratios against the reference of the same round. Times are the process's CPU time
(``time.process_time``): on a shared machine, wall-clock time also counts the other processes'
turns, which made ratios of the same code swing by a factor of two between runs. Still, read the
ratios, not the times. First it prints, per host, the share of the corpus's tools shown as-is,
presentable and not presentable (the figures of docs/hosts.md). Usage::

    python benchmarks/host_lowering.py [--rounds 5] [--tools 10000] [--corpus PATH]
"""

from __future__ import annotations

import argparse
import gc
import json
import marshal
import statistics
import time
from pathlib import Path
from typing import Any

from mcp_guard.core import compile as compile_schema
from mcp_guard.hosts import HOST_NAMES, HOSTS, present_tools

clock = time.process_time
"""The timer: CPU time of this process (module docstring)."""

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "mcp-tool-corpus"


def tools_of(corpus: Path, count: int) -> list[dict[str, Any]]:
    """``count`` tools drawn from the corpus in turn, each with a distinct name."""
    found: list[dict[str, Any]] = []
    for path in sorted(corpus.glob("*.json")):
        found += json.loads(path.read_text(encoding="utf-8"))["tools"]
    if not found:
        raise SystemExit(f"no tools under {corpus}")
    return [{**found[i % len(found)], "name": f"t{i}"} for i in range(count)]


def fresh(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A parsed copy of the listing (no object shared with an earlier round: no cache helps), with the
    garbage collector's work on it done before any timing: parsing a listing makes a million objects,
    and the full collection they owe otherwise fell on whichever variant next allocated enough
    (the lowerings): up to a tenth of its time."""
    parsed: list[dict[str, Any]] = json.loads(json.dumps(tools))
    gc.collect()
    return parsed


def classify(tools: list[dict[str, Any]]) -> float:
    """The listing's classification as ``wrap`` does it cold: one deferred compile per distinct schema
    (its table caches verdicts by the schema's ``marshal`` key, as ``present_tools`` caches lowerings)."""
    started = clock()
    seen: dict[bytes, Any] = {}
    for tool in tools:
        key = marshal.dumps(tool["inputSchema"], 2)
        if key not in seen:
            seen[key] = compile_schema(tool["inputSchema"], defer=True, known_json=True)
    return clock() - started


def classify_each(tools: list[dict[str, Any]]) -> float:
    """One deferred compile per tool, no cache (every schema distinct: the worst case of both sides)."""
    started = clock()
    for tool in tools:
        compile_schema(tool["inputSchema"], defer=True, known_json=True)
    return clock() - started


def show_each(tools: list[dict[str, Any]], host: str) -> float:
    """The lowering of each distinct corpus schema once (no cache can help)."""
    started = clock()
    for tool in tools:
        present_tools([tool], HOSTS[host])  # type: ignore[index]
    return clock() - started


def show(tools: list[dict[str, Any]], host: str) -> float:
    started = clock()
    present_tools(tools, HOSTS[host])  # type: ignore[index]
    return clock() - started


def calls(tools: list[dict[str, Any]], host: str, repeat: int) -> tuple[float, float]:
    """Seconds for ``repeat`` judged calls of each shown tool of the corpus, without and with the
    mapping back first (the arguments: the shown form of ``{}`` plus every required string member)."""
    shown = present_tools(tools, HOSTS[host])  # type: ignore[index]
    cases = []
    for tool in tools:
        name = tool["name"]
        entry = shown.shown.get(name) or shown.shown.get(name.replace(".", "_"))
        if entry is None:
            continue
        schema = tool["inputSchema"]
        args = {
            r: "x"
            for r in schema.get("required", [])
            if schema.get("properties", {}).get(r, {}).get("type") == "string"
        }
        shown_args = args if entry.lowered is None else entry.lowered.present(args)
        compiled = compile_schema(schema)
        compiled.check({})  # the validator is built on the first check: not timed
        shown.call(entry.shown_name, shown_args)  # nor is the mapping back, compiled on the tool's first call
        cases.append((entry.shown_name, args, shown_args, compiled))
    judged = mapped = 0.0
    for _ in range(repeat):  # alternated, so that neither side has the warmer caches
        started = clock()
        for _name, args, _shown_args, compiled in cases:
            compiled.check(args)
        judged += clock() - started
        started = clock()
        for name, _args, shown_args, compiled in cases:
            compiled.check(shown.call(name, shown_args)[1])
        mapped += clock() - started
    return judged, mapped


def shares(corpus: Path) -> None:
    """Per host, how many corpus tools are shown as-is, presentable (lowered or renamed), not presentable
    (each server's listing shown alone, as ``check --host`` shows it)."""
    listings = [json.loads(p.read_text(encoding="utf-8"))["tools"] for p in sorted(corpus.glob("*.json"))]
    total = sum(len(tools) for tools in listings)
    print(f"corpus: {total} tools of {len(listings)} servers")
    for host in HOST_NAMES:
        as_is = presentable = 0
        for tools in listings:
            shown = present_tools(tools, HOSTS[host])  # type: ignore[index]
            for tool in shown.shown.values():
                if tool.lowered is None and tool.shown_name == tool.name:
                    as_is += 1
                else:
                    presentable += 1
        missing = total - as_is - presentable
        print(
            f"  {host:14} as-is {as_is:4} ({as_is / total:6.1%})   presentable {presentable:4} "
            f"({presentable / total:6.1%})   not presentable {missing:3}   shown in all "
            f"{(as_is + presentable) / total:6.1%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()
    shares(args.corpus)
    tools = tools_of(args.corpus, args.tools)
    ratios: dict[str, list[float]] = {h: [] for h in HOST_NAMES}
    base: list[float] = []
    spent: dict[str, list[float]] = {h: [] for h in HOST_NAMES}
    for _ in range(args.rounds):
        reference = classify(fresh(tools))
        base.append(reference)
        for host in HOST_NAMES:
            took = show(fresh(tools), host)
            spent[host].append(took)
            ratios[host].append(took / reference)
    print(f"{args.tools} tools, {args.rounds} alternated rounds (medians)")
    took = statistics.median(base) * 1e3
    print(f"  classification (compile, deferred, one per distinct schema, as wrap lists) {took:8.1f} ms")
    for host in HOST_NAMES:
        print(
            f"  present_tools {host:14} {statistics.median(spent[host]) * 1e3:8.1f} ms   "
            f"{statistics.median(ratios[host]):.2f}x classification (goal <= 1.5x)"
        )
    corpus = tools[: min(len(tools), 894)]  # each corpus tool once
    each_base: list[float] = []
    each: dict[str, list[float]] = {h: [] for h in HOST_NAMES}
    for _ in range(args.rounds):
        reference = classify_each(fresh(corpus))
        each_base.append(reference)
        for host in HOST_NAMES:
            each[host].append(show_each(fresh(corpus), host) / reference)
    print(f"each of the {len(corpus)} distinct corpus schemas alone, cold (no cache on either side):")
    print(f"  classification {statistics.median(each_base) / len(corpus) * 1e6:8.1f} us per tool")
    for host in HOST_NAMES:
        print(f"  present_tools {host:14} {statistics.median(each[host]):.2f}x classification")
    print("mapping back + judged call vs judged call alone (goal <= 1.05x):")
    for host in HOST_NAMES:
        found = [calls(corpus, host, 20) for _ in range(args.rounds)]
        ratio = statistics.median(mapped / judged for judged, mapped in found)
        print(f"  {host:14} {ratio:.3f}x")


if __name__ == "__main__":
    main()
