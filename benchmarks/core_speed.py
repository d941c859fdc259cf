"""Per-call validation speed: ``Compiled.check`` vs python-jsonschema (and others, if installed).

For each Sigma schema (``fixtures/sigma/*.json``) and a set of valid and invalid argument
objects, measures the time per call of:

- ``mcp_guard.compile(schema).check(arguments)`` (compiled once);
- ``jsonschema.Draft202012Validator(schema).iter_errors(arguments)`` drained to a list
  (validator built once; all errors, as the guard reports all) — the reference;
- ``fastjsonschema.compile(schema)(arguments)`` and ``jsonschema_rs`` when importable
  (first error only: they stop early, which favours them).

Reported as ratios against the reference measured in the same run (target for the guard:
>= 10x faster). Usage::

    python benchmarks/core_speed.py [--seconds 0.2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema

from mcp_guard import compile as guard_compile

ROOT = Path(__file__).resolve().parents[1]
SIGMA = ROOT / "fixtures" / "sigma"

CASES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "read": [
        ("valid", {"path": "/src/main.py", "offset": 10, "limit": 200}),
        ("invalid", {"path": 7, "offset": 0, "limit": True}),
    ],
    "write": [
        ("valid", {"path": "/tmp/x", "content": "hello\n" * 20}),
        ("invalid", {"path": "/tmp/x"}),
    ],
    "grep": [
        (
            "valid",
            {
                "pattern": "TODO",
                "path": "src",
                "glob": "*.py",
                "ignore_case": True,
                "context": 2,
                "limit": 50,
            },
        ),
        ("invalid", {"pattern": "TODO", "context": -1, "limit": 0, "ignore_case": "yes"}),
    ],
    "AskUserQuestion": [
        (
            "valid",
            {
                "question": "Which?",
                "options": ["a", {"label": "b", "value": "2"}, {"label": "c", "description": "third"}],
                "allow_freeform": False,
                "timeout_ms": 5000,
            },
        ),
        ("invalid", {"question": "Which?", "options": [{"value": "x"}, 3], "timeout_ms": 10}),
    ],
    "todo": [
        ("valid", {"action": "update", "id": "t1", "status": "in_progress"}),
        ("invalid", {"action": "archive", "status": "done"}),
    ],
}


def per_call(fn: Callable[[], object], seconds: float) -> float:
    """Seconds per call of ``fn``: best of 5 batches, each about ``seconds / 5`` long."""
    n = 1
    while True:  # calibrate
        start = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - start > seconds / 50:
            break
        n *= 2
    batch = max(1, int(n * 10))
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        best = min(best, (time.perf_counter() - start) / batch)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=0.2, help="rough time budget per measurement")
    args = parser.parse_args()
    others: dict[str, Callable[[dict[str, Any]], Callable[[Any], object]]] = {}
    try:
        import fastjsonschema

        def fjs(schema: dict[str, Any]) -> Callable[[Any], object]:
            validate = fastjsonschema.compile(schema)

            def run(value: Any) -> object:
                try:
                    return validate(value)
                except fastjsonschema.JsonSchemaException as exc:
                    return exc

            return run

        others["fastjsonschema"] = fjs
    except ImportError:
        pass
    try:
        import jsonschema_rs

        def rs(schema: dict[str, Any]) -> Callable[[Any], object]:
            validator = jsonschema_rs.validator_for(schema)
            return lambda value: list(validator.iter_errors(value))

        others["jsonschema-rs"] = rs
    except ImportError:
        pass

    header = f"{'tool':<16}{'args':<9}{'jsonschema µs':>14}{'guard µs':>10}{'guard ×':>9}"
    header += "".join(f"{name + ' ×':>17}" for name in others)
    print(header)
    ratios: dict[str, list[float]] = {"guard": [], **{name: [] for name in others}}
    for tool, cases in CASES.items():
        schema = json.loads((SIGMA / f"{tool}.json").read_text())["inputSchema"]
        compiled = guard_compile(schema)
        assert compiled.supported, tool
        reference = jsonschema.Draft202012Validator(schema)
        built = {name: make(schema) for name, make in others.items()}
        for label, arguments in cases:
            ok = compiled.check(arguments).ok
            assert ok == (not list(reference.iter_errors(arguments))) == (label == "valid"), (tool, label)
            ref = per_call(lambda a=arguments, v=reference: list(v.iter_errors(a)), args.seconds)
            mine = per_call(lambda a=arguments, c=compiled: c.check(a), args.seconds)
            row = f"{tool:<16}{label:<9}{ref * 1e6:>14.2f}{mine * 1e6:>10.2f}{ref / mine:>9.1f}"
            ratios["guard"].append(ref / mine)
            for name, run in built.items():
                t = per_call(lambda a=arguments, r=run: r(a), args.seconds)
                ratios[name].append(ref / t)
                row += f"{ref / t:>17.1f}"
            print(row)
    print()
    for name, values in ratios.items():
        print(
            f"{name:<16} faster than python-jsonschema: median {statistics.median(values):.1f}×, min {min(values):.1f}×"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
