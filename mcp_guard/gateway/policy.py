"""The operator's rules for each tool: access, unsupported tools, argument size, call budget.

Rules come from the ``guard`` section (:class:`~.config.GuardSettings`): guard-wide glob
patterns over ``server/tool`` and per-server patterns over the tool name (upstream names
both, not exposed ones; ``fnmatch`` syntax, case-sensitive: ``*``, ``?``, ``[abc]``).

Access, decided per tool, independent of the order rules are written in:

- ``deny`` when a ``deny`` pattern matches, or an ``allow`` list is set (guard-wide or for
  the server) and none of its patterns matches;
- else ``hide`` when a ``hide`` pattern matches;
- else ``allow``.

A denied or hidden tool is left out of the lists and a call to it is answered as a call to
an unknown tool (-32602); a denied tool's call is logged as a warning and journaled as
``policy_denied``, a hidden tool's is journaled too (the operator chose to hide, not to
forget).

Limits: where the guard, the server and several of the server's ``tools`` patterns set one,
the smallest applies (the strictest rule wins, whatever their order).
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Final, Literal

from .config import GuardSettings, ServerPolicy

__all__ = ["WINDOW_SECONDS", "Access", "Budget", "Policy", "ToolPolicy", "argument_bytes"]

Access = Literal["allow", "deny", "hide"]

WINDOW_SECONDS: Final = 60.0
"""The budget's sliding window: calls per minute."""

_EMPTY_SERVER: Final = ServerPolicy()


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    """The rules in force for one upstream tool.

    Attributes:
        access: ``allow``, ``deny`` or ``hide`` (see the module docstring).
        rule: the rule that decided ``access`` (for logs and ``check``), e.g.
            ``guard.servers.fs.deny "write_*"``; empty for ``allow`` by default.
        unsupported: ``reject`` or ``hide``: what happens to the tool when its schema is
            outside the subset.
        max_argument_bytes: the size limit (bytes of the arguments' compact UTF-8 JSON), or
            ``None``.
        calls_per_minute: the budget per 60-second sliding window, or ``None``.
    """

    access: Access
    rule: str
    unsupported: Literal["reject", "hide"]
    max_argument_bytes: int | None
    calls_per_minute: int | None


def _smallest(*values: int | None) -> int | None:
    present = [v for v in values if v is not None]
    return min(present) if present else None


class Policy:
    """The rules of a ``guard`` section, evaluated per tool (pure; results are cached).

    Args:
        guard: the settings.
    """

    def __init__(self, guard: GuardSettings) -> None:
        self.guard = guard
        self._cache: dict[tuple[str, str], ToolPolicy] = {}

    def for_tool(self, server: str, tool: str) -> ToolPolicy:
        """The rules for ``server``'s tool ``tool`` (upstream names)."""
        key = (server, tool)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._decide(server, tool)
        return found

    def _decide(self, server: str, tool: str) -> ToolPolicy:
        g = self.guard
        s = g.servers.get(server, _EMPTY_SERVER)
        full = f"{server}/{tool}"
        access: Access = "allow"
        rule = ""
        hidden = next((p for p in s.hide if fnmatchcase(tool, p)), None)
        if hidden is not None:
            access, rule = "hide", f"guard.servers.{server}.hide {json.dumps(hidden)}"
        hidden = next((p for p in g.hide if fnmatchcase(full, p)), None)
        if hidden is not None and access == "allow":
            access, rule = "hide", f"guard.hide {json.dumps(hidden)}"
        denied = next((p for p in g.deny if fnmatchcase(full, p)), None)
        if denied is not None:
            access, rule = "deny", f"guard.deny {json.dumps(denied)}"
        denied = next((p for p in s.deny if fnmatchcase(tool, p)), None)
        if denied is not None:
            access, rule = "deny", f"guard.servers.{server}.deny {json.dumps(denied)}"
        if g.allow is not None and not any(fnmatchcase(full, p) for p in g.allow):
            access, rule = "deny", "not matched by guard.allow"
        if s.allow is not None and not any(fnmatchcase(tool, p) for p in s.allow):
            access, rule = "deny", f"not matched by guard.servers.{server}.allow"
        limits = [lim for pattern, lim in s.tools.items() if fnmatchcase(tool, pattern)]
        return ToolPolicy(
            access=access,
            rule=rule,
            unsupported=s.unsupported or g.unsupported,
            max_argument_bytes=_smallest(
                g.max_argument_bytes, s.max_argument_bytes, *(x.max_argument_bytes for x in limits)
            ),
            calls_per_minute=_smallest(g.calls_per_minute, s.calls_per_minute, *(x.calls_per_minute for x in limits)),
        )


def _placeholder(value: Any) -> Any:
    """``json.dumps`` hook for a value it cannot write (an inexact number marker): counted as ``0``."""
    return 0


_compact = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=_placeholder).encode


def argument_bytes(arguments: Any) -> int:
    """The size of ``arguments``: bytes of their compact JSON in UTF-8.

    Compact means no whitespace between tokens (``json.dumps(separators=(",", ":"),
    ensure_ascii=False)``); a lone surrogate counts as its 3 bytes (``surrogatepass``).
    An absent ``arguments`` is measured as ``{}`` by the caller.
    """
    return len(_compact(arguments).encode("utf-8", "surrogatepass"))


class Budget:
    """Calls per minute, per key (the exposed tool name), over a sliding 60-second window.

    A call takes a slot when one is free; a slot frees 60 seconds after the call that took
    it. Refused calls take no slot.

    Args:
        clock: seconds, monotonic (default ``time.monotonic``; tests inject their own).
        window: the window in seconds (default 60).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, window: float = WINDOW_SECONDS) -> None:
        self._clock = clock
        self._window = window
        self._calls: dict[str, deque[float]] = {}

    def take(self, key: str, limit: int) -> float | None:
        """Take a slot for ``key`` under ``limit`` calls per window.

        Returns:
            ``None`` when the call may go (its slot is taken), else the seconds until the
            oldest slot frees (> 0).
        """
        now = self._clock()
        calls = self._calls.setdefault(key, deque())
        horizon = now - self._window
        while calls and calls[0] <= horizon:
            calls.popleft()
        if len(calls) >= limit:
            return max(calls[len(calls) - limit] - horizon, 1e-3)
        calls.append(now)
        return None

    def used(self, key: str) -> int:
        """Slots of ``key`` taken within the current window."""
        now = self._clock()
        return sum(1 for t in self._calls.get(key, ()) if t > now - self._window)
