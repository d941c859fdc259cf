"""Log lines a peer can trigger at will, bounded: the first in full, then a count at each power of two.

A server can send ``notifications/tools/list_changed`` 500 times in a burst, answer ids nobody
asked, or put NaN in every result; a client can repeat a request id or send notifications where
requests belong. Each is worth telling the operator, but one log line per message would let the
peer flood the log. :class:`LogCounts` logs the first occurrence of a message as it is, then only
when the count reaches a power of two (2, 4, 8, ... 1,024 ...), saying the count: 500 list_changed
cost 9 log lines, not 500. The rule of the skipped-output counts (``peer.triage.SkipLog``,
docs/wrap.md). Counts run over the instance's life; one instance per session or peer.
"""

from __future__ import annotations

import logging

__all__ = ["LogCounts"]

log = logging.getLogger("mcp_guard")


class LogCounts:
    """Counts each message (by its format string) and logs it at 1 and at each power of two.

    Args:
        label: the prefix of every line (``"upstream NAME: "`` in ``serve``; ``""`` in ``wrap``).
    """

    def __init__(self, label: str = "") -> None:
        self.label = label
        self.counts: dict[str, int] = {}

    def log(self, level: int, message: str, *args: object) -> None:
        """One occurrence of ``message % args`` at ``level`` (``logging.INFO``...): logged when its
        count is 1 or a power of two, then with ``(N times so far; next logged at 2N)``."""
        n = self.counts[message] = self.counts.get(message, 0) + 1
        if n == 1:
            log.log(level, "%s" + message, self.label, *args)
        elif n & (n - 1) == 0:
            log.log(
                level,
                "%s" + message + " (%s times so far; logged again at %s)",
                self.label,
                *args,
                f"{n:,}",
                f"{2 * n:,}",
            )
