"""fronts.heap.settle_heap: the start-up heap frozen out of later collections (in a process of its own: the
test's heap stays as it is)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import gc
import weakref
from mcp_guard.fronts.heap import settle_heap

class Node:
    pass

cycle = Node()
cycle.me = cycle  # garbage of the start: collected first, not frozen
gone = weakref.ref(cycle)
del cycle
frozen = settle_heap()
assert gone() is None
assert frozen == gc.get_freeze_count() > 1000, frozen
assert gc.get_count()[0] < 50, gc.get_count()  # (a collection has just run)
before = gc.collect()  # a full collection walks only what was made after
print(frozen, before)
"""


def test_settle_heap_freezes_what_the_start_left() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    frozen, collected = (int(x) for x in done.stdout.split())
    assert frozen > 1000 and collected == 0
