"""The start-up heap set aside from the garbage collector's full collections (:func:`settle_heap`).

CPython's collector (3.11-3.13: three generations) walks, in a full collection, every object tracked in
its oldest generation: at the guard's start that is the whole start-up heap, about 100,000 objects of
imported modules, classes, functions, the config and the tables (40-75 ms of CPU a walk, measured on the
HTTP front with tracing on). A full collection comes when the objects promoted to the oldest generation
since the last one reach a quarter of those it holds (and ten middle collections have run): a call that
leaves objects alive for a while (tracing's spans, which wait in the batch processor's queue for up to
its schedule delay, ``OTEL_BSP_SCHEDULE_DELAY``) promotes a few, and about every 3,000 calls one of
those walks comes: 20-25 µs a call, as much as making the spans costs (docs/tracing.md, "Cost").

:func:`settle_heap` collects once, then moves every object left into the permanent generation
(``gc.freeze``, Python 3.7+: "Freeze all the objects tracked by the garbage collector; move them to a
permanent generation and ignore them in all the future collections"). Later full collections walk only
what was made after (the calls' objects, the listings), a few thousand objects. Nothing else changes:
frozen objects are still freed by reference counting when nothing refers to them; only a reference cycle
among them is never collected, and the start-up heap is the process's own for its whole life.
"""

from __future__ import annotations

import gc

__all__ = ["settle_heap"]


def settle_heap() -> int:
    """Collect the garbage of the start (all generations), then freeze what is left (``gc.freeze``).

    Call it once a front is ready to serve, before the first request: in the serving process only (a test
    calling a front in its own process freezes its own heap too, which changes nothing it can see).

    Returns:
        The number of objects now in the permanent generation (``gc.get_freeze_count``).
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
