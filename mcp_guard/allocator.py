"""One malloc arena for the process, so a big message's memory is reused whichever thread frees it
(glibc only; elsewhere nothing is done).

A big message (a 16 MiB argument, a 30 MB listing) is held as its text and as its parsed value,
made in a worker thread (``peer.offload``) and freed there or on the loop. glibc's ``malloc`` gives
each thread that allocates concurrently an arena of its own, and a big block freed in one arena
stays resident for reuse by that arena (its top is trimmed only past a threshold that rises with
each big block freed: ``mallopt(3)``, ``M_MMAP_THRESHOLD``/``M_TRIM_THRESHOLD``). The next big
message then fills the other arena from fresh pages: measured with
``benchmarks/big_message.py --mib 8`` (2026-12-04), a big call's peak resident set above idle was
3.0x the message with the default arenas and 2.35x with one, at the same speed (issue 14's goal:
at most 3x; pinning the mmap threshold instead gave 2.4x but cost a fifth more time in page
faults). ``mallopt(M_ARENA_MAX, 1)`` (glibc manual, "Memory Allocation Tunables":
``glibc.malloc.arena_max``) makes threads created afterwards share the main arena; the guard's
threads hold the interpreter lock for most of their work, so they seldom contend for it.
``MALLOC_ARENA_MAX`` in the environment (or ``GLIBC_TUNABLES``) wins: the user's setting is left
alone.
"""

from __future__ import annotations

import os
import sys
from typing import Final

__all__ = ["one_arena"]

_M_ARENA_MAX: Final = -8  # <malloc.h>

_done = False


def one_arena() -> bool:
    """Make threads started from now on share glibc's main malloc arena (once; later calls do nothing).
    Call it before the worker threads start.

    Returns whether it was set now: False off Linux, under another C library (no
    ``gnu_get_libc_version``), where ``MALLOC_ARENA_MAX`` or ``GLIBC_TUNABLES`` is set, or after
    the first call. Never raises: the process runs as before when the C library cannot be reached.
    """
    global _done
    if _done:
        return False
    _done = True
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ or "GLIBC_TUNABLES" in os.environ:
        return False
    try:
        import ctypes  # (about 2 ms; only the commands that relay messages call this)

        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version"):
            return False
        return bool(libc.mallopt(_M_ARENA_MAX, 1))
    except (OSError, AttributeError):
        return False
