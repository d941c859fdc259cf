"""The operator's rules per caller: ``guard.principals`` (issue 27 item 2; docs/gateway.md, "Rules per caller").

A rule has a name, says whom it is for (``match``: authenticated or not, issuers, subjects,
client ids, groups, scopes) and what those callers may do, in the tool policy's own words
(:mod:`.policy`): ``allow``, ``deny`` and ``hide`` glob patterns over ``server/tool``, size
limits and calls-per-minute budgets. The pipeline applies them after the tool's own rules,
which a principal rule never widens.

Among the rules that match a call, independent of the order they are written in:

- ``deny`` when a ``deny`` pattern of one of them matches;
- else ``deny`` when some of them have an ``allow`` list and none of those lists matches (the
  lists add up: a caller in two groups may use what either allows; ``"allow": []`` allows
  nothing, so a rule matching everyone with ``"allow": []`` is a default deny);
- else ``hide`` when a ``hide`` pattern of one of them matches;
- else ``allow``.

Limits: the smallest of the matching rules' (and their ``tools`` patterns') applies. A rule's
``callsPerMinute`` is a budget for each caller and tool, counted under :func:`principal_key`.

A call without a principal (stdio, a shared bearer token) matches only ``{"authenticated":
false}`` rules; with no such rule it is governed by the tool's rules alone (no default deny:
a config without ``guard.principals`` behaves as before).

Pure: the principal's values are compared, never logged or returned; a verdict names its rule
by the rule's name, the one word a refusal tells the client.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Final

from .policy import NOBODY, Access, PrincipalVerdict, matches

_GLOB: Final = frozenset("*?[")

if TYPE_CHECKING:  # pydantic: loaded by whoever reads a config, never by ``wrap``'s pipeline
    from ..auth.principal import Principal
    from ..config import PrincipalMatch, PrincipalRule, ToolLimits

__all__ = ["MATCHED_CACHE", "PrincipalPolicy", "principal_key"]


@lru_cache(maxsize=4096)
def principal_key(principal: Principal) -> str:
    """The pseudonym of a caller in budget keys: SHA-256 of ``issuer``, NUL, ``subject``, first 32 hex digits.

    A budget key (in process, or a Redis key that ``MONITOR`` or a slow log may show) holds
    this, never the subject. It is a pseudonym, not a secret: who can guess a subject can
    compute its key. The issuer is part of it, as a subject is unique only per issuer
    (RFC 9068 §2.2; OpenID Connect Core §2).
    """
    import hashlib  # (with rules per caller only: off wrap's start, issue 14)

    digest = hashlib.sha256(f"{principal.issuer}\0{principal.subject}".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


MATCHED_CACHE: Final = 4096
"""Callers whose matching rules are remembered (the cache is emptied when full)."""


def _matches(who: PrincipalMatch, principal: Principal | None) -> bool:
    if who.authenticated is False:
        return principal is None
    if principal is None:
        return False
    if who.issuers is not None and principal.issuer not in who.issuers:
        return False
    if who.subjects is not None and principal.subject not in who.subjects:
        return False
    if who.client_ids is not None and principal.client_id not in who.client_ids:
        return False
    if who.groups is not None and principal.groups.isdisjoint(who.groups):
        return False
    return who.scopes is None or not principal.scopes.isdisjoint(who.scopes)


def _smallest(pairs: list[tuple[int, str]]) -> tuple[int | None, str]:
    if not pairs:
        return None, ""
    limit, name = min(pairs)
    return limit, name


class PrincipalPolicy:
    """The ``guard.principals`` rules, evaluated per caller and tool (pure; verdicts are cached).

    Args:
        rules: rule name → rule, in config order (``GuardSettings.principals``).

    The verdict depends on which rules match (:meth:`matching`), not on who the caller is
    beyond that, so verdicts are cached per set of matching rules and tool.
    """

    def __init__(self, rules: Mapping[str, PrincipalRule]) -> None:
        self.rules = dict(rules)
        self._cache: dict[tuple[tuple[str, ...], str, str], PrincipalVerdict] = {}
        self._matched: dict[Principal | None, tuple[str, ...]] = {}  # the last callers' (bounded)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def matching(self, principal: Principal | None) -> tuple[str, ...]:
        """The names of the rules that match ``principal`` (None: a call without one), in config order."""
        found = self._matched.get(principal)
        if found is None:
            if len(self._matched) >= MATCHED_CACHE:
                self._matched.clear()
            found = tuple(name for name, rule in self.rules.items() if _matches(rule.match, principal))
            self._matched[principal] = found
        return found

    def verdict(self, principal: Principal | None, server: str, tool: str) -> PrincipalVerdict:
        """The verdict for ``principal``'s calls to ``server``'s tool ``tool`` (upstream names)."""
        if not self.rules:
            return NOBODY
        return self.verdict_of(self.matching(principal), server, tool)

    def verdict_of(self, matched: tuple[str, ...], server: str, tool: str) -> PrincipalVerdict:
        """The verdict of the rules named ``matched`` (as :meth:`matching` returns them) for a tool."""
        if not matched:
            return NOBODY
        key = (matched, server, tool)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._decide(matched, f"{server}/{tool}")
        return found

    def _decide(self, matched: tuple[str, ...], full: str) -> PrincipalVerdict:
        rules = [(name, self.rules[name]) for name in matched]
        access: Access = "allow"
        rule = ""
        hider = next((name for name, r in rules if any(matches(full, p) for p in r.hide)), None)
        if hider is not None:
            access, rule = "hide", hider
        lists = [(name, r.allow) for name, r in rules if r.allow is not None]
        if lists and not any(matches(full, p) for _, allow in lists for p in allow):
            access, rule = "deny", ", ".join(name for name, _ in lists)
        denier = next((name for name, r in rules if any(matches(full, p) for p in r.deny)), None)
        if denier is not None:
            access, rule = "deny", denier
        sizes: list[tuple[int, str]] = []
        budgets: list[tuple[int, str]] = []
        for name, r in rules:
            limits: list[PrincipalRule | ToolLimits] = [r]
            limits += [x for pattern, x in r.tools.items() if matches(full, pattern)]
            sizes += [(x.max_argument_bytes, name) for x in limits if x.max_argument_bytes is not None]
            budgets += [(x.calls_per_minute, name) for x in limits if x.calls_per_minute is not None]
        size, _ = _smallest(sizes)
        per_minute, budget_rule = _smallest(budgets)
        return PrincipalVerdict(access, rule, size, per_minute, budget_rule)

    def pattern_warnings(
        self, configured: Collection[str], listed: Mapping[str, Collection[str]], *, every_server_listed: bool
    ) -> list[str]:
        """The rules' patterns that can match nothing, one line each, as :meth:`.policy.Policy.pattern_warnings`
        finds the guard-wide ones (a typo in a rule's ``deny`` must not pass for protection).

        Args:
            configured: every server name of the config.
            listed: per listed server, the names of every tool it listed.
            every_server_listed: every enabled server is in ``listed`` (only then can a pattern be said
                to match no listed tool).
        """
        out: list[str] = []
        names = [f"{server}/{tool}" for server, tools in listed.items() for tool in tools]
        for rule_name, rule in self.rules.items():
            keys = [("allow", rule.allow or []), ("deny", rule.deny), ("hide", rule.hide), ("tools", list(rule.tools))]
            for key, patterns in keys:
                for pattern in patterns:
                    where = f"guard.principals.{rule_name}.{key} {json.dumps(pattern)}"
                    server, slash, _ = pattern.partition("/")
                    if slash and not _GLOB.intersection(server) and server not in configured:
                        out.append(f"{where} names no server of the config: {server}")
                    elif every_server_listed and not any(matches(n, pattern) for n in names):
                        hint = "" if slash else " (patterns of a rule match server/tool)"
                        out.append(f"{where} matches no listed tool{hint}")
        return out
