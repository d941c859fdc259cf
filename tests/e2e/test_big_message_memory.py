"""A big call through ``mcp-guard wrap`` on stdio holds the message about twice, not five to seven times.

Measured as ``benchmarks/big_message.py`` measures it (that script's own round: a fresh guard over
its upstream, big ``tools/call``s of 8 MiB, the guard's peak resident set ``VmHWM`` above its idle
``VmRSS``, as a multiple of the message): a ratio of sizes, not a timing. Issue 14's goal is at
most 3x. The offload of big lines to a worker thread (issue 25) once raised it to 5x (a call whose
answer is small) and 7x (one echoed back): a big line the pipe had decoded was encoded back to
bytes and decoded again, and with the message freed in another thread than the next one was made
in, glibc kept both threads' arenas resident (``mcp_guard.allocator``). Measured 2.36x for both
after the fix (2026-12-04). The echo's bound leaves room for the call's text being freed while
the echoed answer is read, which a loaded machine can make overlap.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "big_message.py"
MESSAGE = 8 * 1024 * 1024

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from Linux's /proc")


def benchmark() -> ModuleType:
    """``benchmarks/big_message.py`` as a module (the folder is no package)."""
    if str(BENCHMARK.parent) not in sys.path:  # (it imports relay_throughput, its neighbour, as a script does)
        sys.path.insert(0, str(BENCHMARK.parent))
    spec = importlib.util.spec_from_file_location("big_message_benchmark", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("tool", "bound"), [("take", 3.0), ("echo", 4.0)])
def test_a_big_calls_peak_memory_is_a_small_multiple_of_the_message(tool: str, bound: float) -> None:
    bench = benchmark()
    _times, above = bench.run_round(bench.TARGETS["mcp-guard"], tool, "x" * MESSAGE, 2)
    ratio = above / MESSAGE
    assert 1.0 <= ratio <= bound, f"peak above idle {ratio:.2f}x the message (bound {bound}x)"


@pytest.mark.parametrize("target", ["direct", "bare relay", "mcp-guard"])
def test_every_target_of_the_benchmark_answers_a_call(target: str) -> None:
    """Each target's code runs (the bare relay's is a string: a stray import in it went unnoticed until a run)."""
    bench = benchmark()
    times, _above = bench.run_round(bench.TARGETS[target], "take", "x" * 1000, 1)
    assert len(times) == 1
