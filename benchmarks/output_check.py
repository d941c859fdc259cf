"""The cost of judging a tool result against its ``outputSchema`` (issue 15), as ratios measured in one run.

The goal (issue 15, "Speed"): checking a typical structured result costs no more than checking
typical arguments, as a ratio against the unchecked relay measured in the same run. Per-message
costs, in process, over one typical tool (a weather-like ``outputSchema`` of eight properties, a
nested object and an array of twenty objects; its ``inputSchema`` of four):

- ``relay``: what the unchecked relay does with the result line anyway (``loads_upstream`` + ``dumps``),
- ``relay+output``: the same plus ``calls.outputs.judge_result`` under ``enforce``,
- ``request``: what the unchecked relay does with the ``tools/call`` line (``loads_client`` + ``dumps``),
- ``request+args``: the same plus ``calls.refusals.schema_verdict`` on its arguments (what every call costs),
- ``same-args``: ``schema_verdict`` on the result's own value and schema, as if they were arguments,
- ``output``: ``judge_result`` alone.

Rounds are interleaved, in a new shuffled order each round (no target always runs after another),
and each figure is the median of its rounds, in CPU time of this thread, so other load hits all
alike. Prints microseconds per message and the ratios: ``relay+output / relay`` against
``request+args / request`` (the result's check against its unchecked relay, the arguments' against
theirs: the first must not exceed the second), and ``output / same-args`` (one value, one schema,
judged both ways: at most 1.00 within noise).

Usage::

    python benchmarks/output_check.py [--rounds 21] [--n 500] [--profile extended]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable

from mcp_guard.calls.outputs import judge_result
from mcp_guard.calls.refusals import schema_verdict
from mcp_guard.core import compile
from mcp_guard.wire.jsonrpc import dumps, loads_client, loads_upstream

HOUR = {
    "type": "object",
    "properties": {"hour": {"type": "integer", "minimum": 0, "maximum": 23}, "t": {"type": "number"}},
    "required": ["hour", "t"],
    "additionalProperties": False,
}
OUTPUT = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "country": {"type": "string", "pattern": "^[A-Z]{2}$"},
        "temperature": {"type": "number", "minimum": -100, "maximum": 100},
        "humidity": {"type": "integer", "minimum": 0, "maximum": 100},
        "sunny": {"type": "boolean"},
        "updated": {"type": "string", "format": "date-time"},
        "wind": {"type": "object", "properties": {"speed": {"type": "number"}, "dir": {"enum": ["N", "E", "S", "W"]}}},
        "hours": {"type": "array", "items": HOUR, "maxItems": 48},
    },
    "required": ["city", "temperature", "hours"],
    "additionalProperties": False,
}
INPUT = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "country": {"type": "string", "pattern": "^[A-Z]{2}$"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "units": {"enum": ["metric", "imperial"]},
    },
    "required": ["city"],
    "additionalProperties": False,
}
STRUCTURED = {
    "city": "Oslo",
    "country": "NO",
    "temperature": 21.5,
    "humidity": 40,
    "sunny": True,
    "updated": "2026-12-01T12:00:00Z",
    "wind": {"speed": 3.5, "dir": "N"},
    "hours": [{"hour": h, "t": 20.0 + h / 10} for h in range(20)],
}
ARGUMENTS = {"city": "Oslo", "country": "NO", "days": 3, "units": "metric"}


def per_message(work: Callable[[], object], n: int) -> float:
    """Microseconds of this thread's CPU time per call (``time.thread_time``: time spent waiting for a
    core, which the machine's other load decides, is not counted)."""
    start = time.thread_time()
    for _ in range(n):
        work()
    return (time.thread_time() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--profile", default="extended")
    args = parser.parse_args()
    output = compile(OUTPUT, profile=args.profile)
    inputs = compile(INPUT, profile=args.profile)
    result = {"content": [{"type": "text", "text": json.dumps(STRUCTURED)}], "structuredContent": STRUCTURED}
    line = json.dumps({"jsonrpc": "2.0", "id": 7, "result": result}).encode()

    def relay() -> object:
        return dumps(loads_upstream(line))

    def relay_output() -> object:
        message = loads_upstream(line)
        verdict = judge_result("weather", output, message["result"], "enforce", modern=False)
        assert verdict.outcome is None
        judged = verdict.result
        return dumps(message if judged is message["result"] else {**message, "result": judged})

    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "weather", "arguments": ARGUMENTS}}
    request_line = json.dumps(call).encode()

    def request() -> object:
        return dumps(loads_client(request_line))

    def request_arguments() -> object:
        message = loads_client(request_line)
        verdict = schema_verdict("weather", inputs, message["params"]["arguments"], modern=False)
        assert verdict.forward
        return dumps(message)

    as_input = compile(OUTPUT, profile=args.profile)

    def same_arguments() -> object:  # the result's schema and value, judged as a call's arguments
        return schema_verdict("weather", as_input, STRUCTURED, modern=False)

    def output_only() -> object:
        return judge_result("weather", output, result, "enforce", modern=False)

    targets = {
        "relay": relay,
        "relay+output": relay_output,
        "request": request,
        "request+args": request_arguments,
        "same-args": same_arguments,
        "output": output_only,
    }
    for work in targets.values():  # warm: validators generated, caches filled
        work()
    rounds: dict[str, list[float]] = {name: [] for name in targets}
    order = list(targets)
    shuffle = random.Random(15).shuffle
    for _ in range(args.rounds):
        shuffle(order)
        for name in order:
            rounds[name].append(per_message(targets[name], args.n))
    medians = {name: statistics.median(values) for name, values in rounds.items()}
    for name, value in medians.items():
        print(f"{name:>13}: {value:8.2f} µs/message")
    result_ratio = medians["relay+output"] / medians["relay"]
    arguments_ratio = medians["request+args"] / medians["request"]
    print(f"relay+output / relay:     {result_ratio:.2f}x (a result's check against its unchecked relay)")
    print(f"request+args / request:   {arguments_ratio:.2f}x (the arguments' check against theirs)")
    print(f"result ratio / arguments ratio: {result_ratio / arguments_ratio:.2f} (target <= 1)")
    same = medians["output"] / medians["same-args"]
    print(f"output / same-args:       {same:.2f}x (one value, one schema, both ways)")


if __name__ == "__main__":
    main()
