"""The ``extended`` profile (spec, "The extended profile"): JSON Schema 2020-12 (and draft-07,
draft-06, 2019-09 where the root ``$schema`` names them), every keyword enforced exactly,
minus the E5 list, which stays ``unsupported_capability``.

The same table serves ``standard`` and ``strict`` (spec, "Two profiles"): a row names the subset
profiles that select it and the subset rule they add (issue 11, item 1: one keyword, one place).

Modules: ``table`` (one row per keyword), ``kw_*`` (each keyword's rule, subset rule, fast test
and emitter together), ``classify`` (the one walk: its verdict, findings and tree; ``$ref`` resolution, the E6 checks),
``subset`` (the walk of ``standard``/``strict``: their node rules), ``gen`` (the generated
validator; E1's exact literals on or off), ``writer`` (the generated module and its helpers),
``values`` (exact numbers, E1), ``ir`` (nodes, parts and rows).
Entry point: :func:`classify_extended`; ``compiler.compile(profile="extended")`` uses it.
"""

from __future__ import annotations

from typing import Any

from ..json_values import Inexact, is_json, pointer, scan
from ..report import VALIDATION, Issue, Note
from .classify import Walker
from .gen import generate
from .ir import XNode

__all__ = ["XNode", "classify_extended", "generate"]


def _at(document: Any, path: tuple[str | int, ...]) -> Any:
    for key in path:
        document = document[key]
    return document


def classify_extended(
    schema: Any, *, known_json: bool = False, build: bool = True
) -> tuple[list[Issue], XNode | None, tuple[Note, ...]]:
    """Classify ``schema``: ``(issues, root node or None, notes)``; the node only when clean.

    ``known_json``: the caller proved the schema JSON with every number a double
    (``compiler.compile``'s argument): the JSON scan is skipped. ``build``: False for the
    findings only (``classify.Walker.classify``): the node is then ``None`` unless the walk
    had to build the tree (a schema with ``$ref``s).

    Raises:
        TypeError: the schema holds a value that is not JSON (its pointer in the message).
    """
    issues: list[Issue] = []
    # ``is_json`` proves the common case in a fraction of the path-tracking scan's time; only a
    # schema it refuses (non-JSON, NaN, an ``Inexact`` literal) is scanned for pointers.
    for path in () if known_json or is_json(schema) else scan(schema, what="schema"):  # TypeError for non-JSON
        if type(_at(schema, path)) is Inexact:
            continue  # a literal no double holds: exact in this profile (E1)
        issues.append(
            Issue(
                VALIDATION,
                "json",
                pointer(path),
                None,
                "the schema holds a number JSON cannot carry (NaN, Infinity): the guard cannot enforce what it "
                "cannot read exactly",
            )
        )
    walker = Walker()
    root = walker.classify(schema, build=build)
    issues += walker.issues
    notes = tuple(Note(at, message) for at, message in walker.notes)
    return issues, (root if not issues else None), notes
