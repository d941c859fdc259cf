"""The operator's rules for each tool: access, unsupported tools, argument size, call budget.

Rules come from the ``guard`` section (:class:`~.config.GuardSettings`): guard-wide glob
patterns over ``server/tool`` and per-server patterns over the tool name (upstream names
both, not exposed ones; ``fnmatch`` syntax, case-sensitive: ``*``, ``?``, ``[abc]``). A
pattern also matches the name it spells exactly (:func:`matches`), so any tool can be named
literally, even one called ``[x]`` or ``a*b`` whose name the glob would read otherwise.

:meth:`Policy.pattern_warnings` finds patterns that can match nothing (a server that is
not in the config; no tool of the listings), for the log and ``check --config``: a typo
in a ``deny`` must not pass for protection.

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
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:  # pydantic (~40 ms): loaded by whoever reads a config, never by ``wrap``'s pipeline
    from ..config import GuardSettings, ServerPolicy

__all__ = [
    "NOBODY",
    "WINDOW_SECONDS",
    "Access",
    "Budget",
    "Policy",
    "PrincipalVerdict",
    "ToolPolicy",
    "argument_bytes",
    "matches",
]

Access = Literal["allow", "deny", "hide"]

WINDOW_SECONDS: Final = 60.0
"""The budget's sliding window: calls per minute."""


@cache
def _empty_server() -> ServerPolicy:
    from ..config import ServerPolicy

    return ServerPolicy()


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


@dataclass(frozen=True, slots=True)
class PrincipalVerdict:
    """What the matching rules say about one tool for one caller.

    Attributes:
        access: ``allow``, ``deny`` or ``hide`` (see the module docstring).
        rule: the name of the rule that decided a ``deny`` or ``hide`` (``""`` for ``allow``);
            several names, comma-separated, when an allow list of each of them missed the tool.
        max_argument_bytes: the smallest size limit of the matching rules, or None.
        calls_per_minute: the smallest budget per caller and tool of the matching rules, or None.
        budget_rule: the name of the rule that set ``calls_per_minute`` (``""`` when None).
    """

    access: Access
    rule: str
    max_argument_bytes: int | None
    calls_per_minute: int | None
    budget_rule: str = ""


NOBODY: Final = PrincipalVerdict("allow", "", None, None)
"""The verdict when no ``guard.principals`` rule matches (or there are none): the tool's own rules alone."""


_GLOB: Final = frozenset("*?[")


def matches(name: str, pattern: str) -> bool:
    """Whether a policy pattern matches ``name``: ``name`` is the pattern itself, or the glob matches it.

    The glob is ``fnmatch.fnmatchcase`` (case-sensitive; ``*``, ``?``, ``[abc]``, ``[!abc]``).
    The exact comparison comes first, so a literal name can always be written as a pattern.
    """
    return name == pattern or fnmatchcase(name, pattern)


def _close(word: str, choices: Collection[str]) -> str:
    import difflib  # (only for a usage error: off wrap's start, issue 14)

    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    folded = [c for c in choices if c.lower() == word.lower()]
    best = folded or found
    return f" (did you mean {best[0]}?)" if best else ""


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
        s = g.servers.get(server)
        if s is None:
            s = _empty_server()
        full = f"{server}/{tool}"
        access: Access = "allow"
        rule = ""
        hidden = next((p for p in s.hide if matches(tool, p)), None)
        if hidden is not None:
            access, rule = "hide", f"guard.servers.{server}.hide {json.dumps(hidden)}"
        hidden = next((p for p in g.hide if matches(full, p)), None)
        if hidden is not None and access == "allow":
            access, rule = "hide", f"guard.hide {json.dumps(hidden)}"
        denied = next((p for p in g.deny if matches(full, p)), None)
        if denied is not None:
            access, rule = "deny", f"guard.deny {json.dumps(denied)}"
        denied = next((p for p in s.deny if matches(tool, p)), None)
        if denied is not None:
            access, rule = "deny", f"guard.servers.{server}.deny {json.dumps(denied)}"
        if g.allow is not None and not any(matches(full, p) for p in g.allow):
            access, rule = "deny", "not matched by guard.allow"
        if s.allow is not None and not any(matches(tool, p) for p in s.allow):
            access, rule = "deny", f"not matched by guard.servers.{server}.allow"
        limits = [lim for pattern, lim in s.tools.items() if matches(tool, pattern)]
        return ToolPolicy(
            access=access,
            rule=rule,
            unsupported=s.unsupported or g.unsupported,
            max_argument_bytes=_smallest(
                g.max_argument_bytes, s.max_argument_bytes, *(x.max_argument_bytes for x in limits)
            ),
            calls_per_minute=_smallest(g.calls_per_minute, s.calls_per_minute, *(x.calls_per_minute for x in limits)),
        )

    def pattern_warnings(
        self,
        configured: Collection[str],
        listed: Mapping[str, Collection[str]],
        *,
        every_server_listed: bool,
        exposed: Mapping[str, str] | None = None,
    ) -> list[str]:
        """Patterns that can match nothing, one line each (for the log and ``check --config``).

        Args:
            configured: every server name of the config (disabled ones too).
            listed: per listed server, the names of every tool it listed (hidden and denied ones too).
            every_server_listed: every enabled server is in ``listed``; only then can a
                guard-wide pattern be said to match nothing (a server still starting may
                list what it matches).
            exposed: exposed name → ``server/tool``, to say so when a pattern is an exposed name.

        A guard-wide pattern whose server part is written out (no ``*``, ``?``, ``[``) and is
        not a server of the config is reported at once; other patterns when they match no
        listed tool (per-server ones as soon as their server is listed).
        """
        g = self.guard
        exposed = exposed or {}
        out: list[str] = []
        names = [f"{server}/{tool}" for server, tools in listed.items() for tool in tools]
        rules: list[tuple[str, list[str]]] = [("allow", g.allow or []), ("deny", g.deny), ("hide", g.hide)]
        for key, patterns in rules:
            for pattern in patterns:
                where = f"guard.{key} {json.dumps(pattern)}"
                server, slash, _ = pattern.partition("/")
                if slash and not _GLOB.intersection(server) and server not in configured:
                    out.append(f"{where} names no server of the config: {server}{_close(server, configured)}")
                elif every_server_listed and not any(matches(n, pattern) for n in names):
                    if pattern in exposed:
                        hint = f" (`{pattern}` is an exposed name; patterns match server/tool: {exposed[pattern]})"
                    elif not slash:
                        hint = " (guard-wide patterns match server/tool, with the server's own tool names)"
                    else:
                        hint = ""
                    out.append(f"{where} matches no listed tool{hint}")
        for server, s in g.servers.items():
            tools = listed.get(server)
            if tools is None:
                continue
            rules = [("allow", s.allow or []), ("deny", s.deny), ("hide", s.hide), ("tools", list(s.tools))]
            for key, patterns in rules:
                for pattern in patterns:
                    if any(matches(t, pattern) for t in tools):
                        continue
                    if pattern in exposed:
                        hint = f" (`{pattern}` is an exposed name; write the server's own name)"
                    elif "/" in pattern:
                        hint = " (per-server patterns match the tool name alone)"
                    else:
                        hint = _close(pattern, tools)
                    out.append(f"guard.servers.{server}.{key} {json.dumps(pattern)} matches no tool of {server}{hint}")
        return out


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

    def take_all(self, wanted: Sequence[tuple[str, int]]) -> tuple[float, int] | None:
        """Take a slot of every ``(key, limit)`` in ``wanted``, or of none (a tool's budget and its caller's).

        Returns:
            ``None`` when every key had a free slot (one is taken in each), else ``(seconds, index)``:
            the seconds until the last of the full keys frees one (> 0) and that key's index in
            ``wanted``; then no slot is taken.
        """
        now = self._clock()
        horizon = now - self._window
        waits = []
        for index, (key, limit) in enumerate(wanted):
            calls = self._calls.setdefault(key, deque())
            while calls and calls[0] <= horizon:
                calls.popleft()
            if len(calls) >= limit:
                waits.append((max(calls[len(calls) - limit] - horizon, 1e-3), index))
        if waits:
            return max(waits)
        for key, _ in wanted:
            self._calls[key].append(now)
        return None

    def used(self, key: str) -> int:
        """Slots of ``key`` taken within the current window."""
        now = self._clock()
        return sum(1 for t in self._calls.get(key, ()) if t > now - self._window)
