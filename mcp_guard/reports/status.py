"""A tool's status as ``mcp-guard check`` gives it: ``supported``, ``unsupported`` or ``malformed``.

The rule in one place, for :mod:`.tools` (``check``) and for the guard's listings
(``calls.tool_table`` counts the tools it lists by it, from the verdicts it writes). Light on
purpose: ``wrap`` imports it at start, without the reports or the schema classifier.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..core.report import VALIDATION

__all__ = ["Status", "listed_status", "status_of"]

Status = Literal["supported", "unsupported", "malformed"]
"""``supported``: every call is checked; ``unsupported``: a feature outside the subset (or a name
listed twice); ``malformed``: a broken definition or a supported keyword with a wrong value."""


def status_of(kinds: Sequence[object], *, broken: bool = False) -> Status:
    """The status from the kinds of a tool's findings: any ``validation`` finding (a broken
    schema) or a ``broken`` definition makes it malformed; any other finding, unsupported."""
    if broken or VALIDATION in kinds:
        return "malformed"
    return "unsupported" if kinds else "supported"


def listed_status(verdict: Mapping[str, Any]) -> Status:
    """The status ``check`` gives a tool, from the verdict the guard lists with it.

    Args:
        verdict: the tool's ``_meta["mcp-guard/schema"]`` (``supported``, ``issues`` with
            their ``kind``), as ``wrap`` and ``serve`` list it.
    """
    if verdict.get("supported") is True:
        return "supported"
    issues = verdict.get("issues")
    kinds = [i.get("kind") for i in issues if type(i) is dict] if type(issues) is list else []
    return status_of(kinds) if kinds else "unsupported"  # not supported, reason unsaid: never "supported"
