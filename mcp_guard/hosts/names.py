"""Tool names made valid for a host (issue 24, item 3): a call to the shown name reaches the tool
under the server's own; two names that become one are reported, never merged.

The host's name rule is its table's ``name_pattern`` (``hosts.tables``), read here character by
character: a character the pattern refuses becomes ``_``, a first character it refuses gets a
``_`` before it, and a name past the length limit keeps its head and ends with ``_`` and 8 hex
digits of the SHA-256 of the server's name (so two long names stay apart). Pure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from .tables import HostProfile

__all__ = ["NameMap", "host_name", "host_names"]


def _fits(host: HostProfile, text: str) -> bool:
    return host.name_pattern.fullmatch(text) is not None


def host_name(name: str, host: HostProfile) -> str:
    """``name`` as ``host`` accepts it (itself when it already does)."""
    if _fits(host, name):
        return name
    shown = "".join(c if _fits(host, "a" + c) else "_" for c in name) or "_"
    if not _fits(host, shown[0] + "a"):
        shown = "_" + shown
    if not _fits(host, shown):  # too long
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        head = shown
        while head and not _fits(host, f"{head}_{digest}"):
            head = head[:-1]
        shown = f"{head}_{digest}"
    return shown


@dataclass(frozen=True, slots=True)
class NameMap:
    """The shown name of every server-side name of one listing.

    Attributes:
        shown: server-side name → shown name, for every name that collides with no other.
        collisions: shown name → the server-side names that would all be shown under it (none
            of them is shown: a call could not be told apart).
    """

    shown: dict[str, str]
    collisions: dict[str, tuple[str, ...]]

    def original(self, shown: str) -> str | None:
        """The server-side name of a shown one (None: no such tool is shown)."""
        for name, as_shown in self.shown.items():
            if as_shown == shown:
                return name
        return None


def host_names(names: Sequence[str], host: HostProfile) -> NameMap:
    """The :class:`NameMap` of a listing's names for ``host`` (a name listed twice collides with itself)."""
    owner: dict[str, str] = {}  # shown name -> the first server-side name shown under it
    clash: dict[str, list[str]] = {}  # shown name -> every server-side name shown under it, when several
    fits = host.name_pattern.fullmatch
    for name in names:
        as_shown = name if fits(name) is not None else host_name(name, host)
        if as_shown in owner:
            members = clash.get(as_shown)
            if members is None:
                clash[as_shown] = [owner[as_shown], name]
            else:
                members.append(name)
        else:
            owner[as_shown] = name
    if not clash:
        return NameMap({name: as_shown for as_shown, name in owner.items()}, {})
    shown = {name: as_shown for as_shown, name in owner.items() if as_shown not in clash}
    collisions = {as_shown: tuple(clash[as_shown]) for as_shown in owner if as_shown in clash}
    return NameMap(shown, collisions)
