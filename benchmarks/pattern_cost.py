"""What a charged ``pattern`` unit costs in time, and what the ``format`` checkers cost per byte.

Part 1 (E3, E6). For patterns of the MCP tool corpus and hostile-but-bounded ones, on
near-miss strings of growing length, it measures the time of ``Pattern.search`` and divides
it by ``Pattern.cost`` (the units the core charges before searching). The reference is the
time of one work-budget unit of the guard's own validator, measured in the same run: the
check of an array of integers under ``{"items": {"type": "integer"}}`` divided by its length
(one subschema evaluation per element, the unit ``budget.MAX_WORK`` counts). A ratio below 1
means a charged unit never takes longer than a validator unit, so the budget bounds the time
of a call whatever its patterns. It also reports how tight the bound is: the time per proven
step.

Part 2 (E4). Each ``format`` checker on 1 MiB adversarial strings, as a ratio to
``json.loads`` of the same string as a JSON document (the cost of having received it).

Usage::

    python benchmarks/pattern_cost.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

from mcp_guard import compile as guard_compile
from mcp_guard.core.ecma_regex import Pattern, compile_pattern
from mcp_guard.core.formats import FORMATS, format_checker


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def unit_time(repeat: int) -> float:
    n = 100_000
    compiled = guard_compile({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}}})
    arguments = {"a": list(range(n))}
    compiled.check(arguments)
    return best_of(repeat, lambda: compiled.check(arguments)) / n


CASES: list[tuple[str, Callable[[int], str]]] = [
    ("^[a-zA-Z0-9_-]+$", lambda n: "a" * n + "!"),
    ("^\\d{4}-\\d{2}-\\d{2}$", lambda n: "2024-01-01" + "0" * n),
    (
        "^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$",
        lambda n: "a-b." * (n // 4) + "-",
    ),
    ("^[.\\-A-Za-z0-9]+([=!,]{1,2}[./\\-A-Za-z0-9]+)+$", lambda n: "a" + "=b" * (n // 2) + "="),
    ("^[a-z]+(?:-[a-z]+)*$", lambda n: "ab-" * (n // 3) + "!"),
    ("^(?:a|b)*$", lambda n: "ab" * (n // 2) + "!"),
    ("^((a)|b)*$", lambda n: "ab" * (n // 2) + "!"),
    ("^(?:[a-z]+-)*$", lambda n: "a-" * (n // 2) + "!"),
    ("^\\p{L}*$", lambda n: "é" * n + "!"),
    ("^[^/]+$", lambda n: "é" * n + "/"),
    ("^.+$", lambda n: "😀" * n + "\n"),
    ("a*b", lambda n: "a" * n),
    ("\\s+$", lambda n: " " * n + "x"),
    ("^\\w+(?:\\.\\w+)*@\\w+(?:\\.\\w+)+$", lambda n: "a." * (n // 2) + "@"),
]


def part1(repeat: int) -> None:
    unit = unit_time(repeat)
    print(f"validator unit (one subschema evaluation): {unit * 1e9:.0f} ns")
    print(
        f"{'pattern':58s} {'length':>8s} {'search':>10s} {'units':>10s} {'ns/unit':>8s} {'ratio':>6s} {'ns/step':>8s}"
    )
    worst = 0.0
    for source, make in CASES:
        pattern = compile_pattern(source)
        assert isinstance(pattern, Pattern), pattern
        for n in (1_000, 10_000, 100_000):
            text = make(n)
            units = pattern.cost(len(text))
            if units > 4_000_000:
                print(f"{source[:58]:58s} {len(text):8d} {'refused':>10s} {units:10d}")
                continue
            t = best_of(repeat, lambda pattern=pattern, text=text: pattern.search(text))
            ratio = t / units / unit
            worst = max(worst, ratio)
            per_step = t / pattern.steps(len(text)) * 1e9
            print(
                f"{source[:58]:58s} {len(text):8d} {t * 1e3:8.3f}ms {units:10d} {t / units * 1e9:8.1f} "
                f"{ratio:6.3f} {per_step:8.3f}"
            )
    print(f"worst ratio of a charged unit's time to a validator unit's time: {worst:.3f} (about 1 or below)")


ADVERSARIAL: dict[str, str] = {
    "letters": "a" * (1 << 20),
    "labels": "a." * (1 << 19),
    "percent": "%41" * ((1 << 20) // 3),
    "slashes": "/" * (1 << 20),
    "open brace": "{" + "a" * (1 << 20),
    "url": "http://" + "a" * (1 << 20),
    "non-ascii": "é" * (1 << 20),
}


def part2(repeat: int) -> None:
    print(f"\n{'format':24s} {'worst input':12s} {'time':>10s} {'x json.loads':>13s}")
    for name in sorted(FORMATS):
        checker = format_checker(name)
        assert checker is not None
        worst = (0.0, "", 1.0)
        for label, value in ADVERSARIAL.items():
            document = json.dumps(value)
            t = best_of(repeat, lambda checker=checker, value=value: checker(value))
            ref = best_of(repeat, lambda document=document: json.loads(document))
            if t / ref > worst[0] / worst[2]:
                worst = (t, label, ref)
        print(f"{name:24s} {worst[1]:12s} {worst[0] * 1e3:8.2f}ms {worst[0] / worst[2]:13.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    part1(args.repeat)
    part2(args.repeat)


if __name__ == "__main__":
    main()
