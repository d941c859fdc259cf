"""The cost of showing a listing to a model host (issue 24, item 6), against the guard's own work in the same run.

A ``tools/list`` of 10,000 tools (the MCP tool corpus at ``../shared/data/mcp-tool-corpus`` repeated,
each with a distinct name) is

- classified two ways, the references: the core's (``core.compile(schema, defer=True,
  known_json=True)`` once per distinct schema, keyed with ``marshal``: the stricter reference) and
  ``wrap``'s (``ToolTable.annotate`` of the ``tools/list`` result on a new table, as ``wrap`` does with
  a listing it has not seen: the verdicts written into each entry's ``_meta``);
- shown to each host: ``hosts.present_tools(tools, host)`` (the checker, the lowering, the names),
  on the same parsed tools; and, as ``ToolTable.prepare`` runs it under ``--present-for``, right after the
  core's classification of the same parsed listing, given its keys (``present_tools(..., keys=...)``: the
  schemas are not keyed twice), the ratio taken to that round's classification.

Every side runs with the garbage collector paused, as the guard runs them (``ToolTable`` and
``calls.presenting`` pause it: a listing makes many objects and no cycle worth a pass). The goal is a
listing no slower than 1.5x its classification; both ratios are printed.

Then the mapping back of a call, against the judged call it precedes (the goal: at most 5% more),
for the corpus tools whose small valid arguments the guard forwards (every required string member
``"x"``, shown as the host's model sends them):

(a) the judged call is ``wrap``'s handling of a ``tools/call`` up to forwarding it, in process
    (:class:`Judge`: the prelude of ``sessions.relay``'s ``_call_verdict`` and ``Pipeline.check`` with
    ``wrap``'s steps), without and with ``calls.presenting.map_call`` first;
(b) stricter: the generated validator alone (``Compiled.check``), without and with
    ``Presentation.call`` first.

Rounds alternate the variants; medians are reported, and ratios against the reference of the same
round. Times are the process's CPU time (``time.process_time``): on a shared machine, wall-clock time
also counts the other processes' turns, which made ratios of the same code swing by a factor of two
between runs. Still, read the ratios, not the times. First it prints, per host, the share of the
corpus's tools shown as-is, presentable and not presentable (the figures of docs/hosts.md). Usage::

    python benchmarks/host_lowering.py [--rounds 5] [--tools 10000] [--corpus PATH]
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import marshal
import statistics
import time
from pathlib import Path
from typing import Any

from mcp_guard.calls.call import Call, Route
from mcp_guard.calls.pipeline import WRAP_STEPS, Pipeline, tool_name
from mcp_guard.calls.policy import ToolPolicy
from mcp_guard.calls.presenting import map_call
from mcp_guard.calls.tool_table import ToolTable
from mcp_guard.core import compile as compile_schema
from mcp_guard.hosts import HOST_NAMES, HOSTS, present_tools
from mcp_guard.wire.jsonrpc import valid_id
from mcp_guard.wire.meta import is_modern
from mcp_guard.wire.repeated import collector_paused

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
    """The listing's classification reduced to its core (the stricter reference): one deferred compile per
    distinct schema (``core.compile(schema, defer=True, known_json=True)``, cached by the schema's
    ``marshal`` key, as ``present_tools`` caches lowerings), the collector paused (as the guard runs both)."""
    with collector_paused():
        started = clock()
        seen: dict[bytes, Any] = {}
        for tool in tools:
            key = marshal.dumps(tool["inputSchema"], 2)
            if key not in seen:
                seen[key] = compile_schema(tool["inputSchema"], defer=True, known_json=True)
        return clock() - started


def classify_then_show(tools: list[dict[str, Any]], host: str) -> tuple[float, float]:
    """The core's classification of the listing (:func:`classify`) keeping its keys, then ``present_tools`` of
    the same parsed listing given those keys (``keys=``), as ``ToolTable.prepare`` runs the two under
    ``--present-for``: the lowering on top of a classification that has keyed every schema already. Returns
    the seconds of each."""
    with collector_paused():
        started = clock()
        seen: dict[bytes, Any] = {}
        keys: dict[int, bytes] = {}
        for tool in tools:
            schema = tool["inputSchema"]
            key = keys[id(schema)] = marshal.dumps(schema, 2)
            if key not in seen:
                seen[key] = compile_schema(schema, defer=True, known_json=True)
        classified = clock() - started
        started = clock()
        present_tools(tools, HOSTS[host], keys=keys)  # type: ignore[index]
        return classified, clock() - started


def classify_table(tools: list[dict[str, Any]]) -> float:
    """The listing's classification as ``wrap`` makes it of a listing it has not seen (the guard's own
    reference): ``ToolTable.annotate`` of the ``tools/list`` result on a new table (it pauses the collector
    itself), each tool's verdict written into its ``_meta``."""
    table = ToolTable(label=None)
    started = clock()
    table.annotate({"tools": tools}, cache=True, first_page=True)
    return clock() - started


def classify_each(tools: list[dict[str, Any]]) -> float:
    """One deferred compile per tool, no cache (every schema distinct: the worst case of both sides)."""
    with collector_paused():
        started = clock()
        for tool in tools:
            compile_schema(tool["inputSchema"], defer=True, known_json=True)
        return clock() - started


def show_each(tools: list[dict[str, Any]], host: str) -> float:
    """The lowering of each distinct corpus schema once (no cache can help)."""
    with collector_paused():
        started = clock()
        for tool in tools:
            present_tools([tool], HOSTS[host])  # type: ignore[index]
        return clock() - started


def show(tools: list[dict[str, Any]], host: str) -> float:
    """``present_tools`` of the listing, the collector paused (as ``calls.presenting`` and ``ToolTable`` run it)."""
    with collector_paused():
        started = clock()
        present_tools(tools, HOSTS[host])  # type: ignore[index]
        return clock() - started


class Judge:
    """``wrap``'s handling of a ``tools/call`` up to forwarding it (a judged call), in process: the prelude
    and the pipeline's check as ``sessions.relay.Relay._call_verdict`` makes them (the id and version
    checked, the tool looked up in the ``ToolTable``, its route, the ``Call``, ``Pipeline.check`` with
    ``WRAP_STEPS``: visibility and schema, the generated validator, a refusal built where one is due),
    with, for a host, ``calls.presenting.map_call`` first (the mapping back: the shown name looked up, the
    arguments mapped, the request rebuilt)."""

    def __init__(self, tools: list[dict[str, Any]]) -> None:
        self.table = ToolTable(label=None)
        self.table.annotate({"tools": tools}, cache=True, first_page=True)
        self.pipeline = Pipeline(enabled=WRAP_STEPS)
        policy = ToolPolicy("allow", "", self.table.unsupported, None, None)
        self.routes = {  # (the relay makes one per listed tool, on its first call: not timed)
            e.name: Route(e.name, "", e.name, e.compiled, policy, output=e.output, outputs=self.table.outputs)
            for e in self.table.entries()
        }

    def verdict(self, message: dict[str, Any], shown: Any = None) -> Any:
        """The message to forward (the same object when nothing changed), or the answer refusing it."""
        request_id = message["id"]
        if not valid_id(request_id) or message.get("jsonrpc") != "2.0":
            return None
        params = message["params"]
        name = tool_name(params)
        tool = None
        if shown is not None:
            mapped = map_call(self.pipeline, message, shown)
            if isinstance(mapped, dict):
                return mapped
            message, tool = mapped
            params, name = message["params"], tool.name
        entry = self.table.get(name) if name is not None else None
        if entry is None:
            return self.pipeline.unlisted(name, request=(request_id, params)).response(request_id)
        call = Call(self.routes[name], params.get("arguments", {}), is_modern(params), call_id="", shown=tool)
        self.pipeline.traced(call, request_id, params)
        rejection = self.pipeline.check(call)
        return message if rejection is None else rejection.response(request_id)


def calls(tools: list[dict[str, Any]], host: str, repeat: int) -> tuple[float, float, float, float, int]:
    """Seconds for ``repeat`` calls of each shown tool of the corpus that the guard forwards, as
    ``(judged, judged with the mapping back first, validator alone, mapping back then validator)``, and
    the number of such tools. The arguments: every required string member ``"x"`` (a tool that requires
    another kind is left out: its calls would be refused), shown to the host as its model sends them
    (``Lowered.present``: OpenAI strict's optional members as ``null``)."""
    shown = present_tools(tools, HOSTS[host])  # type: ignore[index]
    judge = Judge(tools)
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
        server = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": args}}
        model = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                 "params": {"name": entry.shown_name, "arguments": shown_args}}  # fmt: skip
        # the validators are built on the first check, the mapping back on the first call: neither timed
        if judge.verdict(server) is not server or "result" in judge.verdict(model, shown.shown):
            continue  # refused (a required member of another kind): not the common case measured
        compiled = judge.table.get(name).compiled  # type: ignore[union-attr]
        shown.call(entry.shown_name, shown_args)
        cases.append((entry.shown_name, args, shown_args, compiled, server, model))
    table = shown.shown
    judged = mapped = alone = alone_mapped = 0.0
    verdict = judge.verdict
    for _ in range(repeat):  # alternated, so that neither side has the warmer caches
        started = clock()
        for *_rest, server, _model in cases:
            verdict(server)
        judged += clock() - started
        started = clock()
        for *_rest, model in cases:
            verdict(model, table)
        mapped += clock() - started
        started = clock()
        for _name, args, _shown_args, compiled, *_messages in cases:
            compiled.check(args)
        alone += clock() - started
        started = clock()
        for name, _args, shown_args, compiled, *_messages in cases:
            compiled.check(shown.call(name, shown_args)[1])
        alone_mapped += clock() - started
    return judged, mapped, alone, alone_mapped, len(cases)


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
    logging.disable(logging.CRITICAL)  # the calls refused while choosing the measured ones log their refusal
    shares(args.corpus)
    tools = tools_of(args.corpus, args.tools)
    ratios: dict[str, list[float]] = {h: [] for h in HOST_NAMES}
    table_ratios: dict[str, list[float]] = {h: [] for h in HOST_NAMES}
    base: list[float] = []
    tables: list[float] = []
    spent: dict[str, list[float]] = {h: [] for h in HOST_NAMES}
    keyed: dict[str, list[float]] = {h: [] for h in HOST_NAMES}
    keyed_spent: dict[str, list[float]] = {h: [] for h in HOST_NAMES}
    for _ in range(args.rounds):
        reference = classify(fresh(tools))
        base.append(reference)
        annotated = classify_table(fresh(tools))
        tables.append(annotated)
        for host in HOST_NAMES:
            took = show(fresh(tools), host)
            spent[host].append(took)
            ratios[host].append(took / reference)
            table_ratios[host].append(took / annotated)
            classified, shown = classify_then_show(fresh(tools), host)
            keyed[host].append(shown / classified)
            keyed_spent[host].append(shown)
    print(f"{args.tools} tools, {args.rounds} alternated rounds (medians; goal <= 1.5x the classification)")
    print(f"  classification, core (a deferred compile per distinct schema)   {statistics.median(base) * 1e3:8.1f} ms")
    print(
        f"  classification, wrap's (ToolTable.annotate, a new table)        {statistics.median(tables) * 1e3:8.1f} ms"
    )
    for host in HOST_NAMES:
        print(
            f"  present_tools {host:14} {statistics.median(spent[host]) * 1e3:8.1f} ms   "
            f"{statistics.median(ratios[host]):.2f}x the core's   {statistics.median(table_ratios[host]):.2f}x wrap's"
        )
    print("  given the classification's keys (present_tools(keys=...), as ToolTable.prepare runs it), same listing:")
    for host in HOST_NAMES:
        ratios = sorted(keyed[host])
        print(
            f"  present_tools {host:14} {statistics.median(keyed_spent[host]) * 1e3:8.1f} ms   "
            f"{statistics.median(ratios):.2f}x the round's core classification ({ratios[0]:.2f}-{ratios[-1]:.2f})"
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
    print("the mapping back of a call (goal: adds <= 5% to a judged call), per host:")
    print("  (a) judged call: wrap's prelude + Pipeline.check, without and with map_call first")
    print("  (b) stricter: the generated validator alone, without and with Presentation.call first")
    for host in HOST_NAMES:
        found = [calls(corpus, host, 20) for _ in range(args.rounds)]
        count = found[0][4]
        judged = statistics.median(f[0] / (20 * count) for f in found) * 1e6
        mapping = statistics.median((f[1] - f[0]) / (20 * count) for f in found) * 1e6
        ratio = statistics.median(f[1] / f[0] for f in found)
        strict = statistics.median(f[3] / f[2] for f in found)
        print(
            f"  {host:14} (a) {ratio:.3f}x  (judged {judged:5.1f} us, mapping {mapping:+5.2f} us)   "
            f"(b) {strict:.3f}x   {count} tools"
        )


if __name__ == "__main__":
    main()
