"""When to start an upstream again: one restart policy for ``wrap`` and ``serve``.

A start that fails, or a connection that ends sooner than :data:`STABLE_SECONDS` after it
started (or before it was ready), is a failure; each failure in a row doubles the wait before
the next start, from :data:`BACKOFF_FIRST` up to :data:`BACKOFF_MAX` seconds. A connection
that lived longer resets the count. Times are ``anyio.current_time()``.
"""

from __future__ import annotations

from typing import Final

import anyio

__all__ = ["BACKOFF_FIRST", "BACKOFF_MAX", "HOLD_MAX", "STABLE_SECONDS", "Backoff"]

HOLD_MAX: Final = 1.0
"""A request arriving while the next restart is further away than this many seconds is answered at
once with an error (saying when the next attempt will be) instead of waiting for it; one nearer
waits for it (``wrap``'s relay and ``serve``'s gateway session alike)."""

STABLE_SECONDS: Final = 10.0
"""An upstream connection that ends sooner than this after it started counts as a failed start (backoff grows)."""

BACKOFF_FIRST: Final = 0.5
"""Seconds before the first restart after a failure; doubled after each further failure ..."""

BACKOFF_MAX: Final = 30.0
"""... up to this many seconds."""


class Backoff:
    """The restart policy of one upstream.

    Args:
        first, most: the first wait after a failure and the longest (seconds).
        stable_after: seconds a connection must live for its end not to count as a failure.

    Attributes:
        failures: failed or short-lived starts in a row.
        retry_at: when the next start may be made (``anyio.current_time()``).
    """

    def __init__(
        self, first: float = BACKOFF_FIRST, most: float = BACKOFF_MAX, *, stable_after: float = STABLE_SECONDS
    ) -> None:
        self.first = first
        self.most = most
        self.stable_after = stable_after
        self.failures = 0
        self.retry_at = 0.0

    def failed(self) -> None:
        """A start failed: the next one waits ``first * 2 ** (failures - 1)`` seconds, at most ``most``."""
        self.failures += 1
        self.retry_at = anyio.current_time() + min(self.first * 2 ** min(self.failures - 1, 32), self.most)

    def ended(self, lived: float, *, ready: bool = True) -> None:
        """A connection ended after ``lived`` seconds (``ready``: it had been set up): a failure when short."""
        if not ready or lived < self.stable_after:
            self.failed()
        else:
            self.failures = 0
            self.retry_at = 0.0

    def wait(self) -> float:
        """Seconds until the next start may be made (0: now)."""
        return max(0.0, self.retry_at - anyio.current_time())
