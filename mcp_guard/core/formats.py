"""``format`` assertions for the formats JSON Schema 2020-12 defines (spec decision E4).

``extended`` asserts ``format`` in every dialect for the 19 formats of 2020-12 Validation,
7.3, exactly as their RFCs and the JSON Schema Test Suite's ``optional/format`` files say
(the format-assertion vocabulary). A ``format`` outside :data:`FORMATS` is an annotation:
:func:`format_checker` returns ``None`` and the core reports it in the notes.

Every checker takes a ``str`` (a format applies to strings only; the core does not call it
for other types), returns ``bool``, never raises, and runs in time linear in the length of
the string (documented per checker; a 1 MiB string is decided in milliseconds).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

__all__ = ["FORMATS", "format_checker"]

FORMATS: Final[frozenset[str]] = frozenset(
    {
        "date-time",
        "date",
        "time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "uuid",
        "uri-template",
        "json-pointer",
        "relative-json-pointer",
        "regex",
    }
)
"""The formats 2020-12 defines (Validation, 7.3); asserted in every dialect (E4)."""

_CHECKERS: dict[str, Callable[[str], bool]] = {}


def format_checker(name: str) -> Callable[[str], bool] | None:
    """The checker of format ``name``, or ``None`` when 2020-12 does not define it (an annotation).

    Args:
        name: the ``format`` value as written in the schema (case-sensitive).
    Returns:
        a function ``str -> bool`` (``True``: the string is valid for the format), or
        ``None`` for a name outside :data:`FORMATS`.
    """
    if name not in FORMATS:
        return None
    return _CHECKERS.get(name, _not_yet)


def _not_yet(value: str) -> bool:
    raise NotImplementedError
