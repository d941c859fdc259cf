"""STUB (core branch) until the ``fmt`` branch's format checkers are merged: no checker yet."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["FORMATS", "format_checker"]

FORMATS = frozenset(
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


def format_checker(name: str) -> Callable[[str], bool] | None:
    """The stub: no checker (the classifier refuses a 2020-12 format it has no checker for)."""
    return None
