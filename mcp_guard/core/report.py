"""Findings and reports: the values the schema core returns.

A verdict is never an exception. ``classify``, ``Compiled.check`` and ``check`` return a
:class:`Report`; each problem is an :class:`Issue` with a stable ``kind`` and ``keyword``
and JSON Pointers (RFC 6901) into the schema and, for argument errors, into the arguments.

Messages never contain argument values (they may hold secrets): they name JSON types,
pointers and values taken from the *schema* only.

This module does not decide anything; the rules live in ``keywords`` and ``compiler``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final, Literal, NamedTuple

__all__ = ["ARGUMENTS", "RESULT", "UNCHECKED", "UNSUPPORTED", "VALIDATION", "Issue", "Kind", "Note", "Report"]

Kind = Literal["validation", "unsupported_capability"]
"""The two error kinds of the subset contract (spec, "Two error kinds")."""

VALIDATION: Kind = "validation"
UNSUPPORTED: Kind = "unsupported_capability"
UNCHECKED: Final = "they are refused unchecked"
"""How the message of a finding ends when the arguments could not be checked at all (the work
budget, a pattern the engine cannot run on them): they are refused without a verdict (spec,
Limits), and :attr:`Report.unchecked` holds."""


ARGUMENTS: Final = "the arguments"
"""How a message names the instance's root (``core.extended.writer.where``): a call's arguments."""

RESULT: Final = "the structured content"
"""How :meth:`Report.about` names the root when the instance is a result's ``structuredContent`` (an
``outputSchema`` check): "the arguments must be an object" would blame the caller (red team 33)."""


class Issue(NamedTuple):
    """One finding (an immutable named tuple: cheap to build on the per-call path).

    Attributes:
        kind: ``"validation"`` (malformed schema keyword, or arguments that break a
            supported constraint) or ``"unsupported_capability"`` (a keyword, type or
            shape outside the subset).
        keyword: the JSON Schema keyword concerned (``"minimum"``, ``"pattern"``, an
            unknown key as written). Two pseudo-keywords exist: ``"schema"`` for a node
            that is not a schema object the subset takes (a boolean schema), and
            ``"json"`` for a value JSON cannot carry (``NaN``, ``Infinity``, ``1e400``).
        schema_path: JSON Pointer into the schema: at the keyword itself
            (``/properties/n/minimum``), or at the node when the node as a whole is the
            problem (a missing ``type``, a boolean schema). Spec decision 15.
        instance_path: JSON Pointer into the arguments (``""`` is the arguments object
            itself); ``None`` for findings about the schema.
        message: a short English sentence for a person or a model; never an argument value.
    """

    kind: Kind
    keyword: str
    schema_path: str
    instance_path: str | None
    message: str

    def to_json(self) -> dict[str, Any]:
        """The issue as a JSON object with the five fields above (``instance_path`` may be null)."""
        return {
            "kind": self.kind,
            "keyword": self.keyword,
            "schema_path": self.schema_path,
            "instance_path": self.instance_path,
            "message": self.message,
        }


class Note(NamedTuple):
    """Something a classification must say that is not a finding (the tool stays supported).

    Attributes:
        schema_path: JSON Pointer into the schema (at the keyword).
        message: a short English sentence (schema facts only).

    The ``extended`` profile's one kind today: a ``format`` that 2020-12 does not define is
    an annotation, checked by nothing (spec E4: "the report says so in its notes").
    """

    schema_path: str
    message: str


class Report:
    """The outcome of classifying a schema or checking arguments.

    Attributes:
        issues: every finding, in schema order (classification) or argument order
            (validation). Empty when ``ok``.

    ``kind`` is ``"unsupported_capability"`` when any issue is unsupported, else
    ``"validation"`` when there is any issue, else ``None`` (spec decision 13).
    Immutable: ``issues`` is a tuple behind a read-only property. (A plain slotted class
    rather than a frozen dataclass: it is built on the per-call path.)
    """

    __slots__ = ("_issues",)

    def __init__(self, issues: tuple[Issue, ...] = ()) -> None:
        self._issues = issues

    @property
    def issues(self) -> tuple[Issue, ...]:
        """Every finding (a tuple)."""
        return self._issues

    @property
    def unchecked(self) -> bool:
        """The arguments were refused without being checked (every finding ends :data:`UNCHECKED`):
        whether they match the schema is not known."""
        return bool(self._issues) and all(i.message.endswith(UNCHECKED) for i in self._issues)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Report) and other._issues == self._issues

    def __hash__(self) -> int:
        return hash(self._issues)

    def __repr__(self) -> str:
        return f"Report(issues={self._issues!r})"

    @property
    def ok(self) -> bool:
        """True when there is no finding at all (spec decision 14)."""
        return not self.issues

    @property
    def kind(self) -> Kind | None:
        """The report's kind; see the class docstring."""
        if not self.issues:
            return None
        for issue in self.issues:
            if issue.kind == UNSUPPORTED:
                return UNSUPPORTED
        return VALIDATION

    def about(self, root: str) -> Report:
        """The report with each message about the instance's root naming it ``root`` (:data:`RESULT`) instead
        of :data:`ARGUMENTS`; pointers and kinds unchanged. Messages name the root only where the finding is
        at the root (``instance_path == ""``), and begin with it there."""
        if not any(i.instance_path == "" and i.message.startswith(ARGUMENTS) for i in self._issues):
            return self
        return Report(
            tuple(
                i._replace(message=root + i.message[len(ARGUMENTS) :])
                if i.instance_path == "" and i.message.startswith(ARGUMENTS)
                else i
                for i in self._issues
            )
        )

    @classmethod
    def of(cls, issues: Iterable[Issue]) -> Report:
        """A report holding ``issues`` in the given order."""
        return cls(tuple(issues))

    def to_json(self) -> dict[str, Any]:
        """``{"ok": bool, "kind": str | None, "issues": [Issue.to_json(), ...]}``."""
        return {"ok": self.ok, "kind": self.kind, "issues": [i.to_json() for i in self.issues]}

    def issues_json(self) -> list[dict[str, Any]]:
        """Only the issues, as JSON objects (the shape put into ``_meta``)."""
        return [i.to_json() for i in self.issues]


OK_REPORT = Report()
"""The shared empty report."""


def merge(reports: Sequence[Report]) -> Report:
    """One report holding the issues of all ``reports``, in order."""
    return Report(tuple(i for r in reports for i in r.issues))
